// Transaction intake shared by every submission path (front thread, HOT). The transaction is decoded straight into
// a reserved ring slot — that decode is the one copy between the HTTP bytes and the egress worker — then checked in
// place (sanitize, signatures per key: ./transaction-checks.ts, the checks the quic-egress thread's local admission runs
// too), and only then published. A slot that fails a check is never published,
// so the next reserve() reuses it. Overload is reported as an error, never a silent drop: if every ring is full the
// caller answers 503 + Retry-After. Admission by delay (docs/relay-api.md): a route whose ring consumer reports it over
// its target sojourn (src/shm/sojourn-layout.ts, one Atomics.load per ring) is left out of the record, and a record
// with no route left is refused the same way (data.cause "queue_delay") before anything is reserved. Likewise a
// transaction none of whose routes can deliver now (setDeliverable, fed by the health monitor) is refused with
// ROUTES_UNAVAILABLE instead of being accepted and dropped.
// Every refusal is RETURNED as a Failure (src/errors/registry.ts), never thrown: an Error's stack trace made refusing
// dearer than accepting (issue #18 defect 9). The fixed ones are preallocated.
// The QUIC routes' records go into the quic-egress thread's ring (src/config/route-plan.ts quicRing), the others into an
// egress worker's ring (round-robin); a record asking for both is decoded into the worker ring's slot, copied into the
// QUIC ring's, and both records carry one join table entry (src/shm/join.ts) so that it is accounted once.
import type { JoinAllocator } from '../shm/join.js';
import { Errors, Failure, failureOf } from '../errors/registry.js';
import type { ReceiptSink } from './receipt-sink.js';
import type { RouteAdvisor } from './route-advisor.js';
import type { KeyUsage } from './key-usage.js';
import { withAddedRoutes } from './send-options.js';
import type { RingProducer } from '../shm/ring.js';
import { ROUTE_COUNT } from '../shm/layout.js';
import { createParsedTransaction, encodeSignatureBase58, tryDecodeTransactionInto, type ParsedTransaction, type TransactionEncoding } from '../tx/index.js';
import { checkTransaction, fitsTransaction, oversizedRefusal } from './transaction-checks.js';

export interface SubmissionMeta {
  readonly keyId: number;
  readonly routeMask: number;
  /** -1 when the client gave none. */
  readonly maxRetries: number;
  readonly receivedAtMs: number;
  readonly traceId: string;
  readonly verifySignatures: boolean;
}

/** A transaction decoded and checked outside the ring (preflight path), ready to be published later. */
/** The quic-egress thread's ring as the intake sees it. */
export interface QuicRingTarget {
  readonly producer: RingProducer;
  /** Route bits whose records go there (RoutePlan.quicRing). */
  readonly mask: number;
  /** Entries for records published into both rings. */
  readonly join: JoinAllocator;
}

export interface CheckedTransaction {
  readonly bytes: Buffer;
  readonly signature: string;
  /** Static account keys plus those loaded through lookup tables (Agave's message.account_keys().len()). */
  readonly accountCount: number;
  /** Where its recent blockhash starts in `bytes` (the landing receipt keeps it). */
  readonly blockhashOffset: number;
}

const SHUTTING_DOWN = failureOf(Errors.SHUTTING_DOWN);
const OVERLOADED = failureOf(Errors.OVERLOADED);
/**
 * Admission by delay's refusal: every route of the record is over its target sojourn. The documented overload answer
 * (503 + Retry-After, -32005, the QUIC overloaded code) with `data.cause` telling it from a full ring.
 */
const DELAYED = Object.freeze(new Failure(Errors.OVERLOADED, Errors.OVERLOADED.message, Object.freeze({ reason: Errors.OVERLOADED.reason, cause: 'queue_delay' })));

/** Where the intake reads admission by delay (src/shm/sojourn-layout.ts): the board's words and each ring's OVER index. */
export interface SojournReader {
  readonly words: Int32Array;
  /** OVER word index of each worker ring, in the intake's ring order. */
  readonly workerOver: Int32Array;
  /** OVER word index of the QUIC ring's consumer (-1 = none). */
  readonly quicOver: number;
}

