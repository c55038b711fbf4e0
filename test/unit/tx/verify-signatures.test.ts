import { describe, expect, it } from 'vitest';
import { createParsedTransaction, parseTransaction } from '../../../src/tx/parse-transaction.js';
import { clearKeyCache, keyCacheSize, verifyTransactionSignatures } from '../../../src/tx/verify-signatures.js';
import { legacyTwoSigners, patched, v0WithLookup } from '../../fixtures/tx/transactions.js';

function check(bytes: Buffer, offset = 0): boolean {
  const p = createParsedTransaction();
  parseTransaction(bytes, offset, bytes.length - offset, p);
  return verifyTransactionSignatures(bytes, offset, p);
}

describe('verifyTransactionSignatures', () => {
  it('accepts real signed legacy (two signers) and v0 transactions, also at an offset', () => {
    clearKeyCache();
    const legacy = legacyTwoSigners().bytes;
    expect(check(legacy)).toBe(true);
    expect(check(v0WithLookup().bytes)).toBe(true);
    expect(check(Buffer.concat([Buffer.alloc(96, 0xee), legacy]), 96)).toBe(true);
    expect(keyCacheSize()).toBe(3);
  });

  it('rejects a flipped byte in the message, in the first and in the second signature', () => {
    const legacy = legacyTwoSigners().bytes;
    const last = legacy.length - 1;
    expect(check(patched(legacy, last, legacy[last] ^ 1))).toBe(false);
    expect(check(patched(legacy, 5, legacy[5] ^ 0x80))).toBe(false);
    expect(check(patched(legacy, 70, legacy[70] ^ 0x01))).toBe(false);
  });

  it('rejects when the signer key changed (cached KeyObject of another key is not reused)', () => {
    const a = legacyTwoSigners().bytes;
    expect(check(a)).toBe(true);
    const p = createParsedTransaction();
    parseTransaction(a, 0, a.length, p);
    const k = p.accountKeysOffset;
    expect(check(patched(a, k, a[k] ^ 1))).toBe(false);
  });

  it('a signer key that is no curve point (32 bytes of 0xff), or another transaction\'s signer key, verifies nothing: false, no throw', () => {
    clearKeyCache();
    const a = legacyTwoSigners().bytes;
    const p = createParsedTransaction();
    parseTransaction(a, 0, a.length, p);
    const k = p.accountKeysOffset;
    const notAPoint = Buffer.from(a);
    notAPoint.fill(0xff, k, k + 32);
    expect(check(notAPoint)).toBe(false);
    // Another transaction's signer in the first signer's place: a valid point, the wrong key.
    const b = legacyTwoSigners().bytes;
    const other = Buffer.from(a);
    b.copy(other, k, k, k + 32);
    expect(check(other)).toBe(false);
    expect(check(a)).toBe(true);
  });
});
