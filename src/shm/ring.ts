// SPSC ring over one SharedArrayBuffer per egress worker (layout: ./layout.ts). HOT on both sides.
// Producer = the front thread: reserve() a slot, decode the transaction straight into `bytes` at the returned offset
// (the one copy), publish() the header and HEAD. Consumer = the ring's egress worker: take records in order, let
// them complete in any order (routes are async), release TAIL only over the completed prefix, so a record stays in
// its slot until every route has finished with it. The consumer parks and the producer wakes it by the rings' one
// doorbell (./doorbell.ts).
//
// Counters HEAD and TAIL are free-running u32 stored in Int32 words; every difference is taken with `| 0`, which is
// exact while HEAD - TAIL <= slotCount < 2^31, so wrap-around at 2^32 needs no special case.
import {
  CTL_ATTACHED,
  CTL_BYTES,
  CTL_HEAD,
  CTL_MAGIC,
  CTL_SLOT_BYTES,
  CTL_SLOT_COUNT,
  CTL_STOP,
  CTL_TAIL,
  CTL_VERSION,
  CTL_WAITING,
  REC_HEADER_BYTES,
  REC_KEY_ID,
  REC_MAX_RETRIES,
  MAX_RETRIES_I32,
  REC_RECEIVED_AT_MS,
  REC_RECEIPT_SEQ,
  REC_JOIN,
  REC_ROUTE_MASK,
  REC_TRACE,
  REC_TRACE_LENGTH,
  REC_TX_DATA,
  REC_TX_LENGTH,
  RING_LAYOUT_VERSION,
  RING_MAGIC,
  TRACE_MAX_BYTES,
  ringByteLength,
  slotBytesFor,
} from './layout.js';
import { ConsumerDoorbell, ProducerDoorbell, requestStopOn, type DoorbellWords } from './doorbell.js';

/** The ring's doorbell words (./doorbell.ts). */
const WORDS: DoorbellWords = Object.freeze({ head: CTL_HEAD, waiting: CTL_WAITING, stop: CTL_STOP });

/** Character written for a non-printable or non-ASCII trace-id character. */
const TRACE_REPLACEMENT = 0x3f; // '?'

/**
 * Allocate and initialise a ring. `initialSequence` (tests only) starts HEAD and TAIL at that u32 value, to
 * exercise the wrap-around at 2^32 without pushing four billion records.
 */
export function createRing(slotCount: number, maxTransactionBytes: number, initialSequence = 0): SharedArrayBuffer {
  if (!Number.isInteger(slotCount) || slotCount < 2 || (slotCount & (slotCount - 1)) !== 0 || slotCount > 1 << 24) {
    throw new RangeError(`ring slot count must be a power of two in [2, 2^24], got ${slotCount}`);
  }
  if (!Number.isInteger(maxTransactionBytes) || maxTransactionBytes < 1) {
    throw new RangeError(`maxTransactionBytes must be a positive integer, got ${maxTransactionBytes}`);
  }
  const slotBytes = slotBytesFor(maxTransactionBytes);
  const sab = new SharedArrayBuffer(ringByteLength(slotCount, slotBytes));
  const ctl = new Int32Array(sab, 0, CTL_BYTES >> 2);
  ctl[CTL_SLOT_COUNT] = slotCount;
  ctl[CTL_SLOT_BYTES] = slotBytes;
  ctl[CTL_HEAD] = initialSequence | 0;
  ctl[CTL_TAIL] = initialSequence | 0;
  ctl[CTL_VERSION] = RING_LAYOUT_VERSION;
  Atomics.store(ctl, CTL_MAGIC, RING_MAGIC); // last: a ring is valid once its magic is visible
  return sab;
}

/** Shared part of both ends: views and geometry, checked against MAGIC and LAYOUT_VERSION. */
abstract class RingEnd {
  /** Byte view over the whole ring; tx data of a slot is at its reserve()/txOffset() offset. */
  readonly bytes: Buffer;
  readonly sab: SharedArrayBuffer;
  readonly slotCount: number;
  readonly slotBytes: number;
  /** Bytes available for the transaction in each slot (>= the configured maxTransactionBytes). */
  readonly txCapacity: number;
  protected readonly ctl: Int32Array;
  protected readonly u32: Uint32Array;
  protected readonly i32: Int32Array;
  protected readonly f64: Float64Array;
  protected readonly mask: number;

