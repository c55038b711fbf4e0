import { generateKeyPairSigner } from '@solana/kit';
import { describe, expect, it } from 'vitest';
import { Errors, type Failure } from '../../../src/errors/registry.js';
import { createParsedTransaction, tryParseTransaction, type ParsedTransaction } from '../../../src/tx/parse-transaction.js';
import { verifyTransactionSignatures } from '../../../src/tx/verify-signatures.js';
import { encodeSignatureBase58 } from '../../../src/tx/base58.js';
import { firstSignatureOffset, signatureAndBlockhashOffsets } from '../../../src/tx/wire-offsets.js';
import { signedV1, v1Layout } from '../../fixtures/tx/v1-transactions.js';

const UNDECODABLE = 'failed to deserialize solana_transaction::versioned::VersionedTransaction: ';
const SANITIZE = 'invalid transaction: Transaction failed to sanitize accounts offsets correctly';

function parse(bytes: Uint8Array, offset = 0, length = bytes.length - offset): ParsedTransaction {
  const out = createParsedTransaction();
  const refused = tryParseTransaction(bytes, offset, length, out);
  if (refused !== null) throw new Error(`refused: ${refused.message}`);
  return out;
}

function refusal(bytes: Uint8Array, maxBytes?: number): Failure {
  const refused = tryParseTransaction(bytes, 0, bytes.length, createParsedTransaction(), maxBytes);
  if (refused === null) throw new Error('expected a refusal');
  return refused;
}

/** Rewrites a kit-built v1's address list: `count` addresses after the fixed header (the rest shifted). */
function withHeader(bytes: Buffer, patch: (b: Buffer) => void): Buffer {
  const b = Buffer.from(bytes);
  patch(b);
  return b;
}

