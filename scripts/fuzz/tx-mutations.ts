// Transaction mutations with the intake answer each one must get (harness process; generation, hot). A mutation
// starts from a pool entry and knows what it broke: truncation is always bincode's "failed to fill whole buffer",
// appended bytes are trailing bytes, a duplicated static key is "Account loaded twice", broken header counts and
// indexes fail sanitize, a message version other than 0 fails deserialization, bit flips in signatures, keys,
// blockhash or transfer data change nothing the intake checks (but every signature). `random` overwrites bytes
// anywhere: the oracle then accepts any intake error or a signature.
import bs58 from 'bs58';
import type { Rng } from './rng.js';
import { MAX_TX_BYTES, type PoolTx, type TxLayout } from './tx-pool.js';

export type IntakeReason = 'tx_undecodable' | 'tx_invalid' | 'tx_too_large_decoded' | 'tx_too_large_encoded' | 'tx_bad_encoding' | 'tx_unsupported_encoding';

export type ByteOutcome =
  | { readonly kind: 'accept'; readonly signature: string }
  | { readonly kind: 'error'; readonly reason: IntakeReason; readonly message: string }
  /** Anything the intake may answer: an intake error, or acceptance with some signature. */
  | { readonly kind: 'loose' };

export interface TxCase {
  readonly label: string;
  readonly bytes: Buffer;
  readonly outcome: ByteOutcome;
  /** The exact bytes of a correctly signed pool entry (signatures verify, the fake upstream simulates it). */
  readonly intact: boolean;
  readonly simulation: 'ok' | 'fail';
}

export const TX_TYPE = 'solana_transaction::versioned::VersionedTransaction';
const UNDECODABLE = `failed to deserialize ${TX_TYPE}: `;
export const EOF_MESSAGE = `${UNDECODABLE}io error: failed to fill whole buffer`;
const TRAILING = `${UNDECODABLE}Slice had bytes remaining after deserialization`;
export const SANITIZE_FAILURE = 'invalid transaction: Transaction failed to sanitize accounts offsets correctly';
export const LOADED_TWICE = 'invalid transaction: Account loaded twice';

function undecodable(message: string): ByteOutcome {
  return { kind: 'error', reason: 'tx_undecodable', message };
}

function signatureOf(bytes: Buffer, layout: TxLayout): string {
  return bs58.encode(bytes.subarray(layout.signaturesOffset, layout.signaturesOffset + 64));
}

/** Byte ranges a bit flip may touch without changing what the intake decides. */
function inertRanges(l: TxLayout): [number, number][] {
  const r: [number, number][] = [
    [l.signaturesOffset, l.signaturesOffset + 64 * l.signatureCount],
    [l.keysOffset, l.keysOffset + 32 * l.keyCount],
    [l.blockhashOffset, l.blockhashOffset + 32],
  ];
  for (const ix of l.instructions) if (ix.programIndex !== l.computeBudgetIndex && ix.dataLength > 0) r.push([ix.dataOffset, ix.dataOffset + ix.dataLength]);
  return r;
}

function flip(rng: Rng, base: PoolTx): TxCase {
  const b = Buffer.from(base.bytes);
  const ranges = inertRanges(base.layout);
  const n = rng.range(1, 3);
  for (let i = 0; i < n; i++) {
    const [lo, hi] = rng.pick(ranges);
    b[lo + rng.int(hi - lo)] ^= 1 << rng.int(8);
  }
  return { label: `flip(${n} bits)`, bytes: b, outcome: { kind: 'accept', signature: signatureOf(b, base.layout) }, intact: b.equals(base.bytes), simulation: base.simulation };
}

function truncate(rng: Rng, base: PoolTx): TxCase {
  const len = base.bytes.length;
  const at = rng.weighted<number>([[1, 0], [1, 1], [1, 64], [1, 65], [1, len - 1], [4, rng.int(len)]]);
  return { label: `truncate(${at})`, bytes: base.bytes.subarray(0, at), outcome: undecodable(EOF_MESSAGE), intact: false, simulation: 'ok' };
}

function extend(rng: Rng, base: PoolTx): TxCase {
  const len = base.bytes.length;
  const add = rng.chance(0.7) ? rng.range(1, 8) : Math.max(1, MAX_TX_BYTES - len + rng.range(1, 40));
  const b = Buffer.concat([base.bytes, rng.bytes(add)]);
  // Sizes beyond the limit are decided when the bytes are encoded (see encodeTx).
  return { label: `extend(+${add})`, bytes: b, outcome: undecodable(TRAILING), intact: false, simulation: 'ok' };
}

function duplicateKey(rng: Rng, base: PoolTx): TxCase {
  const l = base.layout;
  const j = rng.range(1, l.keyCount - 1);
  const b = Buffer.from(base.bytes);
  b.copy(b, l.keysOffset + 32 * j, l.keysOffset, l.keysOffset + 32);
  return { label: `duplicate key 0 at ${j}`, bytes: b, outcome: { kind: 'error', reason: 'tx_invalid', message: LOADED_TWICE }, intact: false, simulation: 'ok' };
}

