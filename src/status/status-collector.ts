// Gathers the status page's frame (front thread, cold: once per admin.intervalMs while at least one viewer is
// connected, never otherwise; see admin-server.ts). Reads only what the relay already counts: the egress workers'
// shared counters (what /metrics renders), the health monitor's report, the telemetry snapshot, the rings, the keys'
// usage counters, the receipts' landing counts and outcome bytes. Nothing here runs on a request's path.
import type { HealthReport } from '../health/health-monitor.js';
import type { KeyTable, KeyRequestCounts } from '../admission/key-table.js';
import type { LandingCounts } from '../receipts/receipt-metrics.js';
import { SLOT_BUCKETS } from '../receipts/receipt-metrics.js';
import type { ReceiptFailure } from '../receipts/receipt-table.js';
import type { LeaderReport } from '../receipts/leader-counters.js';
import { CONNECTION_STATES, EGRESS_OUTCOMES, QUIC_COUNTER, ROUTE_BY_ID, ROUTE_COUNT, egressCounterIndex } from '../shm/layout.js';
import type { SnapshotReader } from '../telemetry/snapshot.js';
import { nextLeaders } from './next-leaders.js';
import type { FailureRow, KeyRow, RouteFigures, RouteRow, StatusFrame } from './status-frame.js';

/** The window the per-route and per-key figures cover. */
export const WINDOW_MS = 60_000;
/** Failures kept and shown. */
const FAILURES_SHOWN = 20;
/**
 * Receipts looked at per tick at most: those accepted since the last tick and those whose routes were still pending
 * then (~3 s at 10k tx/s; failures already listed stay in the list).
 */
const FAILURE_SCAN = 32_768;

/** Where each figure comes from: main.ts wires these to the relay's parts. */
export interface StatusSources {
  readonly health: () => HealthReport;
  /** Summed egress worker counters (EgressPool.summedCounters). */
  readonly counters: () => Float64Array;
  readonly ringDepths: () => { readonly labels: readonly string[]; readonly depths: readonly number[] };
  /** Open QUIC connections per QUIC thread (EgressPool.quicThreadConnections). */
  readonly quicThreadConnections: () => number[];
  readonly snapshot: SnapshotReader | null;
  readonly keys: KeyTable;
  /** Null when receipts are off. */
  readonly receipts: {
    landingCounts(): LandingCounts;
    recentFailures(floor: number, scanMax: number, limit: number): { failures: ReceiptFailure[]; floor: number };
  } | null;
  /** Per-leader counters, every key's (the operator's view); null or absent: none kept. */
  readonly leaderCounters?: (() => LeaderReport) | null;
  /** The QUIC ingress's open connections and queue (null when it is off or not started yet). */
  readonly quicIngress: () => { readonly connections: number; readonly queueDepth: number; readonly held: number } | null;
  /** Routes this relay offers (ROUTE_IDS bits). */
  readonly routeMask: number;
  readonly now?: () => number;
}

interface Sample {
  readonly atMs: number;
  /** Per route x outcome, as egressCounterIndex lays them out (copied). */
  readonly outcomes: Float64Array;
  readonly landing: LandingCounts | null;
  readonly usage: Map<KeyRequestCounts, readonly [number, number, number]>;
}

const SENT = EGRESS_OUTCOMES.indexOf('sent');
const FAILED = EGRESS_OUTCOMES.indexOf('failed');

function figures(read: (o: number) => number): RouteFigures {
  let dropped = 0;
  const droppedBy: Record<string, number> = {};
  for (let o = 0; o < EGRESS_OUTCOMES.length; o++) {
    if (o === SENT || o === FAILED) continue;
    const v = read(o);
    if (v === 0) continue;
    dropped += v;
    droppedBy[EGRESS_OUTCOMES[o].slice('dropped:'.length)] = v;
  }
  return { sent: read(SENT), failed: read(FAILED), dropped, droppedBy };
}

/** Said of a quantile beyond the largest bucket bound (150 slots): the page shows "> 150". */
export const BEYOND_BUCKETS = SLOT_BUCKETS[SLOT_BUCKETS.length - 1] + 1;

/** The bucket bound the q-quantile of `counts` falls in (null: no landings). */
function quantileBound(counts: readonly number[], q: number): number | null {
  let n = 0;
  for (const c of counts) n += c;
  if (n === 0) return null;
  let cum = 0;
  for (let i = 0; i < counts.length; i++) {
    cum += counts[i];
    if (cum >= q * n) return i < SLOT_BUCKETS.length ? SLOT_BUCKETS[i] : BEYOND_BUCKETS;
  }
  return null;
}

export class StatusCollector {
  private readonly samples: Sample[] = [];
  private failures: FailureRow[] = [];
  /** The receipt sequence number of each kept failure row. */
  private seqOf = new Map<FailureRow, number>();
  /** The oldest receipt the next failure scan must look at (receipts.recentFailures). */
  private scanFloor = 0;
  private readonly now: () => number;

  constructor(private readonly s: StatusSources) {
    this.now = s.now ?? Date.now;
  }

  /** Forget the window (the last viewer left: nothing is kept while nobody looks). */
  reset(): void {
    this.samples.length = 0;
    this.failures = [];
    this.seqOf = new Map();
    this.scanFloor = 0;
  }

  private usageObjects(): Map<KeyRequestCounts, string> {
    // A key whose plan changed has a new entry sharing the old one's usage: count each usage object once.
    const out = new Map<KeyRequestCounts, string>();
    for (const e of this.s.keys.entries) if (e !== undefined && !out.has(e.usage)) out.set(e.usage, e.name);
    return out;
  }

