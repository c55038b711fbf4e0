// Per route set figures from one phase's records (CLI process; cold, once per phase): landed %, slots-to-land and
// ms-to-land percentiles, the CDF, drop reasons, duplicates, and the per-slot series the timeline draws.
// Definitions (docs/landing.md): landed = a confirmed (or finalized) status without error seen by the end of the
// tail; slots-to-land = landed slot - the slot the bench saw when it sent; percentiles are nearest-rank over the
// landed transactions; the CDF is over every transaction sent, so it levels off at the landed share.
import type { LocalnetCounters, PhaseResult, TxRecord } from './phase.js';

export interface Percentiles {
  readonly p50: number | null;
  readonly p90: number | null;
  readonly p99: number | null;
  readonly max: number | null;
  readonly mean: number | null;
}

export interface SetFigures {
  readonly sent: number;
  readonly accepted: number;
  readonly landed: number;
  readonly landedFailed: number;
  readonly notLanded: number;
  /** landed / sent x 100. */
  readonly landedPct: number;
  /** The landed share's 95% Wilson interval, in % (src/landing-bench/intervals.ts); absent in older reports. */
  readonly landedCi95?: { readonly lo: number; readonly hi: number };
  readonly slotsToLand: Percentiles;
  readonly msToLand: Percentiles;
  /** How ms-to-land was measured: the localnet's execution time, or the first status poll that saw it. */
  readonly msToLandSource: 'localnet_executed' | 'status_poll';
  /** cdf[k] = share (%) of sent transactions landed within k slots, k = 0 .. cdf.length - 1. */
  readonly cdf: readonly number[];
  /** Why transactions did not land or copies were wasted, by reason (see docs/landing.md). */
  readonly dropReasons: Record<string, number>;
  /**
   * Copies of a transaction that reached a leader after it had landed (the leader refused them as AlreadyProcessed):
   * the fanout's and rebroadcasts' waste. null without the localnet's counters.
   */
  readonly duplicates: number | null;
  /**
   * Copies validators read per transaction sent (localnet counters), null elsewhere, and null for a set interleaved
   * with others: the TPU counters are per validator, not per transaction, so they belong to the run (ScenarioResult.
   * runCounters), not to one of its sets.
   */
  readonly copiesPerTx: number | null;
  /**
   * Distinct cluster slots (as the bench saw them at send time) in which this set sent at least one transaction:
   * interleaved sets of one run show the same count (issue #44 item 1); sets run one after another do not.
   */
  readonly slotsPresent?: number;
  /** First and last of those slots. */
  readonly sendSlots?: { readonly first: number; readonly last: number };
  /** Landed transactions by whose copy landed: `direct` (the relay's identity), `rpc-node`, or `other`. */
  readonly landedVia: Record<string, number>;
  /** The relay's own receipts: landed slots-to-land p50/p90 by its acceptedSlot, rebroadcasts, first routes. */
  readonly relayView: {
    readonly receipts: number;
    readonly slotsToLand: Percentiles;
    readonly rebroadcasts: number;
    readonly firstRoute: Record<string, number>;
    /** The adaptive routing's decisions (docs/adaptive-routing.md): transactions per `widen`, `add_route:<route>`. */
    readonly adaptive?: Record<string, number>;
  };
  /**
   * Send -> the relay knew it processed / finalized (its receipt's landed.processedAt / finalizedAt, issue #43), in ms
   * (the bench's and the relay's clocks are the same host's) and in slots (landed slot / finalizedSlot - send slot),
   * over the receipts that reached that stage. Absent in reports from before issue #43.
   */
  readonly toProcessed?: { readonly ms: Percentiles; readonly slots: Percentiles };
  readonly toFinalized?: { readonly ms: Percentiles; readonly slots: Percentiles };
  /** Request written -> the relay's answer read, as the bench saw it (includes the bench's own queueing). */
  readonly submitMs: Percentiles;
  /** The bench's event-loop delay while it sent (a figure to distrust the run by when it is large). */
  readonly benchLoopDelayMs: { readonly p50: number; readonly p99: number; readonly max: number };
}

