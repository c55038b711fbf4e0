// Base58 (Bitcoin alphabet) for the transaction hot path (front thread and egress workers; HOT).
//
// Encoder: specialised for 64-byte signatures and 32-byte keys, read in place from (bytes, offset). Instead of the
// generic quadratic long division (the `bs58` package, ~7 us per signature), the input is split into 16-bit words and
// multiplied by each word's weight written in base 58^5 (straight-line code generated ahead of time:
// base58-limbs.generated.ts):
// word * entry < 2^16 * 58^5 < 2^45.3 and at most 32 of them are summed per limb, so every intermediate stays below
// 2^53 and plain doubles are exact (the Firedancer fd_base58 method, with 16-bit instead of 32-bit words). One carry
// pass and 5 digits per limb finish it. All scratch space is module-level and reused: no per-call arrays.
//
// Decoder: string -> bytes written into a caller's buffer (the ring slot), with bs58-crate-compatible reporting of the
// first invalid character (Agave answers `invalid base58 encoding: InvalidCharacter { character: '0', index: 3 }`).
// Decoding is quadratic (24-bit limbs, 4 characters per step); base58 transactions are the slow, rare path.

import { toLimbs32, toLimbs32_LIMBS, toLimbs64, toLimbs64_LIMBS } from './base58-limbs.generated.js';

export const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

const ALPHABET_CODES = new Uint8Array(58);
/** char code -> digit value, 255 = not in the alphabet (index 0..127 only). */
const DIGIT_OF = new Uint8Array(128).fill(255);
for (let i = 0; i < 58; i++) {
  const c = BASE58_ALPHABET.charCodeAt(i);
  ALPHABET_CODES[i] = c;
  DIGIT_OF[c] = i;
}

const CHAR_ONE = 0x31; // '1', the digit zero

// ---- encoder ----

/** Fills limbs[0..limbs) (big-endian, base 58^5, fully carried) from byteLength bytes at bytes[offset..). */
type LimbsFn = (bytes: Uint8Array, offset: number, limbs: Float64Array) => void;

interface EncodePlan {
  readonly byteLength: number;
  readonly limbs: number; // base 58^5 limbs
  readonly toLimbs: LimbsFn;
}

// HOT-PATH TRICK: the multiply-and-carry step is straight-line code with each 16-bit word's weight in base 58^5 as a
// literal (src/tx/base58-limbs.generated.ts, written by scripts/codegen/base58-limbs.ts ahead of time, so nothing is
// compiled at run time): V8 compiles ~290 multiply-adds with no loads or bounds checks; the same arithmetic as a loop
// over a Float64Array table took 576 ns per signature against 306 ns (scratch bench, same run), and base58 was the
// front thread's largest JS cost under load (6% of its samples).
const PLAN_32: EncodePlan = { byteLength: 32, limbs: toLimbs32_LIMBS, toLimbs: toLimbs32 };
const PLAN_64: EncodePlan = { byteLength: 64, limbs: toLimbs64_LIMBS, toLimbs: toLimbs64 };

/** DIGIT_PAIRS[2i], DIGIT_PAIRS[2i+1] = the alphabet codes of the two base58 digits of i, for i < 58^2. */
const DIGIT_PAIRS = new Uint8Array(3364 * 2);
for (let i = 0; i < 3364; i++) {
  DIGIT_PAIRS[2 * i] = ALPHABET_CODES[(i / 58) | 0];
  DIGIT_PAIRS[2 * i + 1] = ALPHABET_CODES[i % 58];
}

// Reused scratch (module-level: one per thread, and the encoder is synchronous).
const intermediate = new Float64Array(PLAN_64.limbs);
const out = Buffer.allocUnsafe(PLAN_64.limbs * 5);

function encodeFixed(plan: EncodePlan, bytes: Uint8Array, offset: number): string {
  const len = plan.byteLength;
  if (offset < 0 || offset + len > bytes.length) throw new RangeError('base58: input out of bounds');
  let zeros = 0;
  while (zeros < len && bytes[offset + zeros] === 0) zeros++;
  plan.toLimbs(bytes, offset, intermediate);
  // Limbs -> 5 digits each: r = hi2 * 58^4 + mid * 58^2 + lo, two divisions and two pair-table lookups.
  const limbs = plan.limbs;
  for (let j = 0, b = 0; j < limbs; j++, b += 5) {
    const r = intermediate[j];
    const hi = (r / 3364) | 0;
    const lo = r - hi * 3364;
    const hi2 = (hi / 3364) | 0;
    const mid = hi - hi2 * 3364;
    out[b] = ALPHABET_CODES[hi2];
    out[b + 1] = DIGIT_PAIRS[2 * mid];
    out[b + 2] = DIGIT_PAIRS[2 * mid + 1];
    out[b + 3] = DIGIT_PAIRS[2 * lo];
    out[b + 4] = DIGIT_PAIRS[2 * lo + 1];
  }
  const digits = limbs * 5;
  let skip = 0;
  while (skip < digits && out[skip] === CHAR_ONE) skip++;
  // Leading zero digits ('1') are padding of the fixed width, except one per leading zero byte (skip >= zeros).
  return out.toString('latin1', skip - zeros, digits);
}

