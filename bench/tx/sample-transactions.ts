// Signed sample transactions for the intake micro benches (bench process; cold: built once per run): a legacy
// transfer with compute-budget instructions and a v0 with a lookup table, made with @solana/web3.js.
import {
  AddressLookupTableAccount,
  ComputeBudgetProgram,
  Keypair,
  SystemProgram,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import bs58 from 'bs58';

const blockhash = bs58.encode(Buffer.alloc(32, 9));

/** A legacy transfer with SetComputeUnitPrice (and SetComputeUnitLimit when asked). */
export function legacyTx(withComputeUnitLimit = false): Buffer {
  const payer = Keypair.generate();
  const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight: 1 });
  if (withComputeUnitLimit) tx.add(ComputeBudgetProgram.setComputeUnitLimit({ units: 1_000 }));
  tx.add(
    ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1000 }),
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 }),
  );
  tx.sign(payer);
  return Buffer.from(tx.serialize());
}

/** A v0 transaction of 8 transfers to addresses loaded through one lookup table. */
export function v0Tx(): Buffer {
  const payer = Keypair.generate();
  const addresses = Array.from({ length: 8 }, () => Keypair.generate().publicKey);
  const table = new AddressLookupTableAccount({
    key: Keypair.generate().publicKey,
    state: { deactivationSlot: BigInt('18446744073709551615'), lastExtendedSlot: 0, lastExtendedSlotStartIndex: 0, addresses },
  });
  const instructions = addresses.map((to) => SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 1 }));
  const msg = new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash: blockhash, instructions }).compileToV0Message([table]);
  const tx = new VersionedTransaction(msg);
  tx.sign([payer]);
  return Buffer.from(tx.serialize());
}
