// Payers and the transfers the landing bench sends (CLI process, main thread; sign() runs once per transaction at the
// send rate). Localnet: fresh keypairs funded by airdrop. Elsewhere: the operator's funded keypair (--keypair).
// Every transfer is real and distinct: payer i -> payer i+1 (itself when there is one payer), lamports = 1 + its
// sequence number, on the freshest confirmed blockhash (refreshed every second).
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { encodeSignatureBase58 } from '../tx/base58.js';
import { rpcCall } from './http.js';

const AIRDROP_SOL = 10;
const BLOCKHASH_REFRESH_MS = 1_000;

/** PKCS#8 DER header of an Ed25519 private key (RFC 8410); the 32-byte seed follows. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** A Solana secret key (seed || public key) as a node:crypto private key. */
export function ed25519Key(secretKey: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, secretKey.subarray(0, 32)]), format: 'der', type: 'pkcs8' });
}

export function loadKeypair(path: string): Keypair {
  const bytes = JSON.parse(readFileSync(path, 'utf8')) as unknown;
  if (!Array.isArray(bytes) || bytes.length !== 64) throw new Error(`${path}: not a Solana keypair file (64-number JSON array)`);
  return Keypair.fromSecretKey(Uint8Array.from(bytes as number[]));
}

/** N fresh payers with AIRDROP_SOL each on the localnet; resolves when every airdrop is confirmed. */
export async function airdropPayers(rpcUrl: string, n: number): Promise<Keypair[]> {
  const payers = Array.from({ length: n }, () => Keypair.generate());
  const sigs = await Promise.all(payers.map((p) => rpcCall<string>(rpcUrl, 'requestAirdrop', [p.publicKey.toBase58(), AIRDROP_SOL * LAMPORTS_PER_SOL])));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const st = await rpcCall<{ value: ({ confirmationStatus?: string } | null)[] }>(rpcUrl, 'getSignatureStatuses', [sigs]);
    if (st.value.every((s) => s !== null && s.confirmationStatus !== 'processed')) return payers;
    if (Date.now() > deadline) throw new Error('airdrops to the payers were not confirmed within 30 s');
    await new Promise((r) => setTimeout(r, 200));
  }
}

export interface SignedTransfer {
  readonly signature: string;
  readonly base64: string;
}

/** Which wire format the bench's transfers use: legacy, v1 (SIMD-0385), or both alternately (docs/landing.md). */
export type TransferFormat = 'legacy' | 'v1' | 'mixed';

const SYSTEM_PROGRAM = new Uint8Array(32);
/** A transfer's v1 config: 450 CU (the system transfer costs 150) and 100 KB of loaded account data; no priority fee. */
const V1_COMPUTE_UNIT_LIMIT = 450;
const V1_LOADED_DATA_LIMIT = 100_000;

/**
 * The v1 message of a system transfer (layout: docs/transactions.md), written field by field: the bench ships in the
 * relay, which carries no transaction builder for v1 (web3.js 1.x does not build one). A self-transfer lists the
 * payer once (v1 refuses a repeated address).
 */
export function v1TransferMessage(from: Uint8Array, to: Uint8Array, blockhash: Uint8Array, lamports: number): Buffer {
  const self = Buffer.compare(Buffer.from(from), Buffer.from(to)) === 0;
  const addresses = self ? [from, SYSTEM_PROGRAM] : [from, to, SYSTEM_PROGRAM];
  const m = Buffer.alloc(42 + addresses.length * 32 + 8 + 4 + 2 + 12);
  let p = 0;
  m[p++] = 0x81;
  m[p++] = 1; // one signer (the payer)
  m[p++] = 0;
  m[p++] = 1; // the system program is the one readonly unsigned address
  p = m.writeUInt32LE(0b1100, p); // compute-unit limit + loaded-accounts-data-size limit
  m.set(blockhash, p);
  p += 32;
  m[p++] = 1; // one instruction
  m[p++] = addresses.length;
  for (const a of addresses) {
    m.set(a, p);
    p += 32;
  }
  p = m.writeUInt32LE(V1_COMPUTE_UNIT_LIMIT, p);
  p = m.writeUInt32LE(V1_LOADED_DATA_LIMIT, p);
  m[p++] = addresses.length - 1; // program: the system program, last
  m[p++] = 2;
  p = m.writeUInt16LE(12, p);
  m[p++] = 0;
  m[p++] = self ? 0 : 1;
  p = m.writeUInt32LE(2, p); // SystemInstruction::Transfer
  m.writeBigUInt64LE(BigInt(lamports), p);
  return m;
}

export class TransferFactory {
  private blockhash = '';
  private lastValidBlockHeight = 0;
  private timer: NodeJS.Timeout | undefined;
  private seq = 0;

  private readonly keys: KeyObject[];

  private blockhashBytes: Uint8Array = new Uint8Array(32);

  private constructor(
    private readonly rpcUrl: string,
    private readonly payers: readonly Keypair[],
    private readonly format: TransferFormat,
  ) {
    this.keys = payers.map((p) => ed25519Key(p.secretKey));
  }

  static async start(rpcUrl: string, payers: readonly Keypair[], format: TransferFormat = 'legacy'): Promise<TransferFactory> {
    const f = new TransferFactory(rpcUrl, payers, format);
    await f.refresh();
    f.timer = setInterval(() => void f.refresh().catch(() => undefined), BLOCKHASH_REFRESH_MS);
    return f;
  }

  private async refresh(): Promise<void> {
    const r = await rpcCall<{ value: { blockhash: string; lastValidBlockHeight: number } }>(this.rpcUrl, 'getLatestBlockhash', [{ commitment: 'confirmed' }]);
    this.blockhash = r.value.blockhash;
    this.blockhashBytes = new PublicKey(r.value.blockhash).toBytes();
    this.lastValidBlockHeight = r.value.lastValidBlockHeight;
  }

  next(): SignedTransfer {
    const i = this.seq++;
    const from = this.payers[i % this.payers.length];
    const to = this.payers[(i + 1) % this.payers.length];
    if (this.format === 'v1' || (this.format === 'mixed' && i % 2 === 1)) {
      const message = v1TransferMessage(from.publicKey.toBytes(), to.publicKey.toBytes(), this.blockhashBytes, 1 + i);
      const sig = sign(null, message, this.keys[i % this.payers.length]);
      return { signature: encodeSignatureBase58(sig, 0), base64: Buffer.concat([message, sig]).toString('base64') };
    }
    const tx = new Transaction({ feePayer: from.publicKey, blockhash: this.blockhash, lastValidBlockHeight: this.lastValidBlockHeight }).add(
      SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to.publicKey, lamports: 1 + i }),
    );
    // Signed with node:crypto (OpenSSL's Ed25519, ~20x faster than web3.js's JavaScript signer, whose sign and
    // verify-on-serialize cost ~5 ms a transaction on a busy 2-core box: at 100 tx/s the bench itself fell behind).
    const message = tx.compileMessage().serialize();
    const sig = sign(null, message, this.keys[i % this.payers.length]);
    const wire = Buffer.allocUnsafe(1 + 64 + message.length);
    wire[0] = 1; // shortvec: one signature
    sig.copy(wire, 1);
    message.copy(wire, 65);
    return { signature: encodeSignatureBase58(sig, 0), base64: wire.toString('base64') };
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
