// SPSC message ring between two threads with event loops (layout: ./message-ring-layout.ts; the QUIC ingress's
// QUIC thread <-> front rings and the links between QUIC threads, each protocol naming the header's words in its own
// layout). HOT on both sides: one push per message, one pop per message. Fixed-size slots (a header + up to maxPayloadBytes), consumed in
// order and released at once (each side handles a message synchronously). Both ends are threads with an event loop
// doing I/O; the consumer parks and the producer wakes it by the rings' one doorbell (./doorbell.ts), with the
// `first-then-end-of-turn` policy: the first message of an event-loop turn wakes at once, the rest of the turn once
// at its end.
import {
  MCTL_BYTES,
  MCTL_HEAD,
  MCTL_MAGIC,
  MCTL_SLOT_BYTES,
  MCTL_SLOT_COUNT,
  MCTL_STOP,
  MCTL_TAIL,
  MCTL_VERSION,
  MCTL_WAITING,
  MSG_F0,
  MSG_F1,
  MSG_HEADER_BYTES,
  MSG_I0,
  MSG_KIND,
  MSG_LENGTH,
  MSG_RING_MAGIC,
  MSG_RING_VERSION,
  MSG_U0,
  MSG_U1,
  MSG_U2,
  msgRingByteLength,
  msgSlotBytes,
} from './message-ring-layout.js';

import { ConsumerDoorbell, ProducerDoorbell, requestStopOn, type DoorbellWords } from './doorbell.js';

/** The message ring's doorbell words (./doorbell.ts). */
const WORDS: DoorbellWords = Object.freeze({ head: MCTL_HEAD, waiting: MCTL_WAITING, stop: MCTL_STOP });

export function createMessageRing(slotCount: number, maxPayloadBytes: number): SharedArrayBuffer {
  if (!Number.isInteger(slotCount) || slotCount < 2 || (slotCount & (slotCount - 1)) !== 0 || slotCount > 1 << 20) {
    throw new RangeError(`message ring slot count must be a power of two in [2, 2^20], got ${slotCount}`);
  }
  const slotBytes = msgSlotBytes(maxPayloadBytes);
  const sab = new SharedArrayBuffer(msgRingByteLength(slotCount, slotBytes));
  const ctl = new Int32Array(sab, 0, MCTL_BYTES >> 2);
  ctl[MCTL_SLOT_COUNT] = slotCount;
  ctl[MCTL_SLOT_BYTES] = slotBytes;
  ctl[MCTL_VERSION] = MSG_RING_VERSION;
  Atomics.store(ctl, MCTL_MAGIC, MSG_RING_MAGIC); // last: valid once the magic is visible
  return sab;
}

abstract class MessageRingEnd {
  readonly bytes: Buffer;
  readonly slotCount: number;
  readonly slotBytes: number;
  /** Largest payload a slot holds. */
  readonly maxPayload: number;
  protected readonly ctl: Int32Array;
  protected readonly u32: Uint32Array;
  protected readonly i32: Int32Array;
  protected readonly f64: Float64Array;
  protected readonly mask: number;

  constructor(readonly sab: SharedArrayBuffer) {
    if (!(sab instanceof SharedArrayBuffer) || sab.byteLength < MCTL_BYTES) throw new TypeError('message ring: expected a SharedArrayBuffer from createMessageRing()');
    this.ctl = new Int32Array(sab, 0, MCTL_BYTES >> 2);
    const magic = Atomics.load(this.ctl, MCTL_MAGIC);
    if (magic !== MSG_RING_MAGIC) throw new Error(`message ring: bad magic 0x${(magic >>> 0).toString(16)}`);
    if (this.ctl[MCTL_VERSION] !== MSG_RING_VERSION) throw new Error(`message ring: layout version ${this.ctl[MCTL_VERSION]}, this build speaks ${MSG_RING_VERSION}`);
    this.slotCount = this.ctl[MCTL_SLOT_COUNT];
    this.slotBytes = this.ctl[MCTL_SLOT_BYTES];
    if (sab.byteLength !== msgRingByteLength(this.slotCount, this.slotBytes)) throw new Error('message ring: length does not match its header');
    this.maxPayload = this.slotBytes - MSG_HEADER_BYTES;
    this.mask = this.slotCount - 1;
    this.bytes = Buffer.from(sab);
    this.u32 = new Uint32Array(sab);
    this.i32 = new Int32Array(sab);
    this.f64 = new Float64Array(sab);
  }

