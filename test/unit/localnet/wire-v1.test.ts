// The localnet's v1 parser (src/localnet/wire-v1.ts via parseWireTransaction): a kit-built v1 reads back exactly
// (signatures after the message, keys, writability, blockhash, config, fee and per-unit price), the per-format size
// caps, and every deserialize / sanitize refusal of notes/v1-format.md, each by its own reason.
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { parseWireTransaction, transactionFee, WireError } from '../../../src/localnet/wire.js';
import { v1ComputeUnitPrice } from '../../../src/localnet/wire-v1.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { buildV1, encodeRawV1, generateKeyPairSigner, memoIx, transferIx, type RawV1 } from '../../helpers/v1-transactions.js';

const HASH = bs58.encode(Buffer.alloc(32, 9));

function refusal(bytes: Uint8Array): WireError {
  try {
    parseWireTransaction(bytes);
  } catch (err) {
    if (err instanceof WireError) return err;
    throw err;
  }
  throw new Error('parsed');
}

const key = (n: number): Uint8Array => Buffer.alloc(32, n);
const u32 = (v: number): Uint8Array => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v);
  return b;
};
/** A valid raw v1: 1 signer, a program at index 2, one instruction; override any part. */
function raw(over: Partial<RawV1> = {}): Uint8Array {
  return encodeRawV1({
    header: [1, 0, 1],
    mask: 0b100,
    blockhash: key(9),
    keys: [key(1), key(2), key(3)],
    configBytes: u32(1000),
    instructions: [{ programIdIndex: 2, accounts: [0, 1], data: Uint8Array.from([1, 2, 3]) }],
    signatures: [Buffer.alloc(64, 5)],
    ...over,
  });
}

