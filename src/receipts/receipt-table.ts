// Landing receipts, the front thread's side (docs/receipts.md). accept() is on the HOT path (one per accepted
// transaction: a Map.set and a few typed-array stores, before the record is published, so a worker never sees a
// record whose receipt is not there yet); lookups and landing updates are cold. Bounded memory: `capacity` entries
// (a power of two) in a ring indexed by sequence number, the oldest overwritten first, each also expiring after ttlMs.
// The per-route part (outcome, first send, targets, rebroadcasts) lives in a SharedArrayBuffer the egress workers
// write (src/shm/receipts-layout.ts, src/egress/contract/receipt-writer.ts); the rest lives here.
import { EGRESS_OUTCOMES, ROUTE_BY_ID, ROUTE_COUNT, ROUTE_IDS } from '../shm/layout.js';
import { createReceiptsBuffer, lastReceiptSeq, receiptViews, type ReceiptViews } from '../shm/receipts-layout.js';
import { claimReceiptSeq } from '../admission/receipt-claim.js';
import type { Execution, ExecutionSource } from './execution-outcome.js';
import { notLandedReason, type NotLandedReason, type RouteFacts } from './not-landed-reason.js';
import { encodePubkeyBase58 } from '../tx/base58.js';
import type { ReceiptEvent, ReceiptObserver } from './receipt-events.js';

/** Where a receipt's landing stands. */
export const LANDING = Object.freeze({ pending: 0, landed: 1, notLanded: 2, untracked: 3 } as const);
const LANDING_NAMES = ['pending', 'landed', 'not_landed', 'untracked'] as const;

export interface ReceiptTableOptions {
  /** Entries kept (a power of two); the oldest is overwritten by the newest. */
  readonly capacity: number;
  /** A receipt older than this is gone (404), whatever the capacity. */
  readonly ttlMs: number;
}

export interface Landing {
  readonly slot: number;
  readonly err: unknown;
  readonly confirmationStatus: string | null;
  readonly observedAtMs: number;
  /** The landed slot's leader, when the relay's leader data knew it. */
  readonly leader: string | null;
  /** Executed, failed (fee charged, err set) or included without execution (SIMD-0290), and what said so. */
  readonly execution: Execution;
  readonly executionSource: ExecutionSource;
  /** When the relay first knew it processed (unix ms; the push's notification, else the poll that saw it); absent: observedAtMs. */
  readonly processedAtMs?: number;
  /** When the relay knew it finalized (unix ms), and the cluster's slot then; null/absent until it is. */
  readonly finalizedAtMs?: number | null;
  readonly finalizedSlot?: number | null;
}

/** A receipt as answered (GET /v1/transactions/{signature}, getTransactionReceipt). */
export interface ReceiptJson {
  readonly signature: string;
  readonly requestId: string;
  readonly acceptedAt: number;
  readonly acceptedSlot: number | null;
  readonly routes: Record<string, RouteReceiptJson>;
  readonly rebroadcasts: number;
  /** Set when the transaction went in a bundle (sendBundle): the bundle service's id and its place in the bundle. */
  readonly bundle: { readonly id: string; readonly index: number } | null;
  readonly status: 'pending' | 'landed' | 'landed_failed' | 'not_landed' | 'untracked';
  /**
   * Why it did not land, as far as the relay knows (issue #26; docs/receipts.md "Why it did not land"): set when
   * `status` is not_landed, and while pending once every route answered without sending it; null otherwise.
   */
  readonly reason: NotLandedReason | null;
  /**
   * What the adaptive routing did for it (docs/adaptive-routing.md), null when it did nothing: the leader that parked
   * the relay when it was accepted, the leaders its direct route reached beyond the fanout policy, the routes it added.
   */
  readonly adaptive: {
    readonly leader: string;
    readonly decisions: readonly string[];
    readonly extraCopies: number;
    readonly addedRoutes: readonly string[];
  } | null;
  /** The routes that sent it (a first send), in the order they did; `landed.firstRoute` is the first of them. */
  readonly routesTried: readonly string[];
  /**
   * The slot its direct route aimed at first (`routes.direct.leaderSlot`) was skipped while it had not landed, and
   * when the relay learnt it (unix ms); null otherwise (docs/receipts.md "Skipped target slots"). It may still land later.
   */
  readonly targetSkipped: { readonly slot: number; readonly at: number } | null;
  readonly landed: {
    readonly slot: number;
    readonly leader: string | null;
    readonly slotsToLand: number | null;
    readonly msToLand: number;
    readonly err: unknown;
    readonly confirmationStatus: string | null;
    readonly firstRoute: string | null;
    /** `executed`, `failed` (processed with `err`, fee charged) or `not_executed` (in a block, no effect, no fee:
     *  SIMD-0290's invalid fee payer). Added in issue #24; `status` keeps its values (not_executed is landed_failed). */
    readonly execution: Execution;
    /** `status`: decided from getSignatureStatuses' err alone; `transaction`: from getTransaction's meta (its fee). */
    readonly executionSource: ExecutionSource;
    /** Unix ms the relay learnt it processed / finalized (issue #43: by push, ms resolution; docs/receipts.md). */
    readonly processedAt: number;
    readonly finalizedAt: number | null;
    /** The cluster's slot when the finalization was seen (the notification's context slot); null until finalized. */
    readonly finalizedSlot: number | null;
  } | null;
}

