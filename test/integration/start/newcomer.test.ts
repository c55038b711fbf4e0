// The newcomer path of `make start`: no config at all -> a local config with a fresh key (printed once), the
// embedded localnet as upstream, direct QUIC to its leaders as the default route, a first transaction that really
// lands, and the banner's example command printing where it landed and by which route.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Connection } from '@solana/web3.js';
import { afterAll, describe, expect, it } from 'vitest';
import { buildExampleTransaction } from '../../../src/client/example-transaction.js';
import { RelayClient } from '../../../src/client/relay-client.js';

const CLI = resolve('dist/src/cli.js');
const cwd = mkdtempSync(join(tmpdir(), 'slotrelay-newcomer-'));
const out: string[] = [];
const child = spawn(process.execPath, [CLI, 'start'], {
  cwd,
  env: { PATH: process.env.PATH, SLOTRELAY_RPC_PORT: '0', SLOTRELAY_RELAY_PORT: '0' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
createInterface({ input: child.stdout! }).on('line', (l) => out.push(l));
afterAll(async () => {
  if (child.exitCode === null) child.kill('SIGTERM');
  await exited;
});

async function waitFor(pred: () => boolean, what: string, ms = 45_000): Promise<void> {
  const until = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > until || child.exitCode !== null) throw new Error(`${what} not seen:\n${out.join('\n')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('make start for a newcomer', () => {
  it('creates a key, prints it once with a copy-paste request, and a first transaction lands', async () => {
    await waitFor(() => out.some((l) => l.startsWith('Or through JSON-RPC')), 'the start banner');
    expect(existsSync(join(cwd, 'local/config.yaml'))).toBe(true);
    const key = /key: ([0-9a-f-]{36})/.exec(readFileSync(join(cwd, 'local/keys.yaml'), 'utf8'))![1];
    expect(out.filter((l) => l.includes(key))).toEqual([`  export SLOTRELAY_KEY=${key}`]);
    const ready = JSON.parse(out.find((l) => l.includes('"relay_ready"'))!) as { listeners: { name: string; port: number }[]; upstream: string };
    expect(out.some((l) => l.includes('curl -s http://127.0.0.1:') && l.includes('/v1/submit'))).toBe(true);
    const relayPort = ready.listeners.find((l) => l.name === 'relay')!.port;
    // The localnet's Jito-compatible block engine runs too, listed in the banner, and is the relay's bundle service;
    // the generated key has no bundle access (spec 1: private, needs approval), which the relay says as documented.
    const engineLine = out.find((l) => l.includes('localnet block engine'));
    expect(engineLine).toBeDefined();
    const engineUrl = /(http:\/\/127\.0\.0\.1:\d+)\s*$/.exec(engineLine!)![1];
    const tipRpc = { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getTipAccounts', params: [] }) };
    expect(((await (await fetch(`${engineUrl}/api/v1/bundles`, tipRpc)).json()) as { result: string[] }).result).toHaveLength(8);
    const viaRelay = (await (await fetch(`http://127.0.0.1:${relayPort}/v1/bundles`, tipRpc)).json()) as { error: { data: { reason: string } } };
    expect(viaRelay.error.data.reason).toBe('bundles_not_enabled');

    const tx = await buildExampleTransaction(ready.upstream);
    const res = await new RelayClient({ url: `http://127.0.0.1:${relayPort}`, apiKey: key }).submit(tx);
    expect(res.accepted).toBe(true);
    const conn = new Connection(ready.upstream, 'confirmed');
    const until = Date.now() + 20_000;
    let status = (await conn.getSignatureStatuses([res.signature])).value[0];
    while (status?.confirmationStatus !== 'confirmed' && status?.confirmationStatus !== 'finalized') {
      if (Date.now() > until) throw new Error(`never confirmed: ${JSON.stringify(status)}`);
      await new Promise((r) => setTimeout(r, 100));
      status = (await conn.getSignatureStatuses([res.signature])).value[0];
    }
    expect(status.err).toBeNull();
    // Direct to the leaders by default (the generated config), and the banner's example says where it landed.
    expect(res.routes).toEqual(['direct']);
    const exampleLine = out.find((l) => l.trim().startsWith('node dist/src/cli.js example '));
    expect(exampleLine, out.join('\n')).toBeDefined();
    const args = exampleLine!.trim().split(/\s+/).slice(1);
    const example = await new Promise<{ code: number | null; text: string }>((resolvePromise) => {
      const p = spawn(process.execPath, args, { env: { PATH: process.env.PATH, SLOTRELAY_KEY: key }, stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      p.stdout!.on('data', (d: Buffer) => (text += d.toString()));
      p.stderr!.on('data', (d: Buffer) => (text += d.toString()));
      p.once('close', (code) => resolvePromise({ code, text }));
    });
    expect(example.code, example.text).toBe(0);
    expect(example.text).toMatch(/^accepted \w+ for direct$/m);
    expect(example.text).toMatch(/^landed in slot \d+ \(leader \w+\), \d+ slots and \d+ ms after acceptance; first sent by direct \(direct sent to \d+\)$/m);

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 90_000);
});
