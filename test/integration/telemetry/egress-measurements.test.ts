// Route measurements from real egress, end to end: the real relay process (direct route on, one static peer, the
// telemetry probe OFF so nothing but the egress connections measures anything) sends real transactions over QUIC to
// the localnet's leaders, one of whose listeners is 60 ms away one way. The egress workers' connection reports reach
// the telemetry thread, and getLeaderSlots shows, for that far leader, a measured direct path whose latency reflects
// the delay and `selected` on the static peer instead; near leaders' direct paths are measured and fast. The static
// peer is a near validator's TPU, so its one connection also measures that validator's direct path.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { ensureDistFresh } from '../../unit/telemetry/dist-fresh.js';

const FAR_MS = 60;
let localnet: Localnet;
let relay: RelayHandle;

type Path = { provider: string; pathRegion: string; latencyMs: number; measured: boolean; selected: boolean };
type Row = { slot: number; identity: string; pingToLeaders: { region: string; latencyMs: number; estimated: boolean }[]; txPaths: Path[]; routeScores: any[] };

async function leaderSlots(start: number, limit = 100): Promise<Row[] | null> {
  const res = await fetch(relay.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getLeaderSlots', params: [start, limit] }),
  });
  const j = (await res.json()) as { result?: { data: Row[] } };
  return j.result?.data ?? null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  ensureDistFresh();
  // Validator 1 is far: 60 ms on every datagram in each direction (QUIC handshake RTT >= 120 ms).
  localnet = await startLocalnet({ validators: 3, slotMs: 100, oneWayDelaysMs: [0, FAR_MS, 0] });
  const near = localnet.validators[0];
  relay = await startRelay({
    upstream: { rpcUrl: localnet.rpcUrl },
    log: { level: 'warn' },
    routes: { direct: { enabled: true, fanout: 'next-leaders', leaders: 2 }, static: { peers: [near.tpuQuic] } },
    telemetry: {
      region: 'fra',
      regions: [{ name: 'fra', latitude: 50.11, longitude: 8.68 }],
      locations: { entries: localnet.validators.map((v, i) => ({ identity: v.identity, dataCenterKey: `fra-dc${i}`, region: 'fra', latitude: 50.11, longitude: 8.68 })) },
      paths: [{ provider: 'static:near', kind: 'static', peer: near.tpuQuic, region: 'fra' }],
      probe: { enabled: false },
      maxSnapshotAgeMs: 2_000,
      horizonSlots: 200,
    },
  });
}, 60_000);

afterAll(async () => {
  await relay?.stop();
  await localnet?.stop();
});

describe('live egress measurements in getLeaderSlots', () => {
  it('the far leader\'s direct path is measured slow and `selected` moves to the static peer; near leaders are measured fast', async () => {
    const [near, far, near2] = localnet.validators;
    // Send real transactions over the direct route (next-leaders, 2 ahead: every validator gets some) for a while.
    let sending = true;
    const sender = (async () => {
      while (sending) {
        const tx = legacyTransfer();
        await fetch(`${relay.relayUrl}/v1/submit`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
          body: JSON.stringify({ transaction: tx.base64, routes: ['direct'], maxRetries: 0 }),
        });
        await sleep(20);
      }
    })();
    try {
      const byId = async (): Promise<Map<string, Row> | null> => {
        const rows = await leaderSlots(localnet.clock.current);
        if (rows === null) return null;
        const m = new Map<string, Row>();
        for (const r of rows) if (!m.has(r.identity)) m.set(r.identity, r);
        return m;
      };
      const direct = (r: Row | undefined) => r?.txPaths.find((p) => p.provider === 'direct');
      let rows: Map<string, Row> | null = null;
      const deadline = Date.now() + 20_000;
      for (;;) {
        rows = await byId();
        const ok = rows !== null && [near, far, near2].every((v) => direct(rows!.get(v.identity))?.measured === true) && rows.get(far.identity)!.txPaths.find((p) => p.provider === 'static:near')?.measured;
        if (ok) break;
        if (Date.now() > deadline) throw new Error(`egress measurements never reached the snapshot: ${JSON.stringify(rows && [...rows.values()].map((r) => r.txPaths))}`);
        await sleep(100);
      }
      const farRow = rows!.get(far.identity)!;
      const farDirect = direct(farRow)!;
      // One way: handshake RTT / 2 (>= the 60 ms delay) + the send latency.
      expect(farDirect).toMatchObject({ provider: 'direct', pathRegion: 'fra', measured: true, selected: false });
      expect(farDirect.latencyMs).toBeGreaterThanOrEqual(FAR_MS);
      expect(farDirect.latencyMs).toBeLessThan(FAR_MS + 60);
      expect(farRow.pingToLeaders[0]).toMatchObject({ region: 'fra', estimated: false });
      expect(farRow.pingToLeaders[0].latencyMs).toBeGreaterThanOrEqual(2 * FAR_MS);
      // The static peer (a near TPU, measured by its own pinned connection) + 0.5 ms onward estimate wins.
      const farStatic = farRow.txPaths.find((p) => p.provider === 'static:near')!;
      expect(farStatic).toMatchObject({ measured: true, selected: true });
      expect(farStatic.latencyMs).toBeLessThan(FAR_MS);
      expect(farRow.routeScores[0].tx_latency_ms).toBe(farStatic.latencyMs);
      for (const v of [near, near2]) {
        const d = direct(rows!.get(v.identity))!;
        expect(d.measured).toBe(true);
        expect(d.latencyMs).toBeLessThan(FAR_MS);
        expect(d.latencyMs).toBeLessThan(farDirect.latencyMs);
      }
      // Before any measurement, the far leader's direct path was the estimate (0.5 ms one way, same city) and would
      // have been selected over the unmeasured static peer (hop estimate 100 ms): it is the real measurement that moved it.
    } finally {
      sending = false;
      await sender;
    }
  });
});
