// Real signed transfers for the soak (driver process; warm: one Ed25519 signature per submission with node:crypto,
// tens of microseconds). The message is compiled once per blockhash with @solana/web3.js; each transaction patches
// the transfer's lamports (the message's last 8 bytes) with a counter, so every signature is distinct, and signs.
// The payer is never funded: the soak measures delivery and accounting, not landing.
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';

/** Some 32-byte blockhash until the localnet's is known (base58 of 32 x 0x07). */
export const PLACEHOLDER_BLOCKHASH = 'US517G5965aydkZ46HS38QLi7UQiSojurfbQfKCELFx';
/** A marker value for lamports, to find where the message keeps them. */
const MARKER = 0x0102030405060708n;

export interface SignedTransfer {
  readonly bytes: Buffer;
  readonly base64: string;
}

export class TransferSigner {
  private readonly privateKey: KeyObject;
  private readonly payer: PublicKey;
  private readonly to = Keypair.generate().publicKey;
  private message: Buffer = Buffer.alloc(0);
  private lamports = 1n;
  private currentBlockhash = '';

  constructor(blockhash: string = PLACEHOLDER_BLOCKHASH) {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    this.privateKey = privateKey;
    const jwk = publicKey.export({ format: 'jwk' });
    if (typeof jwk.x !== 'string') throw new Error('ed25519 public key has no x');
    this.payer = new PublicKey(Buffer.from(jwk.x, 'base64url'));
    this.setBlockhash(blockhash);
    const probe = this.next();
    if (!Transaction.from(probe.bytes).verifySignatures()) throw new Error('transfer signer: signature does not verify');
  }

  get blockhash(): string {
    return this.currentBlockhash;
  }

  /** Recompile the message for another recent blockhash (cold: a few times a minute). */
  setBlockhash(blockhash: string): void {
    if (blockhash === this.currentBlockhash) return;
    const tx = new Transaction({ feePayer: this.payer, blockhash, lastValidBlockHeight: 0 }).add(
      SystemProgram.transfer({ fromPubkey: this.payer, toPubkey: this.to, lamports: MARKER }),
    );
    const message = Buffer.from(tx.compileMessage().serialize());
    if (message.readBigUInt64LE(message.length - 8) !== MARKER) throw new Error('transfer signer: lamports are not the last 8 bytes');
    this.message = message;
    this.currentBlockhash = blockhash;
  }

  /** The next distinct signed transfer: [1 signature][64-byte signature][message]. */
  next(): SignedTransfer {
    const m = this.message;
    m.writeBigUInt64LE(this.lamports++, m.length - 8);
    const signature = sign(null, m, this.privateKey);
    const bytes = Buffer.concat([Buffer.from([1]), signature, m]);
    return { bytes, base64: bytes.toString('base64') };
  }
}
