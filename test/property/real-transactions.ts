// Real signed transactions for the property tests, built with @solana/web3.js from fixed seeds (Keypair.fromSeed), so a
// fast-check seed reproduces the same bytes: legacy or v0, 1-3 signers, transfers, compute-budget instructions,
// another program's instruction with readonly accounts, and v0 address lookup tables.
import {
  AddressLookupTableAccount,
  ComputeBudgetProgram,
  Keypair,
  PublicKey,
  SystemProgram,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import bs58 from 'bs58';
import fc from 'fast-check';

export function keypair(seed: number, salt: number): Keypair {
  const s = new Uint8Array(32);
  new DataView(s.buffer).setUint32(0, seed >>> 0);
  new DataView(s.buffer).setUint32(4, salt >>> 0);
  s[31] = 0x42;
  return Keypair.fromSeed(s);
}
function pubkey(seed: number, salt: number): PublicKey {
  return keypair(seed, salt + 1_000_000).publicKey;
}

export interface Shape {
  readonly v0: boolean;
  readonly signers: number; // 1..3
  readonly transfers: number; // 0..3
  readonly computeBudget: readonly ('limit' | 'price' | 'heap' | 'loaded')[];
  readonly customIx: boolean; // an instruction of another program with a readonly signer and readonly accounts
  readonly tables: number; // v0: lookup tables (0..2), each used by one transfer destination
}

/** A signed transaction of the given shape, deterministic in `seed`. */
export function buildReal(shape: Shape, seed: number): Buffer {
  const signers = Array.from({ length: shape.signers }, (_, i) => keypair(seed, i));
  const payer = signers[0];
  const ixs: TransactionInstruction[] = [];
  for (const c of shape.computeBudget) {
    if (c === 'limit') ixs.push(ComputeBudgetProgram.setComputeUnitLimit({ units: 200_000 + (seed % 1000) }));
    if (c === 'price') ixs.push(ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1000 + seed }));
    if (c === 'heap') ixs.push(ComputeBudgetProgram.requestHeapFrame({ bytes: 64 * 1024 }));
    if (c === 'loaded') ixs.push(new TransactionInstruction({ programId: ComputeBudgetProgram.programId, keys: [], data: Buffer.from([4, 0, 0, 1, 0]) }));
  }
  const tables: AddressLookupTableAccount[] = [];
  for (let t = 0; t < (shape.v0 ? shape.tables : 0); t++) {
    tables.push(
      new AddressLookupTableAccount({
        key: pubkey(seed, 100 + t),
        state: {
          deactivationSlot: BigInt('18446744073709551615'),
          lastExtendedSlot: 0,
          lastExtendedSlotStartIndex: 0,
          addresses: [pubkey(seed, 200 + t), pubkey(seed, 300 + t), pubkey(seed, 400 + t)],
        },
      }),
    );
  }
  for (let i = 0; i < shape.transfers; i++) {
    const to = i < tables.length ? tables[i].state.addresses[1] : pubkey(seed, 500 + i);
    ixs.push(SystemProgram.transfer({ fromPubkey: signers[i % signers.length].publicKey, toPubkey: to, lamports: 1 + i }));
  }
  for (const s of signers.slice(1)) {
    // Every signer must appear in some instruction: a memo-like instruction naming them (readonly signers).
    ixs.push(new TransactionInstruction({ programId: pubkey(seed, 600), keys: [{ pubkey: s.publicKey, isSigner: true, isWritable: false }], data: Buffer.from([1, 2, 3]) }));
  }
  if (shape.customIx) {
    ixs.push(
      new TransactionInstruction({
        programId: pubkey(seed, 700),
        keys: [
          { pubkey: pubkey(seed, 701), isSigner: false, isWritable: false },
          { pubkey: pubkey(seed, 702), isSigner: false, isWritable: true },
          ...(tables.length > 0 ? [{ pubkey: tables[0].state.addresses[2], isSigner: false, isWritable: false }] : []),
        ],
        data: Buffer.from(Array.from({ length: seed % 40 }, (_, i) => (i * 7 + seed) & 0xff)),
      }),
    );
  }
  const blockhash = bs58.encode(Buffer.alloc(32, (seed % 250) + 1));
  const tm = new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash: blockhash, instructions: ixs });
  const message = shape.v0 ? tm.compileToV0Message(tables) : tm.compileToLegacyMessage();
  const tx = new VersionedTransaction(message);
  tx.sign(signers);
  return Buffer.from(tx.serialize());
}

export const shapeArb: fc.Arbitrary<Shape> = fc.record({
  v0: fc.boolean(),
  signers: fc.integer({ min: 1, max: 3 }),
  transfers: fc.integer({ min: 0, max: 3 }),
  computeBudget: fc.subarray(['limit', 'price', 'heap', 'loaded'] as const),
  customIx: fc.boolean(),
  tables: fc.integer({ min: 0, max: 2 }),
});