  private sample(nowMs: number, usage: Map<KeyRequestCounts, string>): Sample {
    const c = this.s.counters();
    const outcomes = new Float64Array(ROUTE_COUNT * EGRESS_OUTCOMES.length);
    for (let r = 0; r < ROUTE_COUNT; r++) for (let o = 0; o < EGRESS_OUTCOMES.length; o++) outcomes[r * EGRESS_OUTCOMES.length + o] = c[egressCounterIndex(r, o)];
    const u = new Map<KeyRequestCounts, readonly [number, number, number]>();
    for (const k of usage.keys()) u.set(k, [k.requests, k.refused, k.rateLimited]);
    const s: Sample = { atMs: nowMs, outcomes, landing: this.s.receipts?.landingCounts() ?? null, usage: u };
    this.samples.push(s);
    // Keep one sample at or before the window's start so the oldest-to-newest delta spans the whole window.
    while (this.samples.length > 2 && this.samples[1].atMs <= nowMs - WINDOW_MS) this.samples.shift();
    return s;
  }

  /** One frame: samples the counters now and reports the window since the oldest kept sample. */
  frame(): StatusFrame {
    const nowMs = this.now();
    const usage = this.usageObjects();
    const cur = this.sample(nowMs, usage);
    const old = this.samples[0];
    const counters = this.s.counters();

    const routes: RouteRow[] = [];
    for (let r = 0; r < ROUTE_COUNT; r++) {
      if ((this.s.routeMask & (1 << r)) === 0) continue;
      const base = r * EGRESS_OUTCOMES.length;
      const route = ROUTE_BY_ID[r];
      const window = figures((o) => cur.outcomes[base + o] - old.outcomes[base + o]);
      const total = figures((o) => cur.outcomes[base + o]);
      let landed = 0;
      let buckets: number[] = [];
      if (cur.landing !== null && old.landing !== null) {
        landed = (cur.landing.landedByRoute[route] ?? 0) - (old.landing.landedByRoute[route] ?? 0);
        const a = old.landing.slotBucketsByRoute[route] ?? [];
        buckets = (cur.landing.slotBucketsByRoute[route] ?? []).map((v, i) => v - (a[i] ?? 0));
      }
      const n = buckets.reduce((x, y) => x + y, 0);
      routes.push({
        route,
        window,
        total,
        landed,
        landedShare: this.s.receipts === null || window.sent === 0 ? null : Math.min(1, landed / window.sent),
        slotsToLand: { p50: quantileBound(buckets, 0.5), p90: quantileBound(buckets, 0.9), n },
      });
    }

    const keys: KeyRow[] = [];
    for (const [u, name] of usage) {
      const was = old.usage.get(u) ?? [0, 0, 0];
      keys.push({
        name,
        requests: u.requests,
        refused: u.refused,
        rateLimited: u.rateLimited,
        window: { requests: u.requests - was[0], refused: u.refused - was[1], rateLimited: u.rateLimited - was[2] },
      });
    }

    const byState: Record<string, number> = {};
    for (let i = 0; i < CONNECTION_STATES.length; i++) byState[CONNECTION_STATES[i]] = counters[QUIC_COUNTER.stateBase + i];
    const rings = this.s.ringDepths();

    return {
      v: 1,
      atMs: nowMs,
      windowMs: nowMs - old.atMs,
      health: this.s.health(),
      routes,
      leaders: nextLeaders(this.s.snapshot, nowMs),
      rings: rings.labels.map((ring, i) => ({ ring, depth: rings.depths[i] ?? 0 })),
      quic: { perThread: this.s.quicThreadConnections(), byState, queued: counters[QUIC_COUNTER.queued], ingress: this.s.quicIngress() },
      keys,
      failures: this.updateFailures(),
      leaderCounters: this.s.leaderCounters?.() ?? null,
    };
  }

  /** The newest receipts' failures merged into the kept list (a receipt's outcomes may change: the newer read wins). */
  private updateFailures(): FailureRow[] {
    const r = this.s.receipts;
    if (r === null) return this.failures;
    const scan = r.recentFailures(this.scanFloor, FAILURE_SCAN, FAILURES_SHOWN);
    this.scanFloor = scan.floor;
    const found = scan.failures;
    if (found.length === 0) return this.failures;
    const bySeq = new Map<number, FailureRow>();
    const seqs = new Map<FailureRow, number>();
    const entries = this.s.keys.entries;
    for (const f of found) {
      const row: FailureRow = { atMs: f.acceptedAtMs, traceId: f.traceId, signature: f.signature, keyName: entries[f.keyId]?.name ?? '', outcomes: f.outcomes, notLanded: f.notLanded };
      bySeq.set(f.seq, row);
      seqs.set(row, f.seq);
    }
    // Older rows not seen again this tick (scrolled past the scan) stay; rows seen again are replaced.
    for (const row of this.failures) {
      const seq = this.seqOf.get(row);
      if (seq !== undefined && !bySeq.has(seq)) {
        bySeq.set(seq, row);
        seqs.set(row, seq);
      }
    }
    const ordered = [...bySeq.entries()].sort((a, b) => b[0] - a[0]).slice(0, FAILURES_SHOWN);
    this.failures = ordered.map(([, row]) => row);
    this.seqOf = seqs;
    return this.failures;
  }
}
