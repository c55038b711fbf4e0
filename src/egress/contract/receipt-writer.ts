// The egress side of landing receipts (egress worker, HOT: a few typed-array stores per route outcome, no allocation).
// The front thread owns the receipts and reads them (src/receipts/); a worker writes only the parts it knows — each
// route's outcome, when it first sent, how many leaders or peers it wrote to and which slot's leader it aimed at —
// and counts rebroadcast rounds. A record whose receipt entry was reused by a newer transaction (the table wrapped)
// writes nothing: `seq` no longer matches. Layout: src/shm/receipts-layout.ts.
import { ROUTE_COUNT } from '../../shm/layout.js';
import { receiptViews, type ReceiptViews } from '../../shm/receipts-layout.js';

/** EGRESS_OUTCOMES index of `sent` (kept in step with src/shm/layout.ts by the receipts test). */
const SENT = 0;
const MAX_U8 = 255;
const MAX_U16 = 65_535;

export class ReceiptWriter {
  private readonly v: ReceiptViews;

  constructor(sab: SharedArrayBuffer) {
    this.v = receiptViews(sab);
  }

  /** A route's first-send outcome for the record carrying receipt `seq` (0 = none). */
  routeOutcome(seq: number, routeId: number, outcomeIndex: number, targets: number, targetSlot: number, nowMs: number): void {
    if (seq === 0) return;
    const v = this.v;
    const entry = seq & v.mask;
    if (v.seq[entry] !== seq) return;
    const i = entry * ROUTE_COUNT + routeId;
    v.outcome[i] = outcomeIndex + 1;
    v.targets[i] = targets > MAX_U8 ? MAX_U8 : targets;
    if (targetSlot >= 0) v.targetSlot[i] = targetSlot;
    if (outcomeIndex === SENT && v.sentAtMs[i] === 0) v.sentAtMs[i] = nowMs;
  }

  /**
   * Why a route did not send the transaction carrying receipt `seq` (CAUSE index, and its number: a QUIC close code,
   * an HTTP status, -JSON-RPC code). Written before the route's outcome; a later send leaves it (the receipt reads it
   * only for a route that did not send).
   */
  routeCause(seq: number, routeId: number, cause: number, code: number): void {
    if (seq === 0 || cause === 0) return;
    const v = this.v;
    const entry = seq & v.mask;
    if (v.seq[entry] !== seq) return;
    const i = entry * ROUTE_COUNT + routeId;
    v.cause[i] = cause;
    v.causeCode[i] = code < 0 ? 0 : code > MAX_U16 ? MAX_U16 : code;
  }

  /** A rebroadcast outcome: a route that had not sent before and sends now gets its first-send time and targets. */
  rebroadcastOutcome(seq: number, routeId: number, outcomeIndex: number, targets: number, targetSlot: number, nowMs: number): void {
    if (seq === 0 || outcomeIndex !== SENT) return;
    const v = this.v;
    const entry = seq & v.mask;
    if (v.seq[entry] !== seq) return;
    const i = entry * ROUTE_COUNT + routeId;
    if (v.sentAtMs[i] !== 0) return;
    v.sentAtMs[i] = nowMs;
    v.outcome[i] = SENT + 1;
    v.targets[i] = targets > MAX_U8 ? MAX_U8 : targets;
    if (targetSlot >= 0) v.targetSlot[i] = targetSlot;
  }

  /** One rebroadcast round of the transaction carrying receipt `seq`. */
  rebroadcast(seq: number): void {
    if (seq === 0) return;
    const v = this.v;
    const entry = seq & v.mask;
    if (v.seq[entry] !== seq) return;
    if (v.rebroadcasts[entry] < MAX_U16) v.rebroadcasts[entry]++;
  }
}
