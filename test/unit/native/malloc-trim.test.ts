// The malloc_trim addon's build step and loader (scripts/malloc-trim-build.ts, src/native/malloc-trim.ts) as `make
// build` and the QUIC thread use them: it compiles with a C compiler alone (no node-gyp, no Node headers, no install
// script) and loads in the main thread and in a worker thread alike (context-aware Node-API); without a compiler the
// step says so, exits 0 and leaves no file, and the loader then says why there is no trim instead of throwing.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMallocTrim } from '../../../src/native/malloc-trim.js';

const dir = mkdtempSync(join(tmpdir(), 'slotrelay-malloc-trim-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function buildStep(out: string, env: NodeJS.ProcessEnv): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, ['dist/scripts/malloc-trim-build.js', '--out', out], { encoding: 'utf8', env: { PATH: process.env.PATH, ...env }, timeout: 60_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('malloc-trim addon', () => {
  it('builds with a C compiler alone and trims in the main thread and in a worker thread', async () => {
    const file = join(dir, 'ok', 'malloc_trim.node');
    const r = buildStep(file, {});
    expect(r.out).toContain('malloc-trim-build:');
    expect(r.status).toBe(0);
    expect(existsSync(file)).toBe(true);
    const m = loadMallocTrim(file);
    expect(m.trim).not.toBeNull();
    expect(typeof (await m.trim?.())).toBe('boolean');
    // A second thread loads the same file (Node refuses an addon that is not context-aware there).
    const inWorker = await new Promise<unknown>((resolve, reject) => {
      const w = new Worker(`const m = { exports: {} }; process.dlopen(m, ${JSON.stringify(file)}); m.exports.trim().then((r) => require('node:worker_threads').parentPort.postMessage(typeof r));`, { eval: true });
      w.once('message', resolve);
      w.once('error', reject);
    });
    expect(inWorker).toBe('boolean');
  });

  it('without a C compiler: says so, exits 0, writes nothing; the loader says why there is no trim', () => {
    const file = join(dir, 'none', 'malloc_trim.node');
    const r = buildStep(file, { CC: join(dir, 'no-such-cc') });
    expect(r.status).toBe(0);
    expect(r.out).toMatch(/malloc-trim-build: not built \(.*no-such-cc not found\)/);
    expect(existsSync(file)).toBe(false);
    const m = loadMallocTrim(file);
    expect(m.trim).toBeNull();
    expect(m.trim === null ? m.reason : '').toContain('not built');
  });

  it('a file that is not an addon: the loader says it did not load, and does not throw', () => {
    const file = join(dir, 'junk.node');
    writeFileSync(file, 'not an ELF file');
    const m = loadMallocTrim(file);
    expect(m.trim === null ? m.reason : '').toContain('did not load');
  });
});
