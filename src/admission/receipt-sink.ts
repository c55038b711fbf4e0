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
  /**
   * A receipt for a transaction being published; returns the sequence number its ring record carries. `bytes` and
   * `blockhashAt` (the offset of its recent blockhash in them, -1 = unknown) let a receipt that does not land say
   * whether its blockhash expired.
   */
  accept(signature: string, t: AcceptedTransaction, routeMask: number, bytes?: Uint8Array, blockhashAt?: number): number;
  /**
   * The front's half of a receipt whose sequence number another thread reserved and claimed in shared memory (the QUIC
   * thread's local admission): signature, request id, landing tracking. Absent = receipts cannot be reserved elsewhere.
   */
  acceptReserved?(seq: number, signature: string, t: AcceptedTransaction, routeMask: number, bytes?: Uint8Array, blockhashAt?: number): void;
}
