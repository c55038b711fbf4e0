// Rebroadcast scheduler (egress worker; warm: timers, never on the ring's take path). After a record's first send
// finished on every route, the consumer loop calls admit(): a transaction whose effective maxRetries is not 0 is
// copied into the bounded RetryQueue (or shed, counted `dropped:retry_queue_full`, when it is full) and the ring slot
// is released. Every rebroadcast interval (retries.intervalMs, else 5 slots at the measured slot time:
// src/egress/contract/slot-timers.ts) the scheduler sends it again to the routes of its route set (∩ retries.routes)
// by calling the route again — the direct route picks the then-current leaders itself — until:
//   landed                     getSignatureStatuses (upstream.rpcUrl, <= 256 per call, made in a status thread:
//                              signature-status-poller.ts) says confirmed/finalized;
//   dropped:expired            its recent blockhash is no longer valid: isBlockhashValid answered false (after the
//                              blockhash was seen valid, or UNKNOWN_BLOCKHASH_GRACE_MS after admission: a lagging
//                              upstream may not know a fresh blockhash yet), or, when the upstream gives no answer,
//                              the blockhash TTL after admission (retries.blockhashTtlMs, else 225 slots at the
//                              measured slot time: 150 blocks plus skipped slots; 45 s at 200 ms slots);
//   dropped:retries_exhausted  maxRetries rebroadcasts done and one more interval passed without landing;
//   dropped:shutdown           the worker stopped (the queue lives in the worker: a crash loses it too; the first
//                              send had already happened).
// Effective maxRetries: the client's value, else retries.defaultMaxRetries; -1 = no count limit (Agave's default).
// The thread that runs it also takes fresh transactions from the ring (the QUIC thread for direct and static), so a
// tick touches only what is due (DueHeap, not a walk of the queue) and sends at most SLICE_UNITS rebroadcasts before it
// yields to the event loop (setImmediate): a fresh transaction waits behind one slice, not behind a whole round of
// a full queue (10,000 transactions come due within one interval; issue #28 item 2). Every slice, the first of a tick
// included, runs from setImmediate, i.e. after the event loop's I/O poll: were the timer's tick to send itself, a short
// slice at the end of one turn and the tick at the start of the next would send up to 2 x SLICE_UNITS with no I/O
// between them (the slices test saw 96 once in a CI rehearsal of stop 39: a short slice, then a tick's 64). Expiry
// of entries not yet due is found by the status poll's walk (it visits every entry anyway) and, at the latest, when
// they come due.
// Counters (single writer: this worker): the rebroadcast outcome matrix per route and RETRY_OUTCOMES; every admitted
// transaction is counted once as queued or shed and every queued one ends once (landed/expired/exhausted/shutdown).
// Per-transaction log lines (shed, ended without landing, recovered, a route that threw) are bounded per reason
// (src/log/summarized-log.ts: the first at once with its trace id, then a count per 10 s, a last one at close()).
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../log/logger.js';
import { SummarizedLog } from '../../log/summarized-log.js';
import { RETRY_OUTCOMES, ROUTE_COUNT, ROUTE_IDS, rebroadcastCounterIndex, retryCounterIndex, type RetryOutcome } from '../../shm/layout.js';
import { RetryQueue, type RetryEntry } from './retry-queue.js';
import { DueHeap } from './due-heap.js';
import { OUTCOME_INDEX, type EgressOutcome, type EgressRoute, type RouteAnswer, type TxView } from '../contract/route.js';
import { SIGNATURE_STATE, SignatureStatusPoller } from './signature-status-poller.js';
import type { ReceiptWriter } from '../contract/receipt-writer.js';
import { BLOCKHASH_TTL_SLOTS, REBROADCAST_SLOTS, STATUS_POLL_SLOTS, slotTimer } from '../contract/slot-timers.js';
import { FALLBACK_SLOT_MS } from '../../telemetry/slot-duration.js';

/** A blockhash the upstream calls invalid but never called valid is trusted only after this long (upstream lag). */
export const UNKNOWN_BLOCKHASH_GRACE_MS = 15_000;
/** A blockhash answered valid is asked again only after this long, or 4 polls if shorter (validity only ever ends). */
const VALID_BLOCKHASH_RECHECK_MS = 4_000;
/** isBlockhashValid calls per poll at most (mainnet queues span ~150 blockhashes); the rest wait for the next poll. */
const MAX_BLOCKHASH_CHECKS_PER_POLL = 32;
/** Scheduler tick: a quarter of the interval (rebroadcasts are due within 25 % of it), between these bounds. */
const TICK_MIN_MS = 5;
const TICK_MAX_MS = 250;
/**
 * Rebroadcasts (or ends) per slice of a tick before yielding to the event loop. A QUIC send costs the QUIC thread
 * streamSend -> kernel p50 22-37 us (1,232 bytes, quic-egress.bench, bench/results/session18-ab/quic-egress-ab.log), so
 * a slice holds a fresh transaction back ~1.5-2.5 ms; 16 measured no better (docs/wire-to-wire.md item 7).
 */
