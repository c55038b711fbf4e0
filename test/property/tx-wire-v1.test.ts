// Property tests of v1 transaction parsing (src/tx/parse-v1-transaction.ts via tx-oracle's parseWire): real v1
// transactions built and signed by @solana/kit 8.4 (transfers, memos with several signers, every config field) are
// mutated byte by byte (a byte set anywhere, above all in the fixed header and the config mask; truncation; bytes
// appended or removed) and the relay's verdict must equal the plain reference reader of solana-sdk's v1 rules
// (test/property/agave-model.ts v1Verdict), never an exception. Where the relay accepts, kit's own transaction decoder
// (an independent parser) reads the same first signature, signer count and message bytes.
import { getTransactionDecoder } from '@solana/kit';
import { generateKeyPairSigner } from '@solana/kit';
import bs58 from 'bs58';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { agaveVerdict } from './agave-model.js';
import { fcParams } from './fc-params.js';
import { parseWire } from './tx-oracle.js';
import { signedV1, type SignedV1 } from '../fixtures/tx/v1-transactions.js';

const SEED = 0x5eed_0104;
let bases: SignedV1[] = [];

beforeAll(async () => {
  const extra = await Promise.all([1, 2].map(() => generateKeyPairSigner()));
  bases = [
    await signedV1({ lamports: 5n }),
    await signedV1({ lamports: 5n, priorityFeeLamports: 7_000n, computeUnitLimit: 30_000 }),
    await signedV1({ memoBytes: 40, extraSigners: extra, priorityFeeLamports: 1n }),
    await signedV1({ memoBytes: 3_600, extraSigners: extra }),
  ];
});

type Mutation = { kind: 'set'; at: number; value: number } | { kind: 'cut'; keep: number } | { kind: 'append'; n: number } | { kind: 'drop'; at: number };

const mutation: fc.Arbitrary<{ base: number; muts: Mutation[] }> = fc.record({
  base: fc.nat(3),
  muts: fc.array(
    fc.oneof(
      // The header, the mask and the counts (bytes 0..41) are where the rules live: weighted up.
      { weight: 4, arbitrary: fc.record({ kind: fc.constant('set' as const), at: fc.nat(41), value: fc.oneof(fc.nat(255), fc.constantFrom(0, 1, 2, 3, 12, 13, 64, 65, 0x81)) }) },
      { weight: 3, arbitrary: fc.record({ kind: fc.constant('set' as const), at: fc.nat(5000), value: fc.nat(255) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('cut' as const), keep: fc.nat(5000) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('append' as const), n: fc.integer({ min: 1, max: 130 }) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('drop' as const), at: fc.nat(5000) }) },
    ),
    { minLength: 0, maxLength: 3 },
  ),
});

function apply(bytes: Buffer, muts: readonly Mutation[]): Buffer {
  let b = Buffer.from(bytes);
  for (const m of muts) {
    if (m.kind === 'set') b[m.at % b.length] = m.value;
    else if (m.kind === 'cut') b = b.subarray(0, m.keep % (b.length + 1));
    else if (m.kind === 'append') b = Buffer.concat([b, Buffer.alloc(m.n, 0x33)]);
    else if (b.length > 0) {
      const at = m.at % b.length;
      b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1)]);
    }
  }
  return b;
}

describe('v1 transaction wire format (property)', () => {
  it('kit-built v1 transactions are accepted with kit\'s signature', () => {
    for (const t of bases) expect(parseWire(t.bytes)).toMatchObject({ kind: 'ok', version: 1, signature: t.signature });
  });

  it('mutated v1 transactions: the relay\'s verdict and message are the reference reader\'s, never an exception', () => {
    fc.assert(
      fc.property(mutation, ({ base, muts }) => {
        const tx = apply(bases[base].bytes, muts);
        if (tx.length === 0 || tx[0] !== 0x81 || tx.length > 4096) return; // other layouts and sizes: tx-wire.test.ts
        const got = parseWire(tx);
        const want = agaveVerdict(tx);
        expect(got.kind, JSON.stringify(muts)).not.toBe('exception');
        if (want.kind === 'ok') {
          expect(got, JSON.stringify(muts)).toMatchObject({ kind: 'ok', version: 1, signature: bs58.encode(want.firstSignature) });
          // kit decodes what the relay accepted to the same signature and signer count.
          const decoded = getTransactionDecoder().decode(tx);
          const sigs = Object.values(decoded.signatures);
          expect(sigs.length).toBe(tx[1]);
          if (got.kind === 'ok') expect(got.signatureCount).toBe(tx[1]);
        } else {
          expect(got, `${JSON.stringify(muts)}: model refuses ${want.reason}: ${want.message} ${want.detail ?? ''}`).toMatchObject({
            kind: 'refused',
            reason: want.reason,
            code: -32602,
            message: want.message,
          });
        }
      }),
      fcParams(SEED, 1500),
    );
  });
});
