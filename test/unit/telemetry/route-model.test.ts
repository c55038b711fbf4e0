// Route model, txPath derivation from the configured routes, measurement classification and the probe budget.
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { MeasurementStore, classify, directKey, fromConnectionReports, pathKey } from '../../../src/telemetry/measurements.js';
import { buildRoutePlan, type OfferedRoutes } from '../../../src/config/route-plan.js';
import { telemetryPathIssues, txPathSpecs } from '../../../src/config/tx-paths.js';
import { EGRESS_WINDOW_MS, ProbePlanner } from '../../../src/telemetry/probe.js';
import { RouteModel, type LeaderInputs, type PathMeasurement } from '../../../src/telemetry/route-model.js';

const PEER_A = '10.0.0.1:8009';
const PEER_B = '10.0.0.2:8009';

function telemetry(extra: Record<string, unknown> = {}) {
  return configSchema.parse({
    telemetry: {
      region: 'fra',
      regions: [
        { name: 'fra', latitude: 50.11, longitude: 8.68, marketLatencyMs: 1.005 },
        { name: 'nyc', latitude: 40.71, longitude: -74.0, marketLatencyMs: 0.333 },
      ],
      ...extra,
    },
  }).telemetry;
}

const routes = (o: Partial<OfferedRoutes> = {}): OfferedRoutes => ({ direct: true, staticPeers: [], jito: false, ...o });

function row(model: RouteModel, l: Partial<LeaderInputs> = {}): any {
  const tail = model.tail({
    identity: 'Leader1111111111111111111111111111111111111',
    stake: 5,
    tpuQuic: '10.1.0.1:8009',
    location: { dataCenterKey: 'fra-1', region: 'fra', latitude: 50.11, longitude: 8.68 }, // onward from fra: 1 ms base RTT
    direct: undefined,
    hop: () => undefined,
    ...l,
  });
  return JSON.parse('{"slot":1,' + tail);
}

/** A printed number as integer hundredths, asserting it has at most two decimals. */
function h(x: number): number {
  const text = JSON.stringify(x);
  expect(text).toMatch(/^\d+(\.\d{1,2})?$/);
  const [i, f = ''] = text.split('.');
  return Number(i) * 100 + Number(f.padEnd(2, '0'));
}

describe('txPaths come from the configured routes', () => {
  it('direct when offered, one entry per static peer (annotated or not), jito when configured; telemetry.paths only annotates', () => {
    const t = telemetry({ paths: [{ provider: 'static:ams-1', kind: 'static', peer: PEER_B, region: 'nyc', hopLatencyMs: 7, doublezeroAvailable: true }] });
    const specs = txPathSpecs(t, routes({ staticPeers: [PEER_A, PEER_B], jito: true }));
    expect(specs).toEqual([
      { provider: 'direct', kind: 'direct', region: 'fra', peer: null, hopLatencyMs: null, doublezeroAvailable: false },
      { provider: `static:${PEER_A}`, kind: 'static', region: 'fra', peer: PEER_A, hopLatencyMs: null, doublezeroAvailable: false },
      { provider: 'static:ams-1', kind: 'static', region: 'nyc', peer: PEER_B, hopLatencyMs: 7, doublezeroAvailable: true },
      { provider: 'jito', kind: 'partner', region: 'fra', peer: null, hopLatencyMs: null, doublezeroAvailable: false },
    ]);
    expect(txPathSpecs(t, routes({ direct: false })).map((s) => s.provider)).toEqual([]);
  });

  it('the route plan offers what the relay delivers by', () => {
    const c = configSchema.parse({
      upstream: { rpcUrl: 'http://127.0.0.1:8899' },
      routes: { direct: { enabled: true }, static: { peers: [PEER_A] }, jito: { url: 'http://127.0.0.1:1' } },
    });
    expect(buildRoutePlan(c)).toMatchObject({ direct: true, staticPeers: [PEER_A], jito: true });
    expect(buildRoutePlan(configSchema.parse({ routes: { direct: { enabled: true } } })).direct).toBe(false); // no upstream
  });

  it('an annotation that matches no configured route is refused (the drift the old separate list allowed)', () => {
    const t = telemetry({
      paths: [
        { provider: 'static:gone', kind: 'static', peer: '10.9.9.9:1', region: 'fra' },
        { provider: `static:${PEER_A}`, kind: 'static', region: 'fra' },
        { provider: 'static:again', kind: 'static', peer: PEER_A, region: 'fra' },
        { provider: 'jito', kind: 'partner', region: 'fra' },
        { provider: 'acme', kind: 'partner', region: 'fra' },
      ],
    });
    const issues = telemetryPathIssues(t, routes({ staticPeers: [PEER_A] }));
    expect(issues).toEqual([
      expect.stringMatching(/^telemetry\.paths\.0: static path "static:gone" matches no routes\.static\.peers entry/),
      expect.stringMatching(/^telemetry\.paths\.2: annotates the same path as telemetry\.paths\.1/),
      expect.stringMatching(/^telemetry\.paths\.3: partner "jito" is annotated but routes\.jito is not configured/),
      expect.stringMatching(/^telemetry\.paths\.4: partner "acme" is not a route this relay has/),
    ]);
    expect(telemetryPathIssues(telemetry({ paths: [{ provider: `static:${PEER_A}`, kind: 'static', region: 'nyc' }] }), routes({ staticPeers: [PEER_A] }))).toEqual([]);
  });
});

