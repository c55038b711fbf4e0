// The checks a transaction passes before it is accepted, wherever that happens (HOT, allocation-free when it
// passes): the front thread's intake (src/admission/intake.ts, on a ring slot) and the quic-egress thread's local admission
// (src/ingress/local-admission.ts, on a slab slot). Its size before the bytes are copied anywhere, then sanitize (the
// wire format, src/tx/) and, when the key asks, its signatures — in place, on the one copy of the bytes. A refusal is
// returned, never thrown (issue #18 defect 9); the fixed ones are preallocated.
import { Errors, Failure, failureOf } from '../errors/registry.js';
import { tryParseTransaction, verifyTransactionSignatures, type ParsedTransaction } from '../tx/index.js';

const SIGNATURE_VERIFICATION_FAILED = failureOf(Errors.SIGNATURE_VERIFICATION_FAILED);

/** Whether `length` wire bytes can be a transaction here at all (checked before they are copied into a slot). */
export function fitsTransaction(length: number, maxTransactionBytes: number): boolean {
  return length <= maxTransactionBytes;
}

/** The refusal of wire bytes that do not fit (a refusal: cold, its message names the sizes as Agave's does). */
export function oversizedRefusal(length: number, maxTransactionBytes: number): Failure {
  return new Failure(
    Errors.TX_TOO_LARGE_DECODED,
    `decoded solana_transaction::versioned::VersionedTransaction too large: ${length} bytes (max: ${maxTransactionBytes} bytes)`,
  );
}

/**
 * Sanitize the transaction at bytes[offset, +length) and, with `verifySignatures`, verify its signatures: null when it
 * may be accepted (`parsed` then holds its offsets: first signature, recent blockhash), else the refusal.
 */
export function checkTransaction(
  bytes: Uint8Array,
  offset: number,
  length: number,
  parsed: ParsedTransaction,
  maxTransactionBytes: number,
  verifySignatures: boolean,
): Failure | null {
  const refused = tryParseTransaction(bytes, offset, length, parsed, maxTransactionBytes);
  if (refused !== null) return refused;
  if (verifySignatures && !verifyTransactionSignatures(bytes, offset, parsed)) return SIGNATURE_VERIFICATION_FAILED;
  return null;
}