export interface RouteReceiptJson {
  /** `pending` until the route answered; then one of the egress outcomes (sent, failed, dropped:<reason>). */
  readonly outcome: string;
  /** Wall-clock ms of the route's first successful send (first send or a rebroadcast), null if none. */
  readonly firstSentAt: number | null;
  /** Leaders (direct) or peers (static) the transaction was written to; 0 for the HTTP routes. */
  readonly targets: number;
  /** direct: the slot whose leader it was aimed at first. */
  readonly leaderSlot: number | null;
}

/** A receipt some route did not deliver, or that did not land (the status page's last failures). */
export interface ReceiptFailure {
  readonly seq: number;
  readonly signature: string;
  /** The request id of the submission (x-request-id): what the relay's logs carry as traceId. */
  readonly traceId: string;
  readonly keyId: number;
  readonly acceptedAtMs: number;
  /** The routes that did not deliver and how each ended. */
  readonly outcomes: Readonly<Record<string, string>>;
  readonly notLanded: boolean;
}

/** Outcome bytes are 1 + the index in EGRESS_OUTCOMES (0: pending). */
const OUTCOME_SENT = EGRESS_OUTCOMES.indexOf('sent') + 1;
const OUTCOME_DISCARDED = EGRESS_OUTCOMES.indexOf('dropped:discarded') + 1;
/** Not-landed receipts remembered for the status page. */
const NOT_LANDED_KEPT = 32;

export class ReceiptTable {
  readonly sab: SharedArrayBuffer;
  private readonly v: ReceiptViews;
  private readonly bySignature = new Map<string, number>();
  private readonly signatures: (string | null)[];
  private readonly requestIds: (string | null)[];
  private readonly keyIds: Int32Array;
  /**
   * The sequence number whose front half (this class's arrays) an entry holds. It lags the shared `seq` for a receipt
   * the quic-egress thread reserved and claimed (local admission) until its note is filed here (acceptReserved).
   */
  private readonly filedSeqs: Float64Array;
  private readonly routeMasks: Uint8Array;
  private readonly acceptedAtMs: Float64Array;
  private readonly acceptedSlot: Float64Array;
  private readonly landing: Uint8Array;
  private readonly landings: (Landing | null)[];
  /** Bundle id of a transaction accepted in a bundle (null otherwise), and its index in the bundle. */
  private readonly bundleIds: (string | null)[];
  private readonly bundleIndexes: Uint8Array;
  /** Each receipt's recent blockhash (32 bytes; all zero = unknown), to tell an expired one when it did not land. */
  private readonly blockhashes: Uint8Array;
  /** 1: its blockhash is known expired, 2: known still valid when it was concluded, 0: unknown. */
  private readonly expired: Uint8Array;
  private readonly blockhashKnown: Uint8Array;
  /** The adaptive routing's decision (docs/adaptive-routing.md): routes added, extra leaders, and the leader why. */
  private readonly adaptiveAdded: Uint8Array;
  private readonly adaptiveExtra: Uint8Array;
  private readonly adaptiveLeader: (string | null)[];
  /** The direct route's target slot once told skipped (-1: not told), and when (unix ms): target-skips.ts. */
  private readonly skippedSlot: Float64Array;
  private readonly skippedAtMs: Float64Array;
  /** The last NOT_LANDED_KEPT receipts found not landed (a ring), for the status page. */
  private readonly notLandedSeqs = new Float64Array(NOT_LANDED_KEPT);
  private notLandedCount = 0;
  /**
   * The receipt stream's hook (receipt-events.ts): told of each state change. Empty unless someone subscribes, and
   * each call site checks the length first, so the hot accept() pays one comparison.
   */
  readonly observers: ReceiptObserver[] = [];