  /** Messages published and not yet released. */
  depth(): number {
    return (Atomics.load(this.ctl, MCTL_HEAD) - Atomics.load(this.ctl, MCTL_TAIL)) | 0;
  }
}

/** A message's header: its kind and the six protocol words (named by each protocol's layout). */
export interface MessageHeader {
  kind: number;
  i0: number;
  u0: number;
  f0: number;
  f1: number;
  u1: number;
  u2: number;
}

export class MessageRingProducer extends MessageRingEnd {
  private nextHead: number;
  private cachedTail: number;
  private reservedBase = -1;
  private readonly doorbell: ProducerDoorbell;

  constructor(sab: SharedArrayBuffer) {
    super(sab);
    this.nextHead = Atomics.load(this.ctl, MCTL_HEAD);
    this.cachedTail = Atomics.load(this.ctl, MCTL_TAIL);
    this.doorbell = new ProducerDoorbell(this.ctl, WORDS, 'first-then-end-of-turn');
  }

  /** Free slots now. */
  free(): number {
    this.cachedTail = Atomics.load(this.ctl, MCTL_TAIL);
    return this.slotCount - ((this.nextHead - this.cachedTail) | 0);
  }

  /** Byte offset (in `bytes`) of the next free slot's payload, or -1 when the ring is full. Then publish(). */
  reserve(): number {
    const head = this.nextHead;
    if (((head - this.cachedTail) | 0) >= this.slotCount) {
      this.cachedTail = Atomics.load(this.ctl, MCTL_TAIL);
      if (((head - this.cachedTail) | 0) >= this.slotCount) {
        this.reservedBase = -1;
        return -1;
      }
    }
    const base = MCTL_BYTES + (head & this.mask) * this.slotBytes;
    this.reservedBase = base;
    return base + MSG_HEADER_BYTES;
  }

  /** Publishes the reserved slot: its kind, payload length and protocol words. Use a protocol's publish helper. */
  publish(kind: number, length: number, i0: number, u0: number, f0: number, f1: number, u1: number, u2: number): void {
    this.store(kind, length, i0, u0, f0, f1, u1, u2);
    this.doorbell.published();
  }

  /** Copy `payload` into a slot and publish it; false when the ring is full or the payload does not fit. */
  push(kind: number, payload: Uint8Array, i0: number, u0: number, f0: number, f1: number, u1: number, u2: number): boolean {
    if (!this.copyIn(payload)) return false;
    this.publish(kind, payload.length, i0, u0, f0, f1, u1, u2);
    return true;
  }

  /**
   * push() for a message the consumer need not see at once (a note for its books): the consumer is woken at the end
   * of this thread's turn, not before the rest of the turn's work (doorbell.ts publishedLater).
   */
  pushLater(kind: number, payload: Uint8Array, i0: number, u0: number, f0: number, f1: number, u1: number, u2: number): boolean {
    if (!this.copyIn(payload)) return false;
    this.store(kind, payload.length, i0, u0, f0, f1, u1, u2);
    this.doorbell.publishedLater();
    return true;
  }

  private copyIn(payload: Uint8Array): boolean {
    if (payload.length > this.maxPayload) return false;
    const off = this.reserve();
    if (off < 0) return false;
    this.bytes.set(payload, off);
    return true;
  }

