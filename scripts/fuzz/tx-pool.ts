// The fuzzer's signed transactions (harness process; cold: built once per run). A deterministic pool, from the run
// seed, of real signed transactions made with @solana/web3.js — legacy and v0 transfers, compute-budget
// instructions, an address-table lookup, several signers, sizes up to exactly 1232 bytes — plus entries the intake
// must refuse with a known compute-budget error. Each entry carries its wire layout (walked here, for the mutations)
// and how the fake upstream's simulation ends for it.
import {
  AddressLookupTableAccount,
  ComputeBudgetProgram,
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import bs58 from 'bs58';
import { Rng } from './rng.js';

export const MAX_TX_BYTES = 1232;

export interface InstructionLayout {
  readonly programIndexOffset: number;
  readonly programIndex: number;
  readonly accountsOffset: number;
  readonly accountCount: number;
  readonly dataOffset: number;
  readonly dataLength: number;
}

export interface TxLayout {
  readonly version: -1 | 0;
  readonly signatureCount: number;
  /** Offset of the first signature (after the one-byte signature count). */
  readonly signaturesOffset: number;
  readonly messageOffset: number;
  /** Offset of the three header bytes (numRequired, numReadonlySigned, numReadonlyUnsigned). */
  readonly headerOffset: number;
  readonly keysOffset: number;
  readonly keyCount: number;
  readonly blockhashOffset: number;
  readonly instructions: readonly InstructionLayout[];
  /** Accounts loaded through lookup tables (v0). */
  readonly lookupAccounts: number;
  /** Static key index of the compute-budget program, -1 if absent. */
  readonly computeBudgetIndex: number;
}

/** What the relay's intake must answer for an unmodified entry. */
export type PoolVerdict = { readonly accept: true } | { readonly accept: false; readonly message: string };

export interface PoolTx {
  readonly kind: string;
  readonly bytes: Buffer;
  readonly signature: string;
  readonly layout: TxLayout;
  readonly verdict: PoolVerdict;
  /** How the fake upstream's preflight simulation ends. */
  readonly simulation: 'ok' | 'fail';
}

const CB_PROGRAM = ComputeBudgetProgram.programId;

function compactU16(b: Buffer, pos: number): [number, number] {
  let value = 0;
  for (let n = 0; n < 3; n++) {
    const x = b[pos + n];
    value |= (x & 0x7f) << (7 * n);
    if ((x & 0x80) === 0) return [value, pos + n + 1];
  }
  throw new Error('bad compact-u16 in a pool transaction');
}

/** Layout of a well-formed transaction (only ever called on what web3.js serialized). */
export function layoutOf(b: Buffer): TxLayout {
  const [signatureCount, sigs] = compactU16(b, 0);
  const messageOffset = sigs + 64 * signatureCount;
  const version = (b[messageOffset] & 0x80) !== 0 ? 0 : -1;
  const headerOffset = messageOffset + (version === 0 ? 1 : 0);
  const [keyCount, keysOffset] = compactU16(b, headerOffset + 3);
  const blockhashOffset = keysOffset + 32 * keyCount;
  let [ixCount, pos] = compactU16(b, blockhashOffset + 32);
  let computeBudgetIndex = -1;
  for (let k = 0; k < keyCount; k++) if (CB_PROGRAM.toBuffer().equals(b.subarray(keysOffset + 32 * k, keysOffset + 32 * k + 32))) computeBudgetIndex = k;
  const instructions: InstructionLayout[] = [];
  for (let i = 0; i < ixCount; i++) {
    const programIndexOffset = pos;
    const [accountCount, accountsOffset] = compactU16(b, pos + 1);
    const [dataLength, dataOffset] = compactU16(b, accountsOffset + accountCount);
    instructions.push({ programIndexOffset, programIndex: b[pos], accountsOffset, accountCount, dataOffset, dataLength });
    pos = dataOffset + dataLength;
  }
  let lookupAccounts = 0;
  if (version === 0) {
    let lookups: number;
    [lookups, pos] = compactU16(b, pos);
    for (let l = 0; l < lookups; l++) {
      let w: number;
      let r: number;
      [w, pos] = compactU16(b, pos + 32);
      pos += w;
      [r, pos] = compactU16(b, pos);
      pos += r;
      lookupAccounts += w + r;
    }
  }
  if (pos !== b.length) throw new Error('pool transaction layout does not cover its bytes');
  return { version, signatureCount, signaturesOffset: sigs, messageOffset, headerOffset, keysOffset, keyCount, blockhashOffset, instructions, lookupAccounts, computeBudgetIndex };
}

interface Spec {
  readonly kind: string;
  readonly v0: boolean;
  readonly ixs: (payer: PublicKey, to: PublicKey) => TransactionInstruction[];
  readonly signers?: number;
  readonly lookup?: boolean;
  readonly verdict?: PoolVerdict;
  /** Pad with one instruction of this many data bytes. */
  readonly targetSize?: number;
}

function keypair(rng: Rng): Keypair {
  return Keypair.fromSeed(rng.bytes(32));
}

function build(rng: Rng, spec: Spec, blockhash: string, padData = 0): Buffer {
  const payer = keypair(rng);
  const to = keypair(rng).publicKey;
  const extra = Array.from({ length: (spec.signers ?? 1) - 1 }, () => keypair(rng));
  const ixs = spec.ixs(payer.publicKey, to);
  for (const s of extra) ixs.push(SystemProgram.transfer({ fromPubkey: s.publicKey, toPubkey: to, lamports: 1 }));
  if (spec.targetSize !== undefined) {
    ixs.push(new TransactionInstruction({ programId: keypair(rng).publicKey, keys: [], data: rng.bytes(padData) }));
  }
  if (!spec.v0) {
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight: 1 }).add(...ixs);
    tx.sign(payer, ...extra);
    return tx.serialize({ verifySignatures: false, requireAllSignatures: true });
  }
  const tables = spec.lookup
    ? [new AddressLookupTableAccount({ key: keypair(rng).publicKey, state: { deactivationSlot: BigInt('18446744073709551615'), lastExtendedSlot: 0, lastExtendedSlotStartIndex: 0, addresses: [to, keypair(rng).publicKey] } })]
    : [];
  const msg = new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash: blockhash, instructions: ixs }).compileToV0Message(tables);
  const tx = new VersionedTransaction(msg);
  tx.sign([payer, ...extra]);
  return Buffer.from(tx.serialize());
}

