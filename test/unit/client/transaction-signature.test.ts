// The client's own reading of a transaction's id (src/client/transaction-signature.ts), checked against kit's
// getSignatureFromTransaction for legacy, v0 and v1 transactions kit builds, encodes and signs (v1: the signatures
// come after the message), including multi-signer v1 messages with every config field set; and the fee helper for
// v1 (a total in lamports, ceil(price x limit / 1e6)). Imported through the package entry, as a user would.
import {
  address,
  appendTransactionMessageInstruction,
  createKeyPairSignerFromBytes,
  createTransactionMessage,
  getSignatureFromTransaction,
  getTransactionEncoder,
  pipe,
  setTransactionMessageComputeUnitLimit,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  setTransactionMessagePriorityFeeLamports,
  signTransactionMessageWithSigners,
  type Blockhash,
  type Instruction,
  type TransactionSigner,
} from '@solana/kit';
import * as web3 from '@solana/web3.js';
import bs58 from 'bs58';
import { beforeAll, describe, expect, it } from 'vitest';
import { TransactionFormatError, WireTransaction, firstSignature, priorityFeeLamports, transactionSignature, v1PriorityFeeConfig } from 'slotrelay/client';
import { ensureClientBuilt } from '../../helpers/client-dist.js';
import { legacyTransfer, v0Transfer } from '../../helpers/transactions.js';

beforeAll(() => ensureClientBuilt());

const BLOCKHASH = bs58.encode(Buffer.alloc(32, 9)) as Blockhash;
const MEMO = address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');

async function signer(): Promise<TransactionSigner> {
  return createKeyPairSignerFromBytes(web3.Keypair.generate().secretKey);
}

/** A memo transaction of `version` built and signed by kit; `cosigners` sign the memo as well (more signatures). */
async function kitTransaction(version: 'legacy' | 0 | 1, opts: { cosigners?: number; config?: boolean; memoBytes?: number } = {}) {
  const payer = await signer();
  const others = await Promise.all(Array.from({ length: opts.cosigners ?? 0 }, () => signer()));
  const memo: Instruction = {
    programAddress: MEMO,
    accounts: others.map((s) => ({ address: s.address, role: 2 /* readonly signer */, signer: s })) as never,
    data: new Uint8Array(opts.memoBytes ?? 5).fill(0x61),
  };
  const base = pipe(
    createTransactionMessage({ version }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: BLOCKHASH, lastValidBlockHeight: 100n }, m),
    (m) => appendTransactionMessageInstruction(memo, m),
  );
  const msg =
    version === 1 && opts.config === true
      ? pipe(
          base as never,
          (m) => setTransactionMessageComputeUnitLimit(200_000, m),
          (m) => setTransactionMessagePriorityFeeLamports(12_345n, m as never),
        )
      : base;
  const tx = await signTransactionMessageWithSigners(msg as never);
  return { tx, bytes: new Uint8Array(getTransactionEncoder().encode(tx)), signature: getSignatureFromTransaction(tx) as string };
}

