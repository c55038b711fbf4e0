// Adaptive routing (issue #26 item 3, docs/adaptive-routing.md) for real: a relay on an embedded localnet with the
// flow-control QoS, where a staked competitor saturates the largest-stake leader in each of its slots, so that the
// relay's unstaked connection to it is parked (stream credit withheld). The relay's key allows direct and rpc, not
// jito, while the relay runs all three (its jito route points at the localnet's block engine). Sent by `direct`
// only, the relay must notice that leader, widen the direct route's fanout for its slots and add the rpc route,
// never jito; the receipt says so (adaptive, routesTried), /metrics counts it, /health and getLeaderSlots show it.
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { waitFor } from '../../helpers/wait-for.js';
import { embeddedLocalnetUrl } from '../../helpers/embedded-localnet.js';
import { freePort } from '../../helpers/free-port.js';
import { metricNow, scrape } from '../../helpers/metrics-text.js';

let relay: RelayHandle;
const VALIDATORS = 3;

interface Receipt {
  status: string;
  routes: Record<string, { outcome: string; targets: number }>;
  adaptive: { leader: string; decisions: string[]; extraCopies: number; addedRoutes: string[] } | null;
  routesTried: string[];
}

beforeAll(async () => {
  const jitoPort = await freePort();
  relay = await startRelay({
    localnet: {
      validators: VALIDATORS,
      slotMs: 200,
      // Flow control with a small leader capacity; 25 ms links (the model's credit scales with RTT).
      qos: { enabled: true, model: 'flow-control', capacityTps: 100 },
      links: Array.from({ length: VALIDATORS }, () => ({ oneWayDelayMs: 25 })),
      // 8 transactions a block, executed by priority fee: the competitor's (10,000 µL/CU) fill validator 0's blocks.
      blockCapacity: 8,
      // A staked competitor saturating validator 0 (the largest stake: half the slots) in each of its slots.
      competitors: [{ name: 'competitor', tps: 1_000, stakeSol: 100_000, microLamportsPerCu: 10_000, validator: 0 }],
      blockEngine: { rateLimitPerSecond: 0, port: jitoPort },
    },
    routes: {
      direct: { enabled: true, staleAfterMs: 300 },
      jito: { url: `http://127.0.0.1:${jitoPort}` },
    },
    routing: { adaptive: { enabled: true, halfLifeMs: 5_000, minEvidence: 4, judgeAfterMs: 1_500, maxExtraCopies: 2, widenWithPartners: true, maxPartners: 2 } },
    receipts: { pollMs: 100 },
    retries: { defaultMaxRetries: 0 },
    keys: [
      {
        key: TEST_KEY,
        name: 'direct-and-rpc',
        allowedRoutes: ['direct', 'rpc'],
        rateLimit: { perSecond: 10_000, burst: 10_000 },
        readLimit: { perSecond: 10_000, burst: 10_000 },
        preflight: 'skip',
      },
    ],
  });
  await waitFor('direct deliverable', async () => (await (await fetch(`${relay.rpcUrl}/health?detail`)).json()) as any, (h) => h.routes?.direct?.deliverable === true, 20_000);
}, 45_000);

afterAll(async () => {
  await relay?.stop('SIGTERM');
});

