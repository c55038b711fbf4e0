// The adaptive routing's widen table (shared memory; written cold by the front, read HOT by the quic-egress thread's direct
// route): for each of the next slots, how many leaders beyond its fanout policy the direct route adds, because the
// front's landing scoreboard found that slot's leader parking the relay (src/receipts/adaptive-routing.ts,
// docs/adaptive-routing.md). The scoreboard lives on the front (its inputs are there: the receipts and the landing
// tracker); this table is the one thing the quic-egress thread needs of it.
//
//   Int32 words: [0] MAGIC, [1] LAYOUT_VERSION, [2] GENERATION (Atomics.add by the writer after every change)
//   then SLOTS entries of two words at 16 + 2 * (slot & (SLOTS - 1)): [0] the slot's low 31 bits (tag), [1] extra
//   leaders (0 = the policy's own fanout). A tag that does not match the slot asked for reads as 0.
//
// One writer (the front), any number of readers; a reader that sees a torn pair (tag of one write, extra of another)
// reads a value for a neighbouring decision of the same writer, never garbage: both words are whole Int32 stores.
export const WIDEN_MAGIC = 0x57444e31; // 'WDN1'
export const WIDEN_LAYOUT_VERSION = 1;
/** Slots the table covers ahead (a power of two): far more than the few leader windows a decision is published for. */
export const WIDEN_SLOTS = 256;
const W_MAGIC = 0;
const W_VERSION = 1;
const W_GENERATION = 2;
const ENTRIES_AT = 16;

export function createWidenBuffer(): SharedArrayBuffer {
  const sab = new SharedArrayBuffer((ENTRIES_AT + 2 * WIDEN_SLOTS) * 4);
  const w = new Int32Array(sab);
  w[W_MAGIC] = WIDEN_MAGIC;
  w[W_VERSION] = WIDEN_LAYOUT_VERSION;
  for (let i = 0; i < WIDEN_SLOTS; i++) w[ENTRIES_AT + 2 * i] = -1;
  return sab;
}

function tag(slot: number): number {
  return slot % 0x80000000;
}

/** The front's end (cold: on a scoreboard change). */
export class WidenWriter {
  private readonly w: Int32Array;
  constructor(sab: SharedArrayBuffer) {
    this.w = checked(sab);
  }

  /** `extra` more leaders for `slot` (0 = none). */
  set(slot: number, extra: number): void {
    const at = ENTRIES_AT + 2 * (slot & (WIDEN_SLOTS - 1));
    Atomics.store(this.w, at + 1, extra);
    Atomics.store(this.w, at, tag(slot));
  }

  /** Readers recompute what they cached. */
  publish(): void {
    Atomics.add(this.w, W_GENERATION, 1);
  }
}

/** The quic-egress thread's end (HOT: generation() once per transaction, extraFor() once per recompute). */
export class WidenReader {
  private readonly w: Int32Array;
  constructor(sab: SharedArrayBuffer) {
    this.w = checked(sab);
  }

  generation(): number {
    return Atomics.load(this.w, W_GENERATION);
  }

  extraFor(slot: number): number {
    if (slot < 0) return 0;
    const at = ENTRIES_AT + 2 * (slot & (WIDEN_SLOTS - 1));
    const extra = Atomics.load(this.w, at + 1);
    return Atomics.load(this.w, at) === tag(slot) ? extra : 0;
  }
}

function checked(sab: SharedArrayBuffer): Int32Array {
  const w = new Int32Array(sab);
  if (w[W_MAGIC] !== WIDEN_MAGIC || w[W_VERSION] !== WIDEN_LAYOUT_VERSION) throw new Error('widen buffer: wrong magic or layout version');
  return w;
}
