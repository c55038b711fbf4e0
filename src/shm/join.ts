// The record join table (shared memory; HOT on both sides): a record whose routes belong to both families is
// published into an egress worker's ring AND the quic-egress thread's ring (src/config/route-plan.ts). Each consumer sends
// its own routes; the join entry gathers both sides' outcomes so that the record-level accounting (released or
// shutdown, undelivered, the delivery-accounting log line with every route's outcome) happens exactly once, by the
// side that answers last. Layout, every offset here:
//
//   bytes 0..63   header (Int32 words): [0] MAGIC, [1] LAYOUT_VERSION, [2] capacity (power of two)
//   bytes 64..    entry i at 64 + i * ENTRY_BYTES, Int32 words:
//     [0] PENDING   3 when armed (two sides + a hold released by the last side once it read the entry); 0 = free
//     [1] FLAGS     Atomics.or of JOIN_FLAG bits
//     [2] OUTCOMES  one byte per route (ROUTE_COUNT <= 4): 0 = none, else EGRESS_OUTCOMES index + 1; each byte has
//                   exactly one writer (the side owning that route), written before that side's PENDING decrement
//
// Front thread (single allocator): allocate() finds a free entry from a cursor and arms it. The two consumers: take()
// marks TAKEN (the first one counts `consumed`), finish() stores its outcomes and decrements PENDING; the side that
// answers last reads the whole entry (the Atomics decrement orders the other side's stores before it) and frees it.
// Capacity: an armed entry's record occupies a slot in at least one ring until the entry is freed, so at most
// (QUIC ring slots + every worker ring's slots) entries are armed; twice that, rounded up to a power of two, keeps the
// allocator's probe short.
import { ROUTE_COUNT } from './layout.js';

export const JOIN_MAGIC = 0x534c544a; // 'SLTJ'
export const JOIN_LAYOUT_VERSION = 1;
const HEADER_BYTES = 64;
const ENTRY_WORDS = 4;
const W_PENDING = 0;
const W_FLAGS = 1;
const W_OUTCOMES = 2;

export const JOIN_FLAG = Object.freeze({
  /** Some route of either side sent it. */
  delivered: 1,
  /** Some route answered anything but sent / dropped:discarded. */
  troubled: 2,
  /** A stop ended one side's part (the record counts as shutdown, not released). */
  stopped: 4,
  /** A consumer took it (the first one counts it as consumed). */
  taken: 8,
} as const);

if (ROUTE_COUNT > 4) throw new Error('join table: one Int32 word holds at most 4 route outcomes');

export function joinCapacityFor(totalRingSlots: number): number {
  let c = 2;
  while (c < totalRingSlots * 2) c *= 2;
  return c;
}

export function createJoinTable(capacity: number): SharedArrayBuffer {
  if (!Number.isInteger(capacity) || capacity < 2 || (capacity & (capacity - 1)) !== 0) throw new RangeError('join capacity must be a power of two >= 2');
  const sab = new SharedArrayBuffer(HEADER_BYTES + capacity * ENTRY_WORDS * 4);
  const h = new Int32Array(sab, 0, HEADER_BYTES >> 2);
  h[1] = JOIN_LAYOUT_VERSION;
  h[2] = capacity;
  Atomics.store(h, 0, JOIN_MAGIC);
  return sab;
}

/** Views over a join table; the constructor checks magic, version and size (every side attaching). */
class JoinViews {
  protected readonly w: Int32Array;
  protected readonly b: Uint8Array;
  readonly capacity: number;

  constructor(sab: SharedArrayBuffer) {
    if (!(sab instanceof SharedArrayBuffer) || sab.byteLength < HEADER_BYTES) throw new TypeError('join table: expected a buffer made by createJoinTable()');
    const h = new Int32Array(sab, 0, HEADER_BYTES >> 2);
    if (Atomics.load(h, 0) !== JOIN_MAGIC) throw new Error('join table: bad magic');
    if (h[1] !== JOIN_LAYOUT_VERSION) throw new Error(`join table: layout version ${h[1]}, this build speaks ${JOIN_LAYOUT_VERSION}`);
    this.capacity = h[2];
    if (sab.byteLength !== HEADER_BYTES + this.capacity * ENTRY_WORDS * 4) throw new Error('join table: size does not match its header');
    this.w = new Int32Array(sab, HEADER_BYTES);
    this.b = new Uint8Array(sab, HEADER_BYTES);
  }