async function submit(tx: string): Promise<string> {
  const res = await fetch(`${relay.relayUrl}/v1/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
    body: JSON.stringify({ transaction: tx, routes: ['direct'], maxRetries: 0 }),
  });
  const json = (await res.json()) as { signature?: string };
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json.signature!;
}

interface LeaderRow {
  slot: number;
  identity: string;
  routeScores: unknown[];
  adaptive?: { parked: boolean; directShare: number; extraCopies: number; addRoutes: string[] };
}

async function leaderRows(slot: number): Promise<LeaderRow[]> {
  const res = await fetch(relay.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getLeaderSlots', params: [slot, 40] }),
  });
  return ((await res.json()) as { result: { data: LeaderRow[] } }).result.data;
}

async function receiptOf(signature: string): Promise<Receipt> {
  return (await (await fetch(`${relay.relayUrl}/v1/transactions/${signature}`, { headers: { 'x-api-key': TEST_KEY } })).json()) as Receipt;
}

describe('adaptive routing under a parking leader', () => {
  it('widens and adds rpc (allowed) for the parking leader, never jito (not allowed); receipt, metrics, health, getLeaderSlots say so', async () => {
    const ln = new Connection(embeddedLocalnetUrl(relay), 'confirmed');
    const payer = Keypair.generate();
    const air = await ln.requestAirdrop(payer.publicKey, 10 * LAMPORTS_PER_SOL);
    await waitFor('airdrop', () => ln.getSignatureStatuses([air]), (s) => s.value[0] !== null, 10_000);
    const sigs: string[] = [];
    // What /health and getLeaderSlots said while a leader parked the relay (read during the run: a verdict lasts
    // as long as the evidence does).
    let parkedInHealth: string[] = [];
    let rows: LeaderRow[] = [];
    // 25 tx/s until the relay has made enough add_route decisions and both were seen (bounded: 25 s).
    const deadline = Date.now() + 25_000;
    let blockhash = (await ln.getLatestBlockhash('confirmed')).blockhash;
    for (let i = 0; Date.now() < deadline; i++) {
      if (i % 25 === 0) blockhash = (await ln.getLatestBlockhash('confirmed')).blockhash;
      const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight: 1e9 }).add(
        SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 + i }),
      );
      tx.sign(payer);
      sigs.push(await submit(tx.serialize().toString('base64')));
      await new Promise((r) => setTimeout(r, 40));
      if (i % 10 !== 9) continue;
      const health = (await (await fetch(`${relay.rpcUrl}/health?detail`)).json()) as { routes: { direct: { adaptive?: { parkedCount: number; parkedLeaders: { leader: string }[] } } } };
      const parked = health.routes.direct.adaptive?.parkedLeaders.map((l) => l.leader) ?? [];
      if (parked.length > 0 && rows.length === 0) {
        parkedInHealth = parked;
        rows = await leaderRows(await ln.getSlot('processed'));
      }
      if (rows.length > 0 && (await metricNow(relay.rpcUrl, 'slotrelay_adaptive_decisions_total', 'decision="add_route",route="rpc"')) >= 10) break;
    }
    const text = await scrape(relay.rpcUrl);
    const addRpc = Number(/slotrelay_adaptive_decisions_total\{decision="add_route",route="rpc"\} (\S+)/.exec(text)?.[1] ?? 0);
    const addJito = Number(/slotrelay_adaptive_decisions_total\{decision="add_route",route="jito"\} (\S+)/.exec(text)?.[1] ?? -1);
    const widen = Number(/slotrelay_adaptive_decisions_total\{decision="widen",route="direct"\} (\S+)/.exec(text)?.[1] ?? 0);
    expect(addRpc, text.split('\n').filter((l) => l.includes('adaptive')).join('\n')).toBeGreaterThanOrEqual(10);
    expect(widen).toBeGreaterThanOrEqual(addRpc);
    // The relay runs jito, so the series exists, and it stays 0: the key does not allow jito.
    expect(addJito).toBe(0);
    expect(Number(/slotrelay_adaptive_evidence_total\{route="direct",kind="bad"\} (\S+)/.exec(text)?.[1] ?? 0)).toBeGreaterThan(0);

    const receipts = await Promise.all(sigs.map(receiptOf));
    const adapted = receipts.filter((r) => r.adaptive !== null);
    expect(adapted.length).toBe(addRpc);
    for (const r of receipts) expect(r.routes.jito, JSON.stringify(r)).toBeUndefined();
    for (const r of adapted) {
      expect(r.adaptive).toMatchObject({ decisions: ['widen', 'add_route'], extraCopies: 2, addedRoutes: ['rpc'] });
      expect(Object.keys(r.routes).sort()).toEqual(['direct', 'rpc']);
    }
    // Each decision names the leader that parked the relay (the competitor's validator 0); rpc was tried for them.
    const leaders = new Set(adapted.map((r) => r.adaptive!.leader));
    expect(adapted.some((r) => r.routesTried.includes('rpc'))).toBe(true);
    // Widened: a decision's direct copy went to more than one leader when it was written.
    expect(adapted.some((r) => r.routes.direct.outcome === 'sent' && r.routes.direct.targets >= 2)).toBe(true);
    // Transactions of other leaders' slots were left alone.
    expect(receipts.some((r) => r.adaptive === null)).toBe(true);

    expect(parkedInHealth.some((l) => leaders.has(l)), `${parkedInHealth} vs ${[...leaders]}`).toBe(true);
    // getLeaderSlots: a parking leader's rows carry `adaptive`, the others' none (the spec's fields unchanged).
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(Array.isArray(row.routeScores)).toBe(true);
      if (parkedInHealth.includes(row.identity)) expect(row.adaptive).toMatchObject({ parked: true, extraCopies: 2, addRoutes: ['rpc', 'jito'] });
      else expect(row.adaptive).toBeUndefined();
    }
    expect(rows.some((r) => r.adaptive !== undefined)).toBe(true);
  }, 50_000);
});