export interface TimelineSeries {
  /** First slot of the arrays below. */
  readonly from: number;
  readonly sends: readonly number[];
  readonly landings: readonly number[];
  /** Sends (by send slot) that never landed. */
  readonly lost: readonly number[];
  readonly leaders: readonly string[];
  /**
   * The leader's load per slot (localnet_getSlotLoad; absent on a remote cluster): transactions its TPU read from
   * every sender (the competitor's included), whether its flow-control QoS was saturated, and what it dropped for
   * want of block space.
   */
  readonly load?: { readonly received: readonly number[]; readonly saturated: readonly boolean[]; readonly blockFull: readonly number[] };
}

/** A slot's load as localnet_getSlotLoad answers it. */
export interface SlotLoad {
  readonly slot: number;
  readonly received: number;
  readonly blockFull: number;
  readonly saturated: boolean;
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}

export function percentiles(values: readonly number[]): Percentiles {
  const s = [...values].sort((a, b) => a - b);
  const mean = s.length === 0 ? null : Math.round((s.reduce((a, b) => a + b, 0) / s.length) * 100) / 100;
  return { p50: percentile(s, 50), p90: percentile(s, 90), p99: percentile(s, 99), max: s.length === 0 ? null : s[s.length - 1], mean };
}

const isLanded = (r: TxRecord): boolean => r.confirmed && r.landedSlot !== undefined && (r.err === null || r.err === undefined);

export function slotsToLandOf(r: TxRecord): number {
  return Math.max(0, (r.landedSlot ?? r.sendSlot) - r.sendSlot);
}

type Windows = readonly { readonly before: LocalnetCounters; readonly after: LocalnetCounters }[];

/** The TPU counters' change over every measured window (repeats add up). */
export function counterDelta(windows: Windows): { received: number; notLeader: number; rejectedBy: Record<string, number>; other: Record<string, number> } {
  let received = 0;
  let notLeader = 0;
  const rejectedBy: Record<string, number> = {};
  const other: Record<string, number> = {};
  for (const c of windows) for (const [id, a] of Object.entries(c.after.validators)) {
    const b = c.before.validators[id];
    received += a.received - (b?.received ?? 0);
    notLeader += (a.dropped.not_leader ?? 0) - (b?.dropped.not_leader ?? 0);
    for (const k of ['undecodable', 'invalid', 'block_full'] as const) {
      const d = (a.dropped[k] ?? 0) - (b?.dropped[k] ?? 0);
      if (d > 0) other[k] = (other[k] ?? 0) + d;
    }
    for (const [why, n] of Object.entries(a.rejectedBy)) {
      const d = n - (b?.rejectedBy[why] ?? 0);
      if (d > 0) rejectedBy[why] = (rejectedBy[why] ?? 0) + d;
    }
  }
  return { received, notLeader, rejectedBy, other };
}

/**
 * One set's figures. `lane`: only that lane's records of an interleaved phase, and no counter figures (the run's,
 * runCounters); absent: every record of the phase, with its counters.
 */
