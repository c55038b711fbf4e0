// The record handler (egress worker, QUIC thread; HOT: once per record and route). A record's life from dispatch to
// release in one object, driven by both dispatchers: the ring consumer loop (src/egress/consumer/consumer-loop.ts, one
// handler over the ring's slots) and the QUIC ingress's local dispatch (src/egress/consumer/local-dispatch.ts, one
// over its own slots). It hands the record to every route of its mask, takes each route's answer as a value
// (./route.ts: outcome, targets, target slot, cause, code) and maps it once, in answer(), to what observes it — the
// outcome counter, the latency histogram, the landing receipt, the drop log — then, when every route answered,
// releases the record: retry admission, the records counters, the accounting log. Observers are built once per
// consumer and shared by its handlers (RecordObservers). A record in two rings is accounted once, by the side that
// answers last (src/shm/join.ts). After a stop the loop ends what is left with endAtStop(): each (record, requested
// route) still gets exactly one outcome.
import type { ReceiptWriter } from './receipt-writer.js';
import type { RecordLogs } from './record-logs.js';
import { grownRecordSlots, newRecordSlots, type RecordSlots } from './record-slots.js';
import { OUTCOME_INDEX, type EgressRoute, type RouteAnswer, type TxView } from './route.js';
import { EGRESS_OUTCOMES, ROUTE_BY_ID, ROUTE_COUNT, WORKER_COUNTER, egressCounterIndex, type EgressOutcome } from '../../shm/layout.js';
import { JOIN_FLAG, type JoinSide } from '../../shm/join.js';

const SENT = OUTCOME_INDEX.sent;
const FAILED = OUTCOME_INDEX.failed;
const DISCARDED = OUTCOME_INDEX['dropped:discarded'];

/** Where a released record may be kept for rebroadcasts (src/egress/rebroadcast/retry-scheduler.ts). */
export interface RetryAdmission {
  /** Copies what it keeps before the slot is released; answers what it did (the accounting line's `retry`), or null. */
  admit(view: TxView, routeMask: number, delivered: boolean): string | null;
}

/** The observers a consumer builds once; every handler of that consumer shares them. */
export interface RecordObservers {
  /** This consumer's counter region (single writer: this thread). */
  readonly counters: Float64Array;
  readonly latency: { record(routeId: number, us: number): void };
  readonly receipts: ReceiptWriter | null;
  readonly retry: RetryAdmission | null;
  readonly logs: RecordLogs;
}

/** A slot's trace id and key index, read only for the accounting lines (the ring decodes them from the slot). */
export interface RecordIds {
  traceId(slot: number): string;
  keyId(slot: number): number;
}

/** After a stop: where the records the stop left undelivered go (src/egress/consumer/shutdown-report.ts). */
export interface StopReport {
  note(traceId: string, keyId: number, outcomes: Readonly<Record<string, string>>, delivered: boolean): void;
}

export interface SendRecordSetup {
  readonly slots: number;
  /** Routes by id; null = not available in this relay. */
  readonly routes: readonly (EgressRoute | null | undefined)[];
  readonly observers: RecordObservers;
  readonly ids: RecordIds;
  /** The slot's TxView, built on the first route that exists (zero-copy over the slot's bytes). */
  readonly viewOf: (slot: number) => TxView;
  /** The record is done with: give the slot back (the ring's complete(), the local dispatch's done()). */
  readonly release: (slot: number) => void;
  /** The join table of records in two rings; absent = none. */
  readonly join?: JoinSide | null;
}

function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

export class SendRecord {
  private s: RecordSlots;
  private readonly routes: readonly (EgressRoute | null | undefined)[];
  private readonly o: RecordObservers;
  private readonly counters: Float64Array;
  private readonly join: JoinSide | null;
  /** Records dispatched and not yet settled. */
  inFlight = 0;
  /** Set once the loop ended and the routes were closed: later answers are not this region's writer's anymore. */
  closed = false;
  /** Set when the loop ended: records are no longer released (nor counted as released). */
  detached = false;
  /** Set when a stop was asked for: records not taken by every route from then on are reported there. */
  stopReport: StopReport | null = null;
  /** Called when inFlight drops to 0 (the stop path waits on it). */
  onIdle: (() => void) | null = null;

  constructor(private readonly setup: SendRecordSetup) {
    this.s = newRecordSlots(setup.slots);
    this.routes = setup.routes;
    this.o = setup.observers;
    this.counters = setup.observers.counters;
    this.join = setup.join ?? null;
  }

  get slotCount(): number {
    return this.s.pending.length;
  }

  /** Makes room for `slots` slots (cold: local dispatch only; the ring's count is fixed). */
  grow(slots: number): void {
    if (slots > this.s.pending.length) this.s = grownRecordSlots(this.s, slots);
  }

