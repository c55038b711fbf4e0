// A static peer that completes the handshake but never grants a stream (MAX_STREAMS 0, how Agave parks an unstaked
// peer under load), through the real relay. Every transaction also goes to it (routes.static.everyTransaction), and a
// ring record is released only when every route answered, so while the peer stalls each record is held; the ring
// (64 slots here) fills and the front answers 503. With routes.direct.staleAfterMs each held transaction ends as
// dropped:stale after 600 ms: the ring is released, the rpc route carried every accepted transaction, and later
// transactions are accepted again. Without the bound the ring would stay full for good (pinned peers never close).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeRpcUpstream, type FakeRpcUpstream } from '../../helpers/fake-upstream.js';
import { TpuListener } from '../../../src/localnet/tpu-listener.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { ensureDist } from './dist-build.js';
import { until } from '../../helpers/wait-for.js';
import { metricNow } from '../../helpers/metrics-text.js';

const STALE_MS = 600;
let parked: TpuListener;
let upstream: FakeRpcUpstream;
let relay: RelayHandle;

async function submit(base64: string): Promise<number> {
  const r = await fetch(`${relay.relayUrl}/v1/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
    body: JSON.stringify({ transaction: base64, routes: ['rpc'], maxRetries: 0 }),
  });
  await r.arrayBuffer();
  return r.status;
}

beforeAll(async () => {
  ensureDist();
  parked = new TpuListener({ host: '127.0.0.1', port: 0, validatorIdentity: 'parked', maxStreams: 0, onTransaction: () => undefined });
  await parked.start();
  upstream = await startFakeRpcUpstream();
  relay = await startRelay({
    upstream: { rpcUrl: 'http://127.0.0.1:9' }, // not used: /v1/submit has no preflight, maxRetries 0 polls nothing
    rings: { workers: 1, slotsPerRing: 64 },
    routes: {
      rpc: { endpoints: [upstream.url] },
      direct: { staleAfterMs: STALE_MS },
      static: { peers: [`127.0.0.1:${parked.address().port}`] },
    },
  });
  // The relay's connection to the peer is up (the peer counts it) before the test starts.
  await until(() => parked.counters.activeConnections === 1, 10_000);
}, 60_000);

afterAll(async () => {
  await relay?.stop();
  await upstream?.close();
  await parked?.stop();
});

describe('a static peer that grants no stream credit', () => {
  it('fills the ring only for staleAfterMs: held records end dropped:stale, the ring is released, rpc keeps working', async () => {
    const burst = Array.from({ length: 120 }, (_, i) => legacyTransfer(70_000 + i));
    const t0 = Date.now();
    const statuses = await Promise.all(burst.map((tx) => submit(tx.base64)));
    const burstMs = Date.now() - t0;
    const accepted = burst.filter((_, i) => statuses[i] === 200);
    // Every record is held by the stalled peer, so the 64-slot ring fills and the rest of the burst is refused.
    expect(statuses.every((s) => s === 200 || s === 503)).toBe(true);
    if (burstMs < STALE_MS) expect(statuses.filter((s) => s === 503).length).toBeGreaterThan(0);

    // Each held transaction ends as dropped:stale on the static route; every record is released.
    await until(async () => (await metricNow(relay.rpcUrl, 'slotrelay_egress_outcomes_total', 'route="static",outcome="dropped:stale"')) === accepted.length, 10_000, 20);
    await until(async () => (await metricNow(relay.rpcUrl, 'slotrelay_egress_records_total', 'stage="released"')) === accepted.length, 5_000, 20);
    expect(await metricNow(relay.rpcUrl, 'slotrelay_egress_records_total', 'stage="consumed"')).toBe(accepted.length);
    expect(await metricNow(relay.rpcUrl, 'slotrelay_egress_outcomes_total', 'route="rpc",outcome="sent"')).toBe(accepted.length);
    // Counted and logged: per connection (target, wait) and per record (accounting line with every route's outcome).
    expect(relay.logs.some((l) => l.includes('"outcome":"dropped:stale"') && l.includes('"target"'))).toBe(true);
    expect(relay.logs.some((l) => l.includes('delivered, but not by every requested route') && l.includes('"static":"dropped:stale"'))).toBe(true);

    // The ring has room again and the rpc route carries new transactions.
    const later = Array.from({ length: 10 }, (_, i) => legacyTransfer(80_000 + i));
    for (const tx of later) expect(await submit(tx.base64)).toBe(200);
    const got = () => new Set(upstream.received.map((r) => r.tx.toString('base64')));
    await until(() => [...accepted, ...later].every((tx) => got().has(tx.base64)), 5_000);
    await until(async () => (await metricNow(relay.rpcUrl, 'slotrelay_egress_records_total', 'stage="released"')) === accepted.length + later.length, 5_000, 20);
  });
});
