// Adaptive routing (front thread; adjust()/filed() HOT, the rest a cold 100 ms timer). docs/adaptive-routing.md.
// The relay learns per (leader, route) what is landing now and moves traffic off a leader that parks it.
//
// Where the evidence comes from, with nothing added to the hot paths: the receipts' shared part, which the QUIC
// thread's direct route and the workers' rpc/jito routes already write per transaction (src/shm/receipts-layout.ts:
// outcome, cause with Agave's close code, the slot whose leader the direct route aimed at), and the landing tracker's
// verdicts in the receipt table. A timer reads the receipts accepted since its last pass (two cursors, bounded per tick):
//   - as soon as a route answered: direct not sent for a QUIC reason (stream credit withheld, congestion, refused with
//     a close code, connect timed out, still connecting, its queue full) is bad evidence for the leader it aimed at; an
//     rpc/jito route that failed, for the leader at acceptance;
//   - `judgeAfterMs` after acceptance: for direct, landed at the leader aimed at is good, landed later at another
//     leader half a bad (that leader did not take it), not landed yet a bad; for a partner route that sent it,
//     landed is good and not landed yet is no evidence (it lands on its own schedule: an RPC node's, a block
//     engine's resends).
// The scoreboard (./scoreboard.ts) decays it. A leader whose direct good share is below parkedBelow (with at least
// minEvidence) parks the relay: for its slots, the direct route's fanout gets maxExtraCopies more leaders (the widen
// table the quic-egress thread reads, src/shm/widen-layout.ts) and intake adds the partner routes (routing.adaptive.partners)
// that the transaction's key allows and the relay runs, unless that partner is itself failing at that leader.
// Every decision is written into the receipt (`adaptive`) and counted (slotrelay_adaptive_decisions_total).
import type { RoutingConfig } from '../config/routing-schema.js';
import type { RouteAdvisor } from '../admission/route-advisor.js';
import type { KeyTable } from '../admission/key-table.js';
import type { TextBuilder } from '../metrics/prometheus.js';
import type { LeaderSource } from '../telemetry/leader-source.js';
import { EGRESS_OUTCOMES, ROUTE_BY_ID, ROUTE_COUNT, ROUTE_IDS } from '../shm/layout.js';
import { CAUSE } from '../shm/receipts-layout.js';
import { WidenWriter } from '../shm/widen-layout.js';
import { LANDING, type ReceiptTable } from './receipt-table.js';
import { Scoreboard } from './scoreboard.js';

type AdaptiveConfig = RoutingConfig['adaptive'];

const TICK_MS = 100;
/** Receipts read per tick at most, per cursor (a burst is read over several ticks). */
const SCAN_MAX = 20_000;
/** A route that has not answered this long after acceptance is passed over by the outcome cursor. */
const OUTCOME_WAIT_MS = 5_000;

/**
 * A receipt the quic-egress thread admitted (src/ingress/local-admission.ts) owns its shared entry before the front files
 * its route mask and acceptance time from the thread's note: read in between, those would be the previous
 * occupant's. A scan waits for the note (the scan stops there) for at most OUTCOME_WAIT_MS, then passes it by.
 */
class UnfiledGate {
  private seq = -1;
  private sinceMs = 0;

  /** true: stop the scan at `seq` for now; false: waited long enough, pass it. */
  wait(seq: number, nowMs: number): boolean {
    if (seq !== this.seq) {
      this.seq = seq;
      this.sinceMs = nowMs;
    }
    return nowMs - this.sinceMs < OUTCOME_WAIT_MS;
  }
}
/** Slots ahead whose leaders' verdicts go into the widen table (a few leader windows). */
const PUBLISH_AHEAD_SLOTS = 32;
const DIRECT = ROUTE_IDS.direct;
/** A parking leader stops parking the relay once its direct share reaches parkedBelow + this (or its evidence lapses). */
export const RELEASE_MARGIN = 0.1;
const OUTCOME_SENT = EGRESS_OUTCOMES.indexOf('sent') + 1;
const OUTCOME_FAILED = EGRESS_OUTCOMES.indexOf('failed') + 1;
/** QUIC causes that mean the leader (or the path to it) did not take the transaction. */
const PARKING_CAUSES = new Set<number>([
  CAUSE.no_stream_credit,
  CAUSE.congestion,
  CAUSE.connecting,
  CAUSE.timed_out,
  CAUSE.refused,
  CAUSE.relay_queue_full,
]);
function popcount(m: number): number {
  let n = 0;
  for (let x = m; x !== 0; x &= x - 1) n++;
  return n;
}