  /** The slot's view, when the caller built it (local dispatch: the bytes are already a Buffer). */
  setView(slot: number, view: TxView): void {
    this.s.views[slot] = view;
  }

  /** Counts a record taken; one in two rings counts once, by the side that takes it first. */
  took(slot: number, joinIndex: number): void {
    this.s.joins[slot] = joinIndex;
    if (joinIndex === 0 || this.join!.take(joinIndex)) this.counters[WORKER_COUNTER.consumed]++;
  }

  /** Hot: hands the record in `slot` to every route of `mask`; settles it at once when every answer was synchronous. */
  dispatch(slot: number, mask: number, seq: number, receivedAtMs: number): void {
    const s = this.s;
    const base = slot * ROUTE_COUNT;
    s.masks[slot] = mask;
    s.seqs[slot] = seq;
    s.receivedAt[slot] = receivedAtMs;
    s.delivered[slot] = 0;
    s.troubled[slot] = 0;
    s.outcomes.fill(0, base, base + ROUTE_COUNT);
    s.pending[slot] = 1; // dispatch guard: synchronous answers cannot release the record early
    this.inFlight++;
    let view: TxView | null = null;
    for (let id = 0; id < ROUTE_COUNT; id++) {
      if ((mask & (1 << id)) === 0) continue;
      const route = this.routes[id];
      if (route === null || route === undefined) {
        this.answer(slot, id, 'dropped:route_unavailable', false);
        continue;
      }
      if (view === null) view = s.views[slot] ?? (s.views[slot] = this.setup.viewOf(slot));
      this.send(slot, id, route, view);
    }
    this.settle(slot);
  }

  private send(slot: number, id: number, route: EgressRoute, view: TxView): void {
    let r: Promise<RouteAnswer> | RouteAnswer;
    try {
      r = route.send(view);
    } catch (err) {
      this.threw(slot, id, view.traceId, err);
      return;
    }
    if (!(r instanceof Promise)) {
      // Read now: a SendResult answered synchronously may be the route's reused one.
      this.routeAnswered(slot, id, r, view.traceId);
      return;
    }
    this.s.pending[slot]++;
    const traceId = view.traceId;
    r.then(
      (a) => {
        this.routeAnswered(slot, id, a, traceId);
        this.settle(slot);
      },
      (err: unknown) => {
        this.threw(slot, id, traceId, err);
        this.settle(slot);
      },
    );
  }

  private routeAnswered(slot: number, id: number, a: RouteAnswer, traceId: string): void {
    const o = typeof a === 'string' ? a : a.outcome;
    if (o !== 'sent') this.o.logs.drop(id, o, traceId);
    this.answer(slot, id, a, true);
  }

  private threw(slot: number, id: number, traceId: string, err: unknown): void {
    this.o.logs.threw(id, traceId, err);
    this.answer(slot, id, 'failed', true);
  }

  /**
   * The one place a route's answer becomes counters (Agave's record_error): the outcome counter, the receipt's cause
   * and outcome, latency when the route itself answered (`timed`), and the slot's delivered / troubled flags.
   */
  private answer(slot: number, id: number, a: RouteAnswer, timed: boolean): void {
    if (this.closed) return;
    const s = this.s;
    const o = typeof a === 'string' ? a : a.outcome;
    let idx: number | undefined = OUTCOME_INDEX[o];
    if (idx === undefined) {
      this.o.logs.unknownOutcome(id, o);
      idx = FAILED;
    } else if (idx === SENT) {
      s.delivered[slot] = 1;
    }
    s.outcomes[slot * ROUTE_COUNT + id] = idx + 1;
    const receipts = this.o.receipts;
    if (receipts !== null) {
      const seq = s.seqs[slot];
      if (typeof a === 'string') receipts.routeOutcome(seq, id, idx, 0, -1, nowMs());
      else {
        // The cause first: the receipt reads it only for a route whose outcome says it did not send.
        if (a.cause !== 0 && idx !== SENT) receipts.routeCause(seq, id, a.cause, a.code);
        receipts.routeOutcome(seq, id, idx, a.targets, a.targetSlot, nowMs());
      }
    }
    if (idx !== SENT && idx !== DISCARDED) s.troubled[slot] = 1;
    this.counters[egressCounterIndex(id, idx)]++;
    if (timed) this.o.latency.record(id, (nowMs() - s.receivedAt[slot]) * 1000);
  }

