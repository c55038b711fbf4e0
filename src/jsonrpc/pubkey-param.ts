// A base58 public key parameter with Agave's verify_pubkey wording (front thread, per call, cold): Pubkey::from_str
// fails with ParsePubkeyError::WrongSize (longer than 44 characters, or not 32 bytes decoded) or ::Invalid (not
// base58), answered -32602 "Invalid param: WrongSize" / "Invalid param: Invalid". A value that is not a string is a
// serde type error. Used by simulateTransaction's accounts.addresses and getRecentPrioritizationFees' addresses.
import { Errors, Failure } from '../errors/registry.js';
import { decodeBase58Into, Base58DecodeError } from '../tx/base58.js';
import { serdeType } from '../errors/serde-type.js';

/** Pubkey::from_str's MAX_BASE58_LEN. */
const MAX_BASE58_PUBKEY_LEN = 44;
const PUBKEY_BYTES = 32;

const WRONG_SIZE = Object.freeze(new Failure(Errors.INVALID_PARAMS, 'Invalid param: WrongSize'));
const INVALID = Object.freeze(new Failure(Errors.INVALID_PARAMS, 'Invalid param: Invalid'));

// Scratch for decoding: a key never needs more than 44 base58 characters, which decode to at most 33 bytes.
const scratch = new Uint8Array(64);

/** The address as given when it is a valid public key, else the refusal. */
export function tryPubkeyParam(v: unknown): string | Failure {
  if (typeof v !== 'string') return new Failure(Errors.INVALID_PARAMS, `Invalid params: invalid type: ${serdeType(v)}, expected a string`);
  if (v.length > MAX_BASE58_PUBKEY_LEN) return WRONG_SIZE;
  let n: number;
  try {
    n = decodeBase58Into(scratch, v, scratch.length);
  } catch (err) {
    if (err instanceof Base58DecodeError) return INVALID;
    throw err;
  }
  return n === PUBKEY_BYTES ? v : WRONG_SIZE;
}