describe('measurements land where the snapshot reads them', () => {
  const lookup = {
    identityOfTarget: (t: string) => ({ [PEER_A]: 'ValA', '10.1.0.1:8009': 'Leader' } as Record<string, string>)[t],
    staticPathOfPeer: (t: string) => (t === PEER_A ? 'static:ams' : undefined),
  };

  it('a live connection is the direct path of the validator at that address and the hop of the static peer there', () => {
    expect(classify({ target: '10.1.0.1:8009', handshakeRttMs: 3 }, lookup)).toEqual([directKey('Leader')]);
    expect(classify({ target: PEER_A, handshakeRttMs: 3 }, lookup)).toEqual([directKey('ValA'), pathKey('static:ams')]);
    expect(classify({ target: '10.7.7.7:1', handshakeRttMs: 3 }, lookup)).toEqual([]);
  });

  it('explicit items: direct by identity or TPU address; any other provider is that path\'s hop', () => {
    expect(classify({ identity: 'X', provider: 'direct', handshakeRttMs: 1 }, lookup)).toEqual([directKey('X')]);
    expect(classify({ target: '10.1.0.1:8009', provider: 'direct', handshakeRttMs: 1 }, lookup)).toEqual([directKey('Leader')]);
    expect(classify({ identity: 'X', provider: 'static:ams', handshakeRttMs: 1 }, lookup)).toEqual([pathKey('static:ams')]);
  });

  it('fromConnectionReports keeps active connections only, by target, with the send p50', () => {
    const base = { handshakeMs: 4, sendLatencyCount: 3, sendLatencyP50Us: 25 };
    expect(
      fromConnectionReports([
        { ...base, target: 'a:1', state: 'active' },
        { ...base, target: 'b:1', state: 'retrying' },
        { ...base, target: 'c:1', state: 'active', handshakeMs: NaN },
        { ...base, target: 'd:1', state: 'active', sendLatencyCount: 0 },
        { ...base, target: 'e:1', state: 'active', rttMs: 6.2, rttAtUnixMs: 1_764_000_000_123 },
        { ...base, target: 'f:1', state: 'active', rttMs: NaN, rttAtUnixMs: NaN },
      ]),
    ).toEqual([
      { target: 'a:1', handshakeRttMs: 4, sendLatencyUs: 25 },
      { target: 'd:1', handshakeRttMs: 4, sendLatencyUs: undefined },
      { target: 'e:1', handshakeRttMs: 4, pathRttMs: 6.2, measuredAtUnixMs: 1_764_000_000_123, sendLatencyUs: 25 },
      { target: 'f:1', handshakeRttMs: 4, sendLatencyUs: 25 },
    ]);
  });

  it('a path RTT is a sample of the time it was measured: the same measurement reported again is not a new one', () => {
    const store = new MeasurementStore(60_000);
    const t = 1_764_000_000_000;
    store.add('k', { handshakeRttMs: 80, pathRttMs: 80.5, measuredAtUnixMs: t }, t + 400);
    // An idle connection's report every second repeats its newest measurement: the row keeps that measurement's time.
    store.add('k', { handshakeRttMs: 80, pathRttMs: 80.5, measuredAtUnixMs: t }, t + 1_400);
    store.add('k', { handshakeRttMs: 80, pathRttMs: 80.5, measuredAtUnixMs: t }, t + 2_400);
    expect(store.get('k', t + 2_500)).toEqual({ handshakeRttMs: 80.5, measuredAt: t, sendLatencyMs: NaN });
    // A new measurement (an idle probe's reply) counts, with its own time; a time ahead of the receiver's clock is capped.
    store.add('k', { handshakeRttMs: 80, pathRttMs: 6.4, measuredAtUnixMs: t + 2_900 }, t + 3_400);
    expect(store.get('k', t + 3_500)).toEqual({ handshakeRttMs: 6.4, measuredAt: t + 2_900, sendLatencyMs: NaN });
    store.add('k', { handshakeRttMs: 80, pathRttMs: 6.1, measuredAtUnixMs: t + 9_000 }, t + 4_400);
    expect(store.get('k', t + 4_500)?.measuredAt).toBe(t + 4_400);
    // Nothing new for longer than the TTL: the path is no longer measured (the row falls back to its estimate).
    expect(store.get('k', t + 4_400 + 60_001)).toBeUndefined();
    // Without a measurement time (a handshake probe, an explicit measurement) the sample is of when it arrived.
    store.add('p', { handshakeRttMs: 12 }, t);
    expect(store.get('p', t)?.measuredAt).toBe(t);
  });
});