export class Intake {
  private nextRing = 0;
  private closed = false;
  /** Reused parse result: the parser fills it, so the hot path allocates no parse objects. */
  private readonly parsed: ParsedTransaction = createParsedTransaction();

  constructor(
    private readonly rings: readonly RingProducer[],
    private readonly maxTransactionBytes: number,
    /**
     * Routes the relay adds on its own per key id (static everyTransaction: src/config/route-policy.ts). They count as
     * the transaction's routes when deciding whether anything can deliver it.
     */
    private readonly addedRouteMasks: Uint32Array = new Uint32Array(0),
    /** Landing receipts (src/receipts/); null = off. */
    private readonly receipts: ReceiptSink | null = null,
    /** The quic-egress thread's ring; null = every record goes into the worker rings. */
    private readonly quic: QuicRingTarget | null = null,
    /** Per-key counts on /metrics (src/admission/key-usage.ts); null = not counted. */
    private readonly usage: KeyUsage | null = null,
    /** The adaptive routing (docs/adaptive-routing.md); null = routes are the request's and the relay's only. */
    private readonly advisor: RouteAdvisor | null = null,
    /** Admission by delay (docs/relay-api.md); null = only ring space bounds what is accepted. */
    private readonly sojourn: SojournReader | null = null,
  ) {}

  /**
   * Routes admission by delay left out of the last accepted record (over their target while another route of the
   * record was not); 0 almost always. The answers that name the routes (/v1/submit, the QUIC bidi answer) drop them.
   */
  shedMask = 0;
  /** Route-sheds by route id since start (a record accepted without a route over its target): /metrics. */
  readonly shedByRoute = new Float64Array(ROUTE_COUNT);
  /** Refusals by delay (every route of the record over its target): /metrics. */
  delayRefusals = 0;

  /**
   * HOT: the routes of `routeMask` whose consumer reports them over target: one Atomics.load of the QUIC consumer's
   * OVER word for the QUIC routes, one of the worker ring the round-robin tries first for the others (the rings are
   * fed evenly, so their queues wait alike; the one tried first stands for them).
   */
  private overTarget(routeMask: number): number {
    const j = this.sojourn!;
    const q = this.quic;
    const qMask = q === null ? 0 : q.mask;
    let over = 0;
    if ((routeMask & qMask) !== 0 && j.quicOver >= 0) over = Atomics.load(j.words, j.quicOver) & routeMask & qMask;
    const w = routeMask & ~qMask;
    if (w !== 0 && j.workerOver.length > 0) over |= Atomics.load(j.words, j.workerOver[this.nextRing]) & w;
    return over;
  }

  /** The routes of the record being reserved and published (set by routesOf, read by publish). */
  private recordMask = 0;

  /** HOT: the record's routes: the request's, those the relay adds for the key, and the adaptive routing's. */
  private routesOf(meta: SubmissionMeta): number {
    const m = withAddedRoutes(meta.routeMask, meta.keyId, this.addedRouteMasks);
    this.recordMask = this.advisor === null ? m : this.advisor.adjust(meta.keyId, m);
    return this.recordMask;
  }

  /** Records published into two rings (each is one accepted transaction: EgressPool.deliverySummary). */
  joinedRecords = 0;
  /** Tx-data offset of the QUIC ring slot reserve() found for a record also going to a worker ring, else -1. */
  private quicOffset = -1;

  /** The landing receipt's sequence number for a transaction about to be published (0 = receipts off). */
  private receiptFor(signature: string, meta: SubmissionMeta, bytes: Uint8Array, blockhashAt: number): number {
    const r = this.receipts;
    return r === null ? 0 : r.accept(signature, meta, this.recordMask, bytes, blockhashAt);
  }

  /** Stop accepting (shutdown). Later submissions get SHUTTING_DOWN. */
  close(): void {
    this.closed = true;
  }

  /** Whether it still accepts (the quic-egress thread's local admission follows it: src/ingress/local-policy.ts). */
  get accepting(): boolean {
    return !this.closed;
  }

  /** Routes that can deliver now (-1 = all, no health state yet). */
  get deliverable(): number {
    return this.unavailable === null ? -1 : this.deliverableMask;
  }

