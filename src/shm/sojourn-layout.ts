// Admission by delay: the shared state between the ring consumers that measure how long accepted transactions wait
// (egress workers, QUIC thread 0: src/egress/consumer/sojourn-judge.ts, cold writes, only when a state changes) and
// the intakes that refuse while a route waits too long (the front's src/admission/intake.ts and the QUIC thread's
// local admission: HOT reads, one Atomics.load per ring a record goes into). docs/relay-api.md "Admission by delay".
//
//   Int32 words: [0] MAGIC, [1] LAYOUT_VERSION, [2] WRITERS, [3] reserved
//   then per writer w (= the ring's index: the worker rings, then the QUIC ring, as the counter regions of
//   src/shm/counters.ts) PER_WRITER words at HEADER + w * PER_WRITER:
//     [0] OVER: the route bits (bit i = ROUTE_IDS route i) whose sojourn is over its target now
//     [1 + route] the route's minimum sojourn over the last full interval, whole microseconds (-1 = no sample)
//
// One writer per row (its consumer thread; a replacement thread starts the row over), any number of readers. Every
// word is a whole Int32 store: a reader sees the old state or the new one, never a torn one.
import { ROUTE_COUNT } from './layout.js';

export const SOJOURN_MAGIC = 0x534a524e; // 'SJRN'
export const SOJOURN_LAYOUT_VERSION = 1;
const S_MAGIC = 0;
const S_VERSION = 1;
const S_WRITERS = 2;
const HEADER = 4;
const PER_WRITER = 1 + ROUTE_COUNT;

export function createSojournBuffer(writers: number): SharedArrayBuffer {
  const sab = new SharedArrayBuffer((HEADER + writers * PER_WRITER) * 4);
  const w = new Int32Array(sab);
  w[S_MAGIC] = SOJOURN_MAGIC;
  w[S_VERSION] = SOJOURN_LAYOUT_VERSION;
  w[S_WRITERS] = writers;
  for (let i = 0; i < writers; i++) w.fill(-1, HEADER + i * PER_WRITER + 1, HEADER + (i + 1) * PER_WRITER);
  return sab;
}

/** Both ends: the consumers write their row, the intakes read the OVER words. */
export class SojournBoard {
  readonly words: Int32Array;
  readonly writers: number;

  constructor(sab: SharedArrayBuffer) {
    const w = new Int32Array(sab);
    if (w[S_MAGIC] !== SOJOURN_MAGIC || w[S_VERSION] !== SOJOURN_LAYOUT_VERSION) throw new Error('sojourn board: bad magic or layout version');
    this.words = w;
    this.writers = w[S_WRITERS];
  }

  /** Index of writer `w`'s OVER word (an intake keeps it and reads `Atomics.load(words, index)` on its hot path). */
  overIndex(w: number): number {
    if (w < 0 || w >= this.writers) throw new RangeError(`sojourn board: no writer ${w}`);
    return HEADER + w * PER_WRITER;
  }

  /** HOT read: the route bits writer `w` has over target now. */
  over(w: number): number {
    return Atomics.load(this.words, HEADER + w * PER_WRITER);
  }

  setOver(w: number, mask: number): void {
    Atomics.store(this.words, HEADER + w * PER_WRITER, mask);
  }

  /** The route's minimum sojourn over the writer's last full interval (us), -1 = none measured. */
  minUs(w: number, route: number): number {
    return Atomics.load(this.words, HEADER + w * PER_WRITER + 1 + route);
  }

  setMinUs(w: number, route: number, us: number): void {
    Atomics.store(this.words, HEADER + w * PER_WRITER + 1 + route, us);
  }

  /** A writer's row back to "nothing over, nothing measured" (a consumer (re)starting). */
  reset(w: number): void {
    const at = HEADER + w * PER_WRITER;
    Atomics.store(this.words, at, 0);
    for (let r = 0; r < ROUTE_COUNT; r++) Atomics.store(this.words, at + 1 + r, -1);
  }
}
