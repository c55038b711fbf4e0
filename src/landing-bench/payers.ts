// Payers and the transfers the landing bench sends (CLI process, main thread; sign() runs once per transaction at the
// send rate). Localnet: fresh keypairs funded by airdrop. Elsewhere: the operator's funded keypair (--keypair).
// Every transfer is real and distinct: payer i -> payer i+1 (itself when there is one payer), lamports = 1 + its
// sequence number, on the freshest confirmed blockhash (refreshed every second).
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';
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

export class TransferFactory {
  private blockhash = '';
  private lastValidBlockHeight = 0;
  private timer: NodeJS.Timeout | undefined;
  private seq = 0;

  private readonly keys: KeyObject[];

  private constructor(
    private readonly rpcUrl: string,
    private readonly payers: readonly Keypair[],
  ) {
    this.keys = payers.map((p) => ed25519Key(p.secretKey));
  }

  static async start(rpcUrl: string, payers: readonly Keypair[]): Promise<TransferFactory> {
    const f = new TransferFactory(rpcUrl, payers);
    await f.refresh();
    f.timer = setInterval(() => void f.refresh().catch(() => undefined), BLOCKHASH_REFRESH_MS);
    return f;
  }

  private async refresh(): Promise<void> {
    const r = await rpcCall<{ value: { blockhash: string; lastValidBlockHeight: number } }>(this.rpcUrl, 'getLatestBlockhash', [{ commitment: 'confirmed' }]);
    this.blockhash = r.value.blockhash;
    this.lastValidBlockHeight = r.value.lastValidBlockHeight;
  }

  next(): SignedTransfer {
    const i = this.seq++;
    const from = this.payers[i % this.payers.length];
    const to = this.payers[(i + 1) % this.payers.length];
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