/** Decisions as counted: widen (the direct route's extra leaders) and add_route (a partner route added). */
export const ADAPTIVE_DECISIONS = Object.freeze(['widen', 'add_route'] as const);

export interface AdaptiveRoutingOptions {
  readonly config: AdaptiveConfig;
  readonly table: ReceiptTable;
  readonly leaders: LeaderSource;
  readonly keys: KeyTable;
  /** Routes this relay runs (RoutePlan.available). */
  readonly available: number;
  /** The widen table handed to the quic-egress thread. */
  readonly widen: SharedArrayBuffer;
  /** When a receipt is judged on its landing (ms after acceptance). */
  readonly judgeAfterMs: number;
}

/** A parked leader's verdict as intake applies it. */
interface Verdict {
  readonly leader: string;
  /** Partner routes (bits) not failing at that leader. */
  readonly partners: number;
  /** The same routes, best first (their share there; unknown counts as landing; ties in `partners` order). */
  readonly ranked: readonly number[];
  readonly extra: number;
  readonly directShare: number;
}

export interface AdaptiveStatus {
  readonly enabled: boolean;
  /** Leaders parking the relay now (at most 16 listed, worst first), with the direct route's good share there. */
  readonly parkedLeaders: readonly { leader: string; directShare: number }[];
  readonly parkedCount: number;
  readonly leadersTracked: number;
}

export class AdaptiveRouting implements RouteAdvisor {
  readonly scoreboard: Scoreboard;
  private readonly widen: WidenWriter;
  private readonly partnerMask: number;
  private readonly verdicts = new Map<string, Verdict>();
  private outcomeCursor = 0;
  private landingCursor = 0;
  /** A scan stops at a receipt whose front half is not filed yet (a locally admitted one), for a bounded time. */
  private readonly outcomeGate = new UnfiledGate();
  private readonly landingGate = new UnfiledGate();
  private timer: NodeJS.Timeout | null = null;
  /** The slot whose verdict `current` holds (intake looks it up once per slot). */
  private verdictSlot = -2;
  private verdictGen = -1;
  private gen = 0;
  private current: Verdict | null = null;
  /** What adjust() decided for the transaction being accepted (filed() writes it into the receipt). */
  private pendingAdded = 0;
  private pendingExtra = 0;
  private pendingLeader: string | null = null;
  /** decisions[d * ROUTE_COUNT + route]: transactions each decision touched. */
  private readonly decisions = new Float64Array(ADAPTIVE_DECISIONS.length * ROUTE_COUNT);
  /** Evidence read, good and bad, per route. */
  private readonly evidence = new Float64Array(ROUTE_COUNT * 2);
  private readonly widened = new Set<number>();

  constructor(private readonly o: AdaptiveRoutingOptions) {
    this.scoreboard = new Scoreboard({ halfLifeMs: o.config.halfLifeMs, maxLeaders: o.config.maxLeaders });
    this.widen = new WidenWriter(o.widen);
    let m = 0;
    for (const p of o.config.partners) m |= 1 << ROUTE_IDS[p];
    this.partnerMask = m & o.available;
    this.outcomeCursor = this.landingCursor = o.table.newestSeq + 1;
  }

