// Where intake files the receipt of a transaction it accepts (front thread, HOT: one call per accepted
// transaction). Implemented by src/receipts/receipts.ts; intake knows only this, so admission does not depend on the
// receipts layer (which reads the upstream for landings).

/** What intake knows about an accepted transaction. */
export interface AcceptedTransaction {
  readonly keyId: number;
  readonly routeMask: number;
  readonly receivedAtMs: number;
  readonly traceId: string;
}

export interface ReceiptSink {
  /** A receipt for a transaction being published; returns the sequence number its ring record carries. */
  accept(signature: string, t: AcceptedTransaction, routeMask: number): number;
}