  constructor(sab: SharedArrayBuffer) {
    if (!(sab instanceof SharedArrayBuffer) || sab.byteLength < CTL_BYTES) {
      throw new TypeError('ring: expected a SharedArrayBuffer made by createRing()');
    }
    this.ctl = new Int32Array(sab, 0, CTL_BYTES >> 2);
    const magic = Atomics.load(this.ctl, CTL_MAGIC);
    if (magic !== RING_MAGIC) throw new Error(`ring: bad magic 0x${(magic >>> 0).toString(16)}`);
    const version = this.ctl[CTL_VERSION];
    if (version !== RING_LAYOUT_VERSION) {
      throw new Error(`ring: layout version ${version}, this build speaks ${RING_LAYOUT_VERSION}`);
    }
    this.sab = sab;
    this.slotCount = this.ctl[CTL_SLOT_COUNT];
    this.slotBytes = this.ctl[CTL_SLOT_BYTES];
    if (sab.byteLength !== ringByteLength(this.slotCount, this.slotBytes)) {
      throw new Error('ring: buffer length does not match its header');
    }
    this.txCapacity = this.slotBytes - REC_HEADER_BYTES;
    this.mask = this.slotCount - 1;
    this.bytes = Buffer.from(sab);
    this.u32 = new Uint32Array(sab);
    this.i32 = new Int32Array(sab);
    this.f64 = new Float64Array(sab);
  }

  /** Byte offset of slot `slot`'s record header. */
  slotBase(slot: number): number {
    return CTL_BYTES + slot * this.slotBytes;
  }

  /** Records published and not yet released (HEAD - TAIL). */
  depth(): number {
    return (Atomics.load(this.ctl, CTL_HEAD) - Atomics.load(this.ctl, CTL_TAIL)) | 0;
  }

  head(): number {
    return Atomics.load(this.ctl, CTL_HEAD) >>> 0;
  }

  tail(): number {
    return Atomics.load(this.ctl, CTL_TAIL) >>> 0;
  }
}

export interface RingProducerOptions {
  /**
   * Wake a sleeping consumer once per event-loop turn instead of once per record (the doorbell's `end-of-turn`
   * policy, ./doorbell.ts): an idle relay still wakes the consumer at the end of the turn that published
   * (microseconds later). Only for producers whose thread returns to its event loop (the front); a producer pushing
   * in a synchronous loop must not use it.
   */
  readonly coalesceWakeups?: boolean;
}

/** Front-thread end. Single producer: exactly one RingProducer per ring, on one thread. */
export class RingProducer extends RingEnd {
  /** Producer's copy of HEAD (it is the only writer). */
  private nextHead: number;
  /** Header offset of the slot handed out by the last reserve(), -1 when none. */
  private reservedBase = -1;
  /** Last TAIL seen: re-read only when the ring looks full, so the consumer's cache line is not pulled per push. */
  private cachedTail: number;
  private readonly doorbell: ProducerDoorbell;

  constructor(sab: SharedArrayBuffer, options: RingProducerOptions = {}) {
    super(sab);
    this.nextHead = Atomics.load(this.ctl, CTL_HEAD);
    this.cachedTail = Atomics.load(this.ctl, CTL_TAIL);
    this.doorbell = new ProducerDoorbell(this.ctl, WORDS, options.coalesceWakeups === true ? 'end-of-turn' : 'every');
  }

  /**
   * Byte offset (in `bytes`) of the next free slot's transaction area, or -1 when the ring is full. Write the
   * transaction there, then publish(); a reservation that is never published is simply reused by the next reserve().
   */
  reserve(): number {
    const head = this.nextHead;
    if (((head - this.cachedTail) | 0) >= this.slotCount) {
      this.cachedTail = Atomics.load(this.ctl, CTL_TAIL);
      if (((head - this.cachedTail) | 0) >= this.slotCount) {
        this.reservedBase = -1;
        return -1;
      }
    }
    const base = CTL_BYTES + (head & this.mask) * this.slotBytes;
    this.reservedBase = base;
    return base + REC_TX_DATA;
  }