const transfer = (lamports: number) => (payer: PublicKey, to: PublicKey) => [SystemProgram.transfer({ fromPubkey: payer, toPubkey: to, lamports })];
const withBudget = (payer: PublicKey, to: PublicKey) => [
  ComputeBudgetProgram.setComputeUnitLimit({ units: 200_000 }),
  ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 5_000 }),
  SystemProgram.transfer({ fromPubkey: payer, toPubkey: to, lamports: 7 }),
];
const INVALID_DATA = 'invalid transaction: Error processing Instruction 0: invalid instruction data';

function specs(rng: Rng): Spec[] {
  const out: Spec[] = [];
  for (let i = 0; i < 14; i++) out.push({ kind: 'legacy-transfer', v0: false, ixs: transfer(1 + rng.int(1_000_000)) });
  for (let i = 0; i < 10; i++) out.push({ kind: 'v0-transfer', v0: true, ixs: transfer(1 + rng.int(1_000_000)) });
  for (let i = 0; i < 3; i++) out.push({ kind: 'legacy-compute-budget', v0: false, ixs: withBudget });
  for (let i = 0; i < 2; i++) out.push({ kind: 'v0-compute-budget', v0: true, ixs: withBudget });
  for (let i = 0; i < 3; i++) out.push({ kind: 'v0-lookup-table', v0: true, ixs: transfer(5), lookup: true });
  for (let i = 0; i < 2; i++) out.push({ kind: 'legacy-two-signers', v0: false, ixs: transfer(9), signers: 2 });
  out.push({ kind: 'legacy-1232-bytes', v0: false, ixs: transfer(3), targetSize: MAX_TX_BYTES });
  out.push({ kind: 'v0-1232-bytes', v0: true, ixs: transfer(3), targetSize: MAX_TX_BYTES });
  out.push({ kind: 'legacy-large', v0: false, ixs: transfer(3), targetSize: 600 + rng.int(600) });
  out.push({ kind: 'v0-large', v0: true, ixs: transfer(3), targetSize: 600 + rng.int(600) });
  const dup = (payer: PublicKey, to: PublicKey) => [
    ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1 }),
    ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 2 }),
    SystemProgram.transfer({ fromPubkey: payer, toPubkey: to, lamports: 1 }),
  ];
  out.push({ kind: 'compute-budget-duplicate', v0: false, ixs: dup, verdict: { accept: false, message: 'invalid transaction: Transaction contains a duplicate instruction (1) that is not allowed' } });
  const badTag = (payer: PublicKey, to: PublicKey) => [
    new TransactionInstruction({ programId: CB_PROGRAM, keys: [], data: Buffer.from([9, 1, 2, 3, 4]) }),
    SystemProgram.transfer({ fromPubkey: payer, toPubkey: to, lamports: 1 }),
  ];
  out.push({ kind: 'compute-budget-unknown-tag', v0: true, ixs: badTag, verdict: { accept: false, message: INVALID_DATA } });
  const shortPrice = (payer: PublicKey, to: PublicKey) => [
    new TransactionInstruction({ programId: CB_PROGRAM, keys: [], data: Buffer.from([3, 1, 0]) }),
    SystemProgram.transfer({ fromPubkey: payer, toPubkey: to, lamports: 1 }),
  ];
  out.push({ kind: 'compute-budget-short-data', v0: false, ixs: shortPrice, verdict: { accept: false, message: INVALID_DATA } });
  return out;
}

/** Build the pool for a run seed's generator. Every 6th accepted entry fails its preflight simulation. */
export function buildPool(rng: Rng): PoolTx[] {
  const pool: PoolTx[] = [];
  for (const spec of specs(rng)) {
    const blockhash = bs58.encode(rng.bytes(32));
    const state = rng.u32();
    let bytes: Buffer;
    if (spec.targetSize === undefined) {
      bytes = build(rng, spec, blockhash);
    } else {
      // Same keys for every attempt (same generator state), growing the padding until the size is exact.
      const at = (pad: number): Buffer => build(new Rng(state), spec, blockhash, pad);
      const base = at(0).length;
      let pad = spec.targetSize - base;
      if (pad >= 128) pad -= 1; // the data length's compact-u16 takes a second byte
      bytes = at(pad);
      if (bytes.length !== spec.targetSize) throw new Error(`pool: ${spec.kind} is ${bytes.length} bytes, wanted ${spec.targetSize}`);
    }
    const verdict = spec.verdict ?? { accept: true };
    const simulation = verdict.accept && pool.length % 6 === 5 ? 'fail' : 'ok';
    const layout = layoutOf(bytes);
    pool.push({ kind: spec.kind, bytes, signature: bs58.encode(bytes.subarray(layout.signaturesOffset, layout.signaturesOffset + 64)), layout, verdict, simulation });
  }
  return pool;
}