const SLICE_UNITS = 64;
/** Heap pops per slice at most, ended entries (lazy removal) included: a burst of landings is popped in slices too. */
const SLICE_POPS = 1_024;

const RETRY_INDEX: Readonly<Record<RetryOutcome, number>> = Object.freeze(
  Object.fromEntries(RETRY_OUTCOMES.map((o, i) => [o, i])) as Record<RetryOutcome, number>,
);

interface BlockhashState {
  /** Last isBlockhashValid answer (null = none / failed). */
  valid: boolean | null;
  /** performance.now() of that answer. */
  at: number;
  /** Ever answered true. */
  seenValid: boolean;
}

export interface RetrySchedulerDeps {
  readonly config: Config;
  /** Routes by id, the consumer loop's table (null = unavailable). */
  readonly routes: readonly (EgressRoute | null | undefined)[];
  /** This worker's counter region (single writer). */
  readonly counters: Float64Array;
  readonly log: Logger;
  /** Status source; default: upstream.rpcUrl (none configured: no landing detection, expiry by TTL only). */
  readonly poller?: SignatureStatusPoller | null;
  /** Where rebroadcast rounds and late first sends are written into the landing receipts; null = receipts off. */
  readonly receipts?: ReceiptWriter | null;
  /** The cluster's slot duration now, ms (src/telemetry/slot-ms.ts slotMsSource); default the fallback. */
  readonly slotMs?: () => number;
  /** Where a rebroadcast a route did not send is noted (the consumer's drop log, src/egress/contract/record-logs.ts). */
  readonly drops?: { drop(routeId: number, outcome: EgressOutcome, traceId: string): void };
}

export class RetryScheduler {
  readonly queue: RetryQueue;
  private readonly receipts: ReceiptWriter | null;
  private readonly drops: RetrySchedulerDeps['drops'] | null;
  private readonly routes: readonly (EgressRoute | null | undefined)[];
  private readonly counters: Float64Array;
  private readonly log: Logger;
  /** Per-transaction lines, bounded per reason. */
  private readonly txLog: SummarizedLog;
  private readonly poller: SignatureStatusPoller | null;
  /** Timers in ms, read when used: they follow the measured slot time unless configured (slot-timers.ts). */
  private readonly intervalMs: () => number;
  private readonly statusPollMs: () => number;
  private readonly ttlMs: () => number;
  private readonly defaultMaxRetries: number;
  private readonly retryMask: number;
  private readonly blockhashes = new Map<string, BlockhashState>();
  /** Live entries (and ended ones not yet popped) by when they are next due. */
  private readonly due = new DueHeap<RetryEntry>();
  /** A tick's next slice is scheduled (setImmediate). */
  private continuation: NodeJS.Immediate | null = null;
  /** The next slice (one function for the scheduler's life, not a closure per slice). */
  private readonly nextSlice = (): void => {
    this.continuation = null;
    this.sendSlice();
  };
  /**
   * The tick timer's callback: the slice runs after this turn's I/O (header), unless one is already scheduled. (close()
   * clears the timer and the scheduled slice: neither runs after it.)
   */
  private readonly scheduleSlice = (): void => {
    if (this.continuation === null) this.continuation = setImmediate(this.nextSlice);
  };
  private tickTimer: NodeJS.Timeout | null = null;
  private pollTimer: NodeJS.Timeout | null = null;
  private polling = false;
  private closed = false;
  private pollFailureLogged = false;

  constructor(deps: RetrySchedulerDeps) {
    const r = deps.config.retries;
    this.receipts = deps.receipts ?? null;
    this.drops = deps.drops ?? null;
    this.routes = deps.routes;
    this.counters = deps.counters;
    this.log = deps.log;
    this.txLog = new SummarizedLog(deps.log);
    const slotMs = deps.slotMs ?? (() => FALLBACK_SLOT_MS);
    this.intervalMs = slotTimer(r.intervalMs, REBROADCAST_SLOTS, slotMs);
    this.statusPollMs = slotTimer(r.statusPollMs, STATUS_POLL_SLOTS, slotMs);
    this.ttlMs = slotTimer(r.blockhashTtlMs, BLOCKHASH_TTL_SLOTS, slotMs);
    this.defaultMaxRetries = r.defaultMaxRetries;
    this.retryMask = r.routes.reduce((m, name) => m | (1 << ROUTE_IDS[name]), 0);
    this.queue = new RetryQueue(r.maxQueue, deps.config.transactions.maxTransactionBytes);
    const url = deps.config.upstream.rpcUrl;
    this.poller = deps.poller !== undefined ? deps.poller : url !== undefined ? new SignatureStatusPoller(url, deps.log) : null;
  }