  constructor(private readonly o: ReceiptTableOptions) {
    this.sab = createReceiptsBuffer(o.capacity);
    this.v = receiptViews(this.sab);
    const n = o.capacity;
    this.signatures = new Array<string | null>(n).fill(null);
    this.requestIds = new Array<string | null>(n).fill(null);
    this.keyIds = new Int32Array(n).fill(-1);
    this.filedSeqs = new Float64Array(n);
    this.routeMasks = new Uint8Array(n);
    this.acceptedAtMs = new Float64Array(n);
    this.acceptedSlot = new Float64Array(n);
    this.landing = new Uint8Array(n);
    this.landings = new Array<Landing | null>(n).fill(null);
    this.bundleIds = new Array<string | null>(n).fill(null);
    this.bundleIndexes = new Uint8Array(n);
    this.blockhashes = new Uint8Array(n * 32);
    this.expired = new Uint8Array(n);
    this.blockhashKnown = new Uint8Array(n);
    this.adaptiveAdded = new Uint8Array(n);
    this.adaptiveExtra = new Uint8Array(n);
    this.adaptiveLeader = new Array<string | null>(n).fill(null);
    this.skippedSlot = new Float64Array(n).fill(-1);
    this.skippedAtMs = new Float64Array(n);
  }

  /** HOT (accept): the transaction's recent blockhash, 32 bytes at `at` in `bytes`. */
  setBlockhash(seq: number, bytes: Uint8Array, at: number): void {
    if (at + 32 > bytes.length) return;
    const e = seq & this.v.mask;
    const o = e * 32;
    const b = this.blockhashes;
    for (let i = 0; i < 32; i++) b[o + i] = bytes[at + i];
    this.blockhashKnown[e] = 1;
  }

  /** The receipt's blockhash (base58), or null when unknown (cold). */
  blockhashOf(seq: number): string | null {
    const e = seq & this.v.mask;
    return this.blockhashKnown[e] === 1 ? encodePubkeyBase58(this.blockhashes, e * 32) : null;
  }

  /** The landing tracker's finding about the blockhash of a receipt it concluded not landed. */
  setBlockhashExpired(seq: number, expired: boolean | null): void {
    if (this.current(seq)) this.expired[seq & this.v.mask] = expired === null ? 0 : expired ? 1 : 2;
  }

  /** Why the receipt did not land (cold), or null (landed, or not known yet). */
  reasonOf(seq: number): NotLandedReason | null {
    const e = seq & this.v.mask;
    const state = this.landing[e];
    if (state === LANDING.landed) return null;
    const v = this.v;
    const mask = this.routeMasks[e];
    const facts: RouteFacts[] = [];
    for (let id = 0; id < ROUTE_COUNT; id++) {
      const i = e * ROUTE_COUNT + id;
      const o = v.outcome[i];
      if ((mask & (1 << id)) === 0 && o === 0) continue;
      facts.push({ route: ROUTE_BY_ID[id], outcome: o === 0 ? 'pending' : EGRESS_OUTCOMES[o - 1], cause: v.cause[i], causeCode: v.causeCode[i], sent: v.sentAtMs[i] > 0 });
    }
    if (facts.length === 0 && this.bundleIds[e] !== null) return null; // the bundle service's: not this table's to say
    const r = notLandedReason(facts, this.expired[e] === 1 ? true : null);
    // While pending, only "not sent" is known for sure (a sent one may still land).
    if (state !== LANDING.notLanded && (r === null || r.sent)) return null;
    return r;
  }

