// The direct route end to end: real relay process (HTTP /v1/submit) -> ring -> egress worker -> QUIC to the
// localnet's leaders (real TPU listeners, real signed transactions) -> the leader executes it -> web3.js sees it
// confirmed. The listener records the sender identity: it must be the configured relay identity. The window-aware
// policy also sends to the next leader in the last slots of a window.
import { Connection, Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { ensureDist } from './dist-build.js';
import { until } from '../../helpers/wait-for.js';
import { signedTransfer } from '../../helpers/transactions.js';

const SLOT_MS = 200;
let ln: Localnet;
let conn: Connection;
let relay: RelayHandle;
const payer = Keypair.generate();
const relayKey = Keypair.generate();

async function submit(base64: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const r = await fetch(`${relay.relayUrl}/v1/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
    body: JSON.stringify({ transaction: base64, routes: ['direct'] }),
  });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> };
}

/** Wait until the localnet is at slot index `index` of a leader window followed by a different leader. */
async function atWindowSlot(index: number): Promise<{ slot: number; leader: string; next: string }> {
  for (;;) {
    const slot = ln.clock.current;
    const start = slot - (slot % 4);
    if (slot % 4 === index && ln.schedule.leaderAt(start + 4) !== ln.schedule.leaderAt(start)) {
      return { slot, leader: ln.schedule.leaderAt(start), next: ln.schedule.leaderAt(start + 4) };
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

beforeAll(async () => {
  ensureDist();
  ln = await startLocalnet({ slotMs: SLOT_MS, validators: 4, stakes: [1n, 1n, 1n, 1n].map((x) => x * 100_000_000_000n), graceMs: SLOT_MS / 2 });
  conn = new Connection(ln.rpcUrl, 'confirmed');
  await conn.requestAirdrop(payer.publicKey, 10 * LAMPORTS_PER_SOL);
  const dir = mkdtempSync(join(tmpdir(), 'slotrelay-direct-'));
  const keypairPath = join(dir, 'relay.json');
  writeFileSync(keypairPath, JSON.stringify(Array.from(relayKey.secretKey)));
  relay = await startRelay({
    upstream: { rpcUrl: ln.rpcUrl },
    identity: { keypairPath },
    routes: { direct: { enabled: true, fanout: 'window-aware', leaders: 1, windowTailSlots: 2, lookahead: 4, slotPollMs: 50 } },
  });
  // Let the worker's leader source and pre-warm settle (a few slots).
  await new Promise((r) => setTimeout(r, 1_000));
}, 60_000);

afterAll(async () => {
  await relay?.stop();
  await ln?.stop();
});

describe('direct route through the relay', () => {
  it('a transaction reaches the current leader, lands, and the listener saw the configured identity', async () => {
    const tx = await signedTransfer(conn, payer);
    await atWindowSlot(0);
    const r = await submit(tx.base64);
    expect(r).toMatchObject({ status: 200, json: { accepted: true, signature: tx.signature, routes: ['direct'] } });
    await until(() => ln.bank.record(tx.signature) !== undefined, 5_000);
    const st = await conn.getSignatureStatuses([tx.signature]);
    expect(st.value[0]?.err).toBeNull();
    const rec = ln.landings.page(0, 10_000).records.find((x) => x.signature === tx.signature)!;
    expect(rec.sender).toBe(relayKey.publicKey.toBase58());
    expect(ln.schedule.leaderAt(rec.slot)).toBe(rec.validator);
  });

  it('window-aware: in the last slots of a window the next leader gets it too; in the first slots it does not', async () => {
    // End of window: current + next.
    const late = await signedTransfer(conn, payer);
    const w = await atWindowSlot(2);
    await new Promise((r) => setTimeout(r, SLOT_MS / 2)); // the relay's slot estimate is at most ~1 poll behind
    const nextBefore = ln.landings.countersOf(w.next).received;
    const curBefore = ln.landings.countersOf(w.leader).received;
    expect((await submit(late.base64)).status).toBe(200);
    await until(() => ln.landings.countersOf(w.next).received > nextBefore, 3_000);
    expect(ln.landings.countersOf(w.leader).received).toBeGreaterThan(curBefore);
    await until(() => ln.bank.record(late.signature) !== undefined, 5_000);

    // Start of a window: the current leader only.
    const early = await signedTransfer(conn, payer);
    const w2 = await atWindowSlot(0);
    await new Promise((r) => setTimeout(r, SLOT_MS / 4));
    const next2Before = ln.landings.countersOf(w2.next).received;
    const cur2Before = ln.landings.countersOf(w2.leader).received;
    expect((await submit(early.base64)).status).toBe(200);
    await until(() => ln.landings.countersOf(w2.leader).received > cur2Before, 3_000);
    await new Promise((r) => setTimeout(r, 100));
    expect(ln.landings.countersOf(w2.next).received).toBe(next2Before);
  });

  it('counts direct outcomes in /metrics', async () => {
    // Outcomes are counted when each route answers (a transaction still queued for a connection on a busy machine
    // is counted once written), so read until the three transactions above are all in.
    let lines: string[] = [];
    const sentCount = (): number => Number(lines.find((l) => l.includes('outcome="sent"'))?.split(' ').at(-1) ?? 0);
    const deadline = Date.now() + 10_000;
    do {
      const text = await (await fetch(`${relay.rpcUrl}/metrics`)).text();
      lines = text.split('\n').filter((l) => l.startsWith('slotrelay_egress_outcomes_total') && l.includes('route="direct"'));
      if (sentCount() >= 3) break;
      await new Promise((r) => setTimeout(r, 100));
    } while (Date.now() < deadline);
    expect(sentCount(), lines.join('\n')).toBeGreaterThanOrEqual(3);
  });
});
