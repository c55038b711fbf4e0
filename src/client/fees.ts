// Priority fees (caller's thread, cold): percentiles of getRecentPrioritizationFees' prioritizationFee (spec 2.2,
// 4.2: "take a high percentile (p75 to p90) as the compute-unit price") and the compute budget program's
// SetComputeUnitPrice instruction built by hand (u8 3, then the price as u64 little-endian), for @solana/web3.js
// (pass the module: its TransactionInstruction and PublicKey are used) and for @solana/kit (a plain Instruction
// object; pass kit's `address` to get its branded Address type). No dependency on either library.
// For v1 transactions the priority fee is a total in lamports set in the message config: priorityFeeLamports()
// converts a price and a compute-unit limit into it.
import type { PrioritizationFee } from './types.js';

/** The spec's range for a compute-unit price (4.2). */
export const MIN_PRICE_PERCENTILE = 75;
export const MAX_PRICE_PERCENTILE = 90;
export const DEFAULT_PRICE_PERCENTILE = 75;

export const COMPUTE_BUDGET_PROGRAM_ID = 'ComputeBudget111111111111111111111111111111';
/** ComputeBudgetInstruction::SetComputeUnitPrice discriminator. */
const SET_COMPUTE_UNIT_PRICE = 3;
const U64_MAX = (1n << 64n) - 1n;

/**
 * Nearest-rank percentile (0 < p <= 100) of the fees' prioritizationFee: the smallest fee with at least p% of the
 * slots at or below it. Slots that paid nothing count (they are part of the sample); no slots -> 0.
 */
export function feePercentile(fees: readonly PrioritizationFee[], percentile: number): number {
  if (!(percentile > 0 && percentile <= 100)) throw new RangeError(`percentile must be in (0, 100], got ${percentile}`);
  if (fees.length === 0) return 0;
  const sorted = fees.map((f) => f.prioritizationFee).sort((a, b) => a - b);
  return sorted[Math.ceil((percentile / 100) * sorted.length) - 1];
}

export function checkPricePercentile(percentile: number): void {
  if (!(percentile >= MIN_PRICE_PERCENTILE && percentile <= MAX_PRICE_PERCENTILE)) {
    throw new RangeError(`percentile must be between ${MIN_PRICE_PERCENTILE} and ${MAX_PRICE_PERCENTILE} (spec 4.2), got ${percentile}; feePercentile() computes any other`);
  }
}

/** Instruction data of SetComputeUnitPrice(microLamports): 9 bytes. */
export function setComputeUnitPriceData(microLamports: number | bigint): Uint8Array {
  const v = typeof microLamports === 'bigint' ? microLamports : Number.isSafeInteger(microLamports) ? BigInt(microLamports) : -1n;
  if (v < 0n || v > U64_MAX) throw new RangeError('microLamports must be an integer between 0 and 2^64 - 1');
  const data = new Uint8Array(9);
  data[0] = SET_COMPUTE_UNIT_PRICE;
  new DataView(data.buffer).setBigUint64(1, v, true);
  return data;
}

/** The parts of the @solana/web3.js module used here (`import * as web3 from '@solana/web3.js'` fits). */
export interface Web3Module<TKey, TInstruction> {
  PublicKey: new (value: string) => TKey;
  TransactionInstruction: new (opts: { programId: TKey; keys: []; data: never }) => TInstruction;
}

type BufferFrom = { from(b: Uint8Array): Uint8Array };

/** SetComputeUnitPrice as a web3.js TransactionInstruction (its data as a Buffer, which web3.js expects). */
export function web3ComputeUnitPriceInstruction<TKey, TInstruction>(web3: Web3Module<TKey, TInstruction>, microLamports: number | bigint): TInstruction {
  const raw = setComputeUnitPriceData(microLamports);
  const B = (globalThis as { Buffer?: BufferFrom }).Buffer;
  const data = (B === undefined ? raw : B.from(raw)) as never;
  return new web3.TransactionInstruction({ programId: new web3.PublicKey(COMPUTE_BUDGET_PROGRAM_ID), keys: [], data });
}

