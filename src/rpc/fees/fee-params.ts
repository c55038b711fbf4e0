// getRecentPrioritizationFees' params, checked as Agave does before anything goes upstream (front thread, per call;
// cold: the network-wide call never gets here, see isNetworkWide). Agave's signature is
// `get_recent_prioritization_fees(pubkey_strs: Option<Vec<String>>)` behind paritytech jsonrpc-derive, so the order
// and the words are: `params` not an array; more than one param ("Invalid parameters: Expected from 0 to 1
// parameters." with data "Got: N"); serde's type errors for the whole list before anything else, worded by
// jsonrpc-core's Params::parse ("Invalid params: <serde error>." — with its trailing period); more than
// MAX_TX_ACCOUNT_LOCKS (128) addresses ("Too many inputs provided; max 128"); then each address in order through
// verify_pubkey ("Invalid param: WrongSize" / "Invalid param: Invalid"). docs/fees.md.
import { Errors, Failure } from '../../errors/registry.js';
import { tryParamsArray } from '../../jsonrpc/params.js';
import { serdeType } from '../../errors/serde-type.js';
import { tryPubkeyParam } from '../../jsonrpc/pubkey-param.js';

/** Agave MAX_TX_ACCOUNT_LOCKS: the most addresses one query may name. */
export const MAX_FEE_ADDRESSES = 128;

/** Pubkey::from_str refuses a string longer than this many BYTES (UTF-8) as WrongSize before decoding. */
const MAX_BASE58_PUBKEY_BYTES = 44;

const TOO_MANY = Object.freeze(new Failure(Errors.INVALID_PARAMS, `Too many inputs provided; max ${MAX_FEE_ADDRESSES}`));
const WRONG_SIZE = Object.freeze(new Failure(Errors.INVALID_PARAMS, 'Invalid param: WrongSize'));
const INVALID = Object.freeze(new Failure(Errors.INVALID_PARAMS, 'Invalid param: Invalid'));

function serdeError(v: unknown, expected: string): Failure {
  return new Failure(Errors.INVALID_PARAMS, `Invalid params: invalid type: ${serdeType(v)}, expected ${expected}.`);
}

/**
 * True when the call asks for the network-wide answer: no params, `[]`, `[null]` or `[[]]` (Agave treats an empty
 * list as no list). Allocation-free: this is the check in front of every cache hit.
 */
export function isNetworkWide(params: unknown): boolean {
  if (params === undefined || params === null) return true;
  if (!Array.isArray(params)) return false;
  if (params.length === 0) return true;
  if (params.length !== 1) return false;
  const a: unknown = params[0];
  return a === undefined || a === null || (Array.isArray(a) && a.length === 0);
}

/** One address as Pubkey::from_str judges it. */
function checkAddress(a: string): Failure | null {
  // Any character outside ASCII is invalid base58; Agave measures the length in bytes first, so a short string of
  // multi-byte characters is WrongSize, not Invalid.
  for (let i = 0; i < a.length; i++) {
    if (a.charCodeAt(i) > 0x7f) return Buffer.byteLength(a, 'utf8') > MAX_BASE58_PUBKEY_BYTES ? WRONG_SIZE : INVALID;
  }
  const r = tryPubkeyParam(a);
  if (r instanceof Failure) return r.message === WRONG_SIZE.message ? WRONG_SIZE : INVALID;
  return null;
}

/**
 * The requested list as given (possibly empty) once its shape passes: params, serde's types, the count. Each address
 * itself is judged by firstBadAddress (the handler skips that for an address set already in the cache: its strings
 * were judged when it was added).
 */
export function tryFeeAddressList(params: unknown): readonly string[] | Failure {
  const p = tryParamsArray(params, 0, 1);
  if (p instanceof Failure) return p;
  const list = p[0];
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) return serdeError(list, 'a sequence');
  for (const a of list as unknown[]) if (typeof a !== 'string') return serdeError(a, 'a string');
  if (list.length > MAX_FEE_ADDRESSES) return TOO_MANY;
  return list as string[];
}

/** verify_pubkey over the list in order: the first refusal, or null when every address is a public key. */
export function firstBadAddress(list: readonly string[]): Failure | null {
  for (const a of list) {
    const bad = checkAddress(a);
    if (bad !== null) return bad;
  }
  return null;
}

/** Every check in Agave's order: the requested addresses (possibly empty), or the refusal. */
export function tryFeeAddresses(params: unknown): readonly string[] | Failure {
  const list = tryFeeAddressList(params);
  if (list instanceof Failure) return list;
  return firstBadAddress(list) ?? list;
}

/**
 * The cache key and the upstream's params of a valid, non-empty address list: sorted and deduplicated (the answer is
 * a maximum over the accounts, so order and repeats do not change it).
 */
export function canonicalAddresses(list: readonly string[]): { readonly key: string; readonly addresses: readonly string[] } {
  const sorted = [...list].sort();
  let n = 0;
  for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[i - 1]) sorted[n++] = sorted[i];
  sorted.length = n;
  return { key: sorted.join(','), addresses: sorted };
}