  /** Publish the reserved slot: fill its header, advance HEAD, wake the consumer if it sleeps. No allocation. */
  publish(txLength: number, keyId: number, routeMask: number, maxRetries: number, receivedAtMs: number, traceId: string, receiptSeq = 0, join = 0): void {
    const base = this.reservedBase;
    if (base < 0) throw new Error('ring: publish() without a successful reserve()');
    if (txLength < 0 || txLength > this.txCapacity) throw new RangeError(`ring: transaction length ${txLength}`);
    this.reservedBase = -1;
    this.u32[(base + REC_TX_LENGTH) >> 2] = txLength;
    this.u32[(base + REC_KEY_ID) >> 2] = keyId;
    this.u32[(base + REC_ROUTE_MASK) >> 2] = routeMask;
    // i32 field: a client's usize above 2^31-1 would wrap (2^31 -> "none given", 2^32 -> 0). Clamped instead: that
    // many rebroadcasts already means "until the blockhash expires" (docs/relay-api.md).
    this.i32[(base + REC_MAX_RETRIES) >> 2] = maxRetries > MAX_RETRIES_I32 ? MAX_RETRIES_I32 : maxRetries;
    this.f64[(base + REC_RECEIVED_AT_MS) >> 3] = receivedAtMs;
    this.u32[(base + REC_RECEIPT_SEQ) >> 2] = receiptSeq;
    this.u32[(base + REC_JOIN) >> 2] = join;
    const bytes = this.bytes;
    const n = traceId.length < TRACE_MAX_BYTES ? traceId.length : TRACE_MAX_BYTES;
    const t = base + REC_TRACE;
    for (let i = 0; i < n; i++) {
      const c = traceId.charCodeAt(i);
      bytes[t + i] = c >= 0x20 && c < 0x7f ? c : TRACE_REPLACEMENT;
    }
    bytes[base + REC_TRACE_LENGTH] = n;
    const head = (this.nextHead + 1) | 0;
    this.nextHead = head;
    // Seq-cst store: every header/tx write above is visible to a consumer that loads this HEAD.
    Atomics.store(this.ctl, CTL_HEAD, head);
    this.doorbell.published();
  }

  /** Records the ring can still accept. */
  free(): number {
    return this.slotCount - ((this.nextHead - Atomics.load(this.ctl, CTL_TAIL)) | 0);
  }
}

/**
 * Worker end. take() hands out slot indexes in publication order; complete(slot) may be called in any order; TAIL
 * advances over the completed prefix only. A new consumer starts at TAIL, so records a crashed consumer had taken
 * but not completed are taken again (at-least-once).
 */
export class RingConsumer extends RingEnd {
  /** Sequence number of the next record to take. */
  private nextTake: number;
  /** Consumer's copy of TAIL (it is the only writer while attached). */
  private released: number;
  /** 1 = the record in this slot is complete but not yet released (an earlier one is still in flight). */
  private readonly done: Uint8Array;
  private detached = false;
  /** Last HEAD seen: re-read only when every record up to it was taken. */
  private cachedHead: number;
  /** ATTACHED generation of this consumer. */
  readonly generation: number;
  private readonly doorbell: ConsumerDoorbell;

  constructor(sab: SharedArrayBuffer) {
    super(sab);
    this.generation = (Atomics.add(this.ctl, CTL_ATTACHED, 1) + 1) | 0;
    this.released = Atomics.load(this.ctl, CTL_TAIL);
    this.nextTake = this.released;
    this.cachedHead = this.released;
    this.done = new Uint8Array(this.slotCount);
    this.doorbell = new ConsumerDoorbell(this.ctl, WORDS);
  }

  /** Records published and not yet taken by this consumer. */
  available(): number {
    return (Atomics.load(this.ctl, CTL_HEAD) - this.nextTake) | 0;
  }

  /** Records taken and not yet released. */
  inFlight(): number {
    return (this.nextTake - this.released) | 0;
  }

  /** Next record's slot index, or -1 when none is published. */
  take(): number {
    if (this.nextTake === this.cachedHead) {
      this.cachedHead = Atomics.load(this.ctl, CTL_HEAD);
      if (this.nextTake === this.cachedHead) return -1;
    }
    const slot = this.nextTake & this.mask;
    this.nextTake = (this.nextTake + 1) | 0;
    return slot;
  }

