// Encoded transaction text -> wire bytes, decoded straight into the caller's buffer (front thread; HOT). The caller
// passes a Buffer view over a ring slot in a SharedArrayBuffer, so this decode is the single copy of the transaction
// between the HTTP body and the egress worker.
//
// Limits, order of checks and messages follow Agave's rpc.rs `decode_and_deserialize` exactly:
//   1. encoded length (UTF-8 bytes) > max  -> "base64 encoded <T> too large: N bytes (max: encoded/raw 1644/1232)"
//   2. invalid characters                  -> "invalid base64 encoding: InvalidByte(3, 33)" (base64 crate 0.22,
//                                             STANDARD engine: canonical padding, no trailing bits) or
//                                             "invalid base58 encoding: InvalidCharacter { character: '0', index: 3 }"
//   3. decoded length > max                -> "decoded <T> too large: N bytes (max: 1232 bytes)"
// Agave's maxima are golden numbers for 1232 bytes (PACKET_DATA_SIZE); they are derived here from maxTransactionBytes
// the same way (base64: 4 * ceil(n / 3); base58: ceil(n * log 256 / log 58)), so 4096 (SIMD-0296) gives 5464/5594.
// A refusal is RETURNED as a Failure (try* functions, what intake calls), never thrown: a flood of bad input must cost
// less than good input (issue #18 defect 9). decodeTransactionInto and parseEncodingParam are throwing wrappers for
// cold callers and tools.
import { Errors, Failure, orThrow } from '../errors/registry.js';
import { serdeType } from '../errors/serde-type.js';
import { decodeBase58Into, describeInvalidBase58, findInvalidBase58 } from './base58.js';

export type TransactionEncoding = 'base58' | 'base64';

/** Rust type_name::<VersionedTransaction>() as Agave prints it in every intake message. */
export const VERSIONED_TRANSACTION_TYPE = 'solana_transaction::versioned::VersionedTransaction';

export interface EncodedLimits {
  readonly base58Chars: number;
  readonly base64Chars: number;
}

/** Largest accepted encoded lengths for a raw limit (1232 -> 1683/1644, 4096 -> 5594/5464). Cold. */
export function maxEncodedLengths(maxTransactionBytes: number): EncodedLimits {
  return {
    base58Chars: Math.ceil((maxTransactionBytes * Math.log(256)) / Math.log(58)),
    base64Chars: 4 * Math.ceil(maxTransactionBytes / 3),
  };
}

// One-entry memo: a relay runs with one maxTransactionBytes, so the hot path never recomputes the maxima.
let memoMax = -1;
let memoLimits: EncodedLimits = maxEncodedLengths(1232);
function limitsFor(maxTransactionBytes: number): EncodedLimits {
  if (maxTransactionBytes !== memoMax) {
    memoLimits = maxEncodedLengths(maxTransactionBytes);
    memoMax = maxTransactionBytes;
  }
  return memoLimits;
}

const UNSUPPORTED_JSON = new Failure(Errors.TX_UNSUPPORTED_ENCODING, 'unsupported encoding: json. Supported encodings: base58, base64');
const UNSUPPORTED_JSON_PARSED = new Failure(Errors.TX_UNSUPPORTED_ENCODING, 'unsupported encoding: jsonParsed. Supported encodings: base58, base64');
Object.freeze(UNSUPPORTED_JSON);
Object.freeze(UNSUPPORTED_JSON_PARSED);

/**
 * sendTransaction's `encoding` config value -> the binary encoding, or the refusal. Absent/null = base58 (Agave's
 * default); "binary" is the deprecated name of base58; json/jsonParsed are refused with Agave's wording.
 */
export function tryParseEncodingParam(value: unknown): TransactionEncoding | Failure {
  if (value === undefined || value === null) return 'base58';
  if (typeof value !== 'string') {
    return new Failure(Errors.INVALID_PARAMS, `Invalid params: invalid type: ${serdeType(value)}, expected string or map for \`encoding\``);
  }
  switch (value) {
    case 'base58':
    case 'binary':
      return 'base58';
    case 'base64':
      return 'base64';
    case 'json':
      return UNSUPPORTED_JSON;
    case 'jsonParsed':
      return UNSUPPORTED_JSON_PARSED;
    default:
      return new Failure(
        Errors.INVALID_PARAMS,
        `Invalid params: unknown variant \`${value}\`, expected one of \`binary\`, \`base64\`, \`base58\`, \`json\`, \`jsonParsed\``,
      );
  }
}

/** tryParseEncodingParam, throwing the refusal as a RelayError (cold callers). */
export function parseEncodingParam(value: unknown): TransactionEncoding {
  return orThrow(tryParseEncodingParam(value));
}

