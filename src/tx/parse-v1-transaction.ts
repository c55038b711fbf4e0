// Wire-format parser and sanitizer for v1 transactions (SIMD-0385, up to 4,096 bytes: SIMD-0296) (front thread; HOT).
// Called by tryParseTransaction when the first byte is the v1 version byte 0x81; fills the same caller-owned
// ParsedTransaction, allocates nothing, returns a refusal instead of throwing.
//
// Layout (solana-sdk message/src/versions/v1/message.rs, read by wincode): the MESSAGE first, then the signatures with
// no count in front (the header's num_required_signatures says how many):
//   0x81 | header (3 bytes) | config mask u32 LE | lifetime (blockhash, 32) | #instructions u8 | #addresses u8 |
//   addresses (32 each) | config values (per mask bit, in bit order) | instruction headers (program u8, #accounts u8,
//   data length u16 LE) | per instruction: account indexes, then data || signatures (64 each)
// Every field is fixed-width, so this is index arithmetic, not a cursor over compact-u16s.
//
// Checks, in Agave's order:
//   1. size: more than 4,096 bytes (or the relay's transactions.maxTransactionBytes if lower) is refused as too large
//      before anything is read (rpc.rs checks the decoded length first);
//   2. deserialize (TX_UNDECODABLE): truncation anywhere ("io error: failed to fill whole buffer", as for legacy), a
//      config mask with an unknown bit or exactly one of the two priority-fee bits ("invalid transaction config mask",
//      the text of solana-sdk's MessageError::InvalidConfigMask), bytes left after the signatures;
//   3. sanitize (v1::Message::validate, TX_INVALID with Agave's single SanitizeFailure message and the sdk's
//      MessageError text in data.detail): signatures > 12, instructions > 64, addresses > 64, fewer addresses than
//      signers + readonly unsigned, no writable signer, duplicate addresses, heap size not a multiple of 1024 in
//      32..256 KiB, no addresses, a program index out of range or 0 (the fee payer), an account index out of range.
// Compute budget comes from the config, not from ComputeBudget instructions (those are not interpreted for v1).
import type { Failure } from '../errors/registry.js';
import type { ParsedTransaction } from './parse-transaction.js';
import { EOF, TRAILING_BYTES, tooLargeDecoded, undecodable, v1SanitizeFailure } from './refusals.js';

/** solana-sdk v1 constants (message/src/versions/v1/mod.rs). */
export const V1_VERSION_BYTE = 0x81;
export const V1_MAX_TRANSACTION_BYTES = 4096;
export const V1_MAX_SIGNATURES = 12;
export const V1_MAX_ADDRESSES = 64;
export const V1_MAX_INSTRUCTIONS = 64;
const MIN_HEAP_SIZE = 32 * 1024;
const MAX_HEAP_SIZE = 256 * 1024;

/** version byte + header (3) + config mask (4) + lifetime (32) + #instructions + #addresses. */
export const V1_FIXED_HEADER_BYTES = 42;
export const V1_BLOCKHASH_OFFSET = 8;
const MASK_OFFSET = 4;

/** TransactionConfigMask bits. */
export const V1_PRIORITY_FEE_BITS = 0b11;
export const V1_COMPUTE_UNIT_LIMIT_BIT = 0b100;
export const V1_LOADED_DATA_SIZE_BIT = 0b1000;
export const V1_HEAP_SIZE_BIT = 0b10000;
const KNOWN_BITS = 0b11111;

const INVALID_CONFIG_MASK = Object.freeze(undecodable('invalid transaction config mask'));
const TOO_MANY_SIGNATURES = v1SanitizeFailure('too many signatures (max 12)');
const TOO_MANY_INSTRUCTIONS = v1SanitizeFailure('too many instructions (max 64)');
const TOO_MANY_ADDRESSES = v1SanitizeFailure('too many addresses (max 64)');
const NOT_ENOUGH_ADDRESSES = v1SanitizeFailure('not enough addresses for required signatures');
const ZERO_SIGNERS = v1SanitizeFailure('must have at least one signer (fee payer)');
const DUPLICATE_ADDRESSES = v1SanitizeFailure('duplicate addresses found in message');
const INVALID_HEAP_SIZE = v1SanitizeFailure('heap size must be a multiple of 1024');
const NOT_ENOUGH_ACCOUNT_KEYS = v1SanitizeFailure('not enough account keys provided');
const INVALID_ACCOUNT_INDEX = v1SanitizeFailure('instruction account index out of bounds');

