// What the localnet's wire parsers produce (localnet process, main thread; types and constants only, no hot code):
// the parsed transaction the bank, the facade and the landing records read, the parse error, and the size and
// compute-budget constants shared by the legacy/v0 parser (wire.ts) and the v1 parser (wire-v1.ts).

export const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
/** Agave: MAX_COMPUTE_UNIT_LIMIT (compute-budget crate). */
export const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;
/** Agave (SIMD-0170): default units per builtin instruction / per other instruction when no limit is requested. */
export const DEFAULT_BUILTIN_UNITS = 3_000;
export const DEFAULT_INSTRUCTION_UNITS = 200_000;
/** Agave's lamports per signature (the base fee). */
export const LAMPORTS_PER_SIGNATURE = 5_000n;
/** Largest legacy or v0 transaction (PACKET_DATA_SIZE): these formats stay capped after SIMD-0296. */
export const MAX_LEGACY_TRANSACTION_BYTES = 1232;
/** Largest v1 transaction (solana-message v1::MAX_TRANSACTION_SIZE, SIMD-0296). */
export const MAX_V1_TRANSACTION_BYTES = 4096;

export type WireVersion = 'legacy' | 0 | 1;

/** A v1 message's TransactionConfig: each value null when its mask bit is clear. */
export interface V1Config {
  /** The TOTAL prioritization fee in lamports (not a per-unit price). */
  readonly priorityFeeLamports: bigint | null;
  readonly computeUnitLimit: number | null;
  readonly loadedAccountsDataSizeLimit: number | null;
  readonly heapSize: number | null;
}

export interface WireInstruction {
  readonly programIdIndex: number;
  readonly accounts: Uint8Array;
  readonly data: Uint8Array;
}

export interface WireLookup {
  readonly accountKey: Uint8Array;
  readonly writableIndexes: Uint8Array;
  readonly readonlyIndexes: Uint8Array;
}

export interface ParsedTx {
  readonly version: WireVersion;
  /** Base58 signatures; [0] is the transaction id. */
  readonly signatures: readonly string[];
  /** Static account keys, base58, in message order. */
  readonly accountKeys: readonly string[];
  /** The same keys as 32-byte views into the transaction bytes (no copy). */
  readonly keyBytes: readonly Uint8Array[];
  readonly writable: readonly boolean[];
  readonly numRequiredSignatures: number;
  readonly recentBlockhash: string;
  /** Offset of the 32 recent-blockhash bytes inside the transaction (replaceRecentBlockhash rewrites them). */
  readonly blockhashOffset: number;
  /**
   * Micro-lamports per compute unit: legacy/v0 the SetComputeUnitPrice value (0 when absent); v1 derived from the
   * config's total fee as Agave does, floor(priorityFee × 1e6 / computeUnitLimit), 0 when the limit is 0.
   */
  readonly computeUnitPrice: bigint;
  /** Requested or derived compute-unit limit (v1: the config's, 0 when absent), capped at 1.4M. */
  readonly computeUnitLimit: number;
  /** Prioritization fee in lamports: legacy/v0 ceil(price × limit / 1e6); v1 the config's total (0 when absent). */
  readonly priorityFee: bigint;
  /** v1 only: the message's config as sent; null for legacy and v0. */
  readonly config: V1Config | null;
  readonly hasAddressTableLookups: boolean;
  /** Instructions as views into the transaction bytes (getTransaction renders them). */
  readonly instructions: readonly WireInstruction[];
  readonly addressTableLookups: readonly WireLookup[];
  /** Offset and length of the message bytes inside the transaction (what the signatures sign). */
  readonly messageOffset: number;
  readonly messageLength: number;
}

/**
 * A transaction that does not parse or sanitize; `message` is Agave-like text (what the RPC answers), `detail` the
 * precise reason when Agave's text is generic (v1: solana-message's v1::MessageError text).
 */
export class WireError extends Error {
  constructor(
    readonly kind: 'undecodable' | 'invalid',
    message: string,
    readonly detail: string = message,
  ) {
    super(message);
  }
}

/** Agave's text for every sanitize failure (TransactionError::SanitizeFailure as the RPC prints it). */
export const SANITIZE_FAILURE = 'invalid transaction: Transaction failed to sanitize accounts offsets correctly';

/** Which format a transaction's first byte announces, and that format's size cap; null = no format (Agave refuses). */
export function wireFormatOf(firstByte: number): { version: 'legacy-or-v0' | 1; maxBytes: number } | null {
  if ((firstByte & 0x80) === 0) return { version: 'legacy-or-v0', maxBytes: MAX_LEGACY_TRANSACTION_BYTES };
  if (firstByte === 0x81) return { version: 1, maxBytes: MAX_V1_TRANSACTION_BYTES };
  return null;
}
