// Wire-format parser and sanitizer for Solana transactions (front thread; HOT). Reads (bytes, offset, length) in place
// and fills a caller-owned, reused ParsedTransaction: no allocation per call. A refusal is returned as a Failure
// (tryParseTransaction), never thrown; most are preallocated, only those naming a number allocate their message.
//
// Two phases, in Agave's order (rpc.rs decode_and_deserialize, then sanitize_transaction):
//   1. deserialize: every structural error is TX_UNDECODABLE with bincode/serde's wording, e.g.
//      "failed to deserialize solana_transaction::versioned::VersionedTransaction: io error: failed to fill whole buffer"
//   2. sanitize (VersionedTransaction::sanitize_signatures + legacy/v0 Message::sanitize): every failure is TX_INVALID
//      "invalid transaction: Transaction failed to sanitize accounts offsets correctly" (TransactionError::
//      SanitizeFailure's Display), then the compute-budget instruction checks RuntimeTransaction::try_create runs
//      ("... duplicate instruction (N) ...", "Error processing Instruction N: invalid instruction data"), then
//      the duplicate static account key check ("invalid transaction: Account loaded twice").
// Deliberate deviation: Agave's RPC deserializer allows trailing bytes, but the leader's sigverify signs over
// everything after the message start, so such a transaction can never land; it is refused here with bincode's
// reject_trailing_bytes wording instead of being relayed to a silent drop.
//
// All offsets in ParsedTransaction are relative to the transaction's first byte (`offset`).
import { Errors, Failure } from '../errors/registry.js';
import { decodeBase58Into } from './base58.js';
import { V1_MAX_TRANSACTION_BYTES, V1_VERSION_BYTE, tryParseV1Transaction } from './parse-v1-transaction.js';
import { ACCOUNT_LOADED_TWICE, EOF, SANITIZE_FAILURE, TRAILING_BYTES, tooLargeDecoded, undecodable } from './refusals.js';

export const SIGNATURE_BYTES = 64;
export const PUBKEY_BYTES = 32;
export const MESSAGE_VERSION_PREFIX = 0x80;
/** Legacy and v0 transactions stay within one packet (PACKET_DATA_SIZE); only v1 may be longer (SIMD-0296). */
export const LEGACY_MAX_TRANSACTION_BYTES = 1232;

export interface ParsedTransaction {
  /** Transaction byte length (all of it is consumed). */
  length: number;
  /** -1 legacy, 0 for v0, 1 for v1. */
  version: number;
  signatureCount: number;
  firstSignatureOffset: number;
  messageOffset: number;
  messageLength: number;
  numRequiredSignatures: number;
  numReadonlySigned: number;
  numReadonlyUnsigned: number;
  accountKeysOffset: number;
  accountKeysCount: number;
  recentBlockhashOffset: number;
  instructionsOffset: number;
  instructionCount: number;
  /** -1 for legacy. */
  addressTableLookupsOffset: number;
  addressTableLookupCount: number;
  /** Accounts loaded through lookup tables (writable + readonly indexes). */
  lookupAccountCount: number;
  /**
   * SetComputeUnitPrice micro-lamports, -1 if absent (exact up to 2^53). v1: the config's total priority fee
   * expressed per unit of its compute-unit limit (floor(fee x 10^6 / limit)), -1 without both.
   */
  computeUnitPrice: number;
  /** SetComputeUnitLimit (v1: the config's limit), -1 if absent. */
  computeUnitLimit: number;
  /** v1 only: the config's priority fee, a total in lamports; -1 if absent or not v1. */
  priorityFeeLamports: number;
}

export function createParsedTransaction(): ParsedTransaction {
  return {
    length: 0,
    version: -1,
    signatureCount: 0,
    firstSignatureOffset: 0,
    messageOffset: 0,
    messageLength: 0,
    numRequiredSignatures: 0,
    numReadonlySigned: 0,
    numReadonlyUnsigned: 0,
    accountKeysOffset: 0,
    accountKeysCount: 0,
    recentBlockhashOffset: 0,
    instructionsOffset: 0,
    instructionCount: 0,
    addressTableLookupsOffset: -1,
    addressTableLookupCount: 0,
    lookupAccountCount: 0,
    computeUnitPrice: -1,
    computeUnitLimit: -1,
    priorityFeeLamports: -1,
  };
}