describe('v1 transactions (SIMD-0385) built by @solana/kit 8.4', () => {
  it('a transfer with a priority fee and a compute-unit limit: every offset and the config', async () => {
    const tx = await signedV1({ lamports: 1_000n, priorityFeeLamports: 5_000n, computeUnitLimit: 1_000 });
    expect(tx.bytes[0]).toBe(0x81);
    const slot = Buffer.alloc(tx.bytes.length + 100);
    tx.bytes.copy(slot, 50);
    const p = parse(slot, 50, tx.bytes.length);
    expect(p.version).toBe(1);
    expect(p.signatureCount).toBe(1);
    expect(p.firstSignatureOffset).toBe(tx.bytes.length - 64);
    expect(encodeSignatureBase58(slot, 50 + p.firstSignatureOffset)).toBe(tx.signature);
    expect(p.messageOffset).toBe(0);
    expect(p.messageLength).toBe(tx.bytes.length - 64);
    expect(p.accountKeysCount).toBe(3); // payer, recipient, system program
    expect(p.instructionCount).toBe(1);
    expect(p.priorityFeeLamports).toBe(5_000);
    expect(p.computeUnitLimit).toBe(1_000);
    expect(p.computeUnitPrice).toBe(5_000_000); // 5,000 lamports over 1,000 units = 5,000,000 micro-lamports per unit
    expect(p.addressTableLookupsOffset).toBe(-1);
    expect(verifyTransactionSignatures(slot, 50, p)).toBe(true);
    // The egress side finds the same signature from the bytes alone.
    expect(firstSignatureOffset(tx.bytes, 0, tx.bytes.length)).toBe(p.firstSignatureOffset);
    // ... and the blockhash the rebroadcast checks, at the v1 header's fixed offset.
    expect(signatureAndBlockhashOffsets(tx.bytes, 0, tx.bytes.length)).toEqual([p.firstSignatureOffset, p.recentBlockhashOffset]);
    expect(p.recentBlockhashOffset).toBe(8);
  });

  it('4,000-4,096 bytes with several signers parses, and every signature verifies', async () => {
    const extraSigners = await Promise.all([1, 2, 3].map(() => generateKeyPairSigner()));
    const tx = await signedV1({ memoBytes: 3_500, extraSigners, priorityFeeLamports: 10_000n, computeUnitLimit: 50_000 });
    expect(tx.bytes.length).toBeGreaterThanOrEqual(3_800);
    const p = parse(tx.bytes);
    expect(p.signatureCount).toBe(4);
    expect(verifyTransactionSignatures(tx.bytes, 0, p)).toBe(true);
    // One byte of one signature changed: still well-formed, no longer verifies.
    const bad = Buffer.from(tx.bytes);
    bad[bad.length - 64 * 2 + 5] ^= 1;
    const q = parse(bad);
    expect(verifyTransactionSignatures(bad, 0, q)).toBe(false);
  });

  it('size: legacy/v0 capped at 1232, v1 at 4096 (or the relay maximum when lower), with Agave wording', async () => {
    const big = await signedV1({ memoBytes: 3_900 });
    const over = Buffer.concat([big.bytes, Buffer.alloc(4_097 - big.bytes.length)]);
    const f = refusal(over);
    expect(f.spec).toBe(Errors.TX_TOO_LARGE_DECODED);
    expect(f.message).toBe('decoded solana_transaction::versioned::VersionedTransaction too large: 4097 bytes (max: 4096 bytes)');
    const capped = refusal(big.bytes, 1232);
    expect(capped.message).toBe(`decoded solana_transaction::versioned::VersionedTransaction too large: ${big.bytes.length} bytes (max: 1232 bytes)`);
    const legacyish = Buffer.alloc(1_233);
    legacyish[0] = 1;
    expect(refusal(legacyish).message).toBe('decoded solana_transaction::versioned::VersionedTransaction too large: 1233 bytes (max: 1232 bytes)');
  });

  it('config mask: an unknown bit, or one of the two priority-fee bits, is undecodable', async () => {
    const tx = await signedV1({ lamports: 1n });
    for (const mask of [0b100000, 0x80000000, 0b01, 0b10]) {
      const b = withHeader(tx.bytes, (x) => x.writeUInt32LE(mask, 4));
      const f = refusal(b);
      expect(f.spec).toBe(Errors.TX_UNDECODABLE);
      expect(f.message).toBe(UNDECODABLE + 'invalid transaction config mask');
    }
  });

  it('a truncated config area, instruction area or signature is undecodable (failed to fill whole buffer)', async () => {
    const tx = await signedV1({ lamports: 1n, priorityFeeLamports: 1n });
    const { addressesAt, addressCount } = v1Layout(tx.bytes);
    for (const cut of [41, addressesAt + addressCount * 32 + 3, tx.bytes.length - 70, tx.bytes.length - 1]) {
      const f = refusal(tx.bytes.subarray(0, cut));
      expect(f.message).toBe(UNDECODABLE + 'io error: failed to fill whole buffer');
    }
    expect(refusal(Buffer.concat([tx.bytes, Buffer.alloc(1)])).message).toBe(UNDECODABLE + 'Slice had bytes remaining after deserialization');
  });

  it('a signature count that does not match the header: too few or too many signatures after the message', async () => {
    const tx = await signedV1({ lamports: 1n });
    // The header says 2 signers, one signature follows: the reader runs out.
    expect(refusal(withHeader(tx.bytes, (x) => (x[1] = 2))).message).toBe(UNDECODABLE + 'io error: failed to fill whole buffer');
    // A second signature appended to a one-signer message: bytes left over.
    expect(refusal(Buffer.concat([tx.bytes, Buffer.alloc(64, 9)])).message).toBe(UNDECODABLE + 'Slice had bytes remaining after deserialization');
  });

  it('sanitize: 13 signatures, 65 addresses, duplicates, no writable signer, bad indexes: Agave message, sdk detail', async () => {
    const cases: [string, (b: Buffer) => Buffer][] = [];
    const tx = await signedV1({ lamports: 1n });
    const { addressCount, signaturesAt } = v1Layout(tx.bytes);
    const message = tx.bytes.subarray(0, signaturesAt);
    // 13 signers: header says 13 and 13 signatures follow (addresses are too few too, but the count is checked first).
    cases.push(['too many signatures (max 12)', () => Buffer.concat([withHeader(message, (x) => (x[1] = 13)), Buffer.alloc(13 * 64, 1)])]);
    // 65 addresses: 62 more inserted after the three real ones.
    cases.push([
      'too many addresses (max 64)',
      () => {
        const extra = Buffer.alloc(62 * 32);
        for (let i = 0; i < 62; i++) extra[i * 32] = i + 1;
        const head = withHeader(message.subarray(0, 42 + addressCount * 32), (x) => (x[41] = 65));
        return Buffer.concat([head, extra, message.subarray(42 + addressCount * 32), tx.bytes.subarray(signaturesAt)]);
      },
    ]);
    cases.push(['duplicate addresses found in message', () => withHeader(tx.bytes, (x) => x.copy(x, 42 + 32, 42, 42 + 32))]);
    cases.push(['must have at least one signer (fee payer)', () => withHeader(tx.bytes, (x) => (x[2] = 1))]);
    cases.push(['not enough addresses for required signatures', () => withHeader(tx.bytes, (x) => (x[3] = 3))]);
    const withIx = withHeader(tx.bytes, () => undefined);
    const ixHeaderAt = 42 + addressCount * 32; // no config values in this one
    cases.push(['instruction account index out of bounds', () => withHeader(withIx, (x) => (x[ixHeaderAt] = 0))]);
    cases.push(['instruction account index out of bounds', () => withHeader(withIx, (x) => (x[ixHeaderAt] = 7))]);
    for (const [detail, make] of cases) {
      const f = refusal(make(tx.bytes));
      expect(f.spec, detail).toBe(Errors.TX_INVALID);
      expect(f.message, detail).toBe(SANITIZE);
      expect(f.data, detail).toEqual({ detail });
    }
  });

  it('heap size outside 32..256 KiB or not a multiple of 1024 is refused at sanitize', async () => {
    const tx = await signedV1({ lamports: 1n });
    const { addressCount } = v1Layout(tx.bytes);
    const at = 42 + addressCount * 32;
    for (const heap of [1000, 16 * 1024, 512 * 1024]) {
      const value = Buffer.alloc(4);
      value.writeUInt32LE(heap);
      const b = Buffer.concat([tx.bytes.subarray(0, at), value, tx.bytes.subarray(at)]);
      b.writeUInt32LE(0b10000, 4);
      expect(refusal(b).data).toEqual({ detail: 'heap size must be a multiple of 1024' });
    }
    const ok = Buffer.alloc(4);
    ok.writeUInt32LE(64 * 1024);
    const good = Buffer.concat([tx.bytes.subarray(0, at), ok, tx.bytes.subarray(at)]);
    good.writeUInt32LE(0b10000, 4);
    expect(parse(good).version).toBe(1);
  });
});