describe('route model', () => {
  const m = (rtt: number, sendMs = NaN): PathMeasurement => ({ handshakeRttMs: rtt, measuredAt: 1_764_000_000_000, sendLatencyMs: sendMs });

  it('`selected` is the fastest offered path (ties: the earlier); the own region scores with it', () => {
    const t = telemetry({ paths: [{ provider: 'static:ams', kind: 'static', peer: PEER_A, region: 'fra', hopLatencyMs: 50 }] });
    const model = new RouteModel(t, txPathSpecs(t, routes({ staticPeers: [PEER_A] })));
    const fast = row(model, { direct: m(2, 0.05) });
    expect(fast.txPaths.map((p: any) => [p.provider, p.latencyMs, p.measured, p.selected])).toEqual([
      ['direct', 1.05, true, true],
      ['static:ams', 50.5, false, false], // configured hop 50 + (1 ms base RTT) / 2 onward
    ]);
    expect(fast.routeScores[0]).toMatchObject({ active_region: 'fra', tx_latency_ms: 1.05 });

    const slow = row(model, { direct: m(400, 0.05), hop: (p) => (p === 'static:ams' ? m(4, 0.01) : undefined) });
    expect(slow.txPaths.map((p: any) => [p.provider, p.latencyMs, p.measured, p.selected])).toEqual([
      ['direct', 200.05, true, false],
      ['static:ams', 2.51, true, true],
    ]);
    expect(slow.routeScores[0].tx_latency_ms).toBe(2.51);

    // Equal printed latencies: the earlier path (direct) wins.
    const tie = row(model, { direct: m(5), hop: () => m(4) });
    expect(tie.txPaths.map((p: any) => p.latencyMs)).toEqual([2.5, 2.5]);
    expect(tie.txPaths.map((p: any) => p.selected)).toEqual([true, false]);
  });

  it('without a tpuQuic the direct path is not listed; with no path at all the own region uses half its ping', () => {
    const t = telemetry();
    const r = row(new RouteModel(t, txPathSpecs(t, routes())), { tpuQuic: null });
    expect(r.txPaths).toEqual([]);
    expect(r.routeScores[0].tx_latency_ms * 2).toBeCloseTo(r.pingToLeaders[0].latencyMs, 1);
  });

  it('score_ms equals market_latency_ms + tx_latency_ms exactly as printed', () => {
    const t = telemetry();
    const model = new RouteModel(t, txPathSpecs(t, routes()));
    // 1.005 + 2.004 printed separately rounds to 1 + 2 (summing before rounding would print 3.01).
    const r = row(model, { direct: m(4.008) });
    expect(r.routeScores[0]).toMatchObject({ market_latency_ms: 1, tx_latency_ms: 2, score_ms: 3 });
    for (let i = 0; i < 300; i++) {
      const rr = row(model, { direct: m(Math.random() * 300, Math.random()), location: { dataCenterKey: 'x', region: 'x', latitude: Math.random() * 80, longitude: Math.random() * 300 - 150 } });
      for (const s of rr.routeScores) expect(h(s.score_ms)).toBe(h(s.market_latency_ms) + h(s.tx_latency_ms));
      for (const p of rr.txPaths) h(p.latencyMs);
      for (const p of rr.pingToLeaders) h(p.latencyMs);
    }
  });
});

describe('probe budget (Agave: 8 new connections per minute per client IP)', () => {
  const a = { identity: 'A', tpuQuic: '10.0.0.1:8009' };
  const b = { identity: 'B', tpuQuic: '10.0.0.2:8009' };
  const c = { identity: 'C', tpuQuic: '10.0.0.1:8010' }; // same host, another validator: its own budget

  it('at most one probe per validator per perPeerIntervalMs, whatever the probe interval', () => {
    const p = new ProbePlanner(30_000);
    let handshakes = 0;
    const perTarget = new Map<string, number>();
    for (let now = 0; now < 60_000; now += 5_000) {
      for (const x of p.plan([a, b, c], now)) {
        handshakes++;
        perTarget.set(x.tpuQuic, (perTarget.get(x.tpuQuic) ?? 0) + 1);
      }
    }
    expect(handshakes).toBe(6);
    expect([...perTarget.values()]).toEqual([2, 2, 2]); // 2 a minute each: 6 of Agave's 8 left to the egress
  });

  it('never probes a validator the egress connected to within the last minute', () => {
    const p = new ProbePlanner(30_000);
    p.noteEgress(a.tpuQuic, 1_000);
    expect(p.plan([a, b], 2_000)).toEqual([b]);
    expect(p.plan([a, b], 1_000 + EGRESS_WINDOW_MS - 1)).toEqual([b]);
    expect(p.plan([a, b], 1_000 + EGRESS_WINDOW_MS)).toEqual([a]);
    p.prune(1_000_000);
    expect(p.plan([a, b], 1_000_000)).toEqual([a, b]);
  });

  it('the schema will not let the probe alone exceed 8 a minute', () => {
    expect(() => configSchema.parse({ telemetry: { probe: { perPeerIntervalMs: 5_000 } } })).toThrow();
    expect(configSchema.parse({}).telemetry.probe.perPeerIntervalMs).toBe(30_000);
  });
});
