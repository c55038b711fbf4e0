// The transaction's id read from its wire bytes (caller's thread; once per submit that needs it, cold enough: a few
// dozen byte reads and one base58 encoding). Legacy and v0 put a short-vec signature count and the signatures first;
// a v1 transaction (SIMD-0385, first byte 0x81) puts the message first and its signatures after it, with no count:
// num_required_signatures (message byte 1) x 64 bytes. The first signature is the id either way. The v1 message is
// walked to its end (header, config mask, blockhash, addresses, config values, instruction headers and payloads) so
// that bytes that are not exactly one transaction are refused instead of yielding a wrong id. No dependency: the
// client library must not import the server's src/tx/ (test/unit/client/import-graph.test.ts).

const SIGNATURE_BYTES = 64;
const V1_PREFIX = 0x81;
/** Mask bits a v1 config may set (priority fee = bits 0-1 together, CU limit, loaded data size, heap size). */
const V1_KNOWN_MASK = 0b11111;

export class TransactionFormatError extends TypeError {}

function fail(message: string): never {
  throw new TransactionFormatError(`not a wire transaction: ${message}`);
}

/** Offset of the first signature of a v1 transaction, after walking its message. */
function v1FirstSignatureOffset(b: Uint8Array): number {
  if (b.length < 42) fail('a v1 message is at least 42 bytes');
  const numSignatures = b[1];
  if (numSignatures === 0) fail('a v1 message requires at least one signature');
  const mask = b[4] | (b[5] << 8) | (b[6] << 16) | (b[7] << 24);
  if ((mask & ~V1_KNOWN_MASK) !== 0 || (mask & 1) !== (mask & 2) >> 1) fail('invalid v1 transaction config mask');
  const numInstructions = b[40];
  const numAddresses = b[41];
  let o = 42 + numAddresses * 32;
  // Config values follow in bit order: an 8-byte priority fee (bits 0-1), then 4 bytes per other bit.
  if ((mask & 3) === 3) o += 8;
  for (let bit = 2; bit <= 4; bit++) if ((mask & (1 << bit)) !== 0) o += 4;
  const headers = o;
  o += numInstructions * 4;
  if (o > b.length) fail('v1 message truncated');
  for (let i = 0; i < numInstructions; i++) {
    const h = headers + i * 4;
    o += b[h + 1] + (b[h + 2] | (b[h + 3] << 8));
  }
  if (o + numSignatures * SIGNATURE_BYTES !== b.length) {
    fail(`a v1 message of ${o} bytes with ${numSignatures} signature(s) is ${o + numSignatures * SIGNATURE_BYTES} bytes, got ${b.length}`);
  }
  return o;
}

/** Offset of the first signature: after the short-vec count (legacy, v0) or after the message (v1). */
export function firstSignatureOffset(bytes: Uint8Array): number {
  if (bytes.length === 0) fail('empty');
  const first = bytes[0];
  if (first === V1_PREFIX) return v1FirstSignatureOffset(bytes);
  // A short-vec signature count: one byte below 0x80 for any real transaction (at most 12 signatures fit in 4 KiB).
  if ((first & 0x80) !== 0) fail(`first byte 0x${first.toString(16)} is neither a signature count nor the v1 prefix 0x81`);
  if (first === 0) fail('no signatures');
  if (1 + first * SIGNATURE_BYTES >= bytes.length) fail(`${first} signature(s) do not fit in ${bytes.length} bytes`);
  return 1;
}

/** The first signature (the transaction's id) as 64 bytes, a view on `bytes`. */
export function firstSignature(bytes: Uint8Array): Uint8Array {
  const o = firstSignatureOffset(bytes);
  return bytes.subarray(o, o + SIGNATURE_BYTES);
}

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** Base58 (Bitcoin alphabet) of a few bytes: the plain quadratic algorithm, fine for 64. */
export function base58Encode(bytes: Uint8Array): string {
  const digits: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    let carry = bytes[i];
    for (let j = 0; j < digits.length; j++) {
      carry += digits[j] << 8;
      digits[j] = carry % 58;
      carry = (carry / 58) | 0;
    }
    while (carry > 0) {
      digits.push(carry % 58);
      carry = (carry / 58) | 0;
    }
  }
  let out = '';
  for (let i = 0; i < bytes.length && bytes[i] === 0; i++) out += '1';
  for (let i = digits.length - 1; i >= 0; i--) out += ALPHABET[digits[i]];
  return out;
}

/** The transaction's id, base58, as Solana prints it: the first signature, wherever the format puts it. */
export function transactionSignature(bytes: Uint8Array): string {
  return base58Encode(firstSignature(bytes));
}
