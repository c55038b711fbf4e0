// What the client builds without web3.js or kit, checked against what web3.js and kit build themselves: the wire
// bytes of every transaction shape submit accepts, and the SetComputeUnitPrice instruction for both libraries.
// Imported through the package entry, as a user would.
import {
  appendTransactionMessageInstruction,
  compileTransaction,
  createKeyPairSignerFromBytes,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getTransactionEncoder,
  address,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Blockhash,
  type Instruction,
} from '@solana/kit';
import * as web3 from '@solana/web3.js';
import bs58 from 'bs58';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  COMPUTE_BUDGET_PROGRAM_ID,
  WireTransaction,
  bytesToBase64,
  feePercentile,
  kitComputeUnitPriceInstruction,
  setComputeUnitPriceData,
  web3ComputeUnitPriceInstruction,
} from 'slotrelay/client';
import { ensureClientBuilt } from '../../helpers/client-dist.js';
import { legacyTransfer, v0Transfer } from '../../helpers/transactions.js';

beforeAll(() => ensureClientBuilt());

const BLOCKHASH = bs58.encode(Buffer.alloc(32, 7)) as Blockhash;

async function kitTransfer(withPrice?: number) {
  const kp = web3.Keypair.generate();
  const signer = await createKeyPairSignerFromBytes(kp.secretKey);
  const memo: Instruction = { programAddress: address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr'), data: new TextEncoder().encode('hi') };
  const msg = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(signer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: BLOCKHASH, lastValidBlockHeight: 100n }, m),
    (m) => (withPrice === undefined ? m : appendTransactionMessageInstruction(kitComputeUnitPriceInstruction(withPrice, address), m)),
    (m) => appendTransactionMessageInstruction(memo, m),
  );
  return signTransactionMessageWithSigners(msg);
}

describe('submit inputs become the exact wire bytes', () => {
  it('base64 strings and bytes pass through; web3.js legacy and versioned transactions serialize', () => {
    const legacy = legacyTransfer();
    const v0 = v0Transfer();
    expect(Buffer.from(WireTransaction.from(legacy.base64).bytes)).toEqual(legacy.bytes);
    expect(WireTransaction.from(legacy.bytes).base64).toBe(legacy.base64);
    expect(WireTransaction.from(new Uint8Array(v0.bytes)).base64).toBe(v0.base64);
    const vtx = web3.VersionedTransaction.deserialize(v0.bytes);
    expect(WireTransaction.from(vtx).base64).toBe(v0.base64);
    const ltx = web3.Transaction.from(legacy.bytes);
    expect(WireTransaction.from(ltx).base64).toBe(legacy.base64);
  });

  it('a kit Transaction encodes as kit getTransactionEncoder() does (signed, and unsigned: a null signature)', async () => {
    const tx = await kitTransfer();
    expect(WireTransaction.from(tx).bytes).toEqual(new Uint8Array(getTransactionEncoder().encode(tx)));
    expect(WireTransaction.from(tx).base64).toBe(getBase64EncodedWireTransaction(tx));
    const compiled = compileTransaction(
      pipe(
        createTransactionMessage({ version: 'legacy' }),
        (m) => setTransactionMessageFeePayer(address(Object.keys(tx.signatures)[0]), m),
        (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: BLOCKHASH, lastValidBlockHeight: 1n }, m),
      ),
    ); // unsigned: its signature slot is null and encodes as 64 zero bytes
    expect(Object.values(compiled.signatures)).toEqual([null]);
    expect(WireTransaction.from(compiled).bytes).toEqual(new Uint8Array(getTransactionEncoder().encode(compiled)));
  });

  it('refuses anything else with a TypeError that says what is accepted', () => {
    for (const bad of [42, null, {}, { messageBytes: 'x', signatures: {} }, [1, 2]]) {
      expect(() => WireTransaction.from(bad as never)).toThrow(/base64 string, wire bytes .*web3\.js.*kit/);
    }
  });

  it('bytesToBase64 matches Buffer for every length mod 3 and for a view into a larger buffer', () => {
    const big = new Uint8Array(300).map((_, i) => (i * 37) & 255);
    for (const n of [0, 1, 2, 3, 4, 5, 100]) expect(bytesToBase64(big.subarray(7, 7 + n))).toBe(Buffer.from(big.subarray(7, 7 + n)).toString('base64'));
  });
});

describe('SetComputeUnitPrice', () => {
  it('data is u8 3 then u64 LE, as web3.js ComputeBudgetProgram builds it; bounds are checked', () => {
    for (const price of [0, 1, 12_345, 2 ** 40 + 7]) {
      const theirs = web3.ComputeBudgetProgram.setComputeUnitPrice({ microLamports: price });
      expect(Buffer.from(setComputeUnitPriceData(price))).toEqual(theirs.data);
    }
    expect(Buffer.from(setComputeUnitPriceData((1n << 64n) - 1n)).toString('hex')).toBe('03ffffffffffffffff');
    expect(() => setComputeUnitPriceData(-1)).toThrow(RangeError);
    expect(() => setComputeUnitPriceData(1.5)).toThrow(RangeError);
    expect(() => setComputeUnitPriceData(1n << 64n)).toThrow(RangeError);
  });

  it('web3.js: a TransactionInstruction equal to ComputeBudgetProgram.setComputeUnitPrice', () => {
    const ours = web3ComputeUnitPriceInstruction(web3, 5_000);
    expect(ours).toBeInstanceOf(web3.TransactionInstruction);
    expect(ours).toEqual(web3.ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 5_000 }));
    expect(ours.programId.toBase58()).toBe(COMPUTE_BUDGET_PROGRAM_ID);
  });

  it('kit: an Instruction (no accounts) that compiles into a signed transaction', async () => {
    const ix = kitComputeUnitPriceInstruction(777, address);
    expect(ix.programAddress).toBe(COMPUTE_BUDGET_PROGRAM_ID);
    expect(Buffer.from(ix.data).toString('hex')).toBe('030903000000000000');
    const tx = await kitTransfer(777);
    // The compiled message names the compute budget program and carries our 9 data bytes.
    const wire = Buffer.from(WireTransaction.from(tx).bytes);
    expect(wire.includes(Buffer.from(bs58.decode(COMPUTE_BUDGET_PROGRAM_ID)))).toBe(true);
    expect(wire.includes(Buffer.from(ix.data))).toBe(true);
  });
});

describe('feePercentile', () => {
  const fees = [0, 0, 10, 20, 30, 40, 50, 60, 70, 1000].map((f, i) => ({ slot: 100 + i, prioritizationFee: f }));
  it('nearest rank over every slot (zero-fee slots included); empty -> 0', () => {
    expect(feePercentile(fees, 50)).toBe(30);
    expect(feePercentile(fees, 75)).toBe(60);
    expect(feePercentile(fees, 90)).toBe(70);
    expect(feePercentile(fees, 100)).toBe(1000);
    expect(feePercentile([], 75)).toBe(0);
    expect(() => feePercentile(fees, 0)).toThrow(RangeError);
  });
});