function breakSanitize(rng: Rng, base: PoolTx): TxCase {
  const l = base.layout;
  let b = Buffer.from(base.bytes);
  const h = l.headerOffset;
  const ix = rng.pick(l.instructions);
  const withAccounts = l.instructions.filter((x) => x.accountCount > 0);
  const what = rng.pick(['no signatures', 'numRequired+1', 'readonlySigned=numRequired', 'readonlyUnsigned too many', 'program index out of range', 'program index 0', 'account index out of range', 'extra signature']);
  switch (what) {
    case 'no signatures':
      b = Buffer.concat([Buffer.from([0]), b.subarray(l.messageOffset)]);
      break;
    case 'numRequired+1':
      b[h] += 1;
      break;
    case 'readonlySigned=numRequired':
      b[h + 1] = b[h];
      break;
    case 'readonlyUnsigned too many':
      b[h + 2] = l.keyCount - b[h] + 1 + rng.int(3);
      break;
    case 'program index out of range':
      b[ix.programIndexOffset] = l.keyCount + rng.int(4);
      break;
    case 'program index 0':
      b[ix.programIndexOffset] = 0;
      break;
    case 'account index out of range': {
      const t = withAccounts.length > 0 ? rng.pick(withAccounts) : null;
      if (t === null) b[ix.programIndexOffset] = 0;
      else b[t.accountsOffset + rng.int(t.accountCount)] = l.keyCount + l.lookupAccounts + rng.int(4);
      break;
    }
    case 'extra signature':
      b = Buffer.concat([Buffer.from([l.signatureCount + 1]), b.subarray(1, l.messageOffset), rng.bytes(64), b.subarray(l.messageOffset)]);
      break;
  }
  return { label: `sanitize: ${what}`, bytes: b, outcome: { kind: 'error', reason: 'tx_invalid', message: SANITIZE_FAILURE }, intact: false, simulation: 'ok' };
}

function badVersion(rng: Rng, base: PoolTx): TxCase {
  const v = rng.chance(0.3) ? 127 : rng.range(1, 126);
  const b = Buffer.from(base.bytes);
  b[base.layout.messageOffset] = 0x80 | v;
  const message = v === 127 ? `${UNDECODABLE}off-chain messages are not accepted` : `${UNDECODABLE}invalid value: integer \`${v}\`, expected a valid transaction message version`;
  return { label: `message version ${v}`, bytes: b, outcome: undecodable(message), intact: false, simulation: 'ok' };
}

function nonCanonicalCount(rng: Rng, base: PoolTx): TxCase {
  const n = base.layout.signatureCount;
  const three = rng.chance(0.5);
  const prefix = three ? Buffer.from([0x80 | n, 0x80, 0x80]) : Buffer.from([0x80 | n, 0x00]);
  const message = three
    ? `${UNDECODABLE}invalid value: continue signal on byte-three, expected a terminal signal on or before byte-three`
    : `${UNDECODABLE}invalid value: alias encoding, expected strict form encoding`;
  return { label: three ? 'signature count: byte-three continuation' : 'signature count: alias encoding', bytes: Buffer.concat([prefix, base.bytes.subarray(1)]), outcome: undecodable(message), intact: false, simulation: 'ok' };
}

function random(rng: Rng, base: PoolTx): TxCase {
  let b = Buffer.from(base.bytes);
  const edits = rng.range(1, 6);
  for (let i = 0; i < edits; i++) {
    const at = rng.int(b.length + 1);
    const op = rng.int(3);
    if (op === 0 && at < b.length) b[at] = rng.u32() & 0xff;
    else if (op === 1) b = Buffer.concat([b.subarray(0, at), rng.bytes(rng.range(1, 4)), b.subarray(at)]);
    else b = Buffer.concat([b.subarray(0, at), b.subarray(Math.min(b.length, at + rng.range(1, 4)))]);
  }
  return { label: `random(${edits} edits)`, bytes: b, outcome: { kind: 'loose' }, intact: b.equals(base.bytes), simulation: base.simulation };
}

function intact(base: PoolTx): TxCase {
  const outcome: ByteOutcome = base.verdict.accept
    ? { kind: 'accept', signature: base.signature }
    : { kind: 'error', reason: 'tx_invalid', message: base.verdict.message };
  return { label: `intact ${base.kind}`, bytes: base.bytes, outcome, intact: true, simulation: base.simulation };
}

/** One transaction for a case: a pool entry, mostly intact, otherwise mutated with a known verdict. */
export function txCase(rng: Rng, pool: readonly PoolTx[]): TxCase {
  const base = rng.pick(pool);
  const m = rng.weighted<string>([[50, 'intact'], [10, 'flip'], [7, 'truncate'], [7, 'extend'], [6, 'duplicate'], [8, 'sanitize'], [3, 'version'], [2, 'count'], [7, 'random']]);
  if (m === 'truncate') return truncate(rng, base);
  if (m === 'extend') return extend(rng, base);
  if (m === 'random') return random(rng, base);
  // The others assume an entry the intake accepts (a broken compute-budget entry keeps its own verdict).
  if (m === 'intact' || !base.verdict.accept) return intact(base);
  if (m === 'flip') return flip(rng, base);
  if (m === 'duplicate') return duplicateKey(rng, base);
  if (m === 'sanitize') return breakSanitize(rng, base);
  if (m === 'version' && base.layout.version === 0) return badVersion(rng, base);
  if (m === 'count') return nonCanonicalCount(rng, base);
  return intact(base);
}
