// Solana transaction wire-format parser for the localnet bank (localnet thread, HOT: once per transaction reaching a
// leader). It checks the whole structure — exact lengths, no trailing bytes, the sanitize rules Agave applies before
// execution — because litesvm's native deserializer aborts the process on malformed bytes instead of returning an
// error. It also extracts what the bank records: signatures, static account keys with their writability, the recent
// blockhash and the compute-budget instructions (unit limit and price) used for fees and prioritization fees.
import { encodePubkeyBase58, encodeSignatureBase58 } from '../tx/base58.js';

export const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
/** Agave: MAX_COMPUTE_UNIT_LIMIT (compute-budget crate). */
export const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;
/** Agave (SIMD-0170): default units per builtin instruction / per other instruction when no limit is requested. */
export const DEFAULT_BUILTIN_UNITS = 3_000;
export const DEFAULT_INSTRUCTION_UNITS = 200_000;

/** Programs Agave counts as builtins when it derives the default compute-unit limit. */
const BUILTINS = new Set([
  '11111111111111111111111111111111',
  COMPUTE_BUDGET_PROGRAM,
  'Vote111111111111111111111111111111111111111',
  'Stake11111111111111111111111111111111111111',
  'Config1111111111111111111111111111111111111',
  'AddressLookupTab1e1111111111111111111111111',
  'BPFLoader1111111111111111111111111111111111',
  'BPFLoader2111111111111111111111111111111111',
  'BPFLoaderUpgradeab1e11111111111111111111111',
  'LoaderV411111111111111111111111111111111111',
  'Ed25519SigVerify111111111111111111111111111',
  'KeccakSecp256k11111111111111111111111111111',
  'Secp256r1SigVerify1111111111111111111111111',
]);

