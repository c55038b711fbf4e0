// Receipts told that their direct target slot was skipped (front thread; cold: a timer every `fileMs`, the landing
// poll's period, and one call per skipped slot; nothing on a request's path). docs/receipts.md "Skipped target slots".
// The direct route's target slot (the slot whose leader it aimed at first) is written by the egress workers into the
// receipts' shared memory when the route answers, so the front learns it by reading: at each skip, and every `fileMs`
// (to keep each read short), the receipts accepted since the last look are read once, in sequence order (a cursor, as adaptive-routing.ts reads outcomes), and
// filed by target slot; a receipt whose direct route has not answered yet waits (at most WAIT_MS) and is read again.
// A skipped slot then costs the receipts that targeted it (one Map lookup), not a scan of the table. A receipt whose
// route answers after its slot was already told skipped (a slow handshake to the missing leader) is told when it is
// filed: the recent skips are kept for KEEP_SLOTS. Only receipts not landed (pending) are told, each once
// (ReceiptTable.setTargetSkipped); one that lands later (a rebroadcast to a later leader) still goes on to processed.
import { ROUTE_IDS } from '../shm/layout.js';
import type { ReceiptTable } from './receipt-table.js';

const DIRECT = ROUTE_IDS.direct;
/** A receipt whose direct route has not answered this long after it was first read is left alone (ms). */
const WAIT_MS = 10_000;
/** Target slots (and recent skips) kept behind the newest slot seen: skips are told within a slot or two. */
const KEEP_SLOTS = 256;
/** Receipts read per filing at most (a burst past it is read on the next ticks). */
const FILE_MAX = 65_536;

interface Waiting {
  readonly seq: number;
  readonly since: number;
}

export class TargetSkips {
  private cursor = 0;
  private waiting: Waiting[] = [];
  private readonly byTarget = new Map<number, number[]>();
  /** Skipped slot -> when it was told (unix ms), for receipts filed after it. */
  private readonly recent = new Map<number, number>();
  private newestSlot = -1;
  private timer: NodeJS.Timeout | null = null;
  /** Receipts told their direct target slot was skipped. */
  told = 0;

  constructor(
    private readonly table: ReceiptTable,
    /** How often new receipts are filed by target slot (ms; receipts.pollMs): the delay of a skip told to a receipt whose route answered after the skip. */
    private readonly fileMs: number,
  ) {}

  start(): void {
    this.cursor = this.table.newestSeq + 1; // receipts before the start have no skip source to be told by
    this.timer = setInterval(() => this.file(Date.now()), this.fileMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** A skipped slot (SkippedSlots' listener): every pending receipt that aimed its direct route at it is told. */
  onSkipped(slot: number, atMs: number): void {
    this.file(atMs);
    this.recent.set(slot, atMs);
    if (slot > this.newestSlot) this.newestSlot = slot;
    const seqs = this.byTarget.get(slot);
    if (seqs === undefined) return;
    this.byTarget.delete(slot);
    for (const seq of seqs) this.tell(seq, slot, atMs);
  }

  /** Receipts indexed by target slot now (tests, /metrics). */
  get indexed(): number {
    let n = 0;
    for (const seqs of this.byTarget.values()) n += seqs.length;
    return n;
  }

  /** Reads the receipts accepted since the last call, and the waiting ones again. */
  file(nowMs: number): void {
    const t = this.table;
    const newest = t.newestSeq;
    let seq = Math.max(this.cursor, newest - t.capacity + 1, 1);
    const waiting = this.waiting;
    this.waiting = [];
    for (const w of waiting) if (nowMs - w.since <= WAIT_MS) this.consider(w.seq, w.since, nowMs);
    for (let n = 0; seq <= newest && n < FILE_MAX; seq++, n++) this.consider(seq, nowMs, nowMs);
    this.cursor = seq;
    this.prune();
  }

  private consider(seq: number, since: number, nowMs: number): void {
    const t = this.table;
    if (!t.current(seq)) return;
    const target = t.targetSlotOf(seq, DIRECT);
    if (target >= 0) return this.index(seq, target, nowMs);
    if (!t.filed(seq)) return void this.waiting.push({ seq, since }); // the quic-egress thread's receipt, note not read yet
    if (t.outcomeByte(seq, DIRECT) !== 0) return; // answered without a target (no leader known): nothing to tell
    if ((t.routeMaskOf(seq) & (1 << DIRECT)) === 0) return; // not going direct
    this.waiting.push({ seq, since });
  }

  private index(seq: number, slot: number, nowMs: number): void {
    if (slot > this.newestSlot) this.newestSlot = slot;
    const skippedAt = this.recent.get(slot);
    if (skippedAt !== undefined) return this.tell(seq, slot, nowMs);
    if (slot < this.newestSlot - KEEP_SLOTS) return;
    let seqs = this.byTarget.get(slot);
    if (seqs === undefined) this.byTarget.set(slot, (seqs = []));
    seqs.push(seq);
  }

  private tell(seq: number, slot: number, atMs: number): void {
    if (this.table.setTargetSkipped(seq, slot, atMs)) this.told++;
  }

  /** Target slots and skips older than KEEP_SLOTS behind the newest: O(slots kept) per call. */
  private prune(): void {
    const floor = this.newestSlot - KEEP_SLOTS;
    for (const slot of this.byTarget.keys()) if (slot < floor) this.byTarget.delete(slot);
    for (const slot of this.recent.keys()) if (slot < floor) this.recent.delete(slot);
  }
}