  private store(kind: number, length: number, i0: number, u0: number, f0: number, f1: number, u1: number, u2: number): void {
    const base = this.reservedBase;
    if (base < 0) throw new Error('message ring: publish() without a successful reserve()');
    if (length < 0 || length > this.maxPayload) throw new RangeError(`message ring: payload length ${length}`);
    this.reservedBase = -1;
    this.u32[(base + MSG_KIND) >> 2] = kind;
    this.u32[(base + MSG_LENGTH) >> 2] = length;
    this.i32[(base + MSG_I0) >> 2] = i0;
    this.u32[(base + MSG_U0) >> 2] = u0;
    this.f64[(base + MSG_F0) >> 3] = f0;
    this.f64[(base + MSG_F1) >> 3] = f1;
    this.u32[(base + MSG_U1) >> 2] = u1;
    this.u32[(base + MSG_U2) >> 2] = u2;
    const head = (this.nextHead + 1) | 0;
    this.nextHead = head;
    Atomics.store(this.ctl, MCTL_HEAD, head); // seq-cst: the header and payload above are visible with it
  }

}

/** Messages published and not yet released, without attaching an end (metrics). */
export function messageRingDepth(sab: SharedArrayBuffer): number {
  const ctl = new Int32Array(sab, 0, MCTL_BYTES >> 2);
  return (Atomics.load(ctl, MCTL_HEAD) - Atomics.load(ctl, MCTL_TAIL)) | 0;
}

/** Ask a ring's consumer to return from its loop (shutdown) and wake it; from any thread (cold). */
export function requestMessageRingStop(sab: SharedArrayBuffer): void {
  requestStopOn(new Int32Array(sab, 0, MCTL_BYTES >> 2), WORDS);
}

export class MessageRingConsumer extends MessageRingEnd {
  private next: number;
  private cachedHead: number;
  private readonly doorbell: ConsumerDoorbell;
  /** Header of the message last returned by take() (reused: take() allocates nothing). */
  readonly header: MessageHeader = { kind: 0, i0: 0, u0: 0, f0: 0, f1: 0, u1: 0, u2: 0 };
  /** Payload offset and length of the message last returned by take(). */
  payloadOffset = 0;
  payloadLength = 0;

  constructor(sab: SharedArrayBuffer) {
    super(sab);
    this.next = Atomics.load(this.ctl, MCTL_TAIL);
    this.cachedHead = this.next;
    this.doorbell = new ConsumerDoorbell(this.ctl, WORDS);
  }

  /**
   * Reads the next message into `header`/payloadOffset/payloadLength; false when none. The payload stays valid until
   * release(); call release() before the next take().
   */
  take(): boolean {
    if (this.next === this.cachedHead) {
      this.cachedHead = Atomics.load(this.ctl, MCTL_HEAD);
      if (this.next === this.cachedHead) return false;
    }
    const base = MCTL_BYTES + (this.next & this.mask) * this.slotBytes;
    const h = this.header;
    h.kind = this.u32[(base + MSG_KIND) >> 2];
    h.i0 = this.i32[(base + MSG_I0) >> 2];
    h.u0 = this.u32[(base + MSG_U0) >> 2];
    h.f0 = this.f64[(base + MSG_F0) >> 3];
    h.f1 = this.f64[(base + MSG_F1) >> 3];
    h.u1 = this.u32[(base + MSG_U1) >> 2];
    h.u2 = this.u32[(base + MSG_U2) >> 2];
    this.payloadOffset = base + MSG_HEADER_BYTES;
    this.payloadLength = this.u32[(base + MSG_LENGTH) >> 2];
    return true;
  }

  /** Zero-copy view of the last taken payload (valid until release()). */
  payload(): Buffer {
    return this.bytes.subarray(this.payloadOffset, this.payloadOffset + this.payloadLength);
  }

  /** Give the last taken slot back to the producer. */
  release(): void {
    this.next = (this.next + 1) | 0;
    Atomics.store(this.ctl, MCTL_TAIL, this.next);
  }

  available(): number {
    return (Atomics.load(this.ctl, MCTL_HEAD) - this.next) | 0;
  }

  stopRequested(): boolean {
    return Atomics.load(this.ctl, MCTL_STOP) !== 0;
  }

  /** Sleep until a message is published, stop is requested or `timeoutMs` passes. Never blocks the event loop. */
  waitForMessages(timeoutMs: number): Promise<void> {
    return this.doorbell.park(this.next, timeoutMs);
  }
}