  /** Routes that can deliver now (health monitor, src/health/); a transaction with none of them is refused. */
  private deliverableMask = -1;
  /** The ROUTES_UNAVAILABLE refusal for the current health state, built when the state changes, not per request. */
  private unavailable: Failure | null = null;

  /** Called by the health monitor when what the routes can deliver changes (cold). */
  setDeliverable(mask: number, refusalData: unknown): void {
    this.deliverableMask = mask;
    this.unavailable = Object.freeze(new Failure(Errors.ROUTES_UNAVAILABLE, Errors.ROUTES_UNAVAILABLE.message, refusalData));
  }

  /**
   * Undeliverable routes that may each take one transaction until the next grant (health monitor, every tick, cold):
   * a route closed for failing is probed by one live transaction a tick, never reopened to all of them.
   */
  private trickleMask = 0;
  /** The trickle routes the record being reserved was let in by (spent when it is published, not before). */
  private trickling = 0;

  setTrickle(mask: number): void {
    this.trickleMask = mask;
  }

  /** Tx-data offset of the slot reserve() found (kept in a field so reserve() returns without allocating). */
  private reservedOffset = -1;

  /**
   * The ring(s) the record goes into: the QUIC ring for the QUIC routes, a worker ring (round-robin over rings,
   * skipping full ones) for the others. Sets reservedOffset (and quicOffset when both). Or why nothing can be queued.
   */
  private reserve(routeMask: number): RingProducer | Failure {
    if (this.closed) return SHUTTING_DOWN;
    this.trickling = 0;
    if ((routeMask & this.deliverableMask) === 0 && this.unavailable !== null) {
      if ((routeMask & this.trickleMask) === 0) return this.unavailable;
      this.trickling = routeMask & this.trickleMask;
    }
    this.shedMask = 0;
    if (this.sojourn !== null) {
      const over = this.overTarget(routeMask);
      if (over !== 0) {
        // Refused before anything is reserved or filed: nothing was accepted, so nothing can be dropped later.
        if ((routeMask & ~over) === 0) {
          this.delayRefusals++;
          return DELAYED;
        }
        // Per route: the record keeps the routes that can take it now (documented in docs/relay-api.md).
        routeMask &= ~over;
        this.recordMask = routeMask;
        this.shedMask = over; // counted by publish(), once the record is accepted
      }
    }
    this.quicOffset = -1;
    const q = this.quic;
    if (q === null || (routeMask & q.mask) === 0) return this.reserveWorker();
    const offset = q.producer.reserve();
    if (offset < 0) return OVERLOADED;
    if ((routeMask & ~q.mask) === 0) {
      this.reservedOffset = offset;
      return q.producer;
    }
    const worker = this.reserveWorker();
    if (!(worker instanceof Failure)) this.quicOffset = offset;
    return worker;
  }

  private reserveWorker(): RingProducer | Failure {
    const n = this.rings.length;
    for (let i = 0; i < n; i++) {
      const ring = this.rings[this.nextRing];
      this.nextRing = this.nextRing + 1 === n ? 0 : this.nextRing + 1;
      const offset = ring.reserve();
      if (offset >= 0) {
        this.reservedOffset = offset;
        return ring;
      }
    }
    return OVERLOADED;
  }

  private checkAndPublish(ring: RingProducer, offset: number, length: number, meta: SubmissionMeta): string | Failure {
    const bytes = ring.bytes;
    const refused = checkTransaction(bytes, offset, length, this.parsed, this.maxTransactionBytes, meta.verifySignatures);
    if (refused !== null) return refused;
    const signature = encodeSignatureBase58(bytes, offset + this.parsed.firstSignatureOffset);
    return this.publish(ring, offset, length, meta, signature, offset + this.parsed.recentBlockhashOffset);
  }