// The refusals whose wording has no per-transaction detail, built once: refusing allocates nothing.
const ALIAS = Object.freeze(undecodable('invalid value: alias encoding, expected strict form encoding'));
const CONTINUATION = Object.freeze(
  undecodable('invalid value: continue signal on byte-three, expected a terminal signal on or before byte-three'),
);
const OFF_CHAIN = Object.freeze(undecodable('off-chain messages are not accepted'));

/** Compute-budget refusals, decided during phase 1 and reported after sanitize (Agave's order). */
const BUDGET_NONE = 0;
const BUDGET_INVALID_DATA = 1;
const BUDGET_DUPLICATE = 2;

function budgetFailure(kind: number, ixIndex: number): Failure {
  return new Failure(
    Errors.TX_INVALID,
    kind === BUDGET_DUPLICATE
      ? `invalid transaction: Transaction contains a duplicate instruction (${ixIndex}) that is not allowed`
      : `invalid transaction: Error processing Instruction ${ixIndex}: invalid instruction data`,
  );
}

/** ComputeBudget111111111111111111111111111111 */
const COMPUTE_BUDGET_PROGRAM = new Uint8Array(32);
decodeBase58Into(COMPUTE_BUDGET_PROGRAM, 'ComputeBudget111111111111111111111111111111', 32);

// Cursor state (module-level: the parser is synchronous and single-threaded per isolate).
let buf: Uint8Array = COMPUTE_BUDGET_PROGRAM;
let pos = 0;
let end = 0;
/**
 * Why the last reader failed. Readers return -1 (or false) instead of throwing and leave the refusal here; the parser
 * returns it at once, so it is always the first failure in Agave's order.
 */
let fault: Failure = EOF;

function fail(f: Failure): -1 {
  fault = f;
  return -1;
}

/** solana-short-vec ShortU16 with its exact error order: alias, continuation on byte three, overflow. -1: `fault`. */
function readCompactU16(): number {
  let value = 0;
  for (let nth = 0; nth < 3; nth++) {
    if (pos >= end) return fail(EOF);
    const b = buf[pos++];
    if (b === 0 && nth !== 0) return fail(ALIAS);
    const done = (b & 0x80) === 0;
    if (nth === 2 && !done) return fail(CONTINUATION);
    value |= (b & 0x7f) << (7 * nth);
    if (value > 0xffff) return fail(undecodable(`invalid value: integer \`${value}\`, expected a value in the range [0, 65535]`));
    if (done) return value;
  }
  return value; // unreachable: byte three either ends the value or fails
}

/** Advance n bytes; false (with `fault`) when fewer are left. */
function skip(n: number): boolean {
  if (end - pos < n) {
    pos = end;
    fault = EOF;
    return false;
  }
  pos += n;
  return true;
}

/** One byte, or -1 (with `fault`) at the end. */
function readU8(): number {
  if (pos >= end) return fail(EOF);
  return buf[pos++];
}

function isComputeBudgetKey(keyPos: number): boolean {
  for (let i = 0; i < 32; i++) if (buf[keyPos + i] !== COMPUTE_BUDGET_PROGRAM[i]) return false;
  return true;
}

/**
 * Agave's SanitizedTransaction refuses a message whose static account keys repeat (TransactionError::
 * AccountLoadedTwice): such a transaction can never land. Pairwise compare: a message has at most 38 static keys
 * (1232-byte packet), typically under 12, and two different keys almost always differ in their first four bytes, so
 * this is a few dozen u32 compares and cheaper than hashing keys into a Set (which would allocate per transaction).
 * Keys loaded through lookup tables are not known here (the tables live on chain); the bank checks those.
 */
function hasDuplicateKey(keysPos: number, count: number): boolean {
  for (let i = 1; i < count; i++) {
    const a = keysPos + i * PUBKEY_BYTES;
    const headA = u32At(a);
    for (let j = 0; j < i; j++) {
      const b = keysPos + j * PUBKEY_BYTES;
      if (u32At(b) !== headA) continue;
      let same = true;
      for (let k = 4; k < PUBKEY_BYTES; k++) {
        if (buf[a + k] !== buf[b + k]) {
          same = false;
          break;
        }
      }
      if (same) return true;
    }
  }
  return false;
}

function u32At(p: number): number {
  return (buf[p] | (buf[p + 1] << 8) | (buf[p + 2] << 16) | (buf[p + 3] << 24)) >>> 0;
}