function u32(b: Uint8Array, p: number): number {
  return (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;
}

/**
 * Pairwise key compare on the first four bytes first, as the legacy parser does (at most 64 keys here, a few dozen
 * u32 compares for a typical message; no Set, so nothing is allocated).
 */
function hasDuplicateAddress(b: Uint8Array, keysAt: number, count: number): boolean {
  for (let i = 1; i < count; i++) {
    const a = keysAt + i * 32;
    const headA = u32(b, a);
    for (let j = 0; j < i; j++) {
      const c = keysAt + j * 32;
      if (u32(b, c) !== headA) continue;
      let k = 4;
      while (k < 32 && b[a + k] === b[c + k]) k++;
      if (k === 32) return true;
    }
  }
  return false;
}

/**
 * Parses and sanitizes the v1 transaction at bytes[offset..offset+length) (bytes[offset] is 0x81) into `out`; null
 * when it passes, else the refusal (`out` left as it was). `maxBytes` is the relay's largest accepted transaction.
 */
export function tryParseV1Transaction(bytes: Uint8Array, offset: number, length: number, maxBytes: number, out: ParsedTransaction): Failure | null {
  const limit = maxBytes < V1_MAX_TRANSACTION_BYTES ? maxBytes : V1_MAX_TRANSACTION_BYTES;
  if (length > limit) return tooLargeDecoded(length, limit);
  const b = bytes;
  const end = offset + length;
  if (length < V1_FIXED_HEADER_BYTES) return EOF;
  const numRequired = b[offset + 1];
  const numReadonlySigned = b[offset + 2];
  const numReadonlyUnsigned = b[offset + 3];
  const mask = u32(b, offset + MASK_OFFSET);
  const instructionCount = b[offset + 40];
  const addressCount = b[offset + 41];
  // Deserialize: the mask is checked as soon as it is read (wincode's order), before the addresses.
  const feeBits = mask & V1_PRIORITY_FEE_BITS;
  if ((mask & ~KNOWN_BITS) !== 0 || feeBits === 1 || feeBits === 2) return INVALID_CONFIG_MASK;
  const keysAt = offset + V1_FIXED_HEADER_BYTES;
  let p = keysAt + addressCount * 32;
  if (p > end) return EOF;
  let priorityFee = -1;
  let computeUnitLimit = -1;
  let heapSize = -1;
  if (feeBits !== 0) {
    if (p + 8 > end) return EOF;
    priorityFee = u32(b, p) + u32(b, p + 4) * 4294967296; // exact to 2^53 lamports, beyond any real fee
    p += 8;
  }
  if ((mask & V1_COMPUTE_UNIT_LIMIT_BIT) !== 0) {
    if (p + 4 > end) return EOF;
    computeUnitLimit = u32(b, p);
    p += 4;
  }
  if ((mask & V1_LOADED_DATA_SIZE_BIT) !== 0) {
    if (p + 4 > end) return EOF;
    p += 4;
  }
  if ((mask & V1_HEAP_SIZE_BIT) !== 0) {
    if (p + 4 > end) return EOF;
    heapSize = u32(b, p);
    p += 4;
  }
  const headersAt = p;
  p += instructionCount * 4;
  if (p > end) return EOF;
  // Payload lengths come from the headers; index checks wait for sanitize (they need no more bytes).
  let maxProgramIndex = -1;
  let programIndexZero = false;
  let maxAccountIndex = -1;
  for (let ix = 0; ix < instructionCount; ix++) {
    const h = headersAt + ix * 4;
    const programIndex = b[h];
    if (programIndex > maxProgramIndex) maxProgramIndex = programIndex;
    if (programIndex === 0) programIndexZero = true;
    const accounts = b[h + 1];
    const dataLength = b[h + 2] | (b[h + 3] << 8);
    if (p + accounts + dataLength > end) return EOF;
    for (let a = p; a < p + accounts; a++) if (b[a] > maxAccountIndex) maxAccountIndex = b[a];
    p += accounts + dataLength;
  }
  const messageEnd = p;
  const signaturesEnd = messageEnd + numRequired * 64;
  if (signaturesEnd > end) return EOF;
  if (signaturesEnd !== end) return TRAILING_BYTES;

  // Sanitize: v1::Message::validate's order.
  if (numRequired > V1_MAX_SIGNATURES) return TOO_MANY_SIGNATURES;
  if (instructionCount > V1_MAX_INSTRUCTIONS) return TOO_MANY_INSTRUCTIONS;
  if (addressCount > V1_MAX_ADDRESSES) return TOO_MANY_ADDRESSES;
  if (addressCount < numRequired + numReadonlyUnsigned) return NOT_ENOUGH_ADDRESSES;
  if (numReadonlySigned >= numRequired) return ZERO_SIGNERS;
  if (hasDuplicateAddress(b, keysAt, addressCount)) return DUPLICATE_ADDRESSES;
  if (heapSize >= 0 && (heapSize % 1024 !== 0 || heapSize < MIN_HEAP_SIZE || heapSize > MAX_HEAP_SIZE)) return INVALID_HEAP_SIZE;
  if (addressCount === 0) return NOT_ENOUGH_ACCOUNT_KEYS;
  if (maxProgramIndex >= addressCount || programIndexZero || maxAccountIndex >= addressCount) return INVALID_ACCOUNT_INDEX;

  out.length = length;
  out.version = 1;
  out.signatureCount = numRequired;
  out.firstSignatureOffset = messageEnd - offset;
  out.messageOffset = 0;
  out.messageLength = messageEnd - offset;
  out.numRequiredSignatures = numRequired;
  out.numReadonlySigned = numReadonlySigned;
  out.numReadonlyUnsigned = numReadonlyUnsigned;
  out.accountKeysOffset = V1_FIXED_HEADER_BYTES;
  out.accountKeysCount = addressCount;
  out.recentBlockhashOffset = V1_BLOCKHASH_OFFSET;
  out.instructionsOffset = headersAt - offset;
  out.instructionCount = instructionCount;
  out.addressTableLookupsOffset = -1;
  out.addressTableLookupCount = 0;
  out.lookupAccountCount = 0;
  out.priorityFeeLamports = priorityFee;
  out.computeUnitLimit = computeUnitLimit;
  // The same price in micro-lamports per unit a legacy SetComputeUnitPrice would state (docs/transactions.md): only
  // defined when the limit is set, since the fee is a total.
  out.computeUnitPrice = priorityFee >= 0 && computeUnitLimit > 0 ? Math.floor((priorityFee * 1_000_000) / computeUnitLimit) : -1;
  return null;
}