  /** Rebroadcasts a transaction with this maxRetries gets: 0 none, -1 unlimited (until landed / expired). */
  effectiveRetries(maxRetries: number): number {
    return maxRetries >= 0 ? maxRetries : this.defaultMaxRetries;
  }

  /**
   * After the first send of a record finished on every route (its ring slot still valid): copy it into the queue
   * when it asks for rebroadcasts. `delivered` = some route answered `sent` on the first send.
   */
  admit(view: TxView, routeMask: number, delivered: boolean): 'queued' | 'dropped:retry_queue_full' | null {
    if (this.closed) return null;
    const retries = this.effectiveRetries(view.maxRetries);
    const mask = routeMask & this.retryMask;
    if (retries === 0 || mask === 0) return null;
    const now = performance.now();
    let entry: RetryEntry | null;
    try {
      entry = this.queue.admit(view, {
        routeMask: mask,
        retriesLeft: retries,
        nextSendAt: now + this.intervalMs(),
        expiresAt: now + this.ttlMs(),
        admittedAt: now,
        delivered,
      });
    } catch (err) {
      // Never let the retry path break the ring's release: count it like a shed one, with the reason logged.
      this.count('dropped:retry_queue_full');
      this.txLog.note('error', 'queue_error', { traceId: view.traceId, err: err instanceof Error ? err.message : String(err) }, 'retry: could not queue the transaction');
      return 'dropped:retry_queue_full';
    }
    if (entry === null) {
      this.count('dropped:retry_queue_full');
      this.txLog.note(
        'warn',
        'dropped:retry_queue_full',
        { traceId: view.traceId, keyId: view.keyId, reason: 'dropped:retry_queue_full', queued: this.queue.size, maxQueue: this.queue.capacity },
        'retry: queue full, transaction shed (sent once, no rebroadcast)',
      );
      return 'dropped:retry_queue_full';
    }
    this.due.push(entry);
    this.count('queued');
    this.arm();
    return 'queued';
  }

  /** Transactions waiting for rebroadcast or their status. */
  get size(): number {
    return this.queue.size;
  }

  private tickMs(): number {
    return Math.min(TICK_MAX_MS, Math.max(TICK_MIN_MS, Math.floor(this.intervalMs() / 4)));
  }

  private arm(): void {
    if (this.tickTimer === null) {
      this.tickTimer = setInterval(this.scheduleSlice, this.tickMs());
      this.tickTimer.unref();
    }
    if (this.pollTimer === null && this.poller !== null) {
      // Armed at the slot time of the moment; re-armed (disarmIfIdle) whenever the queue empties.
      this.pollTimer = setInterval(() => void this.poll(), this.statusPollMs());
      this.pollTimer.unref();
    }
  }

  private disarmIfIdle(): void {
    if (this.queue.entries.size > 0) return;
    this.stopTimers();
    this.due.clear();
    this.blockhashes.clear();
  }

  private stopTimers(): void {
    if (this.tickTimer !== null) clearInterval(this.tickTimer);
    if (this.pollTimer !== null) clearInterval(this.pollTimer);
    if (this.continuation !== null) clearImmediate(this.continuation);
    this.tickTimer = null;
    this.pollTimer = null;
    this.continuation = null;
  }

  /**
   * Expire, exhaust or rebroadcast whatever is due, SLICE_UNITS at a time: when more is due after a slice, the next
   * slice runs after the event loop's turn (fresh transactions from the ring and the connections' I/O go first).
   * Runs only from setImmediate (nextSlice), so never while another slice is scheduled.
   */
  private sendSlice(): void {
    const now = performance.now();
    let units = 0;
    let pops = 0;
    for (let e = this.due.peek(); e !== undefined && e.dueAt <= now; e = this.due.peek()) {
      if (units === SLICE_UNITS || pops === SLICE_POPS) {
        this.continuation = setImmediate(this.nextSlice);
        return;
      }
      this.due.pop();
      pops++;
      if (e.finished) continue; // ended since it was pushed (landed, expired at a poll): lazy removal
      units++;
      if (this.expired(e, now)) {
        this.end(e, 'dropped:expired');
        continue;
      }
      if (e.inFlight > 0) {
        // The previous round is still being sent: no pile-up; looked at again next tick.
        e.dueAt = now + this.tickMs();
        this.due.push(e);
        continue;
      }
      if (e.retriesLeft === 0) {
        this.end(e, 'dropped:retries_exhausted');
        continue;
      }
      this.rebroadcast(e, now);
      e.dueAt = e.nextSendAt;
      this.due.push(e);
    }
    this.disarmIfIdle();
  }

