// IdentityStake (src/health/identity-stake.ts) against a real JSON-RPC listener answering getVoteAccounts: the gauges a
// scrape shows for a staked identity, an unstaked one, an RPC that fails (nothing before the first answer, the last
// known kept after), and a keypair file replaced while running (the workers hot-reload it; the next poll follows).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { IdentityStake } from '../../../src/health/identity-stake.js';
import { generateKeypairSecret } from '../../../src/egress/quic/identity.js';
import { base58Encode } from '../../../src/quic/base58.js';
import { createLogger } from '../../../src/log/logger.js';
import { TextBuilder } from '../../../src/metrics/prometheus.js';
import { sampleValue } from '../../helpers/metrics-text.js';
import { waitFor } from '../../helpers/wait-for.js';

interface VoteRpc {
  readonly url: string;
  /** node identity -> activated stake answered; null = answer HTTP 500. */
  stakes: Record<string, number> | null;
  calls: number;
  close(): Promise<void>;
}

async function voteRpc(): Promise<VoteRpc> {
  const rpc: VoteRpc = { url: '', stakes: {}, calls: 0, close: () => new Promise((r) => server.close(() => r())) };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const { id, method } = JSON.parse(body) as { id: number; method: string };
      rpc.calls++;
      if (rpc.stakes === null || method !== 'getVoteAccounts') {
        res.writeHead(500).end();
        return;
      }
      // One node with two vote accounts (one delinquent): Agave sums them per node.
      const current = Object.entries(rpc.stakes).map(([nodePubkey, s]) => ({ nodePubkey, activatedStake: Math.ceil(s / 2) }));
      const delinquent = Object.entries(rpc.stakes).map(([nodePubkey, s]) => ({ nodePubkey, activatedStake: Math.floor(s / 2) }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result: { current, delinquent } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  (rpc as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return rpc;
}

function text(w: IdentityStake): string {
  const tb = new TextBuilder();
  w.render(tb);
  return tb.text();
}

const log = createLogger('silent', 'test');
let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup) await c();
  cleanup = [];
});

describe('IdentityStake', () => {
  it('shows staked 1 with the summed lamports for a staked identity, 0 for an unstaked one', async () => {
    const rpc = await voteRpc();
    const staked = base58Encode(generateKeypairSecret().subarray(32));
    const unstaked = base58Encode(generateKeypairSecret().subarray(32));
    rpc.stakes = { [staked]: 5_000_000_001 };
    const a = new IdentityStake({ identity: staked, rpcUrl: rpc.url, timeoutMs: 1_000, log });
    const b = new IdentityStake({ identity: unstaked, rpcUrl: rpc.url, timeoutMs: 1_000, log });
    cleanup.push(async () => (a.stop(), b.stop(), await rpc.close()));
    a.start();
    b.start();
    const ta = await waitFor('a staked answer', () => text(a), (t) => t.includes('slotrelay_identity_staked'));
    expect(sampleValue(ta, 'slotrelay_identity_staked', `identity="${staked}"`)).toBe(1);
    expect(sampleValue(ta, 'slotrelay_identity_stake_lamports', `identity="${staked}"`)).toBe(5_000_000_001);
    const tb = await waitFor('an unstaked answer', () => text(b), (t) => t.includes('slotrelay_identity_staked'));
    expect(sampleValue(tb, 'slotrelay_identity_staked', `identity="${unstaked}"`)).toBe(0);
    expect(sampleValue(tb, 'slotrelay_identity_stake_lamports', `identity="${unstaked}"`)).toBe(0);
  });

  it('renders nothing until the RPC has answered once (no alert on "unknown"), then keeps the last known through failures', async () => {
    const rpc = await voteRpc();
    const id = base58Encode(generateKeypairSecret().subarray(32));
    rpc.stakes = null;
    const w = new IdentityStake({ identity: id, rpcUrl: rpc.url, timeoutMs: 1_000, log, pollMs: 50 });
    cleanup.push(async () => (w.stop(), await rpc.close()));
    w.start();
    await waitFor('a failed read', () => rpc.calls, (n) => n >= 1);
    expect(text(w)).toBe('\n');
    // The retry after a failure is 30 s (RETRY_AFTER_FAILURE_MS) unless pollMs is shorter: here 50 ms.
    rpc.stakes = { [id]: 7 };
    await waitFor('the first answer', () => text(w), (t) => sampleValue(t, 'slotrelay_identity_staked', `identity="${id}"`) === 1);
    rpc.stakes = null;
    const calls = rpc.calls;
    await waitFor('two more failed reads', () => rpc.calls, (n) => n >= calls + 2);
    expect(sampleValue(text(w), 'slotrelay_identity_stake_lamports', `identity="${id}"`)).toBe(7);
  });

  it('follows a keypair file replaced while running (the workers hot-reload it)', async () => {
    const rpc = await voteRpc();
    const dir = mkdtempSync(join(tmpdir(), 'slotrelay-identity-'));
    const path = join(dir, 'id.json');
    const first = generateKeypairSecret();
    const second = generateKeypairSecret();
    const firstId = base58Encode(first.subarray(32));
    const secondId = base58Encode(second.subarray(32));
    writeFileSync(path, JSON.stringify([...first]));
    rpc.stakes = { [secondId]: 1_000 };
    const w = new IdentityStake({ identity: firstId, keypairPath: path, rpcUrl: rpc.url, timeoutMs: 1_000, log, pollMs: 50 });
    cleanup.push(async () => (w.stop(), await rpc.close()));
    w.start();
    await waitFor('the first identity, unstaked', () => text(w), (t) => sampleValue(t, 'slotrelay_identity_staked', `identity="${firstId}"`) === 0);
    writeFileSync(path, JSON.stringify([...second]));
    const t = await waitFor('the replaced identity, staked', () => text(w), (x) => sampleValue(x, 'slotrelay_identity_staked', `identity="${secondId}"`) === 1);
    expect(t).not.toContain(firstId);
  });
});
