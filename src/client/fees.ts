// Priority fees (caller's thread, cold): percentiles of getRecentPrioritizationFees' prioritizationFee (spec 2.2,
// 4.2: "take a high percentile (p75 to p90) as the compute-unit price") and the compute budget program's
// SetComputeUnitPrice instruction built by hand (u8 3, then the price as u64 little-endian), for @solana/web3.js
// (pass the module: its TransactionInstruction and PublicKey are used) and for @solana/kit (a plain Instruction
// object; pass kit's `address` to get its branded Address type). No dependency on either library.
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
