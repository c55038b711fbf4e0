// A transaction's receipt number, reserved and its entry claimed in the receipts buffer (src/shm/receipts-layout.ts)
// before any route can write an outcome for it (HOT: one per accepted transaction, on the thread that accepts it: the
// front's receipt table, src/receipts/receipt-table.ts, behind the intake's ReceiptSink; the quic-egress thread's local
// admission, src/ingress/local-admission.ts, which leaves the rest of the receipt to the front).
import { claimReceipt, reserveReceiptSeq, type ReceiptViews } from '../shm/receipts-layout.js';

/** The new receipt's sequence number (never 0, which means "no receipt"), its entry reset to every route pending. */
export function claimReceiptSeq(v: ReceiptViews): number {
  const seq = reserveReceiptSeq(v);
  claimReceipt(v, seq);
  return seq;
}