/** Base58 of the 64 bytes at bytes[offset..offset+64) (a signature). HOT: no allocation but the result string. */
export function encodeSignatureBase58(bytes: Uint8Array, offset: number): string {
  return encodeFixed(PLAN_64, bytes, offset);
}

/** Base58 of the 32 bytes at bytes[offset..offset+32) (a public key or blockhash). */
export function encodePubkeyBase58(bytes: Uint8Array, offset: number): string {
  return encodeFixed(PLAN_32, bytes, offset);
}

// ---- decoder ----

/** Where base58 decoding failed; `message` is the bs58 crate's Debug wording (Agave puts it after the prefix). */
export class Base58DecodeError extends Error {}

/** Rust `char` Debug formatting of an ASCII code (what bs58's `InvalidCharacter { character: .. }` prints). */
function rustCharDebug(code: number): string {
  switch (code) {
    case 0:
      return "'\\0'";
    case 9:
      return "'\\t'";
    case 10:
      return "'\\n'";
    case 13:
      return "'\\r'";
    case 0x27:
      return "'\\''";
    case 0x5c:
      return "'\\\\'";
  }
  if (code < 0x20 || code === 0x7f) return `'\\u{${code.toString(16)}}'`;
  return `'${String.fromCharCode(code)}'`;
}

/**
 * Index of the first character that is not base58, or -1. It is also the UTF-8 byte index bs58 reports, because every
 * character before it is ASCII.
 */
export function findInvalidBase58(encoded: string): number {
  for (let i = 0; i < encoded.length; i++) {
    const c = encoded.charCodeAt(i);
    if (c > 127 || DIGIT_OF[c] === 255) return i;
  }
  return -1;
}

/** bs58's Debug text for the invalid character at `index` (as returned by findInvalidBase58). */
export function describeInvalidBase58(encoded: string, index: number): string {
  const c = encoded.charCodeAt(index);
  if (c > 127) return `NonAsciiCharacter { index: ${index} }`;
  return `InvalidCharacter { character: ${rustCharDebug(c)}, index: ${index} }`;
}

// Decoder scratch: 24-bit limbs, little-endian (limb 0 least significant). Grown on demand (cold).
let decodeLimbs = new Float64Array(1024);
const LIMB24 = 16_777_216;
const POW58 = [1, 58, 3364, 195_112, 11_316_496];

/**
 * Decodes base58 `encoded` into target[0..). Throws Base58DecodeError (first invalid character) or returns the
 * decoded length; if that exceeds `maxBytes` nothing beyond target's own length is written and the caller reports
 * "decoded ... too large" with the returned length. The caller checks the encoded length first (Agave's order).
 */
export function decodeBase58Into(target: Uint8Array, encoded: string, maxBytes: number): number {
  const n = encoded.length;
  const bad = findInvalidBase58(encoded);
  if (bad >= 0) throw new Base58DecodeError(describeInvalidBase58(encoded, bad));
  let ones = 0;
  while (ones < n && encoded.charCodeAt(ones) === CHAR_ONE) ones++;
  // Upper bound on 24-bit limbs: each char adds < 6 bits.
  const maxLimbs = Math.ceil(((n - ones) * 5.86) / 24) + 2;
  if (decodeLimbs.length < maxLimbs) decodeLimbs = new Float64Array(maxLimbs * 2);
  const limbs = decodeLimbs;
  let used = 0;
  let i = ones;
  while (i < n) {
    const take = n - i >= 4 ? 4 : n - i;
    let chunk = 0;
    for (let k = 0; k < take; k++) chunk = chunk * 58 + DIGIT_OF[encoded.charCodeAt(i + k)];
    i += take;
    const mul = POW58[take];
    let carry = chunk;
    for (let j = 0; j < used; j++) {
      const v = limbs[j] * mul + carry; // < 2^24 * 58^4 + 2^25 < 2^48: exact
      carry = Math.floor(v / LIMB24);
      limbs[j] = v - carry * LIMB24;
    }
    while (carry > 0) {
      const q = Math.floor(carry / LIMB24);
      limbs[used++] = carry - q * LIMB24;
      carry = q;
    }
  }
  // Significant byte count of the number.
  let numBytes = used * 3;
  if (used > 0) {
    const top = limbs[used - 1];
    numBytes -= top < 256 ? 2 : top < 65536 ? 1 : 0;
  }
  const total = ones + numBytes;
  if (total > maxBytes || total > target.length) return total;
  target.fill(0, 0, ones);
  // Write big-endian: byte at position total-1-b is byte b (little-endian) of the number.
  for (let b = 0; b < numBytes; b++) {
    const limb = limbs[(b / 3) | 0];
    const shift = (b % 3) * 8;
    target[total - 1 - b] = Math.floor(limb / 2 ** shift) & 0xff;
  }
  return total;
}

/** Base58 of a 64-byte signature is 64 to 88 characters (a receipt lookup checks the shape before the table). */
export function looksLikeSignature(s: string): boolean {
  return s.length >= 64 && s.length <= 88 && findInvalidBase58(s) < 0;
}