/**
 * Parses and sanitizes the transaction at bytes[offset..offset+length) into `out`. Returns null when it passes, else
 * the refusal (TX_UNDECODABLE or TX_INVALID with Agave's wording; `out` is then left as it was). Runs before any
 * signature work. Every check returns rather than throws: a refused transaction must not cost more than an accepted
 * one (issue #18 defect 9). A range outside `bytes` is a caller bug and throws RangeError.
 */
export function tryParseTransaction(
  bytes: Uint8Array,
  offset: number,
  length: number,
  out: ParsedTransaction,
  maxV1Bytes: number = V1_MAX_TRANSACTION_BYTES,
): Failure | null {
  if (offset < 0 || offset + length > bytes.length) throw new RangeError('parseTransaction: range outside the buffer');
  // The first byte tells the layouts apart: a legacy/v0 signature count is a compact-u16 whose first byte is < 0x80
  // for any count a transaction can carry; v1 starts with its message's version byte instead.
  if (length > 0 && bytes[offset] === V1_VERSION_BYTE) return tryParseV1Transaction(bytes, offset, length, maxV1Bytes, out);
  if (length > LEGACY_MAX_TRANSACTION_BYTES) return tooLargeDecoded(length, LEGACY_MAX_TRANSACTION_BYTES);
  buf = bytes;
  pos = offset;
  end = offset + length;

  // ---- phase 1: deserialize (structure only; indexes are recorded for phase 2) ----
  const signatureCount = readCompactU16();
  if (signatureCount < 0) return fault;
  const firstSignatureOffset = pos - offset;
  if (!skip(signatureCount * SIGNATURE_BYTES)) return fault;
  const messageStart = pos;
  const prefix = readU8();
  if (prefix < 0) return fault;
  let version = -1;
  let numRequired: number;
  if ((prefix & MESSAGE_VERSION_PREFIX) !== 0) {
    version = prefix & 0x7f;
    if (version === 127) return OFF_CHAIN;
    if (version !== 0) return undecodable(`invalid value: integer \`${version}\`, expected a valid transaction message version`);
    numRequired = readU8();
    if (numRequired < 0) return fault;
  } else {
    numRequired = prefix;
  }
  const numReadonlySigned = readU8();
  if (numReadonlySigned < 0) return fault;
  const numReadonlyUnsigned = readU8();
  if (numReadonlyUnsigned < 0) return fault;
  const accountKeysCount = readCompactU16();
  if (accountKeysCount < 0) return fault;
  const accountKeysOffset = pos - offset;
  if (!skip(accountKeysCount * PUBKEY_BYTES)) return fault;
  const recentBlockhashOffset = pos - offset;
  if (!skip(32)) return fault;
  const instructionCount = readCompactU16();
  if (instructionCount < 0) return fault;
  const instructionsOffset = pos - offset;
  let maxProgramIndex = -1;
  let programIndexZero = false;
  let maxAccountIndex = -1;
  // Compute-budget outcome, reported only after sanitize passes (Agave's order): the kind and the instruction index,
  // the message built only if it is reported.
  let budgetError = BUDGET_NONE;
  let budgetIx = 0;
  let computeUnitPrice = -1;
  let computeUnitLimit = -1;
  let heapSeen = false;
  let loadedSizeSeen = false;
  for (let ix = 0; ix < instructionCount; ix++) {
    const programIndex = readU8();
    if (programIndex < 0) return fault;
    if (programIndex > maxProgramIndex) maxProgramIndex = programIndex;
    if (programIndex === 0) programIndexZero = true;
    const accountCount = readCompactU16();
    if (accountCount < 0) return fault;
    const accountsStart = pos;
    if (!skip(accountCount)) return fault;
    for (let a = accountsStart; a < pos; a++) if (buf[a] > maxAccountIndex) maxAccountIndex = buf[a];
    const dataLength = readCompactU16();
    if (dataLength < 0) return fault;
    const dataStart = pos;
    if (!skip(dataLength)) return fault;
    if (
      budgetError === BUDGET_NONE &&
      programIndex < accountKeysCount &&
      isComputeBudgetKey(offset + accountKeysOffset + programIndex * PUBKEY_BYTES)
    ) {
      // borsh ComputeBudgetInstruction, trailing data allowed (try_from_slice_unchecked).
      const tag = dataLength > 0 ? buf[dataStart] : -1;
      let kind = BUDGET_NONE;
      if (tag === 1 && dataLength >= 5) {
        if (heapSeen) kind = BUDGET_DUPLICATE;
        heapSeen = true;
      } else if (tag === 2 && dataLength >= 5) {
        if (computeUnitLimit >= 0) kind = BUDGET_DUPLICATE;
        else computeUnitLimit = u32At(dataStart + 1);
      } else if (tag === 3 && dataLength >= 9) {
        if (computeUnitPrice >= 0) kind = BUDGET_DUPLICATE;
        else computeUnitPrice = u32At(dataStart + 1) + u32At(dataStart + 5) * 4294967296;
      } else if (tag === 4 && dataLength >= 5) {
        if (loadedSizeSeen) kind = BUDGET_DUPLICATE;
        loadedSizeSeen = true;
      } else {
        kind = BUDGET_INVALID_DATA;
      }
      if (kind !== BUDGET_NONE) {
        budgetError = kind;
        budgetIx = ix & 0xff;
      }
    }
  }
  let addressTableLookupsOffset = -1;
  let addressTableLookupCount = 0;
  let lookupAccountCount = 0;
  let emptyLookup = false;
  if (version === 0) {
    addressTableLookupCount = readCompactU16();
    if (addressTableLookupCount < 0) return fault;
    addressTableLookupsOffset = pos - offset;
    for (let l = 0; l < addressTableLookupCount; l++) {
      if (!skip(PUBKEY_BYTES)) return fault;
      const writable = readCompactU16();
      if (writable < 0 || !skip(writable)) return fault;
      const readonly = readCompactU16();
      if (readonly < 0 || !skip(readonly)) return fault;
      if (writable + readonly === 0) emptyLookup = true;
      lookupAccountCount += writable + readonly;
    }
  }
  if (pos !== end) return TRAILING_BYTES;

  // ---- phase 2: sanitize ----
  const staticKeys = accountKeysCount;
  let ok =
    numRequired === signatureCount &&
    signatureCount <= staticKeys &&
    numRequired + numReadonlyUnsigned <= staticKeys &&
    numReadonlySigned < numRequired &&
    !programIndexZero;
  if (ok) {
    if (version === 0) {
      const totalKeys = staticKeys + lookupAccountCount;
      ok = !emptyLookup && staticKeys > 0 && totalKeys <= 256 && maxProgramIndex < staticKeys && maxAccountIndex < totalKeys;
    } else {
      ok = maxProgramIndex < staticKeys && maxAccountIndex < staticKeys;
    }
  }
  if (!ok) return SANITIZE_FAILURE;
  if (budgetError !== BUDGET_NONE) return budgetFailure(budgetError, budgetIx);
  if (hasDuplicateKey(offset + accountKeysOffset, staticKeys)) return ACCOUNT_LOADED_TWICE;

  out.length = length;
  out.version = version;
  out.signatureCount = signatureCount;
  out.firstSignatureOffset = firstSignatureOffset;
  out.messageOffset = messageStart - offset;
  out.messageLength = end - messageStart;
  out.numRequiredSignatures = numRequired;
  out.numReadonlySigned = numReadonlySigned;
  out.numReadonlyUnsigned = numReadonlyUnsigned;
  out.accountKeysOffset = accountKeysOffset;
  out.accountKeysCount = accountKeysCount;
  out.recentBlockhashOffset = recentBlockhashOffset;
  out.instructionsOffset = instructionsOffset;
  out.instructionCount = instructionCount;
  out.addressTableLookupsOffset = addressTableLookupsOffset;
  out.addressTableLookupCount = addressTableLookupCount;
  out.lookupAccountCount = lookupAccountCount;
  out.computeUnitPrice = computeUnitPrice;
  out.computeUnitLimit = computeUnitLimit;
  out.priorityFeeLamports = -1;
  return null;
}

/** tryParseTransaction, throwing the refusal as a RelayError (cold callers, tools). */
export function parseTransaction(bytes: Uint8Array, offset: number, length: number, out: ParsedTransaction, maxV1Bytes?: number): void {
  const failure = tryParseTransaction(bytes, offset, length, out, maxV1Bytes);
  if (failure !== null) throw failure.toError();
}
