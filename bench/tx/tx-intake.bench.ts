// Micro benches of the transaction intake hot path (src/tx): decode into a SharedArrayBuffer slot, parse + sanitize,
// first-signature base58 (ours vs the bs58 package, ratio printed from the same run), Ed25519 verify; legacy, v0 and v1.
//   npx tsc -p tsconfig.json && node dist/bench/tx/tx-intake.bench.js [timeMs per task, default 300]
import { createPublicKey, randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import { Bench } from 'tinybench';
import { legacyTx, v0Tx } from './sample-transactions.js';
import { signedV1 } from '../../test/fixtures/tx/v1-transactions.js';
import {
  clearKeyCache,
  createParsedTransaction,
  decodeTransactionInto,
  encodeSignatureBase58,
  parseTransaction,
  verifyTransactionSignatures,
} from '../../src/tx/index.js';

const MAX = 1232;
/** DER SubjectPublicKeyInfo header for Ed25519 (RFC 8410), the reference key import's. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');


async function main(): Promise<void> {
  const time = Number(process.argv[2] ?? 300);
  const sab = new SharedArrayBuffer(96 + MAX);
  const slot = Buffer.from(sab, 96, MAX);
  // 1644 base64 chars with two pads = 1231 bytes: the largest canonical base64 under the 1232-byte limit.
  const big64 = randomBytes(1231).toString('base64');
  if (big64.length !== 1644) throw new Error(`expected 1644 chars, got ${big64.length}`);
  const legacy = legacyTx();
  const v0 = v0Tx();
  const legacy58 = bs58.encode(legacy);
  const v1 = (await signedV1({ lamports: 1n, priorityFeeLamports: 5_000n, computeUnitLimit: 1_000 })).bytes;
  const parsed = createParsedTransaction();
  const parsedLegacy = createParsedTransaction();
  parseTransaction(legacy, 0, legacy.length, parsedLegacy);
  const sig = legacy.subarray(1, 65);
  const keyAt = parsedLegacy.accountKeysOffset;
  const spki = Buffer.alloc(ED25519_SPKI_PREFIX.length + 32);
  ED25519_SPKI_PREFIX.copy(spki, 0);
  let sink = 0;

  const bench = new Bench({ time, warmupTime: 100 });
  bench
    .add('decode base64 1644 chars -> SAB slot (validated)', () => {
      sink += decodeTransactionInto(slot, big64, 'base64', MAX);
    })
    .add('  reference: Buffer.write base64, unvalidated', () => {
      sink += slot.write(big64, 0, 'base64');
    })
    .add(`decode base58 ${legacy58.length} chars (legacy tx; quadratic, 1682 chars ~0.45 ms)`, () => {
      sink += decodeTransactionInto(slot, legacy58, 'base58', MAX);
    })
    .add(`parse+sanitize legacy (${legacy.length} B)`, () => {
      parseTransaction(legacy, 0, legacy.length, parsed);
      sink += parsed.messageLength;
    })
    .add(`parse+sanitize v0 + lookup table (${v0.length} B)`, () => {
      parseTransaction(v0, 0, v0.length, parsed);
      sink += parsed.messageLength;
    })
    .add(`parse+sanitize v1 transfer + fee config (${v1.length} B)`, () => {
      parseTransaction(v1, 0, v1.length, parsed);
      sink += parsed.messageLength;
    })
    .add('first signature base58: ours', () => {
      sink += encodeSignatureBase58(legacy, 1).length;
    })
    .add('first signature base58: bs58 package', () => {
      sink += bs58.encode(sig).length;
    })
    .add('verify 1 signature (cached KeyObject)', () => {
      sink += verifyTransactionSignatures(legacy, 0, parsedLegacy) ? 1 : 0;
    })
    .add('verify 1 signature (KeyObject rebuilt)', () => {
      clearKeyCache();
      sink += verifyTransactionSignatures(legacy, 0, parsedLegacy) ? 1 : 0;
    })
    // The signer's KeyObject on a cache miss: as verify-signatures.ts imports it (JWK) and as it did before (SPKI DER).
    .add('signer key import: JWK (ours)', () => {
      const k = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: legacy.toString('base64url', keyAt, keyAt + 32) }, format: 'jwk' });
      sink += k.asymmetricKeyType === 'ed25519' ? 1 : 0;
    })
    .add('signer key import: SPKI DER (reference)', () => {
      legacy.copy(spki, ED25519_SPKI_PREFIX.length, keyAt, keyAt + 32);
      const k = createPublicKey({ key: spki, format: 'der', type: 'spki' });
      sink += k.asymmetricKeyType === 'ed25519' ? 1 : 0;
    });

  await bench.run();
  console.table(
    bench.tasks.map((t) => {
      const r = t.result;
      return {
        task: t.name,
        'median (us)': r?.latency.p50 !== undefined ? (r.latency.p50 * 1000).toFixed(3) : 'n/a',
        'mean (us)': r ? (r.latency.mean * 1000).toFixed(3) : 'n/a',
        'p99 (us)': r?.latency.p99 !== undefined ? (r.latency.p99 * 1000).toFixed(3) : 'n/a',
        'ops/s': r ? Math.round(r.throughput.mean).toLocaleString('en-US') : 'n/a',
        samples: r ? r.latency.samples.length : 0,
      };
    }),
  );
  // Medians: the box is shared, so means carry scheduler outliers.
  const median = (name: string): number => bench.tasks.find((t) => t.name === name)?.result?.latency.p50 ?? NaN;
  const ratio = median('first signature base58: bs58 package') / median('first signature base58: ours');
  console.log(`base58 signature speed-up vs bs58 (same run, medians): ${ratio.toFixed(1)}x`);
  const keyRatio = median('signer key import: SPKI DER (reference)') / median('signer key import: JWK (ours)');
  console.log(`signer key import, JWK vs SPKI DER (same run, medians): ${keyRatio.toFixed(1)}x faster (${process.version})`);
  if (sink === -1) console.log(sink); // keep results observable
}

await main();