/** The Instruction object @solana/kit expects (no accounts: SetComputeUnitPrice takes none). */
export interface KitComputeUnitPriceInstruction<TAddress> {
  readonly programAddress: TAddress;
  readonly data: Uint8Array;
}

/**
 * SetComputeUnitPrice for @solana/kit. Pass kit's `address` function to get its branded Address (then the object is
 * an Instruction as kit's appendTransactionMessageInstruction types it); without it the address is a plain string.
 */
export function kitComputeUnitPriceInstruction(microLamports: number | bigint): KitComputeUnitPriceInstruction<string>;
export function kitComputeUnitPriceInstruction<TAddress>(microLamports: number | bigint, address: (value: string) => TAddress): KitComputeUnitPriceInstruction<TAddress>;
export function kitComputeUnitPriceInstruction<TAddress>(microLamports: number | bigint, address?: (value: string) => TAddress): KitComputeUnitPriceInstruction<TAddress | string> {
  return Object.freeze({ programAddress: address === undefined ? COMPUTE_BUDGET_PROGRAM_ID : address(COMPUTE_BUDGET_PROGRAM_ID), data: setComputeUnitPriceData(microLamports) });
}

// ---- v1 transactions (SIMD-0385): the priority fee is a total in lamports, set in the message's config ----

const MICRO_LAMPORTS_PER_LAMPORT = 1_000_000n;
const U32_MAX = 0xffff_ffff;

function toU64(v: number | bigint, name: string): bigint {
  const b = typeof v === 'bigint' ? v : Number.isSafeInteger(v) ? BigInt(v) : -1n;
  if (b < 0n || b > U64_MAX) throw new RangeError(`${name} must be an integer between 0 and 2^64 - 1`);
  return b;
}

/**
 * The total priority fee in lamports that a compute-unit price buys for `computeUnitLimit` units: what a v1
 * transaction's config carries instead of a price. Same rounding as Agave's price-based fee for legacy and v0
 * (ceil(price x limit / 1,000,000)), so a v1 transaction pays what the same price paid before.
 */
export function priorityFeeLamports(microLamportsPerComputeUnit: number | bigint, computeUnitLimit: number): bigint {
  const price = toU64(microLamportsPerComputeUnit, 'microLamportsPerComputeUnit');
  if (!(Number.isInteger(computeUnitLimit) && computeUnitLimit >= 0 && computeUnitLimit <= U32_MAX)) {
    throw new RangeError('computeUnitLimit must be an integer between 0 and 2^32 - 1');
  }
  const micro = price * BigInt(computeUnitLimit);
  const lamports = (micro + MICRO_LAMPORTS_PER_LAMPORT - 1n) / MICRO_LAMPORTS_PER_LAMPORT;
  if (lamports > U64_MAX) throw new RangeError('the priority fee exceeds 2^64 - 1 lamports');
  return lamports;
}

/**
 * The v1 config fields, named as @solana/kit 8.4 names them (TransactionMessageConfig `priorityFeeLamports`,
 * `computeUnitLimit`): pass them to kit's setTransactionMessagePriorityFeeLamports(fee, message) and
 * setTransactionMessageComputeUnitLimit(limit, message). Set both: the limit is what the fee was computed for.
 */
export interface V1PriorityFeeConfig {
  readonly priorityFeeLamports: bigint;
  readonly computeUnitLimit: number;
}

export function v1PriorityFeeConfig(microLamportsPerComputeUnit: number | bigint, computeUnitLimit: number): V1PriorityFeeConfig {
  return Object.freeze({ priorityFeeLamports: priorityFeeLamports(microLamportsPerComputeUnit, computeUnitLimit), computeUnitLimit });
}