  get size(): number {
    return this.bySignature.size;
  }

  /**
   * HOT. A new receipt for an accepted transaction; returns its sequence number, which the ring record carries.
   * `slot` is the cluster slot the relay knows now (-1 unknown).
   */
  accept(signature: string, keyId: number, routeMask: number, requestId: string, acceptedAtMs: number, slot: number): number {
    const seq = claimReceiptSeq(this.v); // as the quic-egress thread's local admission claims its receipts
    this.fill(seq, signature, keyId, routeMask, requestId, acceptedAtMs, slot);
    return seq;
  }

  /**
   * A receipt whose number the quic-egress thread reserved and claimed (its local admission, src/ingress/local-admission.ts):
   * the front's half, filled when the quic-egress thread's note arrives (cold relative to the send, which already happened).
   */
  acceptReserved(seq: number, signature: string, keyId: number, routeMask: number, requestId: string, acceptedAtMs: number, slot: number): void {
    if (!this.current(seq)) return; // overwritten already (a full table wrapped past it)
    this.fill(seq, signature, keyId, routeMask, requestId, acceptedAtMs, slot);
  }

  private fill(seq: number, signature: string, keyId: number, routeMask: number, requestId: string, acceptedAtMs: number, slot: number): void {
    const v = this.v;
    const e = seq & v.mask;
    const old = this.signatures[e];
    if (old !== null) {
      // The entry's previous receipt: its signature no longer finds it (unless resubmitted since, to a newer entry).
      const s = this.bySignature.get(old);
      if (s !== undefined && (s & v.mask) === e && s !== seq) this.bySignature.delete(old);
    }
    this.filedSeqs[e] = seq;
    this.signatures[e] = signature;
    this.requestIds[e] = requestId;
    this.keyIds[e] = keyId;
    this.routeMasks[e] = routeMask;
    this.acceptedAtMs[e] = acceptedAtMs;
    this.acceptedSlot[e] = slot;
    this.landing[e] = LANDING.pending;
    this.landings[e] = null;
    this.bundleIds[e] = null;
    this.expired[e] = 0;
    this.blockhashKnown[e] = 0;
    this.adaptiveLeader[e] = null;
    this.skippedSlot[e] = -1;
    // A resubmitted transaction (same signature) points at its newest receipt.
    this.bySignature.set(signature, seq);
    if (this.observers.length !== 0) this.notify(seq, 'accepted');
  }

  private notify(seq: number, event: ReceiptEvent): void {
    for (const o of this.observers) o.receiptChanged(seq, event);
  }

  /** The key that submitted `seq` (-1: none filed). */
  keyIdOf(seq: number): number {
    return this.keyIds[seq & this.v.mask];
  }

  /** The live receipt of `signature` for `keyId`, or -1 (unknown, another key's, overwritten, or expired). */
  find(signature: string, keyId: number, nowMs: number): number {
    const seq = this.bySignature.get(signature);
    if (seq === undefined || !this.current(seq)) return -1;
    const e = seq & this.v.mask;
    if (this.keyIds[e] !== keyId) return -1;
    if (nowMs - this.acceptedAtMs[e] > this.o.ttlMs) return -1;
    return seq;
  }

  /** HOT (after accept): what the adaptive routing did for this transaction (`leader` parked the relay). */
  setAdaptive(seq: number, added: number, extra: number, leader: string): void {
    const e = seq & this.v.mask;
    this.adaptiveAdded[e] = added;
    this.adaptiveExtra[e] = extra;
    this.adaptiveLeader[e] = leader;
  }

  /** Entries kept. */
  get capacity(): number {
    return this.o.capacity;
  }

  /** The newest sequence number handed out (0 before the first). */
  get newestSeq(): number {
    return lastReceiptSeq(this.v);
  }

  /** Routes the record went with (the key's, the relay's additions and the adaptive routing's). */
  routeMaskOf(seq: number): number {
    return this.routeMasks[seq & this.v.mask];
  }