function tooLargeEncoded(encoding: TransactionEncoding, byteLength: number, maxEncoded: number, maxRaw: number): Failure {
  return new Failure(
    Errors.TX_TOO_LARGE_ENCODED,
    `${encoding} encoded ${VERSIONED_TRANSACTION_TYPE} too large: ${byteLength} bytes (max: encoded/raw ${maxEncoded}/${maxRaw})`,
  );
}

function tooLargeDecoded(length: number, maxRaw: number): Failure {
  return new Failure(
    Errors.TX_TOO_LARGE_DECODED,
    `decoded ${VERSIONED_TRANSACTION_TYPE} too large: ${length} bytes (max: ${maxRaw} bytes)`,
  );
}

// ---- base64 ----

/** char code -> 6-bit value; 255 = not in the STANDARD alphabet ('=' included). */
const B64 = new Uint8Array(256).fill(255);
{
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < 64; i++) B64[alphabet.charCodeAt(i)] = i;
}
const PAD = 0x3d; // '='

/**
 * Decoded length if `s` were canonical padded base64 (length a multiple of 4, at most two trailing '='), else -1.
 * Says nothing about the characters themselves.
 */
function paddedBase64Length(s: string): number {
  const n = s.length;
  if ((n & 3) !== 0) return -1;
  if (n === 0) return 0;
  const pads = s.charCodeAt(n - 1) === PAD ? (s.charCodeAt(n - 2) === PAD ? 2 : 1) : 0;
  return (n >> 2) * 3 - pads;
}

/** With padding, the last symbol's bits beyond the decoded bytes (4 low bits with 2 pads, 2 with 1) are not zero. */
function trailingBitsSet(s: string, decodedLength: number): boolean {
  const n = s.length;
  const pads = (n >> 2) * 3 - decodedLength;
  if (pads === 0) return false;
  const c = s.charCodeAt(n - pads - 1);
  return c > 255 || (B64[c] & (pads === 2 ? 0x0f : 0x03)) !== 0;
}

/**
 * Decoded length if `s` is exactly what base64 0.22's STANDARD engine accepts (canonical padding, STANDARD alphabet,
 * zero trailing bits), else -1. Cold helper and test oracle; the hot path checks with native scans (decodeBase64).
 */
export function canonicalBase64Length(s: string): number {
  const decoded = paddedBase64Length(s);
  if (decoded <= 0) return decoded;
  const n = s.length;
  const pads = (n >> 2) * 3 - decoded;
  const end = n - pads;
  for (let i = 0; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c > 255 || B64[c] === 255) return -1;
  }
  // The last symbol's bits beyond the decoded bytes must be zero: 4 low bits with 2 pads, 2 with 1.
  if (trailingBitsSet(s, decoded)) return -1;
  return decoded;
}

/**
 * The base64 crate 0.22 `DecodeError` Debug text for input it rejects (cold; only called after the hot check failed),
 * reproducing its detection order: trailing invalid byte on a length = 1 mod 4 input, then the first invalid byte of
 * the complete non-final quads, then the final quad (padding position, invalid byte, length, padding, trailing bits).
 */
export function describeBase64Error(input: Uint8Array): string | null {
  const len = input.length;
  const rem = len % 4;
  if (rem === 1) {
    const last = input[len - 1];
    if (last !== PAD && B64[last] === 255) return `InvalidByte(${len - 1}, ${last})`;
  }
  const body = Math.max(0, len - rem - (rem === 0 ? 4 : 0));
  for (let i = 0; i < body; i++) {
    if (B64[input[i]] === 255) return `InvalidByte(${i}, ${input[i]})`;
  }
  let morsels = 0;
  let pads = 0;
  let firstPad = 0;
  let lastSymbol = 0;
  let bits = 0; // the suffix's morsels packed like the crate's u32 (morsel k at bit 26 - 6k)
  for (let k = 0; body + k < len; k++) {
    const b = input[body + k];
    if (b === PAD) {
      if (k < 2) return `InvalidByte(${body + k}, ${b})`;
      if (pads === 0) firstPad = k;
      pads++;
      continue;
    }
    if (pads > 0) return `InvalidByte(${body + firstPad}, ${PAD})`;
    const m = B64[b];
    if (m === 255) return `InvalidByte(${body + k}, ${b})`;
    lastSymbol = b;
    bits |= m << (26 - 6 * morsels);
    morsels++;
  }
  if (len > 0 && morsels < 2) return `InvalidLength(${body + morsels})`;
  if ((pads + morsels) % 4 !== 0) return 'InvalidPadding';
  const bytes = (morsels * 6) >> 3;
  const mask = bytes >= 4 ? 0 : 0xffffffff >>> (bytes * 8);
  if (((bits >>> 0) & mask) !== 0) return `InvalidLastSymbol(${body + morsels - 1}, ${lastSymbol})`;
  return null;
}