  /** A blockhash answered valid is asked again after this long (VALID_BLOCKHASH_RECHECK_MS, or 4 polls if shorter). */
  private recheckMs(pollMs: number): number {
    return Math.min(VALID_BLOCKHASH_RECHECK_MS, 4 * pollMs);
  }

  private expired(e: RetryEntry, now: number): boolean {
    const bh = e.blockhash === '' ? undefined : this.blockhashes.get(e.blockhash);
    const pollMs = this.statusPollMs();
    const fresh = bh !== undefined && bh.valid !== null && now - bh.at <= this.recheckMs(pollMs) + 3 * pollMs;
    if (fresh && bh.valid === false && (bh.seenValid || now - e.admittedAt >= UNKNOWN_BLOCKHASH_GRACE_MS)) return true;
    if (fresh && bh.valid === true) return false;
    return now >= e.expiresAt;
  }

  private rebroadcast(e: RetryEntry, now: number): void {
    e.rounds++;
    this.receipts?.rebroadcast(e.view.receiptSeq ?? 0);
    if (e.retriesLeft > 0) e.retriesLeft--;
    e.nextSendAt = now + this.intervalMs();
    for (let id = 0; id < ROUTE_COUNT; id++) {
      if ((e.routeMask & (1 << id)) === 0) continue;
      const route = this.routes[id];
      if (route === null || route === undefined) {
        this.rebroadcastOutcome(e, id, 'dropped:route_unavailable');
        continue;
      }
      let r: Promise<RouteAnswer> | RouteAnswer;
      try {
        r = route.send(e.view);
      } catch (err) {
        this.txLog.note('error', 'threw', { traceId: e.view.traceId, route: id, err: err instanceof Error ? err.message : String(err) }, 'retry: route threw');
        this.rebroadcastOutcome(e, id, 'failed');
        continue;
      }
      if (!(r instanceof Promise)) {
        // Read now: a SendResult answered synchronously may be the route's reused one.
        this.routeAnswered(e, id, r);
        this.rebroadcastOutcome(e, id, typeof r === 'string' ? r : r.outcome);
        continue;
      }
      e.inFlight++;
      r.then(
        (a) => {
          this.routeAnswered(e, id, a);
          this.answered(e, id, typeof a === 'string' ? a : a.outcome);
        },
        (err: unknown) => {
          this.txLog.note('error', 'rejected', { traceId: e.view.traceId, route: id, err: err instanceof Error ? err.message : String(err) }, 'retry: route rejected');
          this.answered(e, id, 'failed');
        },
      );
    }
  }

  /**
   * A route's answer to a rebroadcast: its drop noted, its cause in the receipt, and a route that first sends on a
   * rebroadcast gets its first-send time and targets there.
   */
  private routeAnswered(e: RetryEntry, routeId: number, a: RouteAnswer): void {
    const o = typeof a === 'string' ? a : a.outcome;
    if (o !== 'sent') this.drops?.drop(routeId, o, e.view.traceId);
    if (this.receipts === null) return;
    const seq = e.view.receiptSeq ?? 0;
    if (typeof a !== 'string' && a.cause !== 0 && o !== 'sent') this.receipts.routeCause(seq, routeId, a.cause, a.code);
    if (this.closed) return;
    const idx = OUTCOME_INDEX[o];
    if (idx === undefined) return;
    if (typeof a === 'string') this.receipts.rebroadcastOutcome(seq, routeId, idx, 0, -1, performance.timeOrigin + performance.now());
    else this.receipts.rebroadcastOutcome(seq, routeId, idx, a.targets, a.targetSlot, performance.timeOrigin + performance.now());
  }

  private answered(e: RetryEntry, routeId: number, o: EgressOutcome): void {
    e.inFlight--;
    this.rebroadcastOutcome(e, routeId, o);
    this.queue.release(e);
  }

