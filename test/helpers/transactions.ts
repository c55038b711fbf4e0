// Real signed transactions for tests (legacy and v0), made with @solana/web3.js.
import {
  Keypair,
  MessageV0,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import bs58 from 'bs58';

const BLOCKHASH = bs58.encode(Buffer.alloc(32, 7));

export interface SignedTx {
  readonly bytes: Buffer;
  readonly signature: string;
  readonly base64: string;
  readonly base58: string;
}

function wrap(bytes: Uint8Array, sig: Uint8Array): SignedTx {
  const b = Buffer.from(bytes);
  return { bytes: b, signature: bs58.encode(sig), base64: b.toString('base64'), base58: bs58.encode(b) };
}

export function legacyTransfer(lamports = 1000, payer = Keypair.generate(), blockhash = BLOCKHASH): SignedTx {
  const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight: 1000 }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports }),
  );
  tx.sign(payer);
  return wrap(tx.serialize(), tx.signature!);
}

export function v0Transfer(lamports = 1000, payer = Keypair.generate(), blockhash = BLOCKHASH): SignedTx {
  const msg: MessageV0 = new TransactionMessage({
    payerKey: payer.publicKey,
    recentBlockhash: blockhash,
    instructions: [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: new PublicKey(Keypair.generate().publicKey), lamports })],
  }).compileToV0Message();
  const tx = new VersionedTransaction(msg);
  tx.sign([payer]);
  return wrap(tx.serialize(), tx.signatures[0]);
}
