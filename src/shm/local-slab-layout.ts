// The quic-egress thread's local-admission slab (src/ingress/local-admission.ts): the slots holding transactions admitted and
// sent in the quic-egress thread until every route answered. Made by the front (src/ingress/ingress-task-runner.ts) so it
// outlives the quic-egress thread: a replacement thread finds every slot still IN_FLIGHT and sends it again (at least once,
// as the QUIC ring's replay does), so a transaction answered `accepted` is never lost by a restart. One writer at a
// time (the quic-egress thread that runs); HOT: one claim and one release per locally admitted transaction.
//
//   bytes 0..63   header (Int32 words): [0] MAGIC, [1] LAYOUT_VERSION, [2] slots, [3] bytes per slot
//   Int32[slots]       state per slot: FREE or IN_FLIGHT (stored last on claim, first on release)
//   Float64[slots*8]   per slot: length, keyId, routeMask, receipt seq, receivedAtMs, connId, streamId
//   bytes[slots*slotBytes]  the transactions

export const SLAB_MAGIC = 0x534c4142; // 'SLAB'
export const SLAB_LAYOUT_VERSION = 1;
const HEADER_BYTES = 64;
export const SLOT_FREE = 0;
export const SLOT_IN_FLIGHT = 1;
const META = 8;
const M_LENGTH = 0;
const M_KEY = 1;
const M_MASK = 2;
const M_SEQ = 3;
const M_RECEIVED = 4;
const M_CONN = 5;
const M_STREAM = 6;

function offsets(slots: number, slotBytes: number): { states: number; meta: number; data: number; total: number } {
  const states = HEADER_BYTES;
  const meta = Math.ceil((states + slots * 4) / 8) * 8;
  const data = meta + slots * META * 8;
  return { states, meta, data, total: data + slots * slotBytes };
}

export function createLocalSlab(slots: number, maxTransactionBytes: number): SharedArrayBuffer {
  if (!Number.isInteger(slots) || slots < 1) throw new RangeError(`local slab: ${slots} slots`);
  const slotBytes = Math.ceil(maxTransactionBytes / 8) * 8;
  const sab = new SharedArrayBuffer(offsets(slots, slotBytes).total);
  const h = new Int32Array(sab, 0, HEADER_BYTES >> 2);
  h[1] = SLAB_LAYOUT_VERSION;
  h[2] = slots;
  h[3] = slotBytes;
  Atomics.store(h, 0, SLAB_MAGIC);
  return sab;
}

/** A slot's record, as written on claim (what a replay needs to send it again). */
export interface SlabRecord {
  length: number;
  keyId: number;
  routeMask: number;
  seq: number;
  receivedAtMs: number;
  connId: number;
  streamId: number;
}

export class LocalSlab {
  readonly slots: number;
  readonly slotBytes: number;
  /** Byte view over the whole buffer; slot i's transaction starts at txOffset(i). */
  readonly bytes: Buffer;
  private readonly states: Int32Array;
  private readonly meta: Float64Array;
  private readonly dataAt: number;

  constructor(readonly sab: SharedArrayBuffer) {
    const h = new Int32Array(sab, 0, HEADER_BYTES >> 2);
    if (Atomics.load(h, 0) !== SLAB_MAGIC || h[1] !== SLAB_LAYOUT_VERSION) throw new Error('local slab: wrong magic or layout version');
    this.slots = h[2];
    this.slotBytes = h[3];
    const o = offsets(this.slots, this.slotBytes);
    if (sab.byteLength !== o.total) throw new Error('local slab: size does not match its header');
    this.states = new Int32Array(sab, o.states, this.slots);
    this.meta = new Float64Array(sab, o.meta, this.slots * META);
    this.dataAt = o.data;
    this.bytes = Buffer.from(sab);
  }

  txOffset(slot: number): number {
    return this.dataAt + slot * this.slotBytes;
  }

  inFlight(slot: number): boolean {
    return Atomics.load(this.states, slot) === SLOT_IN_FLIGHT;
  }

  /** The transaction in `slot` is now answered for: replayed by a replacement thread until release(). */
  claim(slot: number, length: number, keyId: number, routeMask: number, seq: number, receivedAtMs: number, connId: number, streamId: number): void {
    const m = this.meta;
    const b = slot * META;
    m[b + M_LENGTH] = length;
    m[b + M_KEY] = keyId;
    m[b + M_MASK] = routeMask;
    m[b + M_SEQ] = seq;
    m[b + M_RECEIVED] = receivedAtMs;
    m[b + M_CONN] = connId;
    m[b + M_STREAM] = streamId;
    Atomics.store(this.states, slot, SLOT_IN_FLIGHT); // last: the record above is visible with it
  }

  release(slot: number): void {
    Atomics.store(this.states, slot, SLOT_FREE);
  }

  /** Cold (a replay): the record of an in-flight slot. */
  record(slot: number): SlabRecord {
    const m = this.meta;
    const b = slot * META;
    return {
      length: m[b + M_LENGTH],
      keyId: m[b + M_KEY],
      routeMask: m[b + M_MASK],
      seq: m[b + M_SEQ],
      receivedAtMs: m[b + M_RECEIVED],
      connId: m[b + M_CONN],
      streamId: m[b + M_STREAM],
    };
  }
}
