import { generateKeyPairSigner } from '@solana/kit';
import { describe, expect, it } from 'vitest';
import { tipLamports } from '../../../src/bundles/bundle-tip.js';
import { createParsedTransaction, parseTransaction } from '../../../src/tx/parse-transaction.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { signedV1 } from '../../fixtures/tx/v1-transactions.js';

describe('tipLamports: system transfers to a tip account, any transaction version', () => {
  it('v1: a transfer among a memo and a fee config is read from the v1 instruction layout', async () => {
    const tip = (await generateKeyPairSigner()).address;
    const tx = await signedV1({ lamports: 12_345n, to: tip, memoBytes: 300, priorityFeeLamports: 99n, computeUnitLimit: 5_000 });
    const p = createParsedTransaction();
    parseTransaction(tx.bytes, 0, tx.bytes.length, p);
    expect(p.version).toBe(1);
    expect(tipLamports(tx.bytes, 0, p, new Set([tip]))).toBe(12_345n);
    expect(tipLamports(tx.bytes, 0, p, new Set(['11111111111111111111111111111112']))).toBe(0n);
  });

  it('legacy: the same rule', async () => {
    const tx = legacyTransfer(777);
    const p = createParsedTransaction();
    parseTransaction(tx.bytes, 0, tx.bytes.length, p);
    const { VersionedTransaction } = await import('@solana/web3.js');
    const to = VersionedTransaction.deserialize(tx.bytes).message.staticAccountKeys[1].toBase58();
    expect(tipLamports(tx.bytes, 0, p, new Set([to]))).toBe(777n);
    expect(tipLamports(tx.bytes, 0, p, new Set(['nobody']))).toBe(0n);
  });
});