  /** Entries armed and finished by neither side (PENDING 3). */
  unfinishedByBoth(): number {
    let n = 0;
    for (let i = 0; i < this.capacity; i++) if (Atomics.load(this.w, i * ENTRY_WORDS + W_PENDING) === 3) n++;
    return n;
  }
}

/** The front thread's end: arms one entry per record published into two rings. */
export class JoinAllocator extends JoinViews {
  private cursor = 0;

  /** Arms a free entry for two sides; its index + 1 (the record header's REC_JOIN), or 0 when none is free. */
  allocate(): number {
    const mask = this.capacity - 1;
    for (let n = 0; n < this.capacity; n++) {
      const i = this.cursor;
      this.cursor = (i + 1) & mask;
      const base = i * ENTRY_WORDS;
      if (Atomics.load(this.w, base + W_PENDING) !== 0) continue;
      this.w[base + W_FLAGS] = 0;
      this.w[base + W_OUTCOMES] = 0;
      Atomics.store(this.w, base + W_PENDING, 3); // last: publishes the cleared words with it (3: see finish())
      return i + 1;
    }
    return 0;
  }

  /** Entries armed now (tests, metrics). */
  armed(): number {
    let n = 0;
    for (let i = 0; i < this.capacity; i++) if (Atomics.load(this.w, i * ENTRY_WORDS + W_PENDING) !== 0) n++;
    return n;
  }
}

/**
 * Entries neither side has finished yet (PENDING still 3): records that sit in BOTH rings (a worker's and the QUIC
 * thread's), unreleased on either side. Cold: the egress pool's drain() reads it once, to count each transaction left
 * in the rings once (src/egress/consumer/pool.ts). A snapshot taken while the consumers still run, like the ring depths it is
 * subtracted from: a record a side finishes between the two reads can be off by one.
 */
export function joinedUnfinishedByBoth(sab: SharedArrayBuffer): number {
  const v = new JoinViews(sab);
  return v.unfinishedByBoth();
}

/** A consumer's end (egress worker or QUIC thread). `join` arguments are REC_JOIN values (index + 1). */
export class JoinSide extends JoinViews {
  /** Marks the record taken; true for the first side to take it (that one counts `consumed`). */
  take(join: number): boolean {
    return (Atomics.or(this.w, (join - 1) * ENTRY_WORDS + W_FLAGS, JOIN_FLAG.taken) & JOIN_FLAG.taken) === 0;
  }

  /**
   * This side is done: its routes' outcomes (outcome index + 1 per route id, 0 = not its route) and flags go in, and
   * PENDING goes down. When this side answered last, the other side's outcomes are copied into `outcomes` (where it
   * has none), the entry is freed, and the joined FLAGS are returned (this side then does the record-level
   * accounting); -1 while the other side still works.
   */
  finish(join: number, outcomes: Uint8Array, outcomesOffset: number, flags: number): number {
    const base = (join - 1) * ENTRY_WORDS;
    const ob = (base + W_OUTCOMES) * 4;
    for (let r = 0; r < ROUTE_COUNT; r++) {
      const o = outcomes[outcomesOffset + r];
      if (o !== 0) this.b[ob + r] = o;
    }
    if (flags !== 0) Atomics.or(this.w, base + W_FLAGS, flags);
    // Armed at 3 = two sides + one hold: the side that takes it from 2 to 1 is last; it reads, then frees (0).
    if (Atomics.sub(this.w, base + W_PENDING, 1) !== 2) return -1;
    for (let r = 0; r < ROUTE_COUNT; r++) if (outcomes[outcomesOffset + r] === 0) outcomes[outcomesOffset + r] = this.b[ob + r];
    const joined = Atomics.load(this.w, base + W_FLAGS);
    Atomics.store(this.w, base + W_PENDING, 0);
    return joined;
  }
}
