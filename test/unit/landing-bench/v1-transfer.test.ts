import { getCompiledTransactionMessageDecoder, getTransactionDecoder } from '@solana/kit';
import { Keypair } from '@solana/web3.js';
import { sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ed25519Key, v1TransferMessage } from '../../../src/landing-bench/payers.js';
import { createParsedTransaction, tryParseTransaction } from '../../../src/tx/parse-transaction.js';
import { verifyTransactionSignatures } from '../../../src/tx/verify-signatures.js';

describe('the landing bench\'s v1 transfer', () => {
  it.each([
    ['to another payer', false],
    ['to itself (the payer listed once)', true],
  ])('%s: the relay parses it, kit decodes the same message, the signature verifies', (_, self) => {
    const from = Keypair.generate();
    const to = self ? from : Keypair.generate();
    const blockhash = Buffer.alloc(32, 5);
    const message = v1TransferMessage(from.publicKey.toBytes(), to.publicKey.toBytes(), blockhash, 42);
    const wire = Buffer.concat([message, sign(null, message, ed25519Key(from.secretKey))]);
    const p = createParsedTransaction();
    expect(tryParseTransaction(wire, 0, wire.length, p)).toBeNull();
    expect(p).toMatchObject({ version: 1, signatureCount: 1, computeUnitLimit: 450, accountKeysCount: self ? 2 : 3 });
    expect(verifyTransactionSignatures(wire, 0, p)).toBe(true);
    const decoded = getCompiledTransactionMessageDecoder().decode(getTransactionDecoder().decode(wire).messageBytes);
    if (decoded.version !== 1) throw new Error(`kit decoded version ${String(decoded.version)}`);
    expect(decoded.staticAccounts[0]).toBe(from.publicKey.toBase58());
    expect(decoded.numInstructions).toBe(1);
    expect(decoded.configMask).toBe(0b1100);
    expect(decoded.instructionHeaders[0]).toEqual({ programAccountIndex: self ? 1 : 2, numInstructionAccounts: 2, numInstructionDataBytes: 12 });
    expect(decoded.instructionPayloads[0].instructionAccountIndices).toEqual(self ? [0, 0] : [0, 1]);
  });
});