  /** Mark the record in `slot` finished; releases the completed prefix. No-op after detach(). */
  complete(slot: number): void {
    if (this.detached) return;
    const done = this.done;
    if (done[slot] !== 0 || ((slot - this.released) & this.mask) >= this.inFlight()) {
      throw new Error(`ring: complete() of slot ${slot}, which is not in flight`);
    }
    done[slot] = 1;
    let tail = this.released;
    if ((tail & this.mask) !== slot) return; // an earlier record is still in flight
    const end = this.nextTake;
    while (tail !== end && done[tail & this.mask] !== 0) {
      done[tail & this.mask] = 0;
      tail = (tail + 1) | 0;
    }
    this.released = tail;
    // A replacement consumer owns TAIL now: never move it from a stale one.
    if (Atomics.load(this.ctl, CTL_ATTACHED) === this.generation) Atomics.store(this.ctl, CTL_TAIL, tail);
  }

  /** Stop touching TAIL (the consumer loop ended; late completions of its routes are ignored). */
  detach(): void {
    this.detached = true;
  }

  /** The pool asked this ring's consumer to finish. */
  stopRequested(): boolean {
    return Atomics.load(this.ctl, CTL_STOP) !== 0;
  }

  /**
   * Sleep until a record is published, stop is requested or `timeoutMs` passes. Never blocks the event loop.
   * Returns immediately when a record is already available.
   */
  waitForRecords(timeoutMs: number): Promise<void> {
    return this.doorbell.park(this.nextTake, timeoutMs);
  }

  txOffset(slot: number): number {
    return CTL_BYTES + slot * this.slotBytes + REC_TX_DATA;
  }
  txLength(slot: number): number {
    return this.u32[(CTL_BYTES + slot * this.slotBytes + REC_TX_LENGTH) >> 2];
  }
  /** Zero-copy view of the transaction; valid until complete(slot). */
  txBytes(slot: number): Buffer {
    const off = this.txOffset(slot);
    return this.bytes.subarray(off, off + this.txLength(slot));
  }
  keyId(slot: number): number {
    return this.u32[(CTL_BYTES + slot * this.slotBytes + REC_KEY_ID) >> 2];
  }
  routeMask(slot: number): number {
    return this.u32[(CTL_BYTES + slot * this.slotBytes + REC_ROUTE_MASK) >> 2];
  }
  maxRetries(slot: number): number {
    return this.i32[(CTL_BYTES + slot * this.slotBytes + REC_MAX_RETRIES) >> 2];
  }
  receivedAtMs(slot: number): number {
    return this.f64[(CTL_BYTES + slot * this.slotBytes + REC_RECEIVED_AT_MS) >> 3];
  }
  receiptSeq(slot: number): number {
    return this.u32[(CTL_BYTES + slot * this.slotBytes + REC_RECEIPT_SEQ) >> 2];
  }

  /** The record's join table entry + 1 (src/shm/join.ts), 0 when it is in this ring only. */
  joinIndex(slot: number): number {
    return this.u32[(CTL_BYTES + slot * this.slotBytes + REC_JOIN) >> 2];
  }
  traceId(slot: number): string {
    const base = CTL_BYTES + slot * this.slotBytes;
    return this.bytes.toString('latin1', base + REC_TRACE, base + REC_TRACE + this.bytes[base + REC_TRACE_LENGTH]);
  }
}

/** Pool side (cold): ask the ring's consumer to finish and wake it. */
export function requestStop(sab: SharedArrayBuffer, stop = true): void {
  requestStopOn(new Int32Array(sab, 0, CTL_BYTES >> 2), WORDS, stop);
}

/** Records ever published into a ring (HEAD; exact below 2^32 records, the counter is a free-running u32). */
export function ringPublished(sab: SharedArrayBuffer): number {
  const ctl = new Int32Array(sab, 0, CTL_BYTES >> 2);
  return Atomics.load(ctl, CTL_HEAD) >>> 0;
}

/** HEAD - TAIL of a ring, without attaching an end (metrics, drain). */
export function ringDepth(sab: SharedArrayBuffer): number {
  const ctl = new Int32Array(sab, 0, CTL_BYTES >> 2);
  return (Atomics.load(ctl, CTL_HEAD) - Atomics.load(ctl, CTL_TAIL)) | 0;
}
