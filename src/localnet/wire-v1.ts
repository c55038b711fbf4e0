// The v1 transaction parser (SIMD-0385 / SIMD-0296) for the localnet bank (localnet process, main thread; HOT: once
// per v1 transaction reaching a leader or the facade). Layout (solana-message v1/message.rs, solana-transaction
// versioned/mod.rs): the MESSAGE first — 0x81, header (3), config mask (u32 LE), blockhash (32), instruction count
// (u8), address count (u8), addresses, config values (per mask bit), instruction headers (program index u8, account
// count u8, data length u16 LE), instruction payloads — then num_required_signatures × 64 signature bytes, nothing
// after. Deserialize errors first (truncation, bad mask, trailing bytes), then v1::Message::validate in its order.
import { encodePubkeyBase58, encodeSignatureBase58 } from '../tx/base58.js';
import {
  LAMPORTS_PER_SIGNATURE,
  MAX_COMPUTE_UNIT_LIMIT,
  MAX_V1_TRANSACTION_BYTES,
  SANITIZE_FAILURE,
  WireError,
  type ParsedTx,
  type V1Config,
  type WireInstruction,
} from './wire-types.js';

export const V1_PREFIX = 0x81;
/** solana-message v1 limits. */
export const V1_MAX_SIGNATURES = 12;
export const V1_MAX_ADDRESSES = 64;
export const V1_MAX_INSTRUCTIONS = 64;
export const V1_MIN_HEAP_SIZE = 32 * 1024;
export const V1_MAX_HEAP_SIZE = 256 * 1024;
/** 0x81 + header (3) + mask (4) + blockhash (32) + instruction count + address count. */
const FIXED_HEADER = 1 + 3 + 4 + 32 + 1 + 1;
/** TransactionConfigMask bits. */
const MASK_PRIORITY_FEE = 0b11;
const MASK_CU_LIMIT = 0b100;
const MASK_LOADED_DATA = 0b1000;
const MASK_HEAP = 0b1_0000;
const MASK_KNOWN = 0b1_1111;
const U64_MAX = (1n << 64n) - 1n;

const eof = (): WireError => new WireError('undecodable', 'io error: unexpected end of file');
const insane = (detail: string): WireError => new WireError('invalid', SANITIZE_FAILURE, detail);

function u32le(d: Uint8Array, at: number): number {
  return (d[at] | (d[at + 1] << 8) | (d[at + 2] << 16) | (d[at + 3] << 24)) >>> 0;
}

function u64le(d: Uint8Array, at: number): bigint {
  return BigInt(u32le(d, at)) | (BigInt(u32le(d, at + 4)) << 32n);
}

/**
 * Agave's per-unit view of a v1 total fee (runtime-transaction transaction_meta.rs,
 * TransactionConfiguration::compute_unit_price_in_microlamports): floor(fee × 1e6 / limit) in u128, 0 when the limit
 * is 0 or the result does not fit a u64.
 */
export function v1ComputeUnitPrice(priorityFee: bigint, computeUnitLimit: number): bigint {
  if (computeUnitLimit === 0) return 0n;
  const price = (priorityFee * 1_000_000n) / BigInt(computeUnitLimit);
  return price > U64_MAX ? 0n : price;
}