  /** Cold readers of the per-route part the egress side writes (the adaptive scoreboard's scan). */
  outcomeByte(seq: number, route: number): number {
    return this.v.outcome[(seq & this.v.mask) * ROUTE_COUNT + route];
  }

  causeOf(seq: number, route: number): number {
    return this.v.cause[(seq & this.v.mask) * ROUTE_COUNT + route];
  }

  targetSlotOf(seq: number, route: number): number {
    return this.v.targetSlot[(seq & this.v.mask) * ROUTE_COUNT + route];
  }

  sentAtOf(seq: number, route: number): number {
    return this.v.sentAtMs[(seq & this.v.mask) * ROUTE_COUNT + route];
  }

  /** Leaders (direct) or peers (static) the route wrote `seq` to (the per-leader counters' copies). */
  targetsOf(seq: number, route: number): number {
    return this.v.targets[(seq & this.v.mask) * ROUTE_COUNT + route];
  }

  /** Whether `seq` is younger than ttlMs (older receipts answer 404 and count nowhere). */
  live(seq: number, nowMs: number): boolean {
    return nowMs - this.acceptedAtMs[seq & this.v.mask] <= this.o.ttlMs;
  }

  /** Whether `seq` still owns its entry. */
  current(seq: number): boolean {
    return this.v.seq[seq & this.v.mask] === seq;
  }

  /**
   * Whether `seq`'s front half (key, route mask, acceptance time, signature) is filed. false for a receipt the QUIC
   * thread claimed and whose note the front has not read yet: its front half is still the previous occupant's.
   */
  filed(seq: number): boolean {
    return this.filedSeqs[seq & this.v.mask] === seq;
  }

  signatureOf(seq: number): string {
    return this.signatures[seq & this.v.mask] ?? '';
  }

  acceptedAt(seq: number): number {
    return this.acceptedAtMs[seq & this.v.mask];
  }

  /** The cluster slot at acceptance, -1 unknown. */
  acceptedSlotOf(seq: number): number {
    return this.acceptedSlot[seq & this.v.mask];
  }

  landingState(seq: number): number {
    return this.landing[seq & this.v.mask];
  }

  /** The landing tracker's verdicts (cold). */
  setLanded(seq: number, landing: Landing): void {
    if (!this.current(seq)) return;
    const e = seq & this.v.mask;
    const before = this.landing[e] === LANDING.landed ? this.landings[e] : null;
    this.landing[e] = LANDING.landed;
    this.landings[e] = landing;
    if (this.observers.length !== 0) this.notifyLanding(seq, before, landing);
  }

  /** The landing's new states, in order: processed (first seen), confirmed, finalized, not executed. */
  private notifyLanding(seq: number, before: Landing | null, now: Landing): void {
    if (before === null) this.notify(seq, 'processed');
    const was = before?.confirmationStatus ?? 'processed';
    const is = now.confirmationStatus;
    if ((is === 'confirmed' || is === 'finalized') && was !== is && was !== 'finalized') {
      if (is === 'finalized' && was !== 'confirmed') this.notify(seq, 'confirmed');
      this.notify(seq, is);
    }
    if (now.execution === 'not_executed' && before?.execution !== 'not_executed') this.notify(seq, 'not_executed');
  }

  /**
   * The direct route's target slot `slot` was skipped (cold: target-skips.ts, once per receipt that aimed at it):
   * recorded and notified once, for a receipt not landed yet whose direct route did aim at `slot`. false otherwise.
   */
  setTargetSkipped(seq: number, slot: number, atMs: number): boolean {
    if (!this.current(seq) || !this.filed(seq)) return false;
    const e = seq & this.v.mask;
    if (this.landing[e] !== LANDING.pending || this.skippedSlot[e] >= 0) return false;
    if (this.v.targetSlot[e * ROUTE_COUNT + ROUTE_IDS.direct] !== slot) return false;
    this.skippedSlot[e] = slot;
    this.skippedAtMs[e] = atMs;
    if (this.observers.length !== 0) this.notify(seq, 'skipped');
    return true;
  }

  /** The skipped target slot told to `seq`, or -1. */
  targetSkippedOf(seq: number): number {
    return this.current(seq) ? this.skippedSlot[seq & this.v.mask] : -1;
  }

