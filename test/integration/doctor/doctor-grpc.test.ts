// `slotrelay doctor --json` with upstream.grpc (a process, like a user runs it): against the localnet's Yellowstone
// gRPC server the `upstream-grpc` check passes with the stream's slot and how far it is behind the RPC's processed
// slot; against a port nobody serves it fails with a fix; without upstream.grpc it is skipped. The x-token never
// appears in the output. Needs the build (dist/).
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { freePort } from '../../helpers/free-port.js';

const X_TOKEN = 'doctor-grpc-token-77c1e0b4d2';
let ln: Localnet;
const dir = mkdtempSync(join(tmpdir(), 'slotrelay-doctor-grpc-'));

interface Finding {
  check: string;
  status: string;
  detail: string;
  fix?: string;
  data?: Record<string, unknown>;
}

function doctor(name: string, upstream: Record<string, unknown>): Promise<{ stdout: string; grpc: Finding }> {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, stringify({ upstream, admin: { port: 0 }, rpcHost: { port: 0 }, relayHost: { port: 0, quicPort: 0 } }));
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['dist/src/cli.js', 'doctor', '--config', file, '--json'], { timeout: 30_000 }, (err, stdout) => {
      if (stdout === '') return reject(err ?? new Error('no output'));
      const report = JSON.parse(stdout) as { findings: Finding[] };
      resolve({ stdout, grpc: report.findings.find((f) => f.check === 'upstream-grpc')! });
    });
  });
}

beforeAll(async () => {
  ln = await startLocalnet({ slotMs: 200, validators: 2, grpcPort: 0 });
});

afterAll(async () => {
  await ln?.stop();
});

describe('slotrelay doctor: upstream-grpc', () => {
  it('passes against a live endpoint, with its slot and how far behind the RPC it is', async () => {
    const { stdout, grpc } = await doctor('live', { rpcUrl: ln.rpcUrl, grpc: { url: ln.grpcUrl, xToken: X_TOKEN } });
    expect(grpc.status).toBe('pass');
    expect(grpc.data).toMatchObject({ slot: expect.any(Number), rpcSlot: expect.any(Number), behindSlots: expect.any(Number) });
    expect(grpc.data!.behindSlots as number).toBeLessThanOrEqual(1);
    expect(stdout).not.toContain(X_TOKEN);
  });

  it('fails with a fix when nothing answers, and is skipped without upstream.grpc', async () => {
    const port = await freePort();
    const dead = await doctor('dead', { rpcUrl: ln.rpcUrl, grpc: { url: `http://127.0.0.1:${port}`, xToken: X_TOKEN } });
    expect(dead.grpc.status).toBe('fail');
    expect(dead.grpc.fix).toMatch(/upstream\.grpc/);
    expect(dead.stdout).not.toContain(X_TOKEN);
    const none = await doctor('none', { rpcUrl: ln.rpcUrl });
    expect(none.grpc.status).toBe('skip');
  });
});