describe('the transaction id, read where each format puts it', () => {
  it('legacy and v0 (web3.js-built): the signature after the short-vec count', () => {
    for (const t of [legacyTransfer(), v0Transfer()]) {
      const expected = bs58.encode(t.bytes.subarray(1, 65));
      expect(transactionSignature(new Uint8Array(t.bytes))).toBe(expected);
      expect(WireTransaction.from(t.base64).signature).toBe(expected);
    }
  });

  it('legacy and v0 built by kit: the same id kit gives', async () => {
    for (const v of ['legacy', 0] as const) {
      const k = await kitTransaction(v, { cosigners: 2 });
      expect(k.bytes[0]).toBe(3); // three signatures, counted first
      expect(transactionSignature(k.bytes)).toBe(k.signature);
    }
  });

  it('v1 built by kit: the message comes first (0x81) and the id is the first signature after it', async () => {
    const k = await kitTransaction(1);
    expect(k.bytes[0]).toBe(0x81);
    expect(transactionSignature(k.bytes)).toBe(k.signature);
    // Where it is: the last 64 bytes of a one-signer v1 transaction, not byte 1 (the legacy place).
    expect(bs58.encode(firstSignature(k.bytes))).toBe(bs58.encode(k.bytes.subarray(k.bytes.length - 64)));
    expect(bs58.encode(k.bytes.subarray(1, 65))).not.toBe(k.signature);
    // Through every input submit takes: kit's Transaction object, bytes, base64.
    expect(WireTransaction.from(k.tx as never).signature).toBe(k.signature);
    expect(WireTransaction.from(k.bytes).signature).toBe(k.signature);
    expect(WireTransaction.from(Buffer.from(k.bytes).toString('base64')).signature).toBe(k.signature);
  });

  it('v1 with three signers and every config value kit sets (priority fee, CU limit): the first of the three', async () => {
    const k = await kitTransaction(1, { cosigners: 2, config: true, memoBytes: 300 });
    expect(k.bytes[1]).toBe(3); // num_required_signatures
    const mask = k.bytes[4] | (k.bytes[5] << 8);
    expect(mask & 0b111).toBe(0b111); // priority fee (bits 0-1) and CU limit (bit 2) are in the config
    expect(transactionSignature(k.bytes)).toBe(k.signature);
    expect(bs58.encode(firstSignature(k.bytes))).toBe(bs58.encode(k.bytes.subarray(k.bytes.length - 3 * 64, k.bytes.length - 2 * 64)));
  });

  it('a large v1 transaction (over the legacy 1,232 bytes)', async () => {
    const k = await kitTransaction(1, { memoBytes: 3_000 });
    expect(k.bytes.length).toBeGreaterThan(1232);
    expect(transactionSignature(k.bytes)).toBe(k.signature);
  });

  it('refuses bytes that are not exactly one transaction rather than naming a wrong id', async () => {
    const k = await kitTransaction(1);
    const longer = new Uint8Array(k.bytes.length + 1);
    longer.set(k.bytes);
    expect(() => transactionSignature(longer)).toThrow(TransactionFormatError);
    expect(() => transactionSignature(k.bytes.subarray(0, k.bytes.length - 1))).toThrow(TransactionFormatError);
    const badMask = new Uint8Array(k.bytes);
    badMask[4] = 0b01; // only one of the two priority-fee bits
    expect(() => transactionSignature(badMask)).toThrow(/config mask/);
    expect(() => transactionSignature(new Uint8Array(0))).toThrow(TransactionFormatError);
    expect(() => transactionSignature(Uint8Array.of(0x82, 1, 0, 0))).toThrow(/0x82/);
    expect(() => transactionSignature(Uint8Array.of(2, ...new Uint8Array(100)))).toThrow(/do not fit/);
  });
});

describe('v1 priority fee: a total in lamports', () => {
  it('ceil(price x limit / 1,000,000)', () => {
    expect(priorityFeeLamports(1_000_000, 200_000)).toBe(200_000n);
    expect(priorityFeeLamports(1, 1)).toBe(1n); // a micro-lamport rounds up to a lamport
    expect(priorityFeeLamports(0, 1_400_000)).toBe(0n);
    expect(priorityFeeLamports(12_345, 200_000)).toBe(2_469n);
    expect(priorityFeeLamports(12_345, 81)).toBe(1n); // 999,945 micro-lamports
    expect(priorityFeeLamports(12_346, 81)).toBe(2n); // 1,000,026
    expect(priorityFeeLamports(10n ** 15n, 4_000_000_000)).toBe(4n * 10n ** 18n); // beyond 2^53: exact in bigint
  });

  it('refuses what a config cannot carry', () => {
    expect(() => priorityFeeLamports(-1, 1)).toThrow(RangeError);
    expect(() => priorityFeeLamports(1.5, 1)).toThrow(RangeError);
    expect(() => priorityFeeLamports(1, 2 ** 32)).toThrow(RangeError);
    expect(() => priorityFeeLamports(2n ** 64n - 1n, 2 ** 32 - 1)).toThrow(/exceeds/);
  });

  it('the config object has kit\'s field names and a kit v1 message takes it', async () => {
    const cfg = v1PriorityFeeConfig(5_000, 300_000);
    expect(cfg).toEqual({ priorityFeeLamports: 1_500n, computeUnitLimit: 300_000 });
    const payer = await signer();
    const msg = pipe(
      createTransactionMessage({ version: 1 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageComputeUnitLimit(cfg.computeUnitLimit, m),
      (m) => setTransactionMessagePriorityFeeLamports(cfg.priorityFeeLamports, m),
    );
    expect((msg as unknown as { config: Record<string, unknown> }).config).toMatchObject(cfg);
  });
});