  /** The landing as last set, or null (cold). */
  landingOf(seq: number): Landing | null {
    return this.current(seq) ? this.landings[seq & this.v.mask] : null;
  }

  /** Mark a receipt as a bundle's `index`-th transaction (cold: sendBundle). */
  setBundle(seq: number, bundleId: string, index: number): void {
    if (!this.current(seq)) return;
    const e = seq & this.v.mask;
    this.bundleIds[e] = bundleId;
    this.bundleIndexes[e] = index;
  }

  setLandingState(seq: number, state: number): void {
    if (this.current(seq)) {
      const e = seq & this.v.mask;
      const was = this.landing[e];
      this.landing[e] = state;
      if (state === LANDING.notLanded && was !== state && this.observers.length !== 0) this.notify(seq, 'not_landed');
    }
    // The status page lists the last ones (recentFailures): cold, once per transaction that did not land.
    if (state === LANDING.notLanded) this.notLandedSeqs[this.notLandedCount++ % NOT_LANDED_KEPT] = seq;
  }

  /** The route that sent first (earliest first-send time), or null when none has sent. */
  firstRoute(seq: number): string | null {
    const e = seq & this.v.mask;
    let best = -1;
    let at = Infinity;
    for (let id = 0; id < ROUTE_COUNT; id++) {
      const t = this.v.sentAtMs[e * ROUTE_COUNT + id];
      if (t > 0 && t < at) {
        at = t;
        best = id;
      }
    }
    if (best >= 0) return ROUTE_BY_ID[best];
    return this.bundleIds[e] !== null ? 'bundle' : null; // the bundle service delivered it
  }

  /** Slots from acceptance to landing, or null when the accepted slot was unknown. */
  slotsToLand(seq: number, landedSlot: number): number | null {
    const accepted = this.acceptedSlot[seq & this.v.mask];
    return accepted < 0 ? null : Math.max(0, landedSlot - accepted);
  }

  /**
   * Cold (the status page, once per tick while it is open): receipts a route failed or dropped (dropped:discarded, a
   * bench's, excepted), newest first, at most `limit`, looking at the receipts from the newest down to `floor` (at most
   * `scanMax` of them), then the last receipts found not landed. Returns the floor for the next call: the oldest receipt
   * that still had a route pending, so that each call reads only what may have changed since the last one.
   */
  recentFailures(floor: number, scanMax: number, limit: number): { failures: ReceiptFailure[]; floor: number } {
    const v = this.v;
    const out: ReceiptFailure[] = [];
    const newest = lastReceiptSeq(v);
    const lowest = Math.max(1, floor, newest - Math.min(scanMax, this.signatures.length) + 1);
    let nextFloor = newest + 1;
    for (let seq = newest; seq >= lowest; seq--) {
      const e = seq & v.mask;
      if (v.seq[e] !== seq) continue;
      const mask = this.routeMasks[e];
      let outcomes: Record<string, string> | null = null;
      for (let id = 0; id < ROUTE_COUNT; id++) {
        const o = v.outcome[e * ROUTE_COUNT + id];
        if (o === 0) {
          if ((mask & (1 << id)) !== 0) nextFloor = seq;
          continue;
        }
        if (o === OUTCOME_SENT || o === OUTCOME_DISCARDED) continue;
        (outcomes ??= {})[ROUTE_BY_ID[id]] = EGRESS_OUTCOMES[o - 1];
      }
      if (outcomes !== null && out.length < limit) out.push(this.failureRow(seq, outcomes));
    }
    for (let k = 0; k < NOT_LANDED_KEPT && k < this.notLandedCount; k++) {
      const seq = this.notLandedSeqs[(this.notLandedCount - 1 - k) % NOT_LANDED_KEPT];
      if (this.current(seq) && this.landing[seq & v.mask] === LANDING.notLanded && !out.some((f) => f.seq === seq)) out.push(this.failureRow(seq, null));
    }
    return { failures: out, floor: nextFloor };
  }

