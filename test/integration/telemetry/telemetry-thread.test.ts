// The real telemetry worker_thread (dist/workers/telemetry-worker.js) following the real embedded localnet (in this
// process): the snapshot's rows match the localnet's schedule, stake and TPU addresses, into the next epoch and,
// once the cluster crossed the boundary, into the one after; the QUIC probe measures this region's ping; `selected`
// moves when a path gets slower (hand-made egress reports through measurementPort(); egress-measurements.test.ts
// does it with real egress connections); the thread is restarted after it dies and keeps publishing into the same
// buffer.
import { RTT_WINDOW_MS } from '../../../src/telemetry/rtt-window.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/log/logger.js';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { postRouteMeasurements } from '../../../src/telemetry/measurements.js';
import { SnapshotReader, rowsSlice, type SnapshotView } from '../../../src/telemetry/snapshot.js';
import { SnapshotLeaderSource } from '../../../src/telemetry/snapshot-leader-source.js';
import { TelemetryThread } from '../../../src/telemetry/telemetry-thread.js';
import { distUrl, ensureDistFresh } from '../../unit/telemetry/dist-fresh.js';
import { waitForValue } from '../../helpers/wait-for.js';

const FAR_MS = 60;
const EPOCH = 64;
/** A static peer nothing connects to in this test: its hop is the configured 50 ms until a report says otherwise. */
const PEER = '10.255.255.1:8009';
let localnet: Localnet;
let thread: TelemetryThread;
let reader: SnapshotReader;

type Row = { slot: number; identity: string; stake: number; pingToLeaders: any[]; txPaths: any[]; routeScores: any[]; location?: any };
const rows = (v: SnapshotView): Row[] => JSON.parse('[' + rowsSlice(v, 0, v.rowCount) + ']');

beforeAll(async () => {
  ensureDistFresh();
  // Validator 1 is "far": 60 ms one way on every datagram (handshake RTT + 120 ms).
  localnet = await startLocalnet({ validators: 3, slotMs: 100, slotsPerEpoch: EPOCH, oneWayDelaysMs: [0, FAR_MS, 0] });
  const config = configSchema.parse({
    telemetry: {
      region: 'fra',
      regions: [
        { name: 'fra', latitude: 50.11, longitude: 8.68, marketLatencyMs: 2 },
        { name: 'nyc', latitude: 40.71, longitude: -74.0, marketLatencyMs: 0 },
      ],
      locations: { entries: localnet.validators.map((v, i) => ({ identity: v.identity, dataCenterKey: `fra-dc${i}`, region: 'fra', latitude: 50.11, longitude: 8.68 })) },
      paths: [{ provider: 'static:peer', kind: 'static', peer: PEER, region: 'fra', hopLatencyMs: 50 }],
      probe: { intervalMs: 60_000, timeoutMs: 1_000 },
      horizonSlots: 100,
    },
  });
  thread = new TelemetryThread({
    telemetry: config.telemetry,
    rpcUrl: localnet.rpcUrl,
    routes: { direct: true, staticPeers: [PEER], jito: false },
    logLevel: 'warn',
    log: createLogger('silent', 'test'),
    workerFile: new URL(distUrl('workers/telemetry-worker.js')),
    allowTestCrash: true,
  });
  thread.start();
  reader = new SnapshotReader(thread.snapshot);
});

afterAll(async () => {
  await thread?.stop();
  await localnet?.stop();
});

