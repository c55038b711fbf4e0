// The tests' transfers (test/helpers/transactions.ts) are written out byte by byte rather than compiled by web3.js:
// here they are compared with what web3.js compiles for the same payer, recipient, lamports and blockhash, legacy and
// v0, and the signed wire form is checked the way a validator reads it (web3.js deserializes it, the signature
// verifies against the payer).
import { createPublicKey, randomBytes, verify } from 'node:crypto';
import { Keypair, MessageV0, PublicKey, SystemProgram, Transaction, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { legacyTransfer, transferMessage, v0Transfer } from '../../helpers/transactions.js';

function web3Legacy(payer: PublicKey, to: PublicKey, lamports: number, blockhash: string): Buffer {
  const tx = new Transaction({ feePayer: payer, blockhash, lastValidBlockHeight: 1 }).add(SystemProgram.transfer({ fromPubkey: payer, toPubkey: to, lamports }));
  return tx.serializeMessage();
}

function web3V0(payer: PublicKey, to: PublicKey, lamports: number, blockhash: string): Buffer {
  const msg: MessageV0 = new TransactionMessage({
    payerKey: payer,
    recentBlockhash: blockhash,
    instructions: [SystemProgram.transfer({ fromPubkey: payer, toPubkey: to, lamports })],
  }).compileToV0Message();
  return Buffer.from(msg.serialize());
}

describe('test transfers', () => {
  const cases = [0, 1, 1000, 1_000_000_000, Number.MAX_SAFE_INTEGER];
  it.each(cases)('the message of a transfer of %d lamports is web3.js\'s, legacy and v0', (lamports) => {
    for (let i = 0; i < 20; i++) {
      const payer = new PublicKey(randomBytes(32));
      const to = new PublicKey(randomBytes(32));
      const blockhash = bs58.encode(randomBytes(32));
      expect(transferMessage(payer.toBytes(), to.toBytes(), lamports, blockhash, false).equals(web3Legacy(payer, to, lamports, blockhash))).toBe(true);
      expect(transferMessage(payer.toBytes(), to.toBytes(), lamports, blockhash, true).equals(web3V0(payer, to, lamports, blockhash))).toBe(true);
    }
  });

  it('a signed transfer deserializes with web3.js, is signed by its payer, and every call is a distinct transaction', () => {
    const payer = Keypair.generate();
    const seen = new Set<string>();
    for (const make of [legacyTransfer, v0Transfer]) {
      for (let i = 0; i < 5; i++) {
        const t = make(777, payer);
        const vt = VersionedTransaction.deserialize(t.bytes);
        expect(vt.message.staticAccountKeys[0].equals(payer.publicKey)).toBe(true);
        expect(vt.version).toBe(make === legacyTransfer ? 'legacy' : 0);
        const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: payer.publicKey.toBuffer().toString('base64url') }, format: 'jwk' });
        expect(verify(null, vt.message.serialize(), key, vt.signatures[0])).toBe(true);
        expect(bs58.encode(vt.signatures[0])).toBe(t.signature);
        expect(t.base58).toBe(bs58.encode(t.bytes));
        expect(t.base64).toBe(t.bytes.toString('base64'));
        seen.add(t.signature);
      }
    }
    // Payer-less transfers (a small set of random payers in turn) are distinct too.
    for (let i = 0; i < 200; i++) seen.add(legacyTransfer().signature);
    expect(seen.size).toBe(210);
  });
});
