// The transaction refusals shared by the legacy/v0 and the v1 parser (front thread; HOT: built once at load, so a
// refusal without per-transaction detail allocates nothing). Wording is Agave's RPC: "failed to deserialize <type>: ..."
// for structure (TX_UNDECODABLE), TransactionError's Display behind "invalid transaction: " for sanitize (TX_INVALID),
// and "decoded <type> too large" for size (TX_TOO_LARGE_DECODED).
import { Errors, Failure } from '../errors/registry.js';
import { VERSIONED_TRANSACTION_TYPE } from './decode-transaction-string.js';

const UNDECODABLE_PREFIX = `failed to deserialize ${VERSIONED_TRANSACTION_TYPE}: `;

export function undecodable(detail: string): Failure {
  return new Failure(Errors.TX_UNDECODABLE, UNDECODABLE_PREFIX + detail);
}

/** Agave's message when the decoded wire is longer than its format allows (rpc.rs decode_and_deserialize). */
export function tooLargeDecoded(length: number, maxRaw: number): Failure {
  return new Failure(Errors.TX_TOO_LARGE_DECODED, `decoded ${VERSIONED_TRANSACTION_TYPE} too large: ${length} bytes (max: ${maxRaw} bytes)`);
}

export const EOF = Object.freeze(undecodable('io error: failed to fill whole buffer'));
export const TRAILING_BYTES = Object.freeze(undecodable('Slice had bytes remaining after deserialization'));

/** TransactionError::SanitizeFailure's Display: what Agave's RPC answers for every SanitizeError, any version. */
export const SANITIZE_MESSAGE = 'invalid transaction: Transaction failed to sanitize accounts offsets correctly';
export const SANITIZE_FAILURE = Object.freeze(new Failure(Errors.TX_INVALID, SANITIZE_MESSAGE));

/** TransactionError::AccountLoadedTwice's Display, behind Agave's "invalid transaction: " prefix. */
export const ACCOUNT_LOADED_TWICE = Object.freeze(new Failure(Errors.TX_INVALID, 'invalid transaction: Account loaded twice'));

/**
 * A v1 sanitize refusal: Agave's message (every v1 MessageError becomes SanitizeFailure at its RPC), with solana-sdk's
 * v1 MessageError Display in `data.detail` so that a client can tell "too many signatures" from "duplicate addresses"
 * (docs/transactions.md). Built once per kind.
 */
export function v1SanitizeFailure(detail: string): Failure {
  return Object.freeze(new Failure(Errors.TX_INVALID, SANITIZE_MESSAGE, Object.freeze({ detail })));
}
