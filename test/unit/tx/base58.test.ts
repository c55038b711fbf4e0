import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import {
  decodeBase58Into,
  describeInvalidBase58,
  encodePubkeyBase58,
  encodeSignatureBase58,
  findInvalidBase58,
} from '../../../src/tx/base58.js';
import { legacyTwoSigners } from '../../fixtures/tx/transactions.js';

describe('base58 encoder', () => {
  it('encodes 1,000 random signatures exactly like bs58, at any offset', () => {
    const area = Buffer.alloc(64 + 13);
    for (let i = 0; i < 1000; i++) {
      const sig = randomBytes(64);
      // Leading zero bytes exercise the '1' prefix; every 100th is all-zero or all-0xff.
      for (let k = 0; k < i % 5; k++) sig[k] = 0;
      if (i % 100 === 0) sig.fill(i % 200 === 0 ? 0 : 0xff);
      sig.copy(area, 13);
      expect(encodeSignatureBase58(area, 13)).toBe(bs58.encode(sig));
    }
  });

  it('encodes 1,000 random 32-byte keys like bs58', () => {
    for (let i = 0; i < 1000; i++) {
      const key = randomBytes(32);
      if (i % 3 === 0) key[0] = 0;
      expect(encodePubkeyBase58(key, 0)).toBe(bs58.encode(key));
    }
  });

  it('gives the first signature of a real transaction as web3.js/bs58 do', () => {
    const { bytes, tx } = legacyTwoSigners();
    expect(encodeSignatureBase58(bytes, 1)).toBe(bs58.encode(tx.signatures[0]));
    expect(encodeSignatureBase58(bytes, 65)).toBe(bs58.encode(tx.signatures[1]));
  });

  it('refuses to read past the buffer', () => {
    expect(() => encodeSignatureBase58(Buffer.alloc(70), 10)).toThrow(RangeError);
  });
});

describe('base58 decoder', () => {
  it('round-trips random byte strings (with leading zeros) into a target buffer', () => {
    const target = Buffer.alloc(1300);
    for (let i = 0; i < 300; i++) {
      const data = randomBytes(i * 4);
      if (i % 4 === 0 && data.length > 3) data.fill(0, 0, 3);
      const n = decodeBase58Into(target, bs58.encode(data), 1232);
      expect(n).toBe(data.length);
      expect(target.subarray(0, n).equals(data)).toBe(true);
    }
  });

  it('returns the decoded length without writing when it exceeds the limit', () => {
    const target = Buffer.alloc(10, 0xaa);
    expect(decodeBase58Into(target, '1'.repeat(20), 10)).toBe(20);
    expect(target.every((b) => b === 0xaa)).toBe(true);
  });

  it("reports the first invalid character in the bs58 crate's Debug wording", () => {
    expect(findInvalidBase58('abc0def')).toBe(3);
    expect(describeInvalidBase58('abc0def', 3)).toBe("InvalidCharacter { character: '0', index: 3 }");
    expect(describeInvalidBase58("ab'", 2)).toBe("InvalidCharacter { character: '\\'', index: 2 }");
    expect(describeInvalidBase58('a\nb', 1)).toBe("InvalidCharacter { character: '\\n', index: 1 }");
    expect(describeInvalidBase58('a\x01', 1)).toBe("InvalidCharacter { character: '\\u{1}', index: 1 }");
    expect(describeInvalidBase58('abé', 2)).toBe('NonAsciiCharacter { index: 2 }');
    expect(() => decodeBase58Into(Buffer.alloc(8), 'I', 8)).toThrow("InvalidCharacter { character: 'I', index: 0 }");
  });
});
