// The landing receipts' shared part (docs/receipts.md): one SharedArrayBuffer the front thread creates and every egress
// worker attaches to, so a worker writes a route's outcome straight into the receipt with a few typed-array stores
// (no message, no allocation on the hot path). Front thread: writes `seq` when it accepts a transaction, reads
// everything when a receipt is asked for. Egress workers: write the per-route outcome, first-send time and targets,
// and count rebroadcasts, each (receipt, route) having exactly one writer (the worker that took the record).
//
//   bytes 0..63   header (Int32 words): [0] MAGIC, [1] LAYOUT_VERSION, [2] capacity (power of two)
//   then, for capacity N (entry i = seq & (N - 1); seq 0 = "no receipt", so seqs start at 1):
//     seq           Uint32[N]        the receipt now in entry i (a worker writes only while it still matches)
//     rebroadcasts  Uint16[N]        rebroadcast sends (retry scheduler), saturating
//     outcome       Uint8[N * R]     per route: 0 = pending, else EGRESS_OUTCOMES index + 1
//     targets       Uint8[N * R]     per route: leaders or peers the transaction was written to (direct, static)
//     sentAtMs      Float64[N * R]   per route: wall-clock ms of the first `sent` (0 = none)
//     targetSlot    Float64[N * R]   per route: the slot whose leader the direct route aimed at first (-1 = none)
import { ROUTE_COUNT } from './layout.js';

export const RECEIPTS_MAGIC = 0x52435054; // 'RCPT'
export const RECEIPTS_LAYOUT_VERSION = 1;
const HEADER_BYTES = 64;

export interface ReceiptViews {
  readonly capacity: number;
  readonly mask: number;
  readonly seq: Uint32Array;
  readonly rebroadcasts: Uint16Array;
  readonly outcome: Uint8Array;
  readonly targets: Uint8Array;
  readonly sentAtMs: Float64Array;
  readonly targetSlot: Float64Array;
}

function offsets(capacity: number): { seq: number; rebroadcasts: number; outcome: number; targets: number; sentAtMs: number; targetSlot: number; total: number } {
  const seq = HEADER_BYTES;
  const rebroadcasts = seq + capacity * 4;
  const outcome = rebroadcasts + capacity * 2;
  const targets = outcome + capacity * ROUTE_COUNT;
  // Float64 regions start on an 8-byte boundary.
  const sentAtMs = Math.ceil((targets + capacity * ROUTE_COUNT) / 8) * 8;
  const targetSlot = sentAtMs + capacity * ROUTE_COUNT * 8;
  return { seq, rebroadcasts, outcome, targets, sentAtMs, targetSlot, total: targetSlot + capacity * ROUTE_COUNT * 8 };
}

/** A fresh receipts buffer for `capacity` entries (a power of two). Cold: once at start. */
export function createReceiptsBuffer(capacity: number): SharedArrayBuffer {
  if (capacity < 1 || (capacity & (capacity - 1)) !== 0) throw new RangeError('receipts capacity must be a power of two');
  const sab = new SharedArrayBuffer(offsets(capacity).total);
  const header = new Int32Array(sab, 0, HEADER_BYTES >> 2);
  header[0] = RECEIPTS_MAGIC;
  header[1] = RECEIPTS_LAYOUT_VERSION;
  header[2] = capacity;
  new Float64Array(sab, offsets(capacity).targetSlot, capacity * ROUTE_COUNT).fill(-1);
  return sab;
}

/** Typed views over a receipts buffer; checks magic and version (a buffer of another layout is refused). */
export function receiptViews(sab: SharedArrayBuffer): ReceiptViews {
  const header = new Int32Array(sab, 0, HEADER_BYTES >> 2);
  if (header[0] !== RECEIPTS_MAGIC || header[1] !== RECEIPTS_LAYOUT_VERSION) throw new Error('receipts buffer: wrong magic or layout version');
  const capacity = header[2];
  const o = offsets(capacity);
  return {
    capacity,
    mask: capacity - 1,
    seq: new Uint32Array(sab, o.seq, capacity),
    rebroadcasts: new Uint16Array(sab, o.rebroadcasts, capacity),
    outcome: new Uint8Array(sab, o.outcome, capacity * ROUTE_COUNT),
    targets: new Uint8Array(sab, o.targets, capacity * ROUTE_COUNT),
    sentAtMs: new Float64Array(sab, o.sentAtMs, capacity * ROUTE_COUNT),
    targetSlot: new Float64Array(sab, o.targetSlot, capacity * ROUTE_COUNT),
  };
}

/** Bytes a receipts buffer of `capacity` entries takes (for docs and the memory bound). */
export function receiptsBufferBytes(capacity: number): number {
  return offsets(capacity).total;
}
