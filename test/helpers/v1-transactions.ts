// v1 transactions (SIMD-0385) for tests, built and signed by @solana/kit 8.4 exactly as a client would
// (createTransactionMessage({ version: 1 }), the config in the message), plus a raw v1 encoder for the malformed
// shapes kit refuses to build (parser and sanitize tests). Test-only; cold.
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getSignatureFromTransaction,
  getTransactionEncoder,
  pipe,
  setTransactionMessageConfig,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Blockhash,
  type Instruction,
  type KeyPairSigner,
  type V1TransactionConfig,
} from '@solana/kit';

export const SYSTEM_PROGRAM = '11111111111111111111111111111111';
/** SPL Memo v3 (litesvm loads it by default). */
export const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';

export interface V1Tx {
  readonly bytes: Uint8Array;
  readonly signature: string;
  readonly base64: string;
}

/** The system program's Transfer instruction (index 2, u64 LE lamports). */
export function transferIx(from: KeyPairSigner, to: string, lamports: bigint): Instruction {
  const data = new Uint8Array(12);
  const view = new DataView(data.buffer);
  view.setUint32(0, 2, true);
  view.setBigUint64(4, lamports, true);
  return {
    programAddress: address(SYSTEM_PROGRAM),
    accounts: [
      { address: from.address, role: AccountRole.WRITABLE_SIGNER, signer: from } as never,
      { address: address(to), role: AccountRole.WRITABLE },
    ],
    data,
  };
}

/** A memo signed by every `signers` (each a readonly signer account of the memo instruction). */
export function memoIx(text: string, signers: readonly KeyPairSigner[]): Instruction {
  return {
    programAddress: address(MEMO_PROGRAM),
    accounts: signers.map((s) => ({ address: s.address, role: AccountRole.READONLY_SIGNER, signer: s }) as never),
    data: new TextEncoder().encode(text),
  };
}

/** Build and sign a v1 transaction with kit: `payer` pays, `config` is the message's TransactionConfig. */
export async function buildV1(payer: KeyPairSigner, blockhash: string, instructions: readonly Instruction[], config: V1TransactionConfig): Promise<V1Tx> {
  const message = pipe(
    createTransactionMessage({ version: 1 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: blockhash as Blockhash, lastValidBlockHeight: 0n }, m),
    (m) => setTransactionMessageConfig(config, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  const tx = await signTransactionMessageWithSigners(message);
  const bytes = new Uint8Array(getTransactionEncoder().encode(tx));
  return { bytes, signature: getSignatureFromTransaction(tx), base64: Buffer.from(bytes).toString('base64') };
}

export { generateKeyPairSigner };

/** The parts of a raw v1 transaction; the encoder does no checking at all (malformed shapes are the point). */
export interface RawV1 {
  readonly header: readonly [number, number, number];
  readonly mask: number;
  readonly blockhash: Uint8Array;
  readonly keys: readonly Uint8Array[];
  /** Config values already encoded, in mask order. */
  readonly configBytes: Uint8Array;
  readonly instructions: readonly { programIdIndex: number; accounts: readonly number[]; data: Uint8Array }[];
  readonly signatures: readonly Uint8Array[];
}

export function encodeRawV1(t: RawV1): Uint8Array {
  const parts: Uint8Array[] = [Uint8Array.from([0x81, ...t.header])];
  const mask = new Uint8Array(4);
  new DataView(mask.buffer).setUint32(0, t.mask >>> 0, true);
  parts.push(mask, t.blockhash, Uint8Array.from([t.instructions.length, t.keys.length]), ...t.keys, t.configBytes);
  for (const ix of t.instructions) parts.push(Uint8Array.from([ix.programIdIndex, ix.accounts.length, ix.data.length & 0xff, ix.data.length >> 8]));
  for (const ix of t.instructions) parts.push(Uint8Array.from(ix.accounts), ix.data);
  parts.push(...t.signatures);
  return Buffer.concat(parts);
}
