// `slotrelay doctor`'s ports check and the status page (issue 47, item 10): several relays on one host fight over the
// admin port (8890 by default), and doctor did not look at it. Shown with `doctor --json` as a process: a config whose
// admin.port is held (by a plain node:net listener standing for another relay) gets a failing `ports` finding naming
// admin.port, the holder's pid and the fix (one admin.port per relay); with the port free, the same check passes and
// lists admin.port. No upstream configured: the network checks are skipped, so a run takes ~1-2 s.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { freePort } from '../../helpers/free-port.js';
import { ensureDistFresh } from '../../unit/telemetry/dist-fresh.js';

interface Finding {
  check: string;
  status: string;
  detail: string;
  fix?: string;
  data?: { listeners?: { name: string; port: number; free: boolean; error?: string }[] };
}

const dir = mkdtempSync(join(tmpdir(), 'slotrelay-doctor-ports-'));

async function portsFinding(adminPort: number): Promise<Finding> {
  const file = join(dir, `config-${adminPort}.yaml`);
  writeFileSync(file, stringify({ rpcHost: { host: '127.0.0.1', port: 0 }, relayHost: { host: '127.0.0.1', port: 0, quicPort: 0 }, admin: { port: adminPort } }));
  // Exit 1 is expected whenever any check fails (this host's UDP buffers may be low): the JSON is read either way.
  const run = promisify(execFile);
  const { stdout } = await run(process.execPath, ['dist/src/cli.js', 'doctor', '--json', '--config', file], { env: { PATH: process.env.PATH } }).catch(
    (err: { stdout: string }) => ({ stdout: err.stdout }),
  );
  const report = JSON.parse(stdout) as { findings: Finding[] };
  return report.findings.find((f) => f.check === 'ports')!;
}

describe('doctor: the status page port is checked with the others', () => {
  let holder: Server;
  let heldPort = 0;
  beforeAll(async () => {
    ensureDistFresh();
    holder = createServer((s) => s.destroy());
    await new Promise<void>((res) => holder.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => res()));
    heldPort = (holder.address() as { port: number }).port;
  });
  afterAll(() => holder.close());

  it('admin.port held by another process: ports fails, naming admin.port, the holder and the fix', async () => {
    const f = await portsFinding(heldPort);
    expect(f.status).toBe('fail');
    expect(f.detail).toContain(`admin.port TCP 127.0.0.1:${heldPort}`);
    expect(f.detail).toContain(`held by pid ${process.pid} (`);
    expect(f.fix).toContain('several relays on one host need one admin.port each');
    expect(f.data?.listeners?.find((l) => l.name === 'admin.port')).toMatchObject({ port: heldPort, free: false, error: 'SERVED' });
  }, 30_000);

  it('admin.port free: ports passes and lists it', async () => {
    const port = await freePort();
    const f = await portsFinding(port);
    expect(f.status).toBe('pass');
    expect(f.detail).toContain(`admin.port TCP 127.0.0.1:${port}`);
  }, 30_000);
});