describe('telemetry thread against the localnet', () => {
  it('publishes every slot; rows and the leader table match the localnet schedule, stake and TPU addresses', async () => {
    const v = await waitForValue('a snapshot', () => reader.current());
    expect(v.supported).toBe(true);
    expect(Math.abs(v.snapshotSlot - localnet.clock.current)).toBeLessThanOrEqual(2);
    expect(v.firstSlot).toBe(Math.max(0, v.snapshotSlot - 8));
    const byId = new Map(localnet.validators.map((x) => [x.identity, x]));
    for (const r of rows(v)) {
      expect(r.identity).toBe(localnet.schedule.leaderAt(r.slot));
      expect(r.stake).toBe(byId.get(r.identity)!.stake);
      expect(r.location).toMatchObject({ region: 'fra', latitude: 50.11 });
      expect(r.txPaths.map((p) => p.provider)).toEqual(['direct', 'static:peer']);
      expect(r.routeScores.map((s) => s.active_region)).toEqual(['fra', 'nyc']);
      for (const s of r.routeScores) expect(s.score_ms).toBeCloseTo(s.market_latency_ms + s.tx_latency_ms, 2);
      expect(r.routeScores.filter((s) => s.selected)).toHaveLength(1);
    }
    const src = new SnapshotLeaderSource(thread.snapshot, { maxAgeMs: 2_000 });
    for (let s = v.snapshotSlot; s < v.snapshotSlot + 20; s++) {
      const l = src.leaderAt(s)!;
      expect(l.identity).toBe(localnet.schedule.leaderAt(s));
      expect(l.tpuQuic).toBe(byId.get(l.identity)!.tpuQuic);
      expect(l.stake).toBe(byId.get(l.identity)!.stake);
    }
    const g = v.generation;
    await waitForValue('a later generation', () => (reader.current()!.generation > g + 3 ? true : null));
  });

  it('extends into the next epoch: rows past the boundary carry that epoch\'s leaders, and the one after once crossed', async () => {
    const crossesNext = (v: SnapshotView, boundary: number): boolean => v.firstSlot < boundary && v.lastSlot >= boundary;
    const check = (v: SnapshotView, boundary: number): void => {
      const rs = rows(v);
      expect(rs.map((r) => r.slot)).toEqual(Array.from({ length: v.rowCount }, (_, i) => v.firstSlot + i));
      const beyond = rs.filter((r) => r.slot >= boundary);
      expect(beyond.length).toBeGreaterThan(0);
      for (const r of rs) expect(r.identity).toBe(localnet.schedule.leaderAt(r.slot));
      // The epochs really differ (else this would not show the next epoch's schedule was loaded).
      const src = new SnapshotLeaderSource(thread.snapshot);
      expect(beyond.every((r) => src.leaderAt(r.slot)!.identity === r.identity)).toBe(true);
      // The horizon ends where the cluster's schedule knowledge ends: the epoch after the current one.
      const epochEnd = (Math.floor(v.snapshotSlot / EPOCH) + 2) * EPOCH - 1;
      expect(v.lastSlot).toBe(Math.min(v.snapshotSlot + 99, epochEnd));
    };
    // Epoch 0 -> 1.
    const v1 = await waitForValue('a snapshot across slot 64', () => {
      const c = reader.current();
      return c && c.snapshotSlot < EPOCH && crossesNext(c, EPOCH) ? c : null;
    });
    check(v1, EPOCH);
    const differs = rows(v1).some((r) => r.slot >= EPOCH && localnet.schedule.leaderAt(r.slot) !== localnet.schedule.leaderAt(r.slot - EPOCH));
    expect(differs).toBe(true);
    // Once the cluster is in epoch 1, epoch 2's schedule becomes known and rows run past slot 128.
    const v2 = await waitForValue('a snapshot across slot 128', () => {
      const c = reader.current();
      return c && crossesNext(c, 2 * EPOCH) ? c : null;
    }, 20_000);
    check(v2, 2 * EPOCH);
  });

  it('the QUIC probe measures this region\'s ping; other regions stay estimates', async () => {
    const v = await waitForValue('a measured ping', () => {
      const c = reader.current();
      return c && rows(c).find((r) => r.pingToLeaders.some((p) => p.region === 'fra' && p.estimated === false)) ? c : null;
    });
    const near = new Set([localnet.validators[0].identity, localnet.validators[2].identity]);
    const r = rows(v).find((x) => near.has(x.identity) && x.pingToLeaders.some((p) => p.region === 'fra' && !p.estimated))!;
    const fra = r.pingToLeaders.find((p) => p.region === 'fra');
    const nyc = r.pingToLeaders.find((p) => p.region === 'nyc');
    expect(fra.latencyMs).toBeGreaterThan(0);
    expect(fra.latencyMs).toBeLessThan(100); // loopback handshake
    expect(nyc).toMatchObject({ estimated: true });
    expect(nyc.latencyMs).toBeGreaterThan(80); // ~6,200 km, 1.5 route factor at 200 km/ms, round trip
    expect(r.txPaths.find((p) => p.provider === 'direct')).toMatchObject({ measured: true, selected: true });
  });

  it("the measured ping reflects each listener's configured one-way delay", async () => {
    const pingOf = (identity: string): number | null => {
      const c = reader.current();
      const r = c && rows(c).find((x) => x.identity === identity);
      const p = r?.pingToLeaders.find((q) => q.region === 'fra' && q.estimated === false);
      return p ? (p.latencyMs as number) : null;
    };
    const [near, far, near2] = localnet.validators.map((x) => x.identity);
    await waitForValue('measured pings for every validator', () => pingOf(near) !== null && pingOf(far) !== null && pingOf(near2) !== null, 15_000);
    expect(pingOf(far)!).toBeGreaterThanOrEqual(2 * FAR_MS);
    expect(pingOf(far)!).toBeLessThan(2 * FAR_MS + 80);
    expect(pingOf(near)!).toBeLessThan(FAR_MS);
    expect(pingOf(near2)!).toBeLessThan(FAR_MS);
  });

  it('`selected` moves to the static peer when the direct path gets slower, and back', async () => {
    const port = thread.measurementPort();
    // A near validator: the far one's direct path is already slower than the static peer.
    const far = localnet.validators[1].identity;
    let at = localnet.clock.current + 20;
    while (localnet.schedule.leaderAt(at) === far) at++;
    const target = localnet.schedule.leaderAt(at);
    const pathsOf = () => {
      const c = reader.current()!;
      const r = rows(c).find((x) => x.identity === target && x.slot > c.snapshotSlot);
      return r?.txPaths;
    };
    // The ping is the minimum of the last RTT_WINDOW_MS of samples (issue #30 item 2): a slower path shows once its
    // samples are all that is left in the window (as from a live connection reporting every second); a faster one
    // at its first sample (below).
    const slowReports = setInterval(() => postRouteMeasurements(port, [{ identity: target, provider: 'direct', handshakeRttMs: 400, sendLatencyUs: 50 }]), 250);
    const slow = await waitForValue(
      'static selected',
      () => {
        const p = pathsOf();
        return p?.find((x) => x.provider === 'static:peer')?.selected ? p : null;
      },
      RTT_WINDOW_MS + 5_000,
    ).finally(() => clearInterval(slowReports));
    expect(slow.find((x) => x.provider === 'direct')).toMatchObject({ latencyMs: 200.05, measured: true, selected: false });
    // A report by TPU address (as the egress connection cache knows it) moves it back.
    const tpu = localnet.validators.find((x) => x.identity === target)!.tpuQuic;
    postRouteMeasurements(port, [{ target: tpu, provider: 'direct', handshakeRttMs: 1, sendLatencyUs: 20 }]);
    const fast = await waitForValue('direct selected again', () => {
      const p = pathsOf();
      return p?.find((x) => x.provider === 'direct')?.selected ? p : null;
    });
    expect(fast.find((x) => x.provider === 'direct')!.latencyMs).toBeCloseTo(0.52, 2);
  }, RTT_WINDOW_MS + 20_000);

  it('restarts the thread after it dies; the new thread keeps publishing into the same buffer', async () => {
    const before = reader.current()!.generation;
    thread.crashForTest();
    await waitForValue('the restart', () => thread.restarts === 1);
    await waitForValue('publishing again', () => (reader.current()!.generation > before + 3 ? true : null));
    expect(Date.now() - reader.current()!.generatedAtUnixMs).toBeLessThan(1_000);
  });
});
