// Whether a transaction the cluster reports in a block was executed (front thread, cold: once per landing and per
// getTransaction answer). SIMD-0290 (relax the fee-payer constraint, feature relax_fee_payer_constraint, Agave 4.3)
// lets a block include a blockhash transaction whose fee payer cannot pay; such a transaction is not executed (a
// "no-op": agave svm ProcessedTransaction::NoOp, PR anza-xyz/agave#13556): no state change, no fee charged, no logs.
// RPC shows it as an ordinary committed transaction whose status is Err(the fee-payer validation error), so:
//   - getSignatureStatuses: err null -> executed; err one of the fee-payer validation errors (svm account_loader
//     validate_fee_payer: AccountNotFound, InvalidAccountForFee, InsufficientFundsForFee) -> not executed: before
//     SIMD-0290 a block holding one was invalid, and none of them comes out of loading or executing a transaction
//     whose fee was paid. Any other err is an execution failure, except that the status alone cannot tell a no-op
//     whose fee payer would fall below rent exemption (InsufficientFundsForRent of account 0) from an executed one
//     that left the payer so, nor exclude a validation error we do not know of: those are asked of getTransaction.
//   - getTransaction meta: fee 0 with an error -> not executed (an executed or fees-only transaction always pays its
//     signature fee); otherwise executed (failed when err is set).

/** What the receipt says about execution. */
export type Execution = 'executed' | 'failed' | 'not_executed';
/** Where that came from: the status alone, or the transaction's meta (getTransaction). */
export type ExecutionSource = 'status' | 'transaction';

/** The fee-payer validation errors a no-op carries that no executed or fees-only transaction can. */
export const NOT_EXECUTED_ERRORS: readonly string[] = Object.freeze(['AccountNotFound', 'InvalidAccountForFee', 'InsufficientFundsForFee']);

/** The verdict from a getSignatureStatuses status, and whether getTransaction should be asked to settle it. */
export interface StatusVerdict {
  readonly execution: Execution;
  readonly confirmWithTransaction: boolean;
}

const EXECUTED: StatusVerdict = Object.freeze({ execution: 'executed', confirmWithTransaction: false });
const NOT_EXECUTED: StatusVerdict = Object.freeze({ execution: 'not_executed', confirmWithTransaction: false });
const FAILED_SURE: StatusVerdict = Object.freeze({ execution: 'failed', confirmWithTransaction: false });
const FAILED_TO_CONFIRM: StatusVerdict = Object.freeze({ execution: 'failed', confirmWithTransaction: true });

/** The variant name of a serde-JSON TransactionError: a string for unit variants, the only key of an object otherwise. */
export function errorVariant(err: unknown): string | null {
  if (typeof err === 'string') return err;
  if (err !== null && typeof err === 'object') {
    const keys = Object.keys(err);
    if (keys.length === 1) return keys[0];
  }
  return null;
}

export function executionFromStatus(err: unknown): StatusVerdict {
  if (err === null || err === undefined) return EXECUTED;
  const variant = errorVariant(err);
  if (variant !== null && NOT_EXECUTED_ERRORS.includes(variant)) return NOT_EXECUTED;
  // An instruction's error means the instruction ran: executed, failed (SIMD-0290 no-ops carry fee-payer errors).
  if (variant === 'InstructionError') return FAILED_SURE;
  return FAILED_TO_CONFIRM;
}

/** The meta fields of getTransaction read here (Agave UiTransactionStatusMeta). */
export interface TransactionMetaLike {
  readonly err?: unknown;
  readonly fee?: unknown;
}

/** The verdict from getTransaction's meta, or null when the answer has no usable meta. */
export function executionFromMeta(meta: TransactionMetaLike | null | undefined): Execution | null {
  if (meta === null || meta === undefined || typeof meta !== 'object' || typeof meta.fee !== 'number') return null;
  const err = meta.err ?? null;
  if (err === null) return 'executed';
  return meta.fee === 0 ? 'not_executed' : 'failed';
}
