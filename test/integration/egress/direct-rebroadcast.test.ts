// Rebroadcast over the direct route goes to the leaders current AT EACH REBROADCAST, not to the first send's leader.
// Real relay process -> QUIC -> the embedded localnet's TPU listeners (4 equally staked validators, 100 ms slots, so a
// leader window lasts 400 ms). The transaction's fee payer has no account, so every leader that executes it rejects
// it (AccountNotFound) and it never lands: the relay keeps rebroadcasting every 250 ms until maxRetries (16, ~4 s) is spent.
// The localnet's per-validator counters then show: one arrival per send (fanout: the current leader only), the
// arrivals spread over the validators that led during those ~4 s, and (nearly) all of them reached the validator
// while it was the leader (executed, not dropped as not_leader).
import { Connection, Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { ensureDist } from './dist-build.js';
import { metricNow } from '../../helpers/metrics-text.js';

const SLOT_MS = 100;
const MAX_RETRIES = 16;
let ln: Localnet;
let relay: RelayHandle;

interface Snapshot {
  readonly received: number;
  readonly notLeader: number;
  readonly executed: number;
}

function counters(): Map<string, Snapshot> {
  const m = new Map<string, Snapshot>();
  for (const v of ln.validators) {
    const c = ln.landings.countersOf(v.identity);
    m.set(v.identity, { received: c.received, notLeader: c.dropped.not_leader, executed: c.rejectedBy.AccountNotFound ?? 0 });
  }
  return m;
}

beforeAll(async () => {
  ensureDist();
  ln = await startLocalnet({ slotMs: SLOT_MS, validators: 4, stakes: [1n, 1n, 1n, 1n].map((x) => x * 100_000_000_000n), graceMs: SLOT_MS / 2 });
  relay = await startRelay({
    upstream: { rpcUrl: ln.rpcUrl },
    routes: { direct: { enabled: true, fanout: 'window-aware', leaders: 0, lookahead: 4 } },
    retries: { intervalMs: 250, statusPollMs: 100, routes: ['direct'] },
  });
  // The telemetry snapshot and the pre-warmed connections settle within a few slots.
  await new Promise((r) => setTimeout(r, 1_500));
}, 60_000);

afterAll(async () => {
  await relay?.stop();
  await ln?.stop();
});

describe('rebroadcast over the direct route', () => {
  it('each rebroadcast goes to the then-current leader', async () => {
    const conn = new Connection(ln.rpcUrl, 'confirmed');
    const { blockhash } = await conn.getLatestBlockhash('processed');
    const payer = Keypair.generate(); // never funded: the transaction can never land
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight: 0 }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000 }),
    );
    tx.sign(payer);
    const before = counters();
    // Which validator led while each arrival was observed (polled every 5 ms).
    const seen: { validator: string; leader: string; slot: number }[] = [];
    let last = before;
    const poll = setInterval(() => {
      const now = counters();
      const slot = ln.clock.current;
      for (const [v, c] of now) {
        for (let k = last.get(v)!.received; k < c.received; k++) seen.push({ validator: v, leader: ln.schedule.leaderAt(slot), slot });
      }
      last = now;
    }, 5);
    try {
      const r = await fetch(`${relay.relayUrl}/v1/submit`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
        body: JSON.stringify({ transaction: tx.serialize().toString('base64'), routes: ['direct'], maxRetries: MAX_RETRIES }),
      });
      expect(r.status).toBe(200);
      const deadline = Date.now() + 15_000;
      while ((await metricNow(relay.rpcUrl, 'slotrelay_retry_transactions_total', 'outcome="dropped:retries_exhausted"')) !== 1) {
        if (Date.now() > deadline) throw new Error('rebroadcast never finished');
        await new Promise((res) => setTimeout(res, 50));
      }
      await new Promise((res) => setTimeout(res, 50));
    } finally {
      clearInterval(poll);
    }
    const after = counters();
    const rebroadcasts = await metricNow(relay.rpcUrl, 'slotrelay_egress_rebroadcasts_total', 'route="direct",outcome="sent"');
    expect(rebroadcasts).toBe(MAX_RETRIES);
    expect(await metricNow(relay.rpcUrl, 'slotrelay_egress_outcomes_total', 'route="direct",outcome="sent"')).toBeGreaterThanOrEqual(1);

    let arrivals = 0;
    let notLeader = 0;
    const executedBy: string[] = [];
    for (const [v, a] of after) {
      const b = before.get(v)!;
      arrivals += a.received - b.received;
      notLeader += a.notLeader - b.notLeader;
      if (a.executed > b.executed) executedBy.push(v);
    }
    // One target per send (leaders: 0 -> the current leader only): the first send + every rebroadcast arrived.
    expect(arrivals).toBe(1 + MAX_RETRIES);
    // ~4 s of 400 ms windows: several validators led; each executed the copies that reached it while leading.
    expect(executedBy.length).toBeGreaterThanOrEqual(2);
    // Timing slack only (the relay's slot estimate vs the localnet clock at a window edge): nearly all were on time.
    expect(notLeader).toBeLessThanOrEqual(2);
    expect(seen.length).toBe(arrivals);
    expect(new Set(seen.map((s) => s.validator)).size).toBeGreaterThanOrEqual(2);
    const onLeader = seen.filter((s) => s.validator === s.leader).length;
    expect(onLeader).toBeGreaterThanOrEqual(arrivals - 2);
  });
});
