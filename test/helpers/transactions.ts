// Real signed transactions for tests (legacy and v0), made with @solana/web3.js and signed with Node's native Ed25519
// (node:crypto). web3.js's own path (Keypair.generate() twice, sign, and serialize()'s verification, all pure-JS curve
// arithmetic) cost ~11 ms per transfer on the 2-core box: tests that send a few thousand spent tens of seconds making
// them. Native signing produces the same standard Ed25519 signatures (the relay and the localnet verify them).
import { createPrivateKey, createPublicKey, randomBytes, sign, type KeyObject } from 'node:crypto';
import {
  type Commitment,
  type Connection,
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
/** PKCS#8 DER header of an Ed25519 private key; the 32-byte seed follows. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface SignedTx {
  readonly bytes: Buffer;
  readonly signature: string;
  readonly base64: string;
  readonly base58: string;
}

interface NativeSigner {
  readonly publicKey: PublicKey;
  readonly key: KeyObject;
}

const signers = new WeakMap<Keypair, NativeSigner>();

function signerFromSeed(seed: Uint8Array): NativeSigner {
  const key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(key).export({ format: 'der', type: 'spki' });
  return { key, publicKey: new PublicKey(spki.subarray(spki.length - 32)) };
}

/** The native signer of a web3.js Keypair (its secretKey is seed || public key), made once per keypair. */
function signerOf(payer: Keypair | undefined): NativeSigner {
  if (payer === undefined) return signerFromSeed(randomBytes(32));
  let s = signers.get(payer);
  if (s === undefined) {
    s = signerFromSeed(payer.secretKey.subarray(0, 32));
    signers.set(payer, s);
  }
  return s;
}

const randomRecipient = (): PublicKey => new PublicKey(randomBytes(32));

function wrap(bytes: Uint8Array, sig: Uint8Array): SignedTx {
  const b = Buffer.from(bytes);
  return { bytes: b, signature: bs58.encode(sig), base64: b.toString('base64'), base58: bs58.encode(b) };
}

export function legacyTransfer(lamports = 1000, payer?: Keypair, blockhash = BLOCKHASH): SignedTx {
  const signer = signerOf(payer);
  const tx = new Transaction({ feePayer: signer.publicKey, blockhash, lastValidBlockHeight: 1000 }).add(
    SystemProgram.transfer({ fromPubkey: signer.publicKey, toPubkey: randomRecipient(), lamports }),
  );
  const sig = sign(null, tx.serializeMessage(), signer.key);
  tx.addSignature(signer.publicKey, sig);
  return wrap(tx.serialize({ verifySignatures: false }), sig);
}

export function v0Transfer(lamports = 1000, payer?: Keypair, blockhash = BLOCKHASH): SignedTx {
  const signer = signerOf(payer);
  const msg: MessageV0 = new TransactionMessage({
    payerKey: signer.publicKey,
    recentBlockhash: blockhash,
    instructions: [SystemProgram.transfer({ fromPubkey: signer.publicKey, toPubkey: randomRecipient(), lamports })],
  }).compileToV0Message();
  const tx = new VersionedTransaction(msg);
  const sig = sign(null, msg.serialize(), signer.key);
  tx.addSignature(signer.publicKey, sig);
  return wrap(tx.serialize(), sig);
}

/**
 * A legacy transfer from `payer` on a live chain's latest blockhash (a localnet's, through `conn`): the transaction a
 * test lands. The recipient is fresh each time, so every call is a distinct transaction.
 */
export async function signedTransfer(conn: Connection, payer: Keypair, lamports = 1_000_000, commitment: Commitment = 'processed'): Promise<SignedTx> {
  const { blockhash } = await conn.getLatestBlockhash(commitment);
  return legacyTransfer(lamports, payer, blockhash);
}
