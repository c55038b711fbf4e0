// The landing bench's definitions on records made by hand: nearest-rank percentiles over landed transactions, the
// CDF over everything sent, what counts as landed, drop reasons from refusals / receipts / TPU counters, duplicates,
// whose copy landed; and the route-set and scenario flags.
import { configSchema } from '../../../src/config/schema.js';
import { describe, expect, it } from 'vitest';
import { parseLandingArgs, parseRouteSet, parseScenario } from '../../../src/landing-bench/options.js';
import type { LocalnetCounters, PhaseResult, TxRecord } from '../../../src/landing-bench/phase.js';
import { localnetSection } from '../../../src/landing-bench/relays.js';
import { percentile, setFigures, timelineSeries } from '../../../src/landing-bench/stats.js';

function rec(seq: number, sendSlot: number, over: Partial<TxRecord> = {}): TxRecord {
  return {
    seq,
    lane: 0,
    signature: `sig${seq}`,
    sentAt: 1_000 + seq,
    sentHrNs: 1_000_000_000n + BigInt(seq) * 1_000_000n,
    sendSlot,
    submitStatus: 200,
    accepted: true,
    confirmed: false,
    ...over,
  };
}

const landed = (seq: number, sendSlot: number, slots: number, msExec: number, sender = 'RELAY'): TxRecord =>
  rec(seq, sendSlot, {
    confirmed: true,
    landedSlot: sendSlot + slots,
    err: null,
    statusSeenAt: 1_000 + seq + 500,
    executedNs: 1_000_000_000n + BigInt(seq) * 1_000_000n + BigInt(msExec * 1e6),
    landedSender: sender,
    receipt: { status: 'landed', rebroadcasts: 0, routes: { direct: { outcome: 'sent', targets: 1 } }, firstRoute: 'direct', slotsToLand: slots },
  });

function counters(received: number, notLeader: number, alreadyProcessed: number, expired: number): LocalnetCounters {
  return {
    totalLandings: 0,
    validators: {
      V1: { received, landed: 0, dropped: { not_leader: notLeader, undecodable: 0, invalid: 0, rejected: 0 }, rejectedBy: { AlreadyProcessed: alreadyProcessed, BlockhashNotFound: expired } },
    },
  };
}

function phase(records: TxRecord[], withCounters = true): PhaseResult {
  return {
    records,
    startedAt: 0,
    lastSendAt: 0,
    endedAt: 0,
    counters: withCounters ? [{ before: counters(10, 1, 1, 0), after: counters(30, 6, 4, 2) }] : undefined,
    leadersFrom: 100,
    leaders: ['V1', 'V1', 'V1', 'V1', 'V2', 'V2', 'V2', 'V2'],
    pollMs: 400,
    loopDelayMs: { p50: 10, p99: 12, max: 15 },
  };
}