  private failureRow(seq: number, outcomes: Record<string, string> | null): ReceiptFailure {
    const e = seq & this.v.mask;
    const routes: Record<string, string> = outcomes ?? {};
    if (outcomes === null) {
      for (let id = 0; id < ROUTE_COUNT; id++) {
        const o = this.v.outcome[e * ROUTE_COUNT + id];
        if (o !== 0) routes[ROUTE_BY_ID[id]] = EGRESS_OUTCOMES[o - 1];
      }
    }
    return {
      seq,
      signature: this.signatures[e] ?? '',
      traceId: this.requestIds[e] ?? '',
      keyId: this.keyIds[e],
      acceptedAtMs: Math.round(this.acceptedAtMs[e]),
      outcomes: routes,
      notLanded: this.landing[e] === LANDING.notLanded,
    };
  }

  /** The receipt as answered (cold: allocates the answer). */
  toJson(seq: number): ReceiptJson {
    const v = this.v;
    const e = seq & v.mask;
    const routes: Record<string, RouteReceiptJson> = {};
    const mask = this.routeMasks[e];
    for (let id = 0; id < ROUTE_COUNT; id++) {
      const i = e * ROUTE_COUNT + id;
      const o = v.outcome[i];
      // Routes the relay added on its own (static everyTransaction) show up once they answered.
      if ((mask & (1 << id)) === 0 && o === 0) continue;
      const sentAt = v.sentAtMs[i];
      const slot = v.targetSlot[i];
      routes[ROUTE_BY_ID[id]] = {
        outcome: o === 0 ? 'pending' : EGRESS_OUTCOMES[o - 1],
        firstSentAt: sentAt > 0 ? Math.round(sentAt) : null,
        targets: v.targets[i],
        leaderSlot: slot >= 0 ? slot : null,
      };
    }
    const state = this.landing[e];
    const l = this.landings[e];
    const acceptedAt = this.acceptedAtMs[e];
    const acceptedSlot = this.acceptedSlot[e];
    let status: ReceiptJson['status'] = LANDING_NAMES[state];
    const tried: { route: string; at: number }[] = [];
    for (let id = 0; id < ROUTE_COUNT; id++) {
      const at = v.sentAtMs[e * ROUTE_COUNT + id];
      if (at > 0) tried.push({ route: ROUTE_BY_ID[id], at });
    }
    tried.sort((a, b) => a.at - b.at);
    const leader = this.adaptiveLeader[e];
    const added = this.adaptiveAdded[e];
    const extra = this.adaptiveExtra[e];
    const addedRoutes = ROUTE_BY_ID.filter((_, id) => (added & (1 << id)) !== 0);
    if (state === LANDING.landed && l !== null && l.err !== null) status = 'landed_failed';
    return {
      signature: this.signatures[e] ?? '',
      requestId: this.requestIds[e] ?? '',
      acceptedAt: Math.round(acceptedAt),
      acceptedSlot: acceptedSlot >= 0 ? acceptedSlot : null,
      routes,
      rebroadcasts: v.rebroadcasts[e],
      bundle: this.bundleIds[e] !== null ? { id: this.bundleIds[e]!, index: this.bundleIndexes[e] } : null,
      status,
      reason: this.reasonOf(seq),
      adaptive:
        leader === null
          ? null
          : {
              leader,
              decisions: [...(extra > 0 ? ['widen'] : []), ...(added !== 0 ? ['add_route'] : [])],
              extraCopies: extra,
              addedRoutes,
            },
      routesTried: tried.map((t) => t.route),
      targetSkipped: this.skippedSlot[e] >= 0 ? { slot: this.skippedSlot[e], at: Math.round(this.skippedAtMs[e]) } : null,
      landed:
        state === LANDING.landed && l !== null
          ? {
              slot: l.slot,
              leader: l.leader,
              slotsToLand: this.slotsToLand(seq, l.slot),
              msToLand: Math.max(0, Math.round(l.observedAtMs - acceptedAt)),
              err: l.err,
              confirmationStatus: l.confirmationStatus,
              firstRoute: this.firstRoute(seq),
              execution: l.execution,
              executionSource: l.executionSource,
              processedAt: l.processedAtMs ?? l.observedAtMs,
              finalizedAt: l.finalizedAtMs ?? null,
              finalizedSlot: l.finalizedSlot ?? null,
            }
          : null,
    };
  }
}