  private rebroadcastOutcome(e: RetryEntry, routeId: number, o: EgressOutcome): void {
    if (this.closed) return;
    const idx = OUTCOME_INDEX[o] ?? OUTCOME_INDEX.failed;
    this.counters[rebroadcastCounterIndex(routeId, idx)]++;
    if (idx === OUTCOME_INDEX.sent && !e.delivered) {
      e.delivered = true;
      this.count('recovered');
      this.txLog.note('info', 'recovered', { traceId: e.view.traceId, keyId: e.view.keyId, route: routeId, round: e.rounds }, 'retry: first delivery by a rebroadcast');
    }
  }

  /** One status round: signatures (landed?) then the blockhashes in use (expired?). */
  async poll(): Promise<void> {
    if (this.closed || this.polling || this.poller === null) return;
    this.polling = true;
    try {
      const bySignature = new Map<string, RetryEntry[]>();
      const now = performance.now();
      for (const e of this.queue.entries) {
        if (e.finished) continue;
        // Expiry of entries not yet due (the tick sees an entry only when it comes due), by the last poll's answers.
        if (this.expired(e, now)) {
          this.end(e, 'dropped:expired');
          continue;
        }
        if (e.signature === '') continue;
        const list = bySignature.get(e.signature);
        if (list === undefined) bySignature.set(e.signature, [e]);
        else list.push(e);
      }
      if (bySignature.size === 0) return;
      const signatures = [...bySignature.keys()];
      const res = await this.poller.statuses(signatures);
      if (this.closed) return;
      if (res.failedCalls > 0 && !this.pollFailureLogged) {
        this.pollFailureLogged = true; // once per worker: it repeats every poll while the upstream is down
        this.log.warn({ calls: res.calls, failed: res.failedCalls, err: res.lastError }, 'retry: getSignatureStatuses failed; landing not detected until it answers');
      } else if (res.failedCalls === 0) {
        this.pollFailureLogged = false;
      }
      for (let i = 0; i < signatures.length; i++) {
        if (res.states[i] !== SIGNATURE_STATE.landed) continue;
        for (const e of bySignature.get(signatures[i])!) {
          if (e.finished) continue;
          this.end(e, 'landed', res.errors[i] === null ? undefined : { txErr: res.errors[i] });
        }
      }
      await this.checkBlockhashes();
    } finally {
      this.polling = false;
      this.disarmIfIdle();
    }
  }

  private async checkBlockhashes(): Promise<void> {
    const inUse = new Set<string>();
    for (const e of this.queue.entries) if (!e.finished && e.blockhash !== '') inUse.add(e.blockhash);
    for (const h of this.blockhashes.keys()) if (!inUse.has(h)) this.blockhashes.delete(h);
    let checks = 0;
    for (const h of inUse) {
      const known = this.blockhashes.get(h);
      if (known !== undefined && known.valid === true && performance.now() - known.at < this.recheckMs(this.statusPollMs())) continue;
      if (checks++ === MAX_BLOCKHASH_CHECKS_PER_POLL) break;
      const valid = await this.poller!.blockhashValid(h);
      if (this.closed) return;
      const st = this.blockhashes.get(h) ?? { valid: null, at: 0, seenValid: false };
      if (valid !== null) {
        st.valid = valid;
        st.at = performance.now();
        if (valid) st.seenValid = true;
      }
      this.blockhashes.set(h, st);
    }
  }

  private end(e: RetryEntry, outcome: RetryOutcome, extra?: Record<string, unknown>): void {
    this.queue.finish(e);
    this.count(outcome);
    const fields = {
      traceId: e.view.traceId,
      keyId: e.view.keyId,
      signature: e.signature,
      reason: outcome,
      rebroadcasts: e.rounds,
      delivered: e.delivered,
      ...extra,
    };
    if (outcome === 'landed') this.log.debug(fields, 'retry: landed, rebroadcast stopped');
    else if (e.delivered) this.txLog.note('info', outcome, fields, 'retry: rebroadcast stopped without seeing the transaction land');
    else this.txLog.note('warn', outcome + ' undelivered', fields, 'retry: transaction never reached a route and rebroadcast stopped');
  }

  private count(o: RetryOutcome): void {
    if (!this.closed) this.counters[retryCounterIndex(RETRY_INDEX[o])]++;
  }

  /**
   * Stop: every queued transaction ends as dropped:shutdown (counted; logged bounded: the first with its trace id,
   * then one summary line with the count). Later route answers are ignored.
   */
  close(): void {
    if (this.closed) return;
    for (const e of this.queue.entries) if (!e.finished) this.end(e, 'dropped:shutdown');
    this.txLog.close();
    this.poller?.close();
    this.closed = true;
    this.stopTimers();
    this.due.clear();
  }
}
