// A reference model of what Agave's sendTransaction does with wire bytes, written for the property tests from Agave's
// rules (not from src/tx): bincode + solana-short-vec deserialization of VersionedTransaction (solana-sdk
// message/src/versions/mod.rs, v0 Message, CompiledInstruction), then RuntimeTransaction::try_create's checks in
// order — VersionedTransaction::sanitize (signature counts; legacy / v0 Message::sanitize), the compute-budget
// instruction details (borsh ComputeBudgetInstruction, first failure wins), then SanitizedTransaction's duplicate
// account check over the static keys (lookup tables are resolved on chain, later). Every sanitize failure reads
// "invalid transaction: Transaction failed to sanitize accounts offsets correctly" (TransactionError::SanitizeFailure).
//
// One documented deviation of the relay is modelled as the relay does it (src/tx/parse-transaction.ts header): bytes
// after the message are refused ("Slice had bytes remaining after deserialization") where Agave's RPC allows them.
//
// Also here: a wire-format model (WireTx) with a strict serializer, so tests can build transactions field by field
// (duplicate keys, counts, indexes, version bytes, lookups) and re-encode them.
import { PublicKey, VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';

export const TYPE = 'solana_transaction::versioned::VersionedTransaction';
export const UNDECODABLE = `failed to deserialize ${TYPE}: `;
export const SANITIZE_FAILURE = 'invalid transaction: Transaction failed to sanitize accounts offsets correctly';
export const ACCOUNT_LOADED_TWICE = 'invalid transaction: Account loaded twice';
export const EOF = 'io error: failed to fill whole buffer';

export const COMPUTE_BUDGET_PROGRAM: Uint8Array = bs58.decode('ComputeBudget111111111111111111111111111111');

export type ModelVerdict =
  | { readonly kind: 'ok'; readonly firstSignature: Uint8Array; readonly version: number }
  | { readonly kind: 'refused'; readonly reason: 'tx_undecodable' | 'tx_invalid'; readonly message: string; readonly detail?: string };

class Undecodable extends Error {}

class Reader {
  pos = 0;
  constructor(private readonly b: Uint8Array) {}
  u8(): number {
    if (this.pos >= this.b.length) throw new Undecodable(EOF);
    return this.b[this.pos++];
  }
  bytes(n: number): Uint8Array {
    // bincode reads fixed arrays element by element: running out is always the same io error.
    if (this.b.length - this.pos < n) throw new Undecodable(EOF);
    const out = this.b.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  /** solana-short-vec's visit_byte, in its order: alias, too long / byte-three continues, overflow. */
  shortU16(): number {
    let total = 0;
    for (let nth = 0; ; nth++) {
      const elem = this.u8();
      if (elem === 0 && nth !== 0) throw new Undecodable('invalid value: alias encoding, expected strict form encoding');
      const done = (elem & 0x80) === 0;
      if (nth === 2 && !done) {
        throw new Undecodable('invalid value: continue signal on byte-three, expected a terminal signal on or before byte-three');
      }
      const value = (elem & 0x7f) * 2 ** (7 * nth) + total;
      if (value > 0xffff) throw new Undecodable(`invalid value: integer \`${value}\`, expected a value in the range [0, 65535]`);
      total = value;
      if (done) return total;
    }
  }
}

interface Instr {
  readonly programIndex: number;
  readonly accounts: Uint8Array;
  readonly data: Uint8Array;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * solana-sdk's v1 reader and v1::Message::validate, written plainly (allocating, one field at a time) as the reference
 * for the relay's in-place parser. Deserialize errors: the reader's EOF, the config mask, trailing bytes; sanitize:
 * Agave's one SanitizeFailure message with the sdk's MessageError text as data.detail.
 */
function v1Verdict(bytes: Uint8Array): ModelVerdict {
  const r = new Reader(bytes);
  const invalid = (detail: string): ModelVerdict => ({ kind: 'refused', reason: 'tx_invalid', message: SANITIZE_FAILURE, detail });
  let header: number[];
  let keys: Uint8Array[] = [];
  let heap = -1;
  const instructions: Instr[] = [];
  let firstSignature = new Uint8Array(0);
  try {
    r.u8(); // 0x81
    header = [r.u8(), r.u8(), r.u8()];
    const m = r.bytes(4);
    const mask = (m[0] | (m[1] << 8) | (m[2] << 16) | (m[3] << 24)) >>> 0;
    r.bytes(32);
    const ixCount = r.u8();
    const keyCount = r.u8();
    if (mask > 0b11111 || (mask & 3) === 1 || (mask & 3) === 2) throw new Undecodable('invalid transaction config mask');
    for (let i = 0; i < keyCount; i++) keys.push(r.bytes(32));
    if ((mask & 3) === 3) r.bytes(8);
    if (mask & 4) r.bytes(4);
    if (mask & 8) r.bytes(4);
    if (mask & 16) heap = Buffer.from(r.bytes(4)).readUInt32LE(0);
    const heads: [number, number, number][] = [];
    for (let i = 0; i < ixCount; i++) {
      const h = r.bytes(4);
      heads.push([h[0], h[1], h[2] | (h[3] << 8)]);
    }
    for (const [programIndex, n, len] of heads) instructions.push({ programIndex, accounts: r.bytes(n), data: r.bytes(len) });
    for (let i = 0; i < header[0]; i++) {
      const sig = r.bytes(64);
      if (i === 0) firstSignature = Uint8Array.from(sig);
    }
    if (r.pos !== bytes.length) throw new Undecodable('Slice had bytes remaining after deserialization');
  } catch (err) {
    if (err instanceof Undecodable) return { kind: 'refused', reason: 'tx_undecodable', message: UNDECODABLE + err.message };
    throw err;
  }
  const [numRequired, numReadonlySigned, numReadonlyUnsigned] = header;
  if (numRequired > 12) return invalid('too many signatures (max 12)');
  if (instructions.length > 64) return invalid('too many instructions (max 64)');
  if (keys.length > 64) return invalid('too many addresses (max 64)');
  if (keys.length < numRequired + numReadonlyUnsigned) return invalid('not enough addresses for required signatures');
  if (numReadonlySigned >= numRequired) return invalid('must have at least one signer (fee payer)');
  if (new Set(keys.map((k) => Buffer.from(k).toString('hex'))).size !== keys.length) return invalid('duplicate addresses found in message');
  if (heap >= 0 && (heap % 1024 !== 0 || heap < 32 * 1024 || heap > 256 * 1024)) return invalid('heap size must be a multiple of 1024');
  if (keys.length === 0) return invalid('not enough account keys provided');
  for (const ix of instructions) {
    if (ix.programIndex > keys.length - 1 || ix.programIndex === 0) return invalid('instruction account index out of bounds');
    for (const a of ix.accounts) if (a > keys.length - 1) return invalid('instruction account index out of bounds');
  }
  keys = [];
  return { kind: 'ok', firstSignature, version: 1 };
}

/** Agave's verdict (with the relay's trailing-bytes rule) for wire bytes already within the size limit. */
export function agaveVerdict(bytes: Uint8Array): ModelVerdict {
  if (bytes.length > 0 && bytes[0] === 0x81) return v1Verdict(bytes);
  const r = new Reader(bytes);
  let sigCount: number;
  let firstSignature = new Uint8Array(0);
  let version = -1;
  let header: [number, number, number];
  const keys: Uint8Array[] = [];
  const instructions: Instr[] = [];
  const lookups: { writable: number; readonly: number }[] = [];
  try {
    sigCount = r.shortU16();
    for (let i = 0; i < sigCount; i++) {
      const s = r.bytes(64);
      if (i === 0) firstSignature = Uint8Array.from(s);
    }
    const prefix = r.u8();
    if ((prefix & 0x80) !== 0) {
      version = prefix & 0x7f;
      if (version === 127) throw new Undecodable('off-chain messages are not accepted');
      if (version !== 0) throw new Undecodable(`invalid value: integer \`${version}\`, expected a valid transaction message version`);
      header = [r.u8(), r.u8(), r.u8()];
    } else {
      header = [prefix, r.u8(), r.u8()];
    }
    const keyCount = r.shortU16();
    for (let i = 0; i < keyCount; i++) keys.push(r.bytes(32));
    r.bytes(32); // recent blockhash
    const ixCount = r.shortU16();
    for (let i = 0; i < ixCount; i++) {
      const programIndex = r.u8();
      const accounts = r.bytes(r.shortU16());
      const data = r.bytes(r.shortU16());
      instructions.push({ programIndex, accounts, data });
    }
    if (version === 0) {
      const n = r.shortU16();
      for (let i = 0; i < n; i++) {
        r.bytes(32);
        const writable = r.bytes(r.shortU16()).length;
        const readonly = r.bytes(r.shortU16()).length;
        lookups.push({ writable, readonly });
      }
    }
    if (r.pos !== bytes.length) throw new Undecodable('Slice had bytes remaining after deserialization');
  } catch (err) {
    if (err instanceof Undecodable) return { kind: 'refused', reason: 'tx_undecodable', message: UNDECODABLE + err.message };
    throw err;
  }

  // VersionedTransaction::sanitize: signature counts, then the message.
  const [numRequired, numReadonlySigned, numReadonlyUnsigned] = header;
  const staticKeys = keys.length;
  const invalid = (message: string): ModelVerdict => ({ kind: 'refused', reason: 'tx_invalid', message });
  if (numRequired !== sigCount) return invalid(SANITIZE_FAILURE);
  if (sigCount > staticKeys) return invalid(SANITIZE_FAILURE);
  if (numRequired + numReadonlyUnsigned > staticKeys) return invalid(SANITIZE_FAILURE);
  if (numReadonlySigned >= numRequired) return invalid(SANITIZE_FAILURE);
  if (version === 0) {
    let dynamic = 0;
    for (const l of lookups) {
      if (l.writable + l.readonly === 0) return invalid(SANITIZE_FAILURE);
      dynamic += l.writable + l.readonly;
    }
    if (staticKeys === 0) return invalid(SANITIZE_FAILURE);
    const total = staticKeys + dynamic;
    if (total > 256) return invalid(SANITIZE_FAILURE);
    for (const ix of instructions) {
      if (ix.programIndex > staticKeys - 1) return invalid(SANITIZE_FAILURE);
      if (ix.programIndex === 0) return invalid(SANITIZE_FAILURE);
      for (const a of ix.accounts) if (a > total - 1) return invalid(SANITIZE_FAILURE);
    }
  } else {
    for (const ix of instructions) {
      if (ix.programIndex >= staticKeys) return invalid(SANITIZE_FAILURE);
      if (ix.programIndex === 0) return invalid(SANITIZE_FAILURE);
      for (const a of ix.accounts) if (a >= staticKeys) return invalid(SANITIZE_FAILURE);
    }
  }

  // Compute-budget instruction details: borsh ComputeBudgetInstruction, the first failure ends the scan.
  const seen = new Set<number>();
  for (let i = 0; i < instructions.length; i++) {
    const ix = instructions[i];
    if (!equalBytes(keys[ix.programIndex], COMPUTE_BUDGET_PROGRAM)) continue;
    const idx = i & 0xff;
    const tag = ix.data.length > 0 ? ix.data[0] : -1;
    const need = tag === 3 ? 9 : 5;
    if (tag < 1 || tag > 4 || ix.data.length < need) return invalid(`invalid transaction: Error processing Instruction ${idx}: invalid instruction data`);
    if (seen.has(tag)) return invalid(`invalid transaction: Transaction contains a duplicate instruction (${idx}) that is not allowed`);
    seen.add(tag);
  }

  // SanitizedTransaction: an account key listed twice (the static keys are what the relay can see).
  const distinct = new Set(keys.map((k) => Buffer.from(k).toString('hex')));
  if (distinct.size !== keys.length) return invalid(ACCOUNT_LOADED_TWICE);

  return { kind: 'ok', firstSignature, version };
}

// ---- encoded text: Agave's decode_and_deserialize order (encoded size, characters, decoded size, then the bytes) ----

export type TextVerdict =
  | { readonly kind: 'ok'; readonly firstSignature: Uint8Array; readonly bytes: Buffer }
  | { readonly kind: 'refused'; readonly reason: string; readonly message: string | null };

const B58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const B64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Canonical STANDARD base64 as the base64 crate 0.22 accepts it: alphabet, '=' only as 1-2 final pads, zero trailing bits. */
export function isCanonicalBase64(s: string): boolean {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s)) return false;
  if (s.endsWith('==')) return (B64_ALPHABET.indexOf(s[s.length - 3]) & 0x0f) === 0;
  if (s.endsWith('=')) return (B64_ALPHABET.indexOf(s[s.length - 2]) & 0x03) === 0;
  return true;
}

/**
 * Agave's verdict for transaction text. `message` is null where only the reason is modelled (the exact base64/base58
 * error detail is checked by tx-encoding.test.ts).
 */
export function agaveTextVerdict(text: string, encoding: 'base58' | 'base64', maxRaw = 4096): TextVerdict {
  const maxEncoded = encoding === 'base64' ? 4 * Math.ceil(maxRaw / 3) : Math.ceil((maxRaw * Math.log(256)) / Math.log(58));
  const utf8 = Buffer.byteLength(text, 'utf8');
  if (utf8 > maxEncoded) {
    return { kind: 'refused', reason: 'tx_too_large_encoded', message: `${encoding} encoded ${TYPE} too large: ${utf8} bytes (max: encoded/raw ${maxEncoded}/${maxRaw})` };
  }
  let bytes: Buffer;
  if (encoding === 'base64') {
    if (!isCanonicalBase64(text)) return { kind: 'refused', reason: 'tx_bad_encoding', message: null };
    bytes = Buffer.from(text, 'base64');
  } else {
    if ([...text].some((c) => !B58_ALPHABET.includes(c))) return { kind: 'refused', reason: 'tx_bad_encoding', message: null };
    bytes = Buffer.from(bs58.decode(text));
  }
  // The decoded cap follows the format (as Agave's wire_size_limit): 1232 for legacy/v0, the raw maximum for v1.
  const cap = bytes.length > maxRaw || bytes[0] === 0x81 ? maxRaw : 1232;
  if (bytes.length > cap) {
    return { kind: 'refused', reason: 'tx_too_large_decoded', message: `decoded ${TYPE} too large: ${bytes.length} bytes (max: ${cap} bytes)` };
  }
  const v = agaveVerdict(bytes);
  return v.kind === 'ok' ? { kind: 'ok', firstSignature: v.firstSignature, bytes } : v;
}

// ---- a wire-format model to build and mutate transactions field by field ----

export interface WireInstruction {
  programIndex: number;
  accounts: number[];
  data: Uint8Array;
}
export interface WireLookup {
  key: Uint8Array;
  writable: number[];
  readonly: number[];
}
export interface WireTx {
  signatures: Uint8Array[];
  /** The message's first byte when versioned (0x80 = v0), null for legacy. */
  versionPrefix: number | null;
  header: [number, number, number];
  keys: Uint8Array[];
  blockhash: Uint8Array;
  instructions: WireInstruction[];
  /** Written only when versionPrefix is set. */
  lookups: WireLookup[];
}

/** Strict (canonical) short_vec encoding. */
export function shortU16Bytes(n: number): number[] {
  const out: number[] = [];
  let v = n;
  for (;;) {
    const b = v & 0x7f;
    v >>= 7;
    if (v === 0) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

export function serializeWire(tx: WireTx): Buffer {
  const parts: number[] = [];
  const push = (b: ArrayLike<number>): void => {
    for (let i = 0; i < b.length; i++) parts.push(b[i]);
  };
  push(shortU16Bytes(tx.signatures.length));
  for (const s of tx.signatures) push(s);
  if (tx.versionPrefix !== null) push([tx.versionPrefix]);
  push(tx.header);
  push(shortU16Bytes(tx.keys.length));
  for (const k of tx.keys) push(k);
  push(tx.blockhash);
  push(shortU16Bytes(tx.instructions.length));
  for (const ix of tx.instructions) {
    push([ix.programIndex & 0xff]);
    push(shortU16Bytes(ix.accounts.length));
    push(ix.accounts.map((a) => a & 0xff));
    push(shortU16Bytes(ix.data.length));
    push(ix.data);
  }
  if (tx.versionPrefix !== null) {
    push(shortU16Bytes(tx.lookups.length));
    for (const l of tx.lookups) {
      push(l.key);
      push(shortU16Bytes(l.writable.length));
      push(l.writable.map((a) => a & 0xff));
      push(shortU16Bytes(l.readonly.length));
      push(l.readonly.map((a) => a & 0xff));
    }
  }
  return Buffer.from(parts);
}

/** A real (web3.js-built, signed) transaction as a WireTx. */
export function wireFromBytes(bytes: Uint8Array): WireTx {
  const tx = VersionedTransaction.deserialize(bytes);
  const m = tx.message;
  return {
    signatures: tx.signatures.map((s) => Uint8Array.from(s)),
    versionPrefix: m.version === 'legacy' ? null : 0x80 | m.version,
    header: [m.header.numRequiredSignatures, m.header.numReadonlySignedAccounts, m.header.numReadonlyUnsignedAccounts],
    keys: m.staticAccountKeys.map((k: PublicKey) => k.toBytes()),
    blockhash: bs58.decode(m.recentBlockhash),
    instructions: m.compiledInstructions.map((ix) => ({ programIndex: ix.programIdIndex, accounts: [...ix.accountKeyIndexes], data: Uint8Array.from(ix.data) })),
    lookups: m.addressTableLookups.map((l) => ({ key: l.accountKey.toBytes(), writable: [...l.writableIndexes], readonly: [...l.readonlyIndexes] })),
  };
}

export function cloneWire(tx: WireTx): WireTx {
  return {
    signatures: tx.signatures.map((s) => Uint8Array.from(s)),
    versionPrefix: tx.versionPrefix,
    header: [...tx.header],
    keys: tx.keys.map((k) => Uint8Array.from(k)),
    blockhash: Uint8Array.from(tx.blockhash),
    instructions: tx.instructions.map((ix) => ({ programIndex: ix.programIndex, accounts: [...ix.accounts], data: Uint8Array.from(ix.data) })),
    lookups: tx.lookups.map((l) => ({ key: Uint8Array.from(l.key), writable: [...l.writable], readonly: [...l.readonly] })),
  };
}
