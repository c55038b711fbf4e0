// `slotrelay localnet` as a process (what `make start` runs when no upstream is configured): one ready line on
// stdout, a working facade, a clean stop on SIGTERM. Needs the build (dist/), like the other process tests.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';

describe('slotrelay localnet (process)', () => {
  it('prints localnet_ready, serves JSON-RPC, stops cleanly on SIGTERM', async () => {
    const child = spawn(process.execPath, ['dist/src/cli.js', 'localnet', '--rpc-port', '0', '--slot-ms', '50', '--validators', '3'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: child.stdout! });
    const it = lines[Symbol.asyncIterator]();
    const ready = JSON.parse((await it.next()).value as string);
    expect(ready.event).toBe('localnet_ready');
    expect(ready.validators).toHaveLength(3);
    expect(ready.wsUrl).toBe(ready.rpcUrl.replace('http://', 'ws://').replace(/:(\d+)$/, (_: string, p: string) => `:${Number(p) + 1}`));
    for (const v of ready.validators) expect(v.tpuQuic).toMatch(/^127\.0\.0\.1:\d+$/);
    const res = await fetch(ready.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'h', method: 'getHealth' }),
    });
    expect(await res.json()).toEqual({ jsonrpc: '2.0', result: 'ok', id: 'h' });
    child.kill('SIGTERM');
    const stopped = JSON.parse((await it.next()).value as string);
    expect(stopped.event).toBe('localnet_stopped');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });
});
