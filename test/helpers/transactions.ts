// Real signed transactions for tests (legacy and v0 system transfers, byte for byte what @solana/web3.js compiles:
// test/unit/helpers/transactions.test.ts) signed with Node's native Ed25519 (node:crypto). web3.js's own path
// (Keypair.generate() twice, sign, and serialize()'s verification, all pure-JS curve arithmetic) cost ~11 ms per
// transfer on the 2-core box: tests that send a few thousand spent tens of seconds making them. Native signing
// produces the same standard Ed25519 signatures (the relay and the localnet verify them).
// A transfer without a payer is paid by one of a small set of random keys, not a new one each time: Node 20's
// createPrivateKey (OpenSSL 3.0's DER decoder) took 1.3 ms a key (Node 24: 0.18), half of a transfer's cost; the
// recipient is fresh each time, so every call is still a distinct message and signature.
import { createPrivateKey, createPublicKey, randomBytes, sign, type KeyObject } from 'node:crypto';
import type { Commitment, Connection, Keypair } from '@solana/web3.js';
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
  readonly publicKey: Buffer;
  readonly key: KeyObject;
}

const signers = new WeakMap<Keypair, NativeSigner>();

function signerFromSeed(seed: Uint8Array): NativeSigner {
  const key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(key).export({ format: 'der', type: 'spki' });
  return { key, publicKey: spki.subarray(spki.length - 32) };
}

/** Random payers for transfers that name none, made on first use and then taken in turn. */
const ANONYMOUS_PAYERS = 64;
const anonymous: NativeSigner[] = [];
let nextAnonymous = 0;

function anonymousSigner(): NativeSigner {
  const i = nextAnonymous++ % ANONYMOUS_PAYERS;
  return (anonymous[i] ??= signerFromSeed(randomBytes(32)));
}

/** The native signer of a web3.js Keypair (its secretKey is seed || public key), made once per keypair. */
function signerOf(payer: Keypair | undefined): NativeSigner {
  if (payer === undefined) return anonymousSigner();
  let s = signers.get(payer);
  if (s === undefined) {
    s = signerFromSeed(payer.secretKey.subarray(0, 32));
    signers.set(payer, s);
  }
  return s;
}

function wrap(b: Buffer, sig: Uint8Array): SignedTx {
  let base58: string | undefined;
  return {
    bytes: b,
    signature: bs58.encode(sig),
    base64: b.toString('base64'),
    // Encoded when asked (base58 is quadratic in the length: ~0.5 ms for a transfer, and most tests send base64).
    get base58(): string {
      return (base58 ??= bs58.encode(b));
    },
  };
}

/** The system program's address (32 zero bytes). */
const SYSTEM_PROGRAM = Buffer.alloc(32);
/** The last blockhash seen, decoded (a test sends many transactions on one blockhash). */
let lastBlockhash = '';
let lastBlockhashBytes = Buffer.alloc(32);

/**
 * The message of one system transfer, as web3.js compiles it (test/unit/helpers/transactions.test.ts compares the
 * bytes): header [1 signer, 0 read-only signers, 1 read-only unsigned], keys [payer, recipient, system program],
 * blockhash, one instruction (program 2, accounts [0, 1], data: u32 2 = Transfer, u64 lamports). Written out rather
 * than compiled by web3.js, whose compile (base58 of every key to sort them) took ~0.7 ms a transfer: tests send
 * thousands. `v0`: the version prefix 0x80 and an empty address-table list at the end.
 */
export function transferMessage(payer: Uint8Array, recipient: Uint8Array, lamports: number, blockhash: string, v0: boolean): Buffer {
  if (blockhash !== lastBlockhash) {
    const bytes = Buffer.from(bs58.decode(blockhash));
    if (bytes.length !== 32) throw new Error(`blockhash is not 32 bytes: ${blockhash}`);
    lastBlockhash = blockhash;
    lastBlockhashBytes = bytes;
  }
  const hash = lastBlockhashBytes;
  const m = Buffer.alloc((v0 ? 1 : 0) + 3 + 1 + 96 + 32 + 1 + 1 + 1 + 2 + 1 + 12 + (v0 ? 1 : 0));
  let o = 0;
  if (v0) m[o++] = 0x80;
  m[o++] = 1;
  m[o++] = 0;
  m[o++] = 1;
  m[o++] = 3;
  m.set(payer, o);
  m.set(recipient, o + 32);
  m.set(SYSTEM_PROGRAM, o + 64);
  o += 96;
  hash.copy(m, o);
  o += 32;
  m[o++] = 1; // instructions
  m[o++] = 2; // program index: the system program
  m[o++] = 2; // accounts
  m[o++] = 0;
  m[o++] = 1;
  m[o++] = 12; // data length
  m.writeUInt32LE(2, o);
  m.writeBigUInt64LE(BigInt(lamports), o + 4);
  o += 12;
  if (v0) m[o++] = 0; // address table lookups
  return m;
}

function signedSystemTransfer(lamports: number, payer: Keypair | undefined, blockhash: string, v0: boolean): SignedTx {
  const signer = signerOf(payer);
  const msg = transferMessage(signer.publicKey, randomBytes(32), lamports, blockhash, v0);
  const sig = sign(null, msg, signer.key);
  // Wire form: compact-u16 signature count (1), the signature, the message.
  return wrap(Buffer.concat([Buffer.of(1), sig, msg]), sig);
}

export function legacyTransfer(lamports = 1000, payer?: Keypair, blockhash = BLOCKHASH): SignedTx {
  return signedSystemTransfer(lamports, payer, blockhash, false);
}

export function v0Transfer(lamports = 1000, payer?: Keypair, blockhash = BLOCKHASH): SignedTx {
  return signedSystemTransfer(lamports, payer, blockhash, true);
}

/**
 * A legacy transfer from `payer` on a live chain's latest blockhash (a localnet's, through `conn`): the transaction a
 * test lands. The recipient is fresh each time, so every call is a distinct transaction.
 */
export async function signedTransfer(conn: Connection, payer: Keypair, lamports = 1_000_000, commitment: Commitment = 'processed'): Promise<SignedTx> {
  const { blockhash } = await conn.getLatestBlockhash(commitment);
  return legacyTransfer(lamports, payer, blockhash);
}