/** Parse and sanitize a v1 transaction (tx[0] must be 0x81). Throws WireError. `capSize` false: no 4096 cap. */
export function parseV1Transaction(tx: Uint8Array, capSize = true): ParsedTx {
  if (capSize && tx.length > MAX_V1_TRANSACTION_BYTES) throw new WireError('undecodable', `transaction exceeds max size (${MAX_V1_TRANSACTION_BYTES} bytes): ${tx.length} bytes`);
  if (tx.length < FIXED_HEADER) throw eof();
  if (tx[0] !== V1_PREFIX) throw new WireError('undecodable', 'invalid version byte (expected 0x81)');
  const numRequiredSignatures = tx[1];
  const numReadonlySigned = tx[2];
  const numReadonlyUnsigned = tx[3];
  const mask = u32le(tx, 4);
  const blockhashOffset = 8;
  const nIx = tx[40];
  const nKeys = tx[41];
  // Deserialize (wincode SchemaRead for v1::Message): the mask is checked before anything after the fixed header.
  const partialFee = (mask & MASK_PRIORITY_FEE) !== 0 && (mask & MASK_PRIORITY_FEE) !== MASK_PRIORITY_FEE;
  if ((mask | MASK_KNOWN) >>> 0 !== MASK_KNOWN || partialFee) throw new WireError('undecodable', 'invalid transaction config mask');
  let pos = FIXED_HEADER;
  const need = (n: number): void => {
    if (pos + n > tx.length) throw eof();
  };
  need(nKeys * 32);
  const accountKeys: string[] = new Array<string>(nKeys);
  const keyBytes: Uint8Array[] = new Array<Uint8Array>(nKeys);
  for (let i = 0; i < nKeys; i++, pos += 32) {
    accountKeys[i] = encodePubkeyBase58(tx, pos);
    keyBytes[i] = tx.subarray(pos, pos + 32);
  }
  const readU32 = (): number => {
    need(4);
    pos += 4;
    return u32le(tx, pos - 4);
  };
  let priorityFeeLamports: bigint | null = null;
  if ((mask & MASK_PRIORITY_FEE) === MASK_PRIORITY_FEE) {
    need(8);
    priorityFeeLamports = u64le(tx, pos);
    pos += 8;
  }
  const config: V1Config = {
    priorityFeeLamports,
    computeUnitLimit: mask & MASK_CU_LIMIT ? readU32() : null,
    loadedAccountsDataSizeLimit: mask & MASK_LOADED_DATA ? readU32() : null,
    heapSize: mask & MASK_HEAP ? readU32() : null,
  };
  need(nIx * 4);
  const headersAt = pos;
  pos += nIx * 4;
  const instructions: WireInstruction[] = new Array<WireInstruction>(nIx);
  for (let i = 0; i < nIx; i++) {
    const h = headersAt + 4 * i;
    const nAccounts = tx[h + 1];
    const dataLen = tx[h + 2] | (tx[h + 3] << 8);
    need(nAccounts + dataLen);
    const accounts = tx.subarray(pos, pos + nAccounts);
    const data = tx.subarray(pos + nAccounts, pos + nAccounts + dataLen);
    pos += nAccounts + dataLen;
    instructions[i] = { programIdIndex: tx[h], accounts, data };
  }
  const messageLength = pos;
  // The signatures follow the message; their count is the header's, not a prefix.
  need(numRequiredSignatures * 64);
  const signatures: string[] = new Array<string>(numRequiredSignatures);
  for (let i = 0; i < numRequiredSignatures; i++, pos += 64) signatures[i] = encodeSignatureBase58(tx, pos);
  if (pos !== tx.length) throw new WireError('undecodable', 'io error: trailing bytes after the transaction');

  // Sanitize: v1::Message::validate, in its order.
  if (numRequiredSignatures > V1_MAX_SIGNATURES) throw insane('too many signatures (max 12)');
  if (nIx > V1_MAX_INSTRUCTIONS) throw insane('too many instructions (max 64)');
  if (nKeys > V1_MAX_ADDRESSES) throw insane('too many addresses (max 64)');
  if (nKeys < numRequiredSignatures + numReadonlyUnsigned) throw insane('not enough addresses for required signatures');
  if (numReadonlySigned >= numRequiredSignatures) throw insane('must have at least one signer (fee payer)');
  if (new Set(accountKeys).size !== nKeys) throw insane('duplicate addresses found in message');
  const heap = config.heapSize;
  if (heap !== null && (heap % 1024 !== 0 || heap < V1_MIN_HEAP_SIZE || heap > V1_MAX_HEAP_SIZE)) throw insane('heap size must be a multiple of 1024');
  if (nKeys === 0) throw insane('not enough account keys provided');
  for (const ix of instructions) {
    if (ix.programIdIndex >= nKeys || ix.programIdIndex === 0) throw insane('instruction account index out of bounds');
    for (const a of ix.accounts) if (a >= nKeys) throw insane('instruction account index out of bounds');
  }

  const writable: boolean[] = new Array<boolean>(nKeys);
  for (let i = 0; i < nKeys; i++) {
    writable[i] = i < numRequiredSignatures ? i < numRequiredSignatures - numReadonlySigned : i < nKeys - numReadonlyUnsigned;
  }
  // Agave (transaction_meta.rs from_v1_config / try_into_config): absent values are 0, the limit is capped at 1.4M.
  const computeUnitLimit = Math.min(config.computeUnitLimit ?? 0, MAX_COMPUTE_UNIT_LIMIT);
  const priorityFee = config.priorityFeeLamports ?? 0n;
  return {
    version: 1,
    signatures,
    accountKeys,
    keyBytes,
    writable,
    numRequiredSignatures,
    recentBlockhash: encodePubkeyBase58(tx, blockhashOffset),
    blockhashOffset,
    computeUnitPrice: v1ComputeUnitPrice(priorityFee, computeUnitLimit),
    computeUnitLimit,
    priorityFee,
    config,
    hasAddressTableLookups: false,
    instructions,
    addressTableLookups: [],
    messageOffset: 0,
    messageLength,
  };
}

/** A v1 fee as Agave charges it: 5,000 lamports per signature plus the config's total prioritization fee. */
export function v1Fee(p: ParsedTx): bigint {
  return BigInt(p.signatures.length) * LAMPORTS_PER_SIGNATURE + p.priorityFee;
}