export interface ParsedTx {
  readonly version: 'legacy' | 0;
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
  /** Micro-lamports per compute unit (SetComputeUnitPrice), 0 when absent. */
  readonly computeUnitPrice: bigint;
  /** Requested or derived compute-unit limit (what the priority fee is charged on). */
  readonly computeUnitLimit: number;
  readonly hasAddressTableLookups: boolean;
  /** Instructions as views into the transaction bytes (getTransaction renders them). */
  readonly instructions: readonly WireInstruction[];
  readonly addressTableLookups: readonly WireLookup[];
  /** Offset and length of the message bytes inside the transaction (for signature verification). */
  readonly messageOffset: number;
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

/** A transaction that does not parse or sanitize; `message` is Agave-like detail text. */
export class WireError extends Error {
  constructor(
    readonly kind: 'undecodable' | 'invalid',
    message: string,
  ) {
    super(message);
  }
}

class Reader {
  pos = 0;
  constructor(readonly b: Uint8Array) {}
  need(n: number): void {
    if (this.pos + n > this.b.length) throw new WireError('undecodable', 'io error: unexpected end of file');
  }
  u8(): number {
    this.need(1);
    return this.b[this.pos++];
  }
  /** Solana short_vec (compact-u16). */
  shortVec(): number {
    let value = 0;
    for (let i = 0; i < 3; i++) {
      const byte = this.u8();
      value |= (byte & 0x7f) << (7 * i);
      if ((byte & 0x80) === 0) {
        if (byte === 0 && i > 0) throw new WireError('undecodable', 'io error: compact-u16 alias');
        return value;
      }
    }
    throw new WireError('undecodable', 'io error: compact-u16 overflow');
  }
  bytes(n: number): Uint8Array {
    this.need(n);
    const out = this.b.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

function readU32le(d: Uint8Array, at: number): number {
  return (d[at] | (d[at + 1] << 8) | (d[at + 2] << 16) | (d[at + 3] << 24)) >>> 0;
}

function readU64le(d: Uint8Array, at: number): bigint {
  return BigInt(readU32le(d, at)) | (BigInt(readU32le(d, at + 4)) << 32n);
}

export function parseWireTransaction(tx: Uint8Array): ParsedTx {
  const r = new Reader(tx);
  const nSig = r.shortVec();
  const signatures: string[] = [];
  for (let i = 0; i < nSig; i++) {
    r.need(64);
    signatures.push(encodeSignatureBase58(tx, r.pos));
    r.pos += 64;
  }
  const messageOffset = r.pos;
  let version: 'legacy' | 0 = 'legacy';
  let first = r.u8();
  if (first & 0x80) {
    const v = first & 0x7f;
    if (v !== 0) throw new WireError('undecodable', `invalid value: ${v}, expected a valid transaction message version`);
    version = 0;
    first = r.u8();
  }
  const numRequiredSignatures = first;
  const numReadonlySigned = r.u8();
  const numReadonlyUnsigned = r.u8();
  const nKeys = r.shortVec();
  const accountKeys: string[] = [];
  const keyBytes: Uint8Array[] = [];
  for (let i = 0; i < nKeys; i++) {
    r.need(32);
    accountKeys.push(encodePubkeyBase58(tx, r.pos));
    keyBytes.push(r.bytes(32));
  }
  const blockhashOffset = r.pos;
  r.need(32);
  const recentBlockhash = encodePubkeyBase58(tx, r.pos);
  r.pos += 32;
  const nIx = r.shortVec();
  const ixs: WireInstruction[] = [];
  for (let i = 0; i < nIx; i++) {
    const programIdIndex = r.u8();
    const accounts = r.bytes(r.shortVec());
    const data = r.bytes(r.shortVec());
    ixs.push({ programIdIndex, accounts, data });
  }
  let lookupAccounts = 0;
  const lookups: WireLookup[] = [];
  const nLookups = version === 0 ? r.shortVec() : 0;
  for (let i = 0; i < nLookups; i++) {
    const accountKey = r.bytes(32);
    const writableIndexes = r.bytes(r.shortVec());
    const readonlyIndexes = r.bytes(r.shortVec());
    lookups.push({ accountKey, writableIndexes, readonlyIndexes });
    lookupAccounts += writableIndexes.length + readonlyIndexes.length;
  }
  if (r.pos !== tx.length) throw new WireError('undecodable', 'io error: trailing bytes after the transaction');

  // Sanitize, as Agave's Message::sanitize / VersionedTransaction::sanitize.
  if (nSig === 0 || numRequiredSignatures === 0) throw new WireError('invalid', 'invalid transaction: Transaction failed to sanitize accounts offsets correctly');
  if (nSig !== numRequiredSignatures) throw new WireError('invalid', 'invalid transaction: Transaction failed to sanitize accounts offsets correctly');
  if (numReadonlySigned >= numRequiredSignatures || numRequiredSignatures > nKeys || numRequiredSignatures + numReadonlyUnsigned > nKeys) {
    throw new WireError('invalid', 'invalid transaction: Transaction failed to sanitize accounts offsets correctly');
  }
  const total = nKeys + lookupAccounts;
  if (total > 256) throw new WireError('invalid', 'invalid transaction: Transaction failed to sanitize accounts offsets correctly');
  for (const ix of ixs) {
    if (ix.programIdIndex === 0 || ix.programIdIndex >= nKeys) throw new WireError('invalid', 'invalid transaction: Transaction failed to sanitize accounts offsets correctly');
    for (const a of ix.accounts) if (a >= total) throw new WireError('invalid', 'invalid transaction: Transaction failed to sanitize accounts offsets correctly');
  }
  if (new Set(accountKeys).size !== nKeys) throw new WireError('invalid', 'invalid transaction: Transaction loads an account twice');

  const writable: boolean[] = new Array<boolean>(nKeys);
  for (let i = 0; i < nKeys; i++) {
    writable[i] = i < numRequiredSignatures ? i < numRequiredSignatures - numReadonlySigned : i < nKeys - numReadonlyUnsigned;
  }

  let computeUnitPrice = 0n;
  let requestedLimit = -1;
  let builtins = 0;
  for (const ix of ixs) {
    const program = accountKeys[ix.programIdIndex];
    if (BUILTINS.has(program)) builtins++;
    if (program !== COMPUTE_BUDGET_PROGRAM) continue;
    const d = ix.data;
    if (d[0] === 2 && d.length === 5) requestedLimit = readU32le(d, 1);
    else if (d[0] === 3 && d.length === 9) computeUnitPrice = readU64le(d, 1);
  }
  const derived = builtins * DEFAULT_BUILTIN_UNITS + (ixs.length - builtins) * DEFAULT_INSTRUCTION_UNITS;
  const computeUnitLimit = Math.min(requestedLimit >= 0 ? requestedLimit : derived, MAX_COMPUTE_UNIT_LIMIT);

  return {
    version,
    signatures,
    accountKeys,
    keyBytes,
    writable,
    numRequiredSignatures,
    recentBlockhash,
    blockhashOffset,
    computeUnitPrice,
    computeUnitLimit,
    hasAddressTableLookups: nLookups > 0,
    instructions: ixs,
    addressTableLookups: lookups,
    messageOffset,
  };
}

/** Agave's fee: 5,000 lamports per signature plus ceil(price × limit / 1e6) (the prioritization fee). */
export const LAMPORTS_PER_SIGNATURE = 5_000n;

export function transactionFee(p: ParsedTx): bigint {
  const micro = p.computeUnitPrice * BigInt(p.computeUnitLimit);
  return BigInt(p.signatures.length) * LAMPORTS_PER_SIGNATURE + (micro + 999_999n) / 1_000_000n;
}
