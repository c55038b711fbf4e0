// `slotrelay bench landing --source grpc|pubsub` (a process, as a user runs it): with grpc the embedded localnet serves
// Yellowstone gRPC and the bench's relay stands on it (its /health says so, the bench prints it), transactions land,
// and the report records the source; a bad value is refused with exit 2.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { LandingReport } from '../../../src/landing-bench/report.js';

const run = promisify(execFile);

describe('bench landing --source', () => {
  it('grpc: the relay takes slots from the localnet\'s Yellowstone server, lands, and the report says grpc', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'landing-source-')), 'landing');
    const { stderr } = await run(
      process.execPath,
      ['dist/src/cli.js', 'bench', 'landing', '--source', 'grpc', '--sets', 'direct:window-aware', '--rate', '20', '--duration', '3', '--tail', '8', '--payers', '2', '--warmup', '2', '--out', out],
      { timeout: 120_000 },
    );
    expect(stderr).toMatch(/slot source at the end: grpc/);
    const report = JSON.parse(readFileSync(`${out}.json`, 'utf8')) as LandingReport;
    expect(report.params.source).toBe('grpc');
    const f = report.scenarios[0].sets[0].figures;
    expect(f.sent).toBeGreaterThan(0);
    expect(f.landed / f.sent).toBeGreaterThan(0.9);
  });

  it('refuses an unknown source (exit 2)', async () => {
    const err = await run(process.execPath, ['dist/src/cli.js', 'bench', 'landing', '--source', 'carrier-pigeon']).then(() => null, (e: { code: number; stderr: string }) => e);
    expect(err?.code).toBe(2);
    expect(err?.stderr).toMatch(/--source: pubsub or grpc/);
  });
});