function base64Rejection(encoded: string, maxRaw: number, limits: EncodedLimits): Failure {
  // Cold: Agave measures the UTF-8 length before decoding, and reports byte indexes into the UTF-8 text.
  const utf8 = Buffer.from(encoded, 'utf8');
  if (utf8.length > limits.base64Chars) return tooLargeEncoded('base64', utf8.length, limits.base64Chars, maxRaw);
  const detail = describeBase64Error(utf8);
  if (detail !== null) return new Failure(Errors.TX_BAD_ENCODING, `invalid base64 encoding: ${detail}`);
  return tooLargeDecoded(paddedBase64Length(encoded), maxRaw); // valid, so only the size can be wrong
}

function decodeBase64(target: Buffer, encoded: string, maxRaw: number, limits: EncodedLimits): number | Failure {
  const n = encoded.length;
  if (n > limits.base64Chars) return tooLargeEncoded('base64', Buffer.byteLength(encoded, 'utf8'), limits.base64Chars, maxRaw);
  const expected = paddedBase64Length(encoded);
  if (expected < 0 || expected > maxRaw) return base64Rejection(encoded, maxRaw, limits);
  // Node decodes leniently, so what it accepts beyond canonical base64 is checked here, each with a native scan:
  // - characters outside the alphabet, whitespace, a '=' before the end: skipped or decoding stops, so fewer bytes
  //   than the padding announces (written !== expected);
  // - the url-safe '-' and '_': read as '+' and '/' (indexOf);
  // - characters above U+00FF: truncated to their low byte ('\u0151' decodes as 'Q'), and U+0080-U+00FF, which are
  //   not in the alphabet either: any of them makes the UTF-8 length differ from the UTF-16 length;
  // - bits of the last symbol beyond the decoded bytes: ignored, so checked on that symbol.
  // ~50 ns for 1644 chars, against ~250 ns for the round trip (re-encode and compare) it replaces; the test suite
  // checks this against a character-by-character oracle (canonicalBase64Length) on random mutations.
  // Bytes written into the slot before a rejection are harmless: the slot is not published.
  const written = target.write(encoded, 0, expected, 'base64');
  if (
    written !== expected ||
    encoded.indexOf('-') >= 0 ||
    encoded.indexOf('_') >= 0 ||
    Buffer.byteLength(encoded, 'utf8') !== n ||
    trailingBitsSet(encoded, expected)
  ) {
    return base64Rejection(encoded, maxRaw, limits);
  }
  return written;
}

function decodeBase58(target: Buffer, encoded: string, maxRaw: number, limits: EncodedLimits): number | Failure {
  if (encoded.length > limits.base58Chars) {
    return tooLargeEncoded('base58', Buffer.byteLength(encoded, 'utf8'), limits.base58Chars, maxRaw);
  }
  const bad = findInvalidBase58(encoded);
  if (bad >= 0) {
    const utf8Length = Buffer.byteLength(encoded, 'utf8');
    if (utf8Length > limits.base58Chars) return tooLargeEncoded('base58', utf8Length, limits.base58Chars, maxRaw);
    return new Failure(Errors.TX_BAD_ENCODING, `invalid base58 encoding: ${describeInvalidBase58(encoded, bad)}`);
  }
  const length = decodeBase58Into(target, encoded, maxRaw);
  if (length > maxRaw) return tooLargeDecoded(length, maxRaw);
  return length;
}

/**
 * Decodes `encoded` into target[0..) and returns the byte length, or the refusal (a Failure with Agave's wording;
 * then the target may hold partial bytes: the slot is simply not published). `target` must hold at least
 * maxTransactionBytes (a ring slot's transaction area); a smaller one is a caller bug and throws RangeError.
 */
export function tryDecodeTransactionInto(
  target: Buffer,
  encoded: string,
  encoding: TransactionEncoding,
  maxTransactionBytes: number,
): number | Failure {
  if (target.length < maxTransactionBytes) {
    throw new RangeError(`decodeTransactionInto: target holds ${target.length} bytes, needs ${maxTransactionBytes}`);
  }
  const limits = limitsFor(maxTransactionBytes);
  return encoding === 'base64'
    ? decodeBase64(target, encoded, maxTransactionBytes, limits)
    : decodeBase58(target, encoded, maxTransactionBytes, limits);
}

/** tryDecodeTransactionInto, throwing the refusal as a RelayError (cold callers, tools). */
export function decodeTransactionInto(
  target: Buffer,
  encoded: string,
  encoding: TransactionEncoding,
  maxTransactionBytes: number,
): number {
  return orThrow(tryDecodeTransactionInto(target, encoded, encoding, maxTransactionBytes));
}