describe('landing bench figures', () => {
  it('nearest-rank percentiles', () => {
    const s = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(percentile(s, 50)).toBe(5);
    expect(percentile(s, 90)).toBe(9);
    expect(percentile(s, 99)).toBe(10);
    expect(percentile([], 50)).toBeNull();
  });

  it('landed %, slots/ms percentiles over landed, the CDF over all sent, drops, duplicates, copies, landed via', () => {
    const records = [
      landed(0, 100, 0, 3),
      landed(1, 100, 0, 5),
      landed(2, 101, 1, 300),
      landed(3, 102, 3, 1_300, 'RPCNODE'),
      rec(4, 102, { confirmed: true, landedSlot: 103, err: { InstructionError: [0, 'Custom'] } }), // landed failed
      rec(5, 103, { receipt: { status: 'not_landed', rebroadcasts: 2, routes: { direct: { outcome: 'dropped:stale', targets: 1 } }, firstRoute: null, slotsToLand: null } }),
      rec(6, 103, { landedSlot: 104, err: null, statusSeenAt: 2_000 }), // processed but never confirmed by the deadline
      rec(7, 103, { accepted: false, submitStatus: 429, refusal: 'rate_limited' }),
    ];
    const f = setFigures(phase(records), 'RELAY');
    expect(f.sent).toBe(8);
    expect(f.accepted).toBe(7);
    expect(f.landed).toBe(4);
    expect(f.landedFailed).toBe(1);
    expect(f.notLanded).toBe(3);
    expect(f.landedPct).toBe(50);
    expect(f.slotsToLand).toMatchObject({ p50: 0, p90: 3, p99: 3, max: 3 });
    expect(f.msToLandSource).toBe('localnet_executed');
    expect(f.msToLand).toMatchObject({ p50: 5, p90: 1_300 });
    // Within 0 slots: 2 of 8 sent; within 1: 3; within 3: 4 (the CDF stops at the landed share).
    expect(f.cdf).toEqual([25, 37.5, 37.5, 50]);
    expect(f.dropReasons).toEqual({
      'refused:rate_limited': 1,
      not_landed: 1,
      'direct:dropped:stale': 1,
      'not_landed:processed_only': 1,
      'validator:not_leader': 5,
      'validator:rejected:BlockhashNotFound': 2,
    });
    expect(f.duplicates).toBe(3);
    expect(f.copiesPerTx).toBe(2.5);
    expect(f.landedVia).toEqual({ direct: 3, 'rpc-node': 1 });
    expect(f.relayView.firstRoute).toEqual({ direct: 4 });
    expect(f.relayView.rebroadcasts).toBe(2);
  });

  it('without localnet records, ms-to-land is the status poll and the counters are unknown', () => {
    const records = [landed(0, 100, 1, 3), landed(1, 100, 2, 4)].map((r) => ({ ...r, executedNs: undefined }));
    const f = setFigures(phase(records, false), null);
    expect(f.msToLandSource).toBe('status_poll');
    expect(f.msToLand.p50).toBe(500);
    expect(f.duplicates).toBeNull();
    expect(f.copiesPerTx).toBeNull();
  });

  it('the timeline counts sends by send slot and landings by landed slot', () => {
    const t = timelineSeries(phase([landed(0, 100, 0, 1), landed(1, 100, 2, 1), rec(2, 101)]));
    expect(t.from).toBe(100);
    expect(t.sends).toEqual([2, 1, 0]);
    expect(t.landings).toEqual([1, 0, 1]);
    expect(t.lost).toEqual([0, 1, 0]);
    expect(t.leaders).toEqual(['V1', 'V1', 'V1']);
  });
});