  /** One route of the record in `slot` finished (or dispatch did): the last one releases the record. */
  private settle(slot: number): void {
    const s = this.s;
    if (--s.pending[slot] !== 0) return;
    this.inFlight--;
    if (!this.detached) {
      // The slot is still ours: the retry queue copies what it keeps before the slot is released (this side's
      // routes: a record in two rings is rebroadcast by each side on its own routes).
      const view = s.views[slot];
      const retry = this.o.retry;
      const queued = retry !== null && view !== null ? retry.admit(view, s.masks[slot], s.delivered[slot] === 1) : null;
      // A record in two rings is accounted once, by the side that answers last, with both sides' outcomes.
      const joined = s.joins[slot] === 0 ? 0 : this.joinFinish(slot, 0);
      if (joined >= 0) {
        this.counters[joined & JOIN_FLAG.stopped ? WORKER_COUNTER.shutdown : WORKER_COUNTER.released]++;
        if (s.delivered[slot] === 0) this.counters[WORKER_COUNTER.undelivered]++;
        if (s.troubled[slot] === 1) this.account(slot, queued);
      }
      s.views[slot] = null;
      this.setup.release(slot);
    } else {
      // A crash: the record stays where it is (ring slot, slab slot) for the next consumer (at-least-once).
      s.views[slot] = null;
    }
    if (this.inFlight === 0) this.onIdle?.();
  }

  /**
   * This side of a record in two rings is done: hands its outcomes to the join entry. When the other side already
   * answered, merges its outcomes and flags into this slot's and returns the joined flags; else -1.
   */
  private joinFinish(slot: number, extraFlags: number): number {
    const s = this.s;
    const flags = extraFlags | (s.delivered[slot] === 1 ? JOIN_FLAG.delivered : 0) | (s.troubled[slot] === 1 ? JOIN_FLAG.troubled : 0);
    const joined = this.join!.finish(s.joins[slot], s.outcomes, slot * ROUTE_COUNT, flags);
    if (joined < 0) return -1;
    if (joined & JOIN_FLAG.delivered) s.delivered[slot] = 1;
    if (joined & JOIN_FLAG.troubled) s.troubled[slot] = 1;
    return joined;
  }

  /** Every route's outcome for the record in `slot`, by route name; `key` gets the same as text (the summary key). */
  private outcomesOf(slot: number): { byRoute: Record<string, string>; key: string } {
    const byRoute: Record<string, string> = {};
    let key = this.s.delivered[slot] === 1 ? 'partial' : 'undelivered';
    for (let id = 0; id < ROUTE_COUNT; id++) {
      const o = this.s.outcomes[slot * ROUTE_COUNT + id];
      if (o === 0) continue;
      byRoute[ROUTE_BY_ID[id]] = EGRESS_OUTCOMES[o - 1];
      key += ' ' + ROUTE_BY_ID[id] + '=' + EGRESS_OUTCOMES[o - 1];
    }
    return { byRoute, key };
  }

  /** Delivery accounting for a record that some route did not take: bounded lines with every route's outcome. */
  private account(slot: number, retry: string | null): void {
    const ids = this.setup.ids;
    const delivered = this.s.delivered[slot] === 1;
    if (this.stopReport !== null) {
      this.stopReport.note(ids.traceId(slot), ids.keyId(slot), this.outcomesOf(slot).byRoute, delivered);
      return;
    }
    if (!this.o.logs.wantsNotTaken(delivered)) return;
    const { byRoute, key } = this.outcomesOf(slot);
    this.o.logs.notTaken(key, { traceId: ids.traceId(slot), keyId: ids.keyId(slot), outcomes: byRoute, retry: retry ?? 'none' }, delivered);
  }

  /** Records whose routes have not all answered (the stop path ends them). */
  isPending(slot: number): boolean {
    return this.s.pending[slot] > 0;
  }

  /** A record the stop found never taken: it gets its mask, no outcome yet, and ends at once (endAtStop). */
  endUntaken(slot: number, mask: number, seq: number): void {
    const s = this.s;
    s.masks[slot] = mask;
    s.seqs[slot] = seq;
    s.delivered[slot] = 0;
    s.outcomes.fill(0, slot * ROUTE_COUNT, slot * ROUTE_COUNT + ROUTE_COUNT);
    this.endAtStop(slot);
  }

  /**
   * A stop ends the record in `slot` without releasing it: every requested route that has not answered gets
   * dropped:shutdown (dropped:route_unavailable when this relay has no such route, as dispatch would have said).
   */
  endAtStop(slot: number): void {
    const s = this.s;
    const mask = s.masks[slot];
    for (let id = 0; id < ROUTE_COUNT; id++) {
      if ((mask & (1 << id)) === 0 || s.outcomes[slot * ROUTE_COUNT + id] !== 0) continue;
      const route = this.routes[id];
      const o: EgressOutcome = route === null || route === undefined ? 'dropped:route_unavailable' : 'dropped:shutdown';
      this.answer(slot, id, o, false);
    }
    if (s.joins[slot] !== 0 && this.joinFinish(slot, JOIN_FLAG.stopped) < 0) return; // the other side accounts for it
    this.counters[WORKER_COUNTER.shutdown]++;
    if (s.delivered[slot] === 0) this.counters[WORKER_COUNTER.undelivered]++;
    this.account(slot, null);
  }
}
