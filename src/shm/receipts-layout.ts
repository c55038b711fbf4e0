// The landing receipts' shared part (docs/receipts.md): one SharedArrayBuffer the front thread creates and every egress
// worker attaches to, so a worker writes a route's outcome straight into the receipt with a few typed-array stores
// (no message, no allocation on the hot path). Front thread: writes `seq` when it accepts a transaction, reads
// everything when a receipt is asked for. Egress workers: write the per-route outcome, first-send time and targets,
// and count rebroadcasts, each (receipt, route) having exactly one writer (the worker that took the record).
//
//   bytes 0..63   header (Int32 words): [0] MAGIC, [1] LAYOUT_VERSION, [2] capacity (power of two), [3] the last
//                 sequence number handed out (u32; Atomics.add: the front and the quic-egress thread's local admission both
//                 reserve numbers, src/ingress/local-admission.ts)
//   then, for capacity N (entry i = seq & (N - 1); seq 0 = "no receipt", so seqs start at 1):
//     seq           Uint32[N]        the receipt now in entry i (a worker writes only while it still matches)
//     rebroadcasts  Uint16[N]        rebroadcast sends (retry scheduler), saturating
//     outcome       Uint8[N * R]     per route: 0 = pending, else EGRESS_OUTCOMES index + 1
//     targets       Uint8[N * R]     per route: leaders or peers the transaction was written to (direct, static)
//     sentAtMs      Float64[N * R]   per route: wall-clock ms of the first `sent` (0 = none)
//     targetSlot    Float64[N * R]   per route: the slot whose leader the direct route aimed at first (-1 = none)
//     cause         Uint8[N * R]     per route: why it did not send (ROUTE_CAUSES index; 0 = none / unknown)
//     causeCode     Uint16[N * R]    per route: the cause's number (a QUIC close code, an HTTP status, -JSON-RPC code)
import { ROUTE_COUNT } from './layout.js';

export const RECEIPTS_MAGIC = 0x52435054; // 'RCPT'
export const RECEIPTS_LAYOUT_VERSION = 3;
const H_LAST_SEQ = 3;

/**
 * Why a route did not send, as far as the egress side knows (written beside its outcome; docs/receipts.md "Why it
 * did not land"). Index 0 = none or unknown.
 */
export const ROUTE_CAUSES = Object.freeze([
  'none',
  'no_stream_credit', // direct/static: queued on an open connection that had no stream credit (MAX_STREAMS withheld)
  'congestion', // direct/static: queued on an open connection with no congestion-window room
  'connecting', // direct/static: still in its handshake when the transaction went stale
  'timed_out', // direct/static: the connect attempt timed out (no answer from the peer)
  'refused', // direct/static: the peer closed the connection with an application code (causeCode: Agave's code)
  'closed', // direct/static: the connection ended otherwise (idle, transport error, local close)
  'relay_queue_full', // the relay's own queue for the target was full (relay overload)
  'route_timeout', // HTTP routes: the endpoint did not answer within the route's timeout
  'route_network', // HTTP routes: connection refused / reset
  'route_http', // HTTP routes: an HTTP error status (causeCode)
  'route_upstream', // HTTP routes: a JSON-RPC error answer (causeCode: -code)
] as const);
export type RouteCause = (typeof ROUTE_CAUSES)[number];
export const CAUSE = Object.freeze(Object.fromEntries(ROUTE_CAUSES.map((c, i) => [c, i])) as Record<RouteCause, number>);
const HEADER_BYTES = 64;

export interface ReceiptViews {
  readonly header: Int32Array;
  readonly capacity: number;
  readonly mask: number;
  readonly seq: Uint32Array;
  readonly rebroadcasts: Uint16Array;
  readonly outcome: Uint8Array;
  readonly targets: Uint8Array;
  readonly sentAtMs: Float64Array;
  readonly targetSlot: Float64Array;
  readonly cause: Uint8Array;
  readonly causeCode: Uint16Array;
}

function offsets(capacity: number): {
  seq: number;
  rebroadcasts: number;
  outcome: number;
  targets: number;
  sentAtMs: number;
  targetSlot: number;
  cause: number;
  causeCode: number;
  total: number;
} {
  const seq = HEADER_BYTES;
  const rebroadcasts = seq + capacity * 4;
  const outcome = rebroadcasts + capacity * 2;
  const targets = outcome + capacity * ROUTE_COUNT;
  // Float64 regions start on an 8-byte boundary.
  const sentAtMs = Math.ceil((targets + capacity * ROUTE_COUNT) / 8) * 8;
  const targetSlot = sentAtMs + capacity * ROUTE_COUNT * 8;
  const cause = targetSlot + capacity * ROUTE_COUNT * 8;
  const causeCode = Math.ceil((cause + capacity * ROUTE_COUNT) / 2) * 2;
  return { seq, rebroadcasts, outcome, targets, sentAtMs, targetSlot, cause, causeCode, total: causeCode + capacity * ROUTE_COUNT * 2 };
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
    header,
    capacity,
    mask: capacity - 1,
    seq: new Uint32Array(sab, o.seq, capacity),
    rebroadcasts: new Uint16Array(sab, o.rebroadcasts, capacity),
    outcome: new Uint8Array(sab, o.outcome, capacity * ROUTE_COUNT),
    targets: new Uint8Array(sab, o.targets, capacity * ROUTE_COUNT),
    sentAtMs: new Float64Array(sab, o.sentAtMs, capacity * ROUTE_COUNT),
    targetSlot: new Float64Array(sab, o.targetSlot, capacity * ROUTE_COUNT),
    cause: new Uint8Array(sab, o.cause, capacity * ROUTE_COUNT),
    causeCode: new Uint16Array(sab, o.causeCode, capacity * ROUTE_COUNT),
  };
}

/** Bytes a receipts buffer of `capacity` entries takes (for docs and the memory bound). */
export function receiptsBufferBytes(capacity: number): number {
  return offsets(capacity).total;
}

/** HOT. The next receipt sequence number (never 0, which means "no receipt"); any thread. */
export function reserveReceiptSeq(v: ReceiptViews): number {
  let seq = (Atomics.add(v.header, H_LAST_SEQ, 1) + 1) >>> 0;
  if (seq === 0) seq = (Atomics.add(v.header, H_LAST_SEQ, 1) + 1) >>> 0;
  return seq;
}

/** The last sequence number handed out (0 = none yet). */
export function lastReceiptSeq(v: ReceiptViews): number {
  return Atomics.load(v.header, H_LAST_SEQ) >>> 0;
}

/**
 * HOT. Entry `seq & mask` now belongs to `seq`, every route pending: done by whoever reserved `seq`, before any route
 * can write an outcome for it (the front's accept, or the quic-egress thread before a local dispatch).
 */
export function claimReceipt(v: ReceiptViews, seq: number): void {
  const e = seq & v.mask;
  Atomics.store(v.seq, e, seq);
  v.rebroadcasts[e] = 0;
  // Plain stores, not TypedArray.fill(): four elements each, and fill()'s call overhead was a third of accept().
  for (let i = e * ROUTE_COUNT, end = i + ROUTE_COUNT; i < end; i++) {
    v.outcome[i] = 0;
    v.targets[i] = 0;
    v.sentAtMs[i] = 0;
    v.targetSlot[i] = -1;
    v.cause[i] = 0;
    v.causeCode[i] = 0;
  }
}