describe('landing bench flags', () => {
  it('route sets: names, default fanout, refusals', () => {
    expect(parseRouteSet('direct:window-aware', false)).toEqual({ name: 'direct (window-aware)', routes: ['direct'], fanout: 'window-aware' });
    expect(parseRouteSet('direct:next-leaders', false).name).toBe('direct (next-leaders)');
    expect(parseRouteSet('rpc', false)).toEqual({ name: 'rpc', routes: ['rpc'], fanout: null });
    expect(parseRouteSet('direct+rpc', false)).toEqual({ name: 'direct+rpc', routes: ['direct', 'rpc'], fanout: 'window-aware' });
    expect(parseRouteSet('direct', true)).toEqual({ name: 'direct', routes: ['direct'], fanout: null });
    expect(() => parseRouteSet('direct:next-leaders', true)).toThrow(/relay's routes.direct.fanout/);
    expect(() => parseRouteSet('rpc:window-aware', false)).toThrow(/direct route only/);
    expect(() => parseRouteSet('carrier-pigeon', false)).toThrow(/unknown route/);
  });

  it('scenarios map to the config localnet: section', () => {
    const s = parseScenario('slot-ms=200,lossy-leader=20,leader-drop=10,rpc-delay-ms=5');
    expect(s).toMatchObject({ slotMs: 200, leaderLossPct: 20, leaderTxDropPct: 10, qos: true, linkDelayMs: 0, rpcDelayMs: 5 });
    expect(s.name).toBe('200 ms slots, leader 20% packet loss, leader drops 10% of txs, RPC node 5 ms away');
    const perfect = { oneWayDelayMs: 0, lossPct: 0, txDropPct: 0 };
    expect(localnetSection(s)).toEqual({
      slotMs: 200,
      qos: { enabled: true },
      links: [{ oneWayDelayMs: 0, lossPct: 20, txDropPct: 10 }, perfect, perfect, perfect],
      rpc: { oneWayDelayMs: 5 },
    });
    expect(localnetSection(parseScenario('slot-ms=400,qos=off'))).toEqual({ slotMs: 400, qos: { enabled: false } });
    expect(() => parseScenario('slot-ms=100')).toThrow(/slot-ms/);
    expect(() => parseScenario('qos=maybe')).toThrow(/qos=on/);
  });

  it('congestion scenarios (issue #26): presets, overrides, and the localnet section they make', () => {
    const hot = parseScenario('hot-leader');
    expect(hot).toMatchObject({ name: 'hot-leader', qosModel: 'flow-control', capacityTps: 600, blockCapacity: 200, relayStakeSol: 0 });
    expect(hot.competitor).toMatchObject({ tps: 1000, stakeSol: 27_000_000, microLamportsPerCu: 10_000, hot: 'leader' });
    const id = '11111111111111111111111111111112';
    const section = localnetSection(parseScenario('unstaked-vs-staked'), id, 4242);
    expect(section).toMatchObject({
      qos: { enabled: true, model: 'flow-control', capacityTps: 600 },
      blockCapacity: 200,
      competitors: [{ tps: 1000, stakeSol: 27_000_000, microLamportsPerCu: 10_000, validator: 0 }],
      stakedPeers: [{ identity: id, stakeSol: 30_000_000 }],
      blockEngine: { rateLimitPerSecond: 0, port: 4242, stakeSol: 1_000_000 },
      rpc: { stakeSol: 1_000_000 },
    });
    expect(localnetSection(parseScenario('hot-window,every=8,hot-slots=2')).competitors).toEqual([
      { name: 'competitor', tps: 1000, stakeSol: 27_000_000, microLamportsPerCu: 10_000, everySlots: 8, hotSlots: 2 },
    ]);
    // Every section a preset makes is one the relay's config accepts.
    for (const p of ['hot-leader', 'hot-window', 'unstaked-vs-staked', 'flow-control']) {
      expect(() => configSchema.parse({ localnet: localnetSection(parseScenario(p), id, 4242) }), p).not.toThrow();
    }
    expect(() => parseScenario('hot-spot')).toThrow(/unknown scenario/);
    expect(() => parseScenario('capacity=100')).toThrow(/qos-model=flow-control/);
  });

  it('--relay-retries sets the bench relays\' own rebroadcast (not a request field), --warmup the uncounted warm-up', () => {
    const o = parseLandingArgs(['--relay-retries', '0', '--warmup', '5'], {});
    expect(o).toMatchObject({ relayRetries: 0, warmupMs: 5_000, maxRetries: undefined });
    expect(parseLandingArgs([], {})).toMatchObject({ relayRetries: undefined, warmupMs: undefined });
    expect(() => parseLandingArgs(['--relay-retries', '-1'], {})).toThrow(/--relay-retries/);
    expect(() => parseLandingArgs(['--warmup', '0'], {})).toThrow(/--warmup/);
    expect(() =>
      parseLandingArgs(['--rpc', 'http://x:8899', '--relay', 'http://r:8080', '--keypair', 'k.json', '--relay-retries', '0'], { SLOTRELAY_KEY: 'k' }),
    ).toThrow(/--relay-retries: with --relay/);
  });

  it('a remote target needs all of --rpc, --relay, --keypair and a key', () => {
    expect(() => parseLandingArgs(['--rpc', 'http://x:8899'], {})).toThrow(/go together/);
    expect(() => parseLandingArgs(['--rpc', 'http://x:8899', '--relay', 'http://r:8080', '--keypair', 'k.json'], {})).toThrow(/--key/);
    const o = parseLandingArgs(['--rpc', 'http://x:8899', '--relay', 'http://r:8080', '--keypair', 'k.json'], { SLOTRELAY_KEY: 'k' });
    expect(o.sets.map((s) => s.name)).toEqual(['direct', 'rpc', 'direct+rpc']);
    expect(o.scenarios).toHaveLength(1);
    const d = parseLandingArgs([], {});
    expect(d.sets.map((s) => s.name)).toEqual(['direct (window-aware)', 'direct (next-leaders)', 'rpc', 'direct+rpc']);
    expect(d).toMatchObject({ ratePerSecond: 100, durationMs: 60_000, out: 'bench/results/landing' });
  });
});
