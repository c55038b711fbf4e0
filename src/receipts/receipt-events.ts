// The receipts table's notification hook (front thread): the states a receipt goes through, as a closed set whose
// names are the `event` of a receiptNotification (docs/receipts.md "The receipt stream"), and the observer the table
// calls on each. The table pays one array-length check per state change when nobody observes (receipt-table.ts).
// Route outcomes are written by the egress workers into shared memory, not through the table's methods: the stream
// (src/receipts/receipt-stream.ts) reads them for the receipts someone subscribed to.

// `skipped`: the slot its direct route aimed at was skipped while it had not landed (target-skips.ts); it may land later.
export const RECEIPT_EVENTS = ['accepted', 'route', 'skipped', 'processed', 'confirmed', 'finalized', 'not_executed', 'not_landed'] as const;
export type ReceiptEvent = (typeof RECEIPT_EVENTS)[number];

/** Told of every state change of every receipt, with its sequence number (read the table for the rest). */
export interface ReceiptObserver {
  receiptChanged(seq: number, event: ReceiptEvent): void;
}
