// The static route end to end: the real relay (HTTP /v1/submit with routes [static]) sends every transaction over
// QUIC to each configured peer (two localnet TPU listeners standing in for fixed validators); every transaction
// reaches every peer, exactly, and the peers see the configured relay identity.
import { Keypair } from '@solana/web3.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TpuListener } from '../../../src/localnet/tpu-listener.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { ensureDist } from './dist-build.js';

const relayKey = Keypair.generate();
const peers: { l: TpuListener; got: Map<string, number>; senders: Set<string | null> }[] = [];
let relay: RelayHandle;

async function until(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return cond();
}

beforeAll(async () => {
  ensureDist();
  for (let i = 0; i < 2; i++) {
    const got = new Map<string, number>();
    const senders = new Set<string | null>();
    const l = new TpuListener({
      host: '127.0.0.1',
      port: 0,
      validatorIdentity: `peer${i}`,
      onTransaction: (tx, info) => {
        const k = Buffer.from(tx).toString('base64');
        got.set(k, (got.get(k) ?? 0) + 1);
        senders.add(info.senderIdentity);
      },
    });
    await l.start();
    peers.push({ l, got, senders });
  }
  const dir = mkdtempSync(join(tmpdir(), 'slotrelay-static-'));
  const keypairPath = join(dir, 'relay.json');
  writeFileSync(keypairPath, JSON.stringify(Array.from(relayKey.secretKey)));
  relay = await startRelay({
    upstream: { rpcUrl: 'http://127.0.0.1:9' }, // no preflight on /v1/submit; nothing else needs it here
    identity: { keypairPath },
    rings: { workers: 2, slotsPerRing: 256 },
    routes: { static: { peers: peers.map((p) => `127.0.0.1:${p.l.address().port}`) } },
  });
}, 60_000);

afterAll(async () => {
  await relay?.stop();
  for (const p of peers) await p.l.stop();
});

describe('static route through the relay', () => {
  it('every transaction reaches every static peer exactly once, from the configured identity', async () => {
    const N = 300;
    const txs = Array.from({ length: N }, (_, i) => legacyTransfer(5_000 + i));
    for (let i = 0; i < N; i += 20) {
      const batch = txs.slice(i, i + 20).map(async (tx) => {
        const r = await fetch(`${relay.relayUrl}/v1/submit`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
          body: JSON.stringify({ transaction: tx.base64, routes: ['static'] }),
        });
        expect(r.status).toBe(200);
        await r.arrayBuffer();
      });
      await Promise.all(batch);
    }
    for (const p of peers) {
      expect(await until(() => p.got.size === N, 5_000)).toBe(true);
      for (const tx of txs) expect(p.got.get(tx.base64)).toBe(1);
      expect([...p.senders]).toEqual([relayKey.publicKey.toBase58()]);
    }
    const text = await (await fetch(`${relay.rpcUrl}/metrics`)).text();
    const sent = text.split('\n').find((l) => l.includes('route="static"') && l.includes('outcome="sent"'));
    expect(Number(sent?.split(' ').at(-1))).toBe(N);
  });
});