export function setFigures(phase: PhaseResult, relayIdentity: string | null, lane?: number): SetFigures {
  const recs = lane === undefined ? phase.records : phase.records.filter((r) => r.lane === lane);
  const landed = recs.filter(isLanded);
  const landedFailed = recs.filter((r) => r.confirmed && r.err !== null && r.err !== undefined).length;
  const slots = landed.map(slotsToLandOf);
  const haveExec = landed.length > 0 && landed.every((r) => r.executedNs !== undefined);
  const ms = landed.map((r) => (haveExec ? Number(r.executedNs! - r.sentHrNs) / 1e6 : r.statusSeenAt! - r.sentAt)).map((x) => Math.round(x * 10) / 10);
  const maxSlot = slots.reduce((a, b) => Math.max(a, b), 0);
  const cdf: number[] = [];
  let within = 0;
  const hist = new Map<number, number>();
  for (const s of slots) hist.set(s, (hist.get(s) ?? 0) + 1);
  for (let k = 0; k <= maxSlot; k++) {
    within += hist.get(k) ?? 0;
    cdf.push(recs.length === 0 ? 0 : Math.round((within / recs.length) * 10_000) / 100);
  }
  const dropReasons: Record<string, number> = {};
  const add = (k: string, n = 1): void => {
    if (n > 0) dropReasons[k] = (dropReasons[k] ?? 0) + n;
  };
  for (const r of recs) {
    if (!r.accepted) add(`refused:${r.refusal ?? 'unknown'}`);
    else if (!isLanded(r)) {
      if (r.confirmed) continue; // landed with an error: counted as landedFailed
      add(r.statusSeenAt !== undefined ? 'not_landed:processed_only' : 'not_landed');
      // What the relay says its routes did with it (its receipt), for the ones that did not land.
      for (const [route, v] of Object.entries(r.receipt?.routes ?? {})) if (v.outcome !== 'sent') add(`${route}:${v.outcome}`);
      // The relay's own reason (its receipt), when it knows one: refusal codes and route errors in full.
      const why = r.receipt?.reason;
      if (why) add(`reason:${why.sent ? 'sent' : 'not_sent'}:${why.code}${why.closeCode !== null ? `:${why.closeCode}` : ''}${why.detail !== null ? `:${why.detail}` : ''}`);
    }
  }
  // Route outcomes other than sent, over every accepted transaction (landed or not): failures the fanout hid.
  for (const r of recs) for (const [route, v] of Object.entries(r.receipt?.routes ?? {})) if (v.outcome !== 'sent' && isLanded(r)) add(`landed_anyway:${route}:${v.outcome}`);
  let duplicates: number | null = null;
  let copiesPerTx: number | null = null;
  if (phase.counters && lane === undefined) {
    const d = counterDelta(phase.counters);
    add('validator:not_leader', d.notLeader);
    for (const [why, n] of Object.entries(d.rejectedBy)) if (why !== 'AlreadyProcessed') add(`validator:rejected:${why}`, n);
    for (const [why, n] of Object.entries(d.other)) add(`validator:${why}`, n);
    duplicates = d.rejectedBy.AlreadyProcessed ?? 0;
    copiesPerTx = recs.length === 0 ? 0 : Math.round((d.received / recs.length) * 100) / 100;
  }
  const landedVia: Record<string, number> = {};
  for (const r of landed) {
    if (r.landedSender === undefined) continue;
    const via = relayIdentity !== null && r.landedSender === relayIdentity ? 'direct' : r.landedSender === null ? 'other' : 'rpc-node';
    landedVia[via] = (landedVia[via] ?? 0) + 1;
  }
  const receipts = recs.filter((r) => r.receipt !== undefined);
  const firstRoute: Record<string, number> = {};
  for (const r of receipts) if (r.receipt!.firstRoute) firstRoute[r.receipt!.firstRoute] = (firstRoute[r.receipt!.firstRoute] ?? 0) + 1;
  const sendSlots = new Set(recs.map((r) => r.sendSlot));
  let firstSlot = Number.MAX_SAFE_INTEGER;
  let lastSlot = 0;
  for (const x of sendSlots) {
    firstSlot = Math.min(firstSlot, x);
    lastSlot = Math.max(lastSlot, x);
  }
  return {
    sent: recs.length,
    accepted: recs.filter((r) => r.accepted).length,
    landed: landed.length,
    landedFailed,
    notLanded: recs.length - landed.length - landedFailed,
    landedPct: recs.length === 0 ? 0 : Math.round((landed.length / recs.length) * 10_000) / 100,
    slotsToLand: percentiles(slots),
    msToLand: percentiles(ms),
    msToLandSource: haveExec ? 'localnet_executed' : 'status_poll',
    cdf,
    dropReasons,
    duplicates,
    copiesPerTx,
    slotsPresent: sendSlots.size,
    ...(sendSlots.size > 0 ? { sendSlots: { first: firstSlot, last: lastSlot } } : {}),
    landedVia,
    relayView: {
      receipts: receipts.length,
      slotsToLand: percentiles(receipts.map((r) => r.receipt!.slotsToLand).filter((x): x is number => x !== null)),
      rebroadcasts: receipts.reduce((a, r) => a + r.receipt!.rebroadcasts, 0),
      firstRoute,
      adaptive: adaptiveTally(receipts.map((r) => r.receipt!.adaptive ?? null)),
    },
    ...stageTimes(receipts),
    submitMs: percentiles(recs.filter((r) => r.submitMs !== undefined).map((r) => r.submitMs!)),
    benchLoopDelayMs: phase.loopDelayMs,
  };
}

