// Solana transaction wire-format parser for the localnet bank (localnet thread, HOT: once per transaction reaching a
// leader). It checks the whole structure — exact lengths, no trailing bytes, the sanitize rules Agave applies before
// execution — because litesvm's native deserializer aborts the process on malformed bytes instead of returning an
// error. It also extracts what the bank records: signatures, static account keys with their writability, the recent
// blockhash and the compute-budget instructions (unit limit and price) used for fees and prioritization fees.
// The first byte picks the format: < 0x80 legacy or v0 (parsed here, at most 1232 bytes), 0x81 v1 (wire-v1.ts, at
// most 4096 bytes), anything else is refused as Agave does ("invalid transaction discriminator").
import { encodePubkeyBase58, encodeSignatureBase58 } from '../tx/base58.js';
import { parseV1Transaction, v1Fee } from './wire-v1.js';
import {
  COMPUTE_BUDGET_PROGRAM,
  DEFAULT_BUILTIN_UNITS,
  DEFAULT_INSTRUCTION_UNITS,
  LAMPORTS_PER_SIGNATURE,
  MAX_COMPUTE_UNIT_LIMIT,
  MAX_LEGACY_TRANSACTION_BYTES,
  SANITIZE_FAILURE,
  WireError,
  type ParsedTx,
  type WireInstruction,
  type WireLookup,
} from './wire-types.js';

export * from './wire-types.js';

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

/**
 * Parse and sanitize one transaction of any format. `capSize` false skips the format's size cap (getFeeForMessage
 * prices a message with placeholder signatures, which Agave does whatever their total size).
 */
export function parseWireTransaction(tx: Uint8Array, capSize = true): ParsedTx {
  if (tx.length === 0) throw new WireError('undecodable', 'io error: unexpected end of file');
  if (tx[0] === 0x81) return parseV1Transaction(tx, capSize);
  if (tx[0] & 0x80) throw new WireError('undecodable', 'invalid transaction discriminator');
  if (capSize && tx.length > MAX_LEGACY_TRANSACTION_BYTES) {
    throw new WireError('undecodable', `transaction too large: ${tx.length} bytes (max: ${MAX_LEGACY_TRANSACTION_BYTES} bytes for legacy and v0)`);
  }
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
  if (nSig === 0 || numRequiredSignatures === 0) throw new WireError('invalid', SANITIZE_FAILURE);
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
  // Agave's prioritization fee: ceil(price × limit / 1e6).
  const priorityFee = (computeUnitPrice * BigInt(computeUnitLimit) + 999_999n) / 1_000_000n;

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
    priorityFee,
    config: null,
    hasAddressTableLookups: nLookups > 0,
    instructions: ixs,
    addressTableLookups: lookups,
    messageOffset,
    messageLength: tx.length - messageOffset,
  };
}

/**
 * Agave's fee: 5,000 lamports per signature plus the prioritization fee — legacy/v0 ceil(price × limit / 1e6), v1
 * the config's total.
 */
export function transactionFee(p: ParsedTx): bigint {
  if (p.version === 1) return v1Fee(p);
  return BigInt(p.signatures.length) * LAMPORTS_PER_SIGNATURE + p.priorityFee;
}
