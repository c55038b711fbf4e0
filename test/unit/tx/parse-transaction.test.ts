import { ComputeBudgetProgram, Keypair, SystemProgram, Transaction, TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { Errors, Failure, RelayError } from '../../../src/errors/registry.js';
import { createParsedTransaction, parseTransaction, tryParseTransaction, type ParsedTransaction } from '../../../src/tx/parse-transaction.js';
import { BLOCKHASH, legacyTwoSigners, patched, v0WithLookup } from '../../fixtures/tx/transactions.js';

const UNDECODABLE = 'failed to deserialize solana_transaction::versioned::VersionedTransaction: ';
const SANITIZE = 'invalid transaction: Transaction failed to sanitize accounts offsets correctly';

function parse(bytes: Uint8Array, offset = 0, length = bytes.length - offset): ParsedTransaction {
  const out = createParsedTransaction();
  const refused = tryParseTransaction(bytes, offset, length, out);
  if (refused !== null) throw new Error(`refused: ${refused.message}`);
  return out;
}

/** The refusal tryParseTransaction returned (intake's hot path returns refusals, it never throws them). */
function rejection(bytes: Uint8Array): Failure {
  const refused = tryParseTransaction(bytes, 0, bytes.length, createParsedTransaction());
  if (refused === null) throw new Error('expected a Failure');
  expect(refused).toBeInstanceOf(Failure);
  expect(refused).not.toBeInstanceOf(Error); // no stack trace captured
  return refused;
}

describe('parseTransaction on real transactions', () => {
  it('legacy with two signers: offsets match what web3.js deserializes', () => {
    const { bytes, tx } = legacyTwoSigners();
    // Parse inside a larger buffer at an offset, as in a ring slot.
    const slot = Buffer.alloc(bytes.length + 200);
    bytes.copy(slot, 96);
    const p = parse(slot, 96, bytes.length);
    const msg = tx.message;
    expect(p.version).toBe(-1);
    expect(p.length).toBe(bytes.length);
    expect(p.signatureCount).toBe(2);
    expect(p.firstSignatureOffset).toBe(1);
    expect(bytes.subarray(p.firstSignatureOffset, p.firstSignatureOffset + 64)).toEqual(Buffer.from(tx.signatures[0]));
    expect(p.messageOffset).toBe(1 + 2 * 64);
    expect(p.messageLength).toBe(msg.serialize().length);
    expect(bytes.subarray(p.messageOffset, p.messageOffset + p.messageLength)).toEqual(Buffer.from(msg.serialize()));
    expect(p.numRequiredSignatures).toBe(msg.header.numRequiredSignatures);
    expect(p.numReadonlySigned).toBe(msg.header.numReadonlySignedAccounts);
    expect(p.numReadonlyUnsigned).toBe(msg.header.numReadonlyUnsignedAccounts);
    expect(p.accountKeysCount).toBe(msg.staticAccountKeys.length);
    msg.staticAccountKeys.forEach((k, i) => {
      const at = p.accountKeysOffset + i * 32;
      expect(bs58.encode(bytes.subarray(at, at + 32))).toBe(k.toBase58());
    });
    expect(bs58.encode(bytes.subarray(p.recentBlockhashOffset, p.recentBlockhashOffset + 32))).toBe(BLOCKHASH);
    expect(p.instructionCount).toBe(msg.compiledInstructions.length);
    expect(p.computeUnitPrice).toBe(123_456_789);
    expect(p.computeUnitLimit).toBe(200_000);
    expect(p.addressTableLookupsOffset).toBe(-1);
  });

  it('v0 with an address lookup table entry', () => {
    const { bytes, tx } = v0WithLookup();
    const p = parse(bytes);
    const msg = tx.message;
    expect(p.version).toBe(0);
    expect(p.signatureCount).toBe(1);
    expect(bytes[p.messageOffset]).toBe(0x80);
    expect(p.messageLength).toBe(msg.serialize().length);
    expect(p.accountKeysCount).toBe(msg.staticAccountKeys.length);
    expect(p.addressTableLookupCount).toBe(1);
    expect(p.lookupAccountCount).toBe(1);
    const lookup = msg.addressTableLookups[0];
    expect(bs58.encode(bytes.subarray(p.addressTableLookupsOffset, p.addressTableLookupsOffset + 32))).toBe(
      lookup.accountKey.toBase58(),
    );
    expect(bs58.encode(bytes.subarray(p.recentBlockhashOffset, p.recentBlockhashOffset + 32))).toBe(BLOCKHASH);
    expect(p.computeUnitPrice).toBe(-1);
  });

  it('reuses the result object (no per-call allocation of results)', () => {
    const out = createParsedTransaction();
    const a = legacyTwoSigners().bytes;
    const b = v0WithLookup().bytes;
    expect(tryParseTransaction(a, 0, a.length, out)).toBeNull();
    expect(tryParseTransaction(b, 0, b.length, out)).toBeNull();
    expect(out.version).toBe(0);
    expect(out.computeUnitPrice).toBe(-1);
  });
});

describe('parseTransaction rejections (Agave wording)', () => {
  const legacy = legacyTwoSigners().bytes; // [2][sig][sig][message...]
  const v0 = v0WithLookup().bytes; // [1][sig][0x80][header...]
  const legacyMessage = legacy.subarray(1 + 128);

  it('truncated transaction -> io error', () => {
    for (const cut of [0, 1, 40, 129, 131, legacy.length - 1]) {
      const e = rejection(legacy.subarray(0, cut));
      expect(e.spec).toBe(Errors.TX_UNDECODABLE);
      expect(e.message).toBe(UNDECODABLE + 'io error: failed to fill whole buffer');
    }
  });

  it('trailing bytes are refused', () => {
    const e = rejection(Buffer.concat([v0, Buffer.from([0])]));
    expect(e.spec).toBe(Errors.TX_UNDECODABLE);
    expect(e.message).toBe(UNDECODABLE + 'Slice had bytes remaining after deserialization');
  });

  it('message versions other than 0', () => {
    let e = rejection(patched(v0, 65, 0x81));
    expect(e.spec).toBe(Errors.TX_UNDECODABLE);
    expect(e.message).toBe(UNDECODABLE + 'invalid value: integer `1`, expected a valid transaction message version');
    e = rejection(patched(v0, 65, 0xff));
    expect(e.message).toBe(UNDECODABLE + 'off-chain messages are not accepted');
  });

  it('compact-u16 errors', () => {
    expect(rejection(Buffer.from([0x80, 0x00, 1, 2])).message).toBe(
      UNDECODABLE + 'invalid value: alias encoding, expected strict form encoding',
    );
    expect(rejection(Buffer.from([0x80, 0x80, 0x80])).message).toBe(
      UNDECODABLE + 'invalid value: continue signal on byte-three, expected a terminal signal on or before byte-three',
    );
    expect(rejection(Buffer.from([0xff, 0xff, 0x04])).message).toBe(
      UNDECODABLE + 'invalid value: integer `81919`, expected a value in the range [0, 65535]',
    );
  });

  it('zero signatures', () => {
    // The legacy message still requires 2 signers.
    const e = rejection(Buffer.concat([Buffer.from([0]), legacyMessage]));
    expect(e.spec).toBe(Errors.TX_INVALID);
    expect(e.message).toBe(SANITIZE);
    // ... and a message requiring none (no fee payer).
    const none = Buffer.from(legacyMessage);
    none[0] = 0;
    none[1] = 0;
    expect(rejection(Buffer.concat([Buffer.from([0]), none])).message).toBe(SANITIZE);
  });

  it('signature count != required signers', () => {
    const three = Buffer.concat([Buffer.from([3]), legacy.subarray(1, 129), Buffer.alloc(64, 1), legacyMessage]);
    expect(rejection(three).message).toBe(SANITIZE);
    const one = Buffer.concat([Buffer.from([1]), legacy.subarray(1, 65), legacyMessage]);
    expect(rejection(one).message).toBe(SANITIZE);
  });

  it('out-of-range and fee-payer program indexes', () => {
    const p = parse(legacy);
    const firstIx = p.instructionsOffset; // program id index of instruction 0
    expect(rejection(patched(legacy, firstIx, 200)).message).toBe(SANITIZE);
    expect(rejection(patched(legacy, firstIx, 0)).message).toBe(SANITIZE);
    const q = parse(v0);
    // v0: program ids may not come from lookup tables (index == static key count is out of range).
    expect(rejection(patched(v0, q.instructionsOffset, q.accountKeysCount)).message).toBe(SANITIZE);
  });

  it('readonly signers must leave a writable fee payer', () => {
    const p = parse(legacy);
    expect(rejection(patched(legacy, p.messageOffset + 1, 2)).message).toBe(SANITIZE);
  });

  it('duplicate compute-budget instruction', () => {
    const payer = Keypair.generate();
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash: BLOCKHASH, lastValidBlockHeight: 1 }).add(
      ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1 }),
      ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 2 }),
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 }),
    );
    tx.sign(payer);
    const e = rejection(tx.serialize());
    expect(e.spec).toBe(Errors.TX_INVALID);
    expect(e.message).toBe('invalid transaction: Transaction contains a duplicate instruction (1) that is not allowed');
  });

  it('the same static account key twice: Agave\'s AccountLoadedTwice (such a transaction can never land)', () => {
    const payer = Keypair.generate();
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash: BLOCKHASH, lastValidBlockHeight: 1 }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 }),
    );
    tx.sign(payer);
    const bytes = Buffer.from(tx.serialize());
    const p = parse(bytes);
    expect(p.accountKeysCount).toBe(3);
    // Overwrite the recipient (key 1) with the system program (key 2): offsets still sanitize, the keys repeat.
    const keys = p.accountKeysOffset;
    bytes.copy(bytes, keys + 32, keys + 64, keys + 96);
    const e = rejection(bytes);
    expect(e.spec).toBe(Errors.TX_INVALID);
    expect(e.message).toBe('invalid transaction: Account loaded twice');
    // Keys that differ only in their last byte are not duplicates.
    bytes[keys + 63] ^= 1;
    expect(parse(bytes).accountKeysCount).toBe(3);
  });

  it('compute-budget instruction data that does not decode: the first such instruction is reported', () => {
    const payer = Keypair.generate();
    const bogus = new TransactionInstruction({ programId: ComputeBudgetProgram.programId, keys: [], data: Buffer.from([9, 0, 0, 0, 0]) });
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash: BLOCKHASH, lastValidBlockHeight: 1 }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 }),
      bogus,
      // A duplicate after it does not replace the first budget error.
      ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1 }),
      ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 2 }),
    );
    tx.sign(payer);
    const e = rejection(tx.serialize());
    expect(e.spec).toBe(Errors.TX_INVALID);
    expect(e.message).toBe('invalid transaction: Error processing Instruction 1: invalid instruction data');
  });
});

describe('parseTransaction (throwing wrapper for cold callers)', () => {
  it('throws the RelayError carrying exactly the refusal tryParseTransaction returns', () => {
    const { bytes } = legacyTwoSigners();
    for (const bad of [bytes.subarray(0, 70), Buffer.concat([bytes, Buffer.from([0])]), Buffer.from([0xff, 0xff, 0x04])]) {
      const f = rejection(bad);
      let thrown: unknown;
      try {
        parseTransaction(bad, 0, bad.length, createParsedTransaction());
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(RelayError);
      const e = thrown as RelayError;
      expect([e.spec, e.message, e.data]).toEqual([f.spec, f.message, f.data]);
    }
    expect(() => parseTransaction(bytes, 0, bytes.length, createParsedTransaction())).not.toThrow();
  });

  it('a range outside the buffer is a caller bug (RangeError), not a refusal', () => {
    expect(() => tryParseTransaction(Buffer.alloc(10), 5, 10, createParsedTransaction())).toThrow(RangeError);
  });
});