  /** Publishes the reserved record (into both rings when reserve() found a QUIC slot too). */
  private publish(ring: RingProducer, offset: number, length: number, meta: SubmissionMeta, signature: string, blockhashAt: number): string | Failure {
    let join = 0;
    const qOffset = this.quicOffset;
    if (qOffset >= 0) {
      const q = this.quic!;
      join = q.join.allocate();
      if (join === 0) return OVERLOADED; // cannot happen with the table's capacity (src/shm/join.ts); never silent
      ring.bytes.copy(q.producer.bytes, qOffset, offset, offset + length);
    }
    if (this.trickling !== 0) this.trickleMask &= ~this.trickling; // spent only by a transaction actually sent
    const seq = this.receiptFor(signature, meta, ring.bytes, blockhashAt);
    this.advisor?.filed(seq);
    // The record carries the routes the relay adds (the egress consumers add none: a reload changes them here only).
    const mask = this.recordMask;
    ring.publish(length, meta.keyId, mask, meta.maxRetries, meta.receivedAtMs, meta.traceId, seq, join);
    if (join !== 0) {
      this.quic!.producer.publish(length, meta.keyId, mask, meta.maxRetries, meta.receivedAtMs, meta.traceId, seq, join);
      this.joinedRecords++;
    }
    this.usage?.accepted(meta.keyId);
    const shed = this.shedMask;
    if (shed !== 0) for (let id = 0; id < ROUTE_COUNT; id++) if ((shed & (1 << id)) !== 0) this.shedByRoute[id]++;
    return signature;
  }

  /** Base58/base64 text -> ring. Returns the first signature (base58), or the refusal. */
  submitEncoded(encoded: string, encoding: TransactionEncoding, meta: SubmissionMeta): string | Failure {
    const ring = this.reserve(this.routesOf(meta));
    if (ring instanceof Failure) return ring;
    const offset = this.reservedOffset;
    // Decode straight into the slot: this is the single copy of the transaction on its way to the worker.
    const slot = ring.bytes.subarray(offset, offset + this.maxTransactionBytes);
    const length = tryDecodeTransactionInto(slot, encoded, encoding, this.maxTransactionBytes);
    if (typeof length !== 'number') return length;
    return this.checkAndPublish(ring, offset, length, meta);
  }

  /** Raw wire bytes (application/octet-stream body, QUIC ingress) -> ring. The first signature, or the refusal. */
  submitBytes(tx: Uint8Array, meta: SubmissionMeta): string | Failure {
    if (!fitsTransaction(tx.length, this.maxTransactionBytes)) return oversizedRefusal(tx.length, this.maxTransactionBytes);
    const ring = this.reserve(this.routesOf(meta));
    if (ring instanceof Failure) return ring;
    const offset = this.reservedOffset;
    ring.bytes.set(tx, offset);
    return this.checkAndPublish(ring, offset, tx.length, meta);
  }

  /** Decode and check without publishing (preflight first), or the refusal. The bytes are a private copy. */
  check(encoded: string, encoding: TransactionEncoding, verifySignatures: boolean): CheckedTransaction | Failure {
    if (this.closed) return SHUTTING_DOWN;
    const buf = Buffer.allocUnsafe(this.maxTransactionBytes);
    const length = tryDecodeTransactionInto(buf, encoded, encoding, this.maxTransactionBytes);
    if (typeof length !== 'number') return length;
    const refused = checkTransaction(buf, 0, length, this.parsed, this.maxTransactionBytes, verifySignatures);
    if (refused !== null) return refused;
    const p = this.parsed;
    return {
      bytes: buf.subarray(0, length),
      signature: encodeSignatureBase58(buf, p.firstSignatureOffset),
      accountCount: p.accountKeysCount + p.lookupAccountCount,
      blockhashOffset: p.recentBlockhashOffset,
    };
  }

  /** Publish a transaction that passed check() (and its preflight): its signature, or the refusal. */
  publishChecked(tx: CheckedTransaction, meta: SubmissionMeta): string | Failure {
    const ring = this.reserve(this.routesOf(meta));
    if (ring instanceof Failure) return ring;
    ring.bytes.set(tx.bytes, this.reservedOffset);
    return this.publish(ring, this.reservedOffset, tx.bytes.length, meta, tx.signature, this.reservedOffset + tx.blockhashOffset);
  }

  /** Records published but not yet released by the workers, per ring (metrics gauge). */
  depths(): number[] {
    return this.rings.map((r) => r.depth());
  }
}