  start(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => this.tick(Date.now()), TICK_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  // ---- HOT: intake ----

  adjust(keyId: number, routeMask: number): number {
    this.pendingLeader = null;
    if ((routeMask & (1 << DIRECT)) === 0) return routeMask;
    const slot = this.o.leaders.currentSlot();
    if (slot !== this.verdictSlot || this.gen !== this.verdictGen) {
      this.verdictSlot = slot;
      this.verdictGen = this.gen;
      this.current = this.verdictNear(slot);
    }
    const v = this.current;
    if (v === null) return routeMask;
    const allowed = this.o.keys.entries[keyId]?.allowedMask ?? 0;
    // At most maxPartners partner routes in all, the request's own included, best first.
    let added = 0;
    let n = popcount(routeMask & this.partnerMask);
    for (let i = 0; i < v.ranked.length && n < this.o.config.maxPartners; i++) {
      const bit = 1 << v.ranked[i];
      if ((allowed & bit) !== 0 && (routeMask & bit) === 0) {
        added |= bit;
        n++;
      }
    }
    this.pendingAdded = added;
    this.pendingExtra = v.extra;
    this.pendingLeader = v.extra > 0 || added !== 0 ? v.leader : null;
    return routeMask | added;
  }

  /**
   * The verdict for a transaction accepted in `slot` (once per slot): the slot's leader's, else that of the leader
   * of a slot within marginSlots after it (the window it reaches), else before it (a slot estimate behind).
   */
  private verdictNear(slot: number): Verdict | null {
    if (slot < 0 || this.verdicts.size === 0) return null;
    const m = this.o.config.marginSlots;
    for (let d = 0; d <= m; d++) {
      const after = this.leaderOf(slot + d);
      const v = after === undefined ? undefined : this.verdicts.get(after);
      if (v !== undefined) return v;
    }
    for (let d = 1; d <= m && slot - d >= 0; d++) {
      const before = this.leaderOf(slot - d);
      const v = before === undefined ? undefined : this.verdicts.get(before);
      if (v !== undefined) return v;
    }
    return null;
  }

  filed(seq: number): void {
    const leader = this.pendingLeader;
    if (leader === null) return;
    this.pendingLeader = null;
    if (this.pendingExtra > 0) this.decisions[0 * ROUTE_COUNT + DIRECT]++;
    const added = this.pendingAdded;
    if (added !== 0) for (let r = 0; r < ROUTE_COUNT; r++) if ((added & (1 << r)) !== 0) this.decisions[1 * ROUTE_COUNT + r]++;
    if (seq !== 0) this.o.table.setAdaptive(seq, added, this.pendingExtra, leader);
  }

  // ---- cold ----

  /** One pass: read new evidence, then recompute the verdicts and the widen table. Public for tests. */
  tick(nowMs: number): void {
    this.readOutcomes(nowMs);
    this.readLandings(nowMs);
    this.decide(nowMs);
  }

  private note(leader: string | undefined, route: number, good: boolean, weight: number, nowMs: number): void {
    if (leader === undefined) return;
    this.scoreboard.note(leader, route, good, weight, nowMs);
    this.evidence[route * 2 + (good ? 0 : 1)] += weight;
  }

  private leaderOf(slot: number): string | undefined {
    return slot < 0 ? undefined : this.o.leaders.leaderAt(slot)?.identity;
  }

  /** The leader a route aimed at: direct's first target slot, else the slot at acceptance. */
  private aimedAt(seq: number, route: number): string | undefined {
    const t = this.o.table;
    const slot = route === DIRECT ? t.targetSlotOf(seq, route) : -1;
    return this.leaderOf(slot >= 0 ? slot : t.acceptedSlotOf(seq));
  }

  private readOutcomes(nowMs: number): void {
    const t = this.o.table;
    const newest = t.newestSeq;
    let seq = Math.max(this.outcomeCursor, newest - t.capacity + 1, 1);
    for (let n = 0; seq <= newest && n < SCAN_MAX; seq++, n++) {
      if (!t.current(seq)) continue;
      if (!t.filed(seq)) {
        if (this.outcomeGate.wait(seq, nowMs)) break;
        continue;
      }
      const mask = t.routeMaskOf(seq);
      // Read once every route answered (or the wait is over), so that no answer is noted twice.
      let waiting = false;
      for (let r = 0; r < ROUTE_COUNT; r++) if ((mask & (1 << r)) !== 0 && t.outcomeByte(seq, r) === 0) waiting = true;
      if (waiting && nowMs - t.acceptedAt(seq) < OUTCOME_WAIT_MS) break;
      for (let r = 0; r < ROUTE_COUNT; r++) {
        if ((mask & (1 << r)) === 0) continue;
        const o = t.outcomeByte(seq, r);
        if (o === 0 || o === OUTCOME_SENT) continue;
        if (r === DIRECT) {
          if (PARKING_CAUSES.has(t.causeOf(seq, r))) this.note(this.aimedAt(seq, r), r, false, 1, nowMs);
        } else if (r !== ROUTE_IDS.static && o === OUTCOME_FAILED) this.note(this.aimedAt(seq, r), r, false, 1, nowMs);
      }
    }
    this.outcomeCursor = seq;
  }

  private readLandings(nowMs: number): void {
    const t = this.o.table;
    const newest = t.newestSeq;
    let seq = Math.max(this.landingCursor, newest - t.capacity + 1, 1);
    for (let n = 0; seq <= newest && n < SCAN_MAX; seq++, n++) {
      if (!t.current(seq)) continue;
      if (!t.filed(seq)) {
        if (this.landingGate.wait(seq, nowMs)) break;
        continue;
      }
      if (nowMs - t.acceptedAt(seq) < this.o.judgeAfterMs) break;
      const state = t.landingState(seq);
      if (state === LANDING.untracked) continue;
      const landing = state === LANDING.landed ? t.landingOf(seq) : null;
      const landedLeader = landing === null ? undefined : landing.leader ?? this.leaderOf(landing.slot);
      for (let r = 0; r < ROUTE_COUNT; r++) {
        if (t.sentAtOf(seq, r) <= 0 || r === ROUTE_IDS.static) continue;
        const aimed = this.aimedAt(seq, r);
        if (r !== DIRECT) {
          // A partner lands on its own schedule (an RPC node's or a block engine's resends): landed by now is good,
          // not yet is no evidence; only its failures (readOutcomes) count against it.
          if (landing !== null) this.note(aimed, r, true, 1, nowMs);
        } else if (landing === null) this.note(aimed, r, false, 1, nowMs);
        else if (landedLeader === aimed) this.note(aimed, r, true, 1, nowMs);
        else this.note(aimed, r, false, 0.5, nowMs);
      }
    }
    this.landingCursor = seq;
  }

  private decide(nowMs: number): void {
    const c = this.o.config;
    const next = new Map<string, Verdict>();
    for (const { leader } of this.scoreboard.leaders(nowMs)) {
      const share = this.scoreboard.share(leader, DIRECT, nowMs, c.minEvidence);
      // Hysteresis: a parking leader is released only above parkedBelow + RELEASE_MARGIN, so a share that hovers
      // around the threshold does not switch the partner routes on and off from one tick to the next.
      const threshold = this.verdicts.has(leader) ? Math.min(1, c.parkedBelow + RELEASE_MARGIN) : c.parkedBelow;
      if (!(share < threshold)) continue;
      let partners = 0;
      const ranked: { r: number; share: number }[] = [];
      for (const name of c.partners) {
        const r = ROUTE_IDS[name];
        if ((this.partnerMask & (1 << r)) === 0) continue;
        const ps = this.scoreboard.share(leader, r, nowMs, c.minEvidence);
        if (ps < c.parkedBelow) continue;
        partners |= 1 << r; // unknown or landing: worth a copy
        ranked.push({ r, share: Number.isNaN(ps) ? 1 : ps });
      }
      ranked.sort((a, b) => b.share - a.share); // stable: ties keep the `partners` order
      // A partner that works there carries the transaction; the widened direct copies would only add reads.
      const extra = partners !== 0 && !c.widenWithPartners ? 0 : c.maxExtraCopies;
      next.set(leader, { leader, partners, ranked: ranked.map((x) => x.r), extra, directShare: share });
    }
    let changed = next.size !== this.verdicts.size;
    for (const [k, v] of next) {
      const old = this.verdicts.get(k);
      if (old === undefined || old.partners !== v.partners || old.extra !== v.extra || old.ranked.join() !== v.ranked.join()) changed = true;
    }
    if (changed) {
      this.verdicts.clear();
      for (const [k, v] of next) this.verdicts.set(k, v);
      this.gen++;
    }
    this.publishWiden();
  }

  /** The widen table for the slots ahead: extra leaders where a parking leader leads. */
  private publishWiden(): void {
    const slot = this.o.leaders.currentSlot();
    if (slot < 0) return;
    let changed = false;
    for (let s = slot; s < slot + PUBLISH_AHEAD_SLOTS; s++) {
      const l = this.leaderOf(s);
      const extra = l === undefined ? 0 : this.verdicts.get(l)?.extra ?? 0;
      const was = this.widened.has(s);
      if (extra > 0 || was) {
        this.widen.set(s, extra);
        if (extra > 0 !== was) changed = true;
        if (extra > 0) this.widened.add(s);
        else this.widened.delete(s);
      }
    }
    for (const s of this.widened) if (s < slot) this.widened.delete(s);
    if (changed) this.widen.publish();
  }

  /** Cold: /health. */
  status(nowMs = Date.now()): AdaptiveStatus {
    const parked = [...this.verdicts.values()].sort((a, b) => a.directShare - b.directShare);
    void nowMs;
    return {
      enabled: true,
      parkedLeaders: parked.slice(0, 16).map((v) => ({ leader: v.leader, directShare: Math.round(v.directShare * 1000) / 1000 })),
      parkedCount: parked.length,
      leadersTracked: this.scoreboard.size,
    };
  }

  /** Leaders parking the relay now. */
  get parkedCount(): number {
    return this.verdicts.size;
  }

  /** Cold: getLeaderSlots: the verdict for a leader, or null when it does not park the relay. */
  verdictFor(leader: string): { parked: true; directShare: number; extraCopies: number; addRoutes: string[] } | null {
    const v = this.verdicts.get(leader);
    if (v === undefined) return null;
    // The partners a transaction of a key allowing them all would get: at most maxPartners, best first.
    return { parked: true, directShare: Math.round(v.directShare * 1000) / 1000, extraCopies: v.extra, addRoutes: v.ranked.slice(0, this.o.config.maxPartners).map((r) => ROUTE_BY_ID[r]) };
  }

  render(tb: TextBuilder): void {
    tb.declare('slotrelay_adaptive_decisions_total', 'counter', 'Transactions the adaptive routing changed, by decision (widen: the direct route reached more leaders; add_route: a partner route was added) and route (docs/adaptive-routing.md).');
    for (let d = 0; d < ADAPTIVE_DECISIONS.length; d++) {
      for (let r = 0; r < ROUTE_COUNT; r++) {
        const n = this.decisions[d * ROUTE_COUNT + r];
        if (d === 0 && r !== DIRECT) continue;
        if (d === 1 && (this.partnerMask & (1 << r)) === 0) continue;
        tb.sample('slotrelay_adaptive_decisions_total', { decision: ADAPTIVE_DECISIONS[d], route: ROUTE_BY_ID[r] }, n);
      }
    }
    tb.declare('slotrelay_adaptive_evidence_total', 'counter', 'Evidence the adaptive scoreboard read per route: good (landed at the leader aimed at) and bad (parked, refused, timed out, failed, not landed).');
    for (let r = 0; r < ROUTE_COUNT; r++) {
      if (r === ROUTE_IDS.static) continue;
      tb.sample('slotrelay_adaptive_evidence_total', { route: ROUTE_BY_ID[r], kind: 'good' }, this.evidence[r * 2]);
      tb.sample('slotrelay_adaptive_evidence_total', { route: ROUTE_BY_ID[r], kind: 'bad' }, this.evidence[r * 2 + 1]);
    }
    tb.declare('slotrelay_adaptive_parked_leaders', 'gauge', 'Leaders parking the direct route now (their slots get the wider fanout and the partner routes).');
    tb.sample('slotrelay_adaptive_parked_leaders', {}, this.verdicts.size);
  }
}