/** The run's own counter figures for interleaved sets: validators' reads and refusals over the whole phase. */
export interface RunCounters {
  readonly sent: number;
  readonly copiesPerTx: number;
  readonly duplicates: number;
  readonly validatorDrops: Record<string, number>;
}

export function runCounters(phase: PhaseResult): RunCounters | null {
  if (!phase.counters) return null;
  const d = counterDelta(phase.counters);
  const drops: Record<string, number> = {};
  if (d.notLeader > 0) drops['validator:not_leader'] = d.notLeader;
  for (const [why, n] of Object.entries(d.rejectedBy)) if (why !== 'AlreadyProcessed') drops[`validator:rejected:${why}`] = n;
  for (const [why, n] of Object.entries(d.other)) drops[`validator:${why}`] = n;
  const sent = phase.records.length;
  return { sent, copiesPerTx: sent === 0 ? 0 : Math.round((d.received / sent) * 100) / 100, duplicates: d.rejectedBy.AlreadyProcessed ?? 0, validatorDrops: drops };
}

/** The per-slot series of one phase (`lane`: that lane's records only; the leaders and load are the run's). */
export function timelineSeries(phase: PhaseResult, slotLoad?: readonly SlotLoad[], lane?: number): TimelineSeries {
  const recs = lane === undefined ? phase.records : phase.records.filter((r) => r.lane === lane);
  const from = phase.leadersFrom;
  let last = from;
  for (const r of recs) last = Math.max(last, r.sendSlot, isLanded(r) ? r.landedSlot! : 0);
  const n = last - from + 1;
  const sends = new Array<number>(n).fill(0);
  const landings = new Array<number>(n).fill(0);
  const lost = new Array<number>(n).fill(0);
  for (const r of recs) {
    sends[r.sendSlot - from]++;
    if (isLanded(r)) landings[r.landedSlot! - from]++;
    else lost[r.sendSlot - from]++;
  }
  let load: TimelineSeries['load'];
  if (slotLoad !== undefined && slotLoad.length > 0) {
    const received = new Array<number>(n).fill(0);
    const saturated = new Array<boolean>(n).fill(false);
    const blockFull = new Array<number>(n).fill(0);
    for (const l of slotLoad) {
      const i = l.slot - from;
      if (i < 0 || i >= n) continue;
      received[i] = l.received;
      saturated[i] = l.saturated;
      blockFull[i] = l.blockFull;
    }
    load = { received, saturated, blockFull };
  }
  return { from, sends, landings, lost, leaders: phase.leaders.slice(0, n), ...(load !== undefined ? { load } : {}) };
}

/** Send -> processed and -> finalized as the relay's receipts tell them (ms and slots). */
function stageTimes(recs: readonly TxRecord[]): Required<Pick<SetFigures, 'toProcessed' | 'toFinalized'>> {
  const pMs: number[] = [];
  const pSlots: number[] = [];
  const fMs: number[] = [];
  const fSlots: number[] = [];
  for (const r of recs) {
    const v = r.receipt;
    if (v?.processedAt == null) continue;
    pMs.push(v.processedAt - r.sentAt);
    if (v.landedSlot != null) pSlots.push(Math.max(0, v.landedSlot - r.sendSlot));
    if (v.finalizedAt == null) continue;
    fMs.push(v.finalizedAt - r.sentAt);
    if (v.finalizedSlot != null) fSlots.push(Math.max(0, v.finalizedSlot - r.sendSlot));
  }
  return { toProcessed: { ms: percentiles(pMs), slots: percentiles(pSlots) }, toFinalized: { ms: percentiles(fMs), slots: percentiles(fSlots) } };
}

/** Transactions per adaptive decision: `widen`, `add_route:<route>` (empty when the relay adapted nothing). */
function adaptiveTally(decisions: readonly ({ readonly decisions: readonly string[]; readonly addedRoutes: readonly string[] } | null)[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const d of decisions) {
    if (d === null) continue;
    if (d.decisions.includes('widen')) out.widen = (out.widen ?? 0) + 1;
    for (const r of d.addedRoutes) out[`add_route:${r}`] = (out[`add_route:${r}`] ?? 0) + 1;
  }
  return out;
}