describe('v1 wire parser', () => {
  it('reads a kit-built v1 transfer: signatures after the message, keys, blockhash, config, fee, per-unit price', async () => {
    const payer = await generateKeyPairSigner();
    const to = (await generateKeyPairSigner()).address;
    const tx = await buildV1(payer, HASH, [transferIx(payer, to, 1_000n)], {
      priorityFeeLamports: 12_345n,
      computeUnitLimit: 3_000,
      loadedAccountsDataSizeLimit: 64_000,
      heapSize: 64 * 1024,
    });
    const p = parseWireTransaction(tx.bytes);
    expect(p.version).toBe(1);
    expect(p.signatures).toEqual([tx.signature]);
    expect(bs58.encode(tx.bytes.subarray(tx.bytes.length - 64))).toBe(tx.signature);
    expect(p.messageOffset).toBe(0);
    expect(p.messageLength).toBe(tx.bytes.length - 64);
    expect(p.accountKeys).toEqual([payer.address, to, '11111111111111111111111111111111']);
    expect(p.writable).toEqual([true, true, false]);
    expect(p.recentBlockhash).toBe(HASH);
    expect(p.config).toEqual({ priorityFeeLamports: 12_345n, computeUnitLimit: 3_000, loadedAccountsDataSizeLimit: 64_000, heapSize: 65_536 });
    expect(p.priorityFee).toBe(12_345n);
    expect(p.computeUnitLimit).toBe(3_000);
    // Agave: floor(12,345 × 1e6 / 3,000) micro-lamports per unit.
    expect(p.computeUnitPrice).toBe(4_115_000n);
    expect(transactionFee(p)).toBe(5_000n + 12_345n);
    expect(Array.from(p.instructions[0].data)).toEqual([2, 0, 0, 0, 232, 3, 0, 0, 0, 0, 0, 0]);
  });

  it('absent config values: fee 0, limit 0, price 0; the derived price floors and a u64 overflow is 0', async () => {
    const payer = await generateKeyPairSigner();
    const to = (await generateKeyPairSigner()).address;
    const p = parseWireTransaction((await buildV1(payer, HASH, [transferIx(payer, to, 1n)], {})).bytes);
    expect(p.config).toEqual({ priorityFeeLamports: null, computeUnitLimit: null, loadedAccountsDataSizeLimit: null, heapSize: null });
    expect([p.priorityFee, p.computeUnitLimit, p.computeUnitPrice, transactionFee(p)]).toEqual([0n, 0, 0n, 5_000n]);
    expect(v1ComputeUnitPrice(1n, 3)).toBe(333_333n);
    expect(v1ComputeUnitPrice(5n, 0)).toBe(0n);
    expect(v1ComputeUnitPrice(2n ** 64n - 1n, 1)).toBe(0n);
    // A limit over 1.4M is capped (Agave's try_into_config), not refused.
    const capped = parseWireTransaction(raw({ configBytes: u32(2_000_000) }));
    expect(capped.computeUnitLimit).toBe(1_400_000);
  });

  it('a 4,096-byte v1 with 5 signers parses; 4,097 bytes does not; legacy stays capped at 1,232', async () => {
    const signers = await Promise.all([0, 1, 2, 3, 4].map(() => generateKeyPairSigner()));
    const base = await buildV1(signers[0], HASH, [memoIx('m', signers)], { computeUnitLimit: 100_000, loadedAccountsDataSizeLimit: 100_000 });
    const memoLen = 4096 - base.bytes.length + 1;
    const big = await buildV1(signers[0], HASH, [memoIx('m'.repeat(memoLen), signers)], { computeUnitLimit: 100_000, loadedAccountsDataSizeLimit: 100_000 });
    expect(big.bytes.length).toBe(4096);
    const p = parseWireTransaction(big.bytes);
    expect(p.signatures).toHaveLength(5);
    expect(p.instructions[0].data.length).toBe(memoLen);
    const over = await buildV1(signers[0], HASH, [memoIx('m'.repeat(memoLen + 1), signers)], { computeUnitLimit: 100_000, loadedAccountsDataSizeLimit: 100_000 });
    expect(refusal(over.bytes).message).toBe('transaction exceeds max size (4096 bytes): 4097 bytes');
    const legacy = legacyTransfer().bytes;
    const padded = Buffer.concat([legacy, Buffer.alloc(1233 - legacy.length)]);
    expect(refusal(padded).message).toBe('transaction too large: 1233 bytes (max: 1232 bytes for legacy and v0)');
  });

  it('deserialize refusals: discriminator, truncation, trailing bytes, config mask', () => {
    const ok = raw();
    expect(parseWireTransaction(ok).version).toBe(1);
    expect(refusal(Uint8Array.from([0x82, ...ok.subarray(1)])).message).toBe('invalid transaction discriminator');
    expect(refusal(ok.subarray(0, ok.length - 1)).message).toBe('io error: unexpected end of file');
    expect(refusal(ok.subarray(0, 30)).message).toBe('io error: unexpected end of file');
    expect(refusal(Buffer.concat([ok, Buffer.from([0])])).message).toBe('io error: trailing bytes after the transaction');
    for (const mask of [0b1, 0b10, 0b10_0000, 0x8000_0000]) {
      const e = refusal(raw({ mask, configBytes: Buffer.alloc(8) }));
      expect([e.kind, e.message]).toEqual(['undecodable', 'invalid transaction config mask']);
    }
  });

  it('sanitize refusals in v1::Message::validate order, each with its reason', () => {
    const sig = Buffer.alloc(64, 5);
    const cases: [Partial<RawV1>, string][] = [
      [{ header: [13, 0, 0], keys: Array.from({ length: 14 }, (_, i) => key(i + 1)), signatures: Array.from({ length: 13 }, () => sig) }, 'too many signatures (max 12)'],
      [{ instructions: Array.from({ length: 65 }, () => ({ programIdIndex: 2, accounts: [], data: new Uint8Array(0) })) }, 'too many instructions (max 64)'],
      [{ keys: Array.from({ length: 65 }, (_, i) => key(i + 1)) }, 'too many addresses (max 64)'],
      [{ header: [2, 0, 2], signatures: [sig, sig] }, 'not enough addresses for required signatures'],
      [{ header: [1, 1, 1] }, 'must have at least one signer (fee payer)'],
      [{ header: [0, 0, 1], signatures: [] }, 'must have at least one signer (fee payer)'],
      [{ keys: [key(1), key(2), key(1)] }, 'duplicate addresses found in message'],
      [{ mask: 0b1_0000, configBytes: u32(33_000) }, 'heap size must be a multiple of 1024'],
      [{ mask: 0b1_0000, configBytes: u32(16 * 1024) }, 'heap size must be a multiple of 1024'],
      [{ mask: 0b1_0000, configBytes: u32(257 * 1024) }, 'heap size must be a multiple of 1024'],
      [{ header: [0, 0, 0], keys: [], instructions: [], signatures: [] }, 'must have at least one signer (fee payer)'],
      [{ instructions: [{ programIdIndex: 0, accounts: [], data: new Uint8Array(0) }] }, 'instruction account index out of bounds'],
      [{ instructions: [{ programIdIndex: 3, accounts: [], data: new Uint8Array(0) }] }, 'instruction account index out of bounds'],
      [{ instructions: [{ programIdIndex: 2, accounts: [0, 3], data: new Uint8Array(0) }] }, 'instruction account index out of bounds'],
    ];
    for (const [over, detail] of cases) {
      const e = refusal(raw(over));
      expect([e.kind, e.message, e.detail], detail).toEqual(['invalid', 'invalid transaction: Transaction failed to sanitize accounts offsets correctly', detail]);
    }
    // Heap at the bounds is fine.
    expect(parseWireTransaction(raw({ mask: 0b1_0000, configBytes: u32(256 * 1024) })).config?.heapSize).toBe(262_144);
  });
});
