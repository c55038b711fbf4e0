// Property tests of transaction deserializing and sanitizing (src/tx/parse-transaction.ts via test/property/tx-oracle.ts):
// real signed legacy and v0 transactions (built with @solana/web3.js from fixed seeds, so runs are reproducible) are
// mutated field by field (duplicated account keys, header counts, program and account indexes out of range, signature
// counts, version bytes, address lookup tables, compute-budget instructions) and byte by byte (bit flips, truncation,
// extension, insertion, deletion, non-strict short_vec lengths). For every result:
//   - the relay accepts with the right first signature, or refuses with a RelayError of the intake family (-32602)
//     with Agave's wording, never another exception;
//   - the verdict and message equal the reference model of Agave's rules (test/property/agave-model.ts);
//   - where the relay accepts, @solana/web3.js's VersionedTransaction.deserialize (an independent parser) reads the
//     same signature, header, keys, instruction and lookup counts and re-serializes to the same bytes. web3.js is used
//     only in that direction: it is laxer than Agave (no sanitize checks, no compute-budget or duplicate-key checks,
//     non-strict short_vec lengths and trailing bytes accepted), so its accepting a transaction means nothing;
//   - the verdict does not depend on where the bytes sit in the buffer (ring slots) or what surrounds them.
// Seeded: FC_SEED / FC_PATH / FC_RUNS_SCALE (test/property/fc-params.ts).
import { VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { agaveVerdict, type ModelVerdict } from './agave-model.js';
import { fcParams } from './fc-params.js';
import { buildReal, shapeArb } from './real-transactions.js';
import { label, mutatedTx, u8 } from './tx-mutations.js';
import { describe as describeOutcome, INTAKE_REASONS, parseWire, type Outcome, type ParsedSummary } from './tx-oracle.js';

const SEED = 0x5eed_0004;

// ---- checks ----

function sameAsModel(got: Outcome<ParsedSummary>, want: ModelVerdict, label: string): void {
  expect(got.kind, `${label}: ${describeOutcome(got)}`).not.toBe('exception');
  if (want.kind === 'ok') {
    expect(got.kind, `${label}: model accepts, relay ${describeOutcome(got)}`).toBe('ok');
    if (got.kind === 'ok') expect(got.signature).toBe(bs58.encode(want.firstSignature));
    return;
  }
  expect(got, `${label}: model refuses ${want.reason}: ${want.message}`).toMatchObject({ kind: 'refused', reason: want.reason, code: -32602, message: want.message });
}


describe('transaction wire format: decode and sanitize (property)', () => {
  it('real signed transactions of any shape are accepted with their first signature', () => {
    fc.assert(
      fc.property(shapeArb, fc.nat(), (shape, s) => {
        const bytes = buildReal(shape, s);
        const got = parseWire(bytes);
        const web3 = VersionedTransaction.deserialize(bytes);
        expect(got, describeOutcome(got)).toMatchObject({ kind: 'ok', signature: bs58.encode(web3.signatures[0]), version: web3.version === 'legacy' ? -1 : web3.version });
      }),
      fcParams(SEED, 30),
    );
  });

  it('mutated transactions: the relay\'s verdict and message are the reference model\'s (Agave\'s rules), never an exception', () => {
    fc.assert(
      fc.property(mutatedTx, (m) => {
        const got = parseWire(m.tx);
        if (got.kind === 'refused') {
          expect(INTAKE_REASONS.has(got.reason), `${got.reason} is an intake reason`).toBe(true);
          expect(got.code).toBe(-32602);
        }
        sameAsModel(got, agaveVerdict(m.tx), label(m));
      }),
      fcParams(SEED + 1, 1500),
    );
  });

  it('whatever the relay accepts, web3.js parses to the same signature, header, keys, instructions and lookups, and re-serializes byte for byte', () => {
    fc.assert(
      fc.property(mutatedTx, (m) => {
        const got = parseWire(m.tx);
        if (got.kind !== 'ok') return;
        let web3: VersionedTransaction;
        try {
          web3 = VersionedTransaction.deserialize(m.tx);
        } catch (err) {
          throw new Error(`the relay accepted what web3.js cannot parse (${(err as Error).message}): ${label(m)}`);
        }
        const msg = web3.message;
        expect(got.signature).toBe(bs58.encode(web3.signatures[0]));
        expect(got.signatureCount).toBe(web3.signatures.length);
        expect(got.version).toBe(msg.version === 'legacy' ? -1 : msg.version);
        expect([got.numRequiredSignatures, got.numReadonlySigned, got.numReadonlyUnsigned]).toEqual([
          msg.header.numRequiredSignatures,
          msg.header.numReadonlySignedAccounts,
          msg.header.numReadonlyUnsignedAccounts,
        ]);
        expect(got.accountKeys).toEqual(msg.staticAccountKeys.map((k) => k.toBase58()));
        expect(got.instructionCount).toBe(msg.compiledInstructions.length);
        expect(got.addressTableLookupCount).toBe(msg.addressTableLookups.length);
        expect(got.lookupAccountCount).toBe(msg.addressTableLookups.reduce((n, l) => n + l.writableIndexes.length + l.readonlyIndexes.length, 0));
        expect(Buffer.from(web3.serialize()).equals(m.tx), 'web3.js re-serializes the same bytes (strict encoding, no trailing bytes)').toBe(true);
      }),
      fcParams(SEED + 2, 1000),
    );
  });

  it('the verdict does not depend on where the transaction sits in the buffer or what surrounds it', () => {
    fc.assert(
      fc.property(mutatedTx, fc.nat(300), fc.nat(64), u8, (m, offset, after, fill) => {
        const here = parseWire(m.tx);
        const there = parseWire(m.tx, offset, after, fill);
        expect(there, label(m)).toEqual(here);
      }),
      fcParams(SEED + 3, 400),
    );
  });
});
