// Property tests of transaction text decoding (src/tx/decode-transaction-string.ts, src/tx/base58.ts via
// test/property/tx-oracle.ts), against independent oracles: Node's base64 plus a strict canonical-base64 check written
// here (base64 crate 0.22 STANDARD: alphabet, padding, zero trailing bits), the `bs58` package, and Agave's limits
// and wording (rpc.rs decode_and_deserialize, /work/shared/notes/json-rpc-wire.md):
//   - base58 and base64 text of the same bytes decode to exactly those bytes and get the same intake verdict;
//   - size limits at the boundaries: encoded (UTF-8 bytes) > 1644 / 1683, then decoded > 1232, Agave's messages;
//   - a text is accepted iff it is canonical base64 / pure base58, and the first bad character is reported as
//     Agave does (InvalidByte(index, byte), InvalidCharacter { character: 'x', index: i }, NonAsciiCharacter);
//   - the hot-path base58 encoders equal bs58 for any 64/32 bytes at any offset;
//   - sendTransaction's `encoding` values map as Agave's (absent/null base58, binary = base58, json refused).
// Seeded: FC_SEED / FC_PATH / FC_RUNS_SCALE (test/property/fc-params.ts).
import bs58 from 'bs58';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fcParams } from './fc-params.js';
import { buildReal, shapeArb } from './real-transactions.js';
import { decodeText, describe as describeOutcome, encodingParam, intakeText, pubkeyBase58, signatureBase58 } from './tx-oracle.js';

const SEED = 0x5eed_0005;
const T = 'solana_transaction::versioned::VersionedTransaction';
const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

// ---- independent oracles ----

/** Canonical STANDARD base64 as the base64 crate 0.22 accepts it: alphabet, '=' only as 1-2 final pads, zero trailing bits. */
function isCanonicalBase64(s: string): boolean {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s)) return false;
  if (s.endsWith('==')) return (B64.indexOf(s[s.length - 3]) & 0x0f) === 0;
  if (s.endsWith('=')) return (B64.indexOf(s[s.length - 2]) & 0x03) === 0;
  return true;
}

/** Rust's char Debug for an ASCII code (what bs58's InvalidCharacter { character } prints). */
function rustDebugChar(code: number): string {
  const special: Record<number, string> = { 0: '\\0', 9: '\\t', 10: '\\n', 13: '\\r', 0x27: "\\'", 0x5c: '\\\\' };
  if (special[code] !== undefined) return `'${special[code]}'`;
  if (code < 0x20 || code === 0x7f) return `'\\u{${code.toString(16)}}'`;
  return `'${String.fromCharCode(code)}'`;
}

const utf8Length = (s: string): number => Buffer.byteLength(s, 'utf8');

// ---- generators ----

const realTx = fc.tuple(shapeArb, fc.nat()).map(([shape, s]) => buildReal(shape, s));
/** Bytes a client might send: real transactions, random bytes, bytes with leading zeros (base58's special case). */
const someBytes: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 2, arbitrary: realTx },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 1232 }).map((b) => Buffer.from(b)) },
  { weight: 1, arbitrary: fc.tuple(fc.nat(40), fc.uint8Array({ maxLength: 300 })).map(([z, b]) => Buffer.concat([Buffer.alloc(z), b])) },
  { weight: 1, arbitrary: fc.constantFrom(Buffer.alloc(0), Buffer.alloc(1), Buffer.alloc(1232), Buffer.alloc(1232, 0xff), Buffer.alloc(64, 0)) },
);

/** Characters that break encodings in different ways. */
const nastyChar = fc.constantFrom('=', '-', '_', ' ', '\n', '\t', '\r', '\0', '0', 'O', 'I', 'l', '+', '/', '!', "'", '\\', '"', '\u007f', '\u0085', 'é', '\u00a0', '\u0151', '€', '\ud83d\ude00', '\ud800');

function mutateText(s: string): fc.Arbitrary<string> {
  return fc.oneof(
    fc.tuple(fc.nat(), nastyChar).map(([i, c]) => {
      const at = i % (s.length + 1);
      return s.slice(0, at) + c + s.slice(at + 1);
    }),
    fc.tuple(fc.nat(), nastyChar).map(([i, c]) => {
      const at = i % (s.length + 1);
      return s.slice(0, at) + c + s.slice(at);
    }),
    fc.nat().map((i) => {
      const at = i % (s.length + 1);
      return s.slice(0, at) + s.slice(at + 1);
    }),
    fc.nat().map((n) => s.slice(0, n % (s.length + 1))),
    fc.constantFrom(s + '=', s + '==', s.replace(/=+$/, ''), ' ' + s, s + '\n'),
  );
}

describe('transaction text decoding (property)', () => {
  it('base58 and base64 text of the same bytes decode to exactly those bytes and get the same verdict', () => {
    fc.assert(
      fc.property(someBytes, (bytes) => {
        const b64 = intakeText(bytes.toString('base64'), 'base64');
        const b58 = intakeText(bs58.encode(bytes), 'base58');
        expect(b64.kind, describeOutcome(b64)).not.toBe('exception');
        expect(b58.kind, describeOutcome(b58)).not.toBe('exception');
        const d64 = decodeText(bytes.toString('base64'), 'base64');
        const d58 = decodeText(bs58.encode(bytes), 'base58');
        expect(d64, describeOutcome(d64)).toMatchObject({ kind: 'ok' });
        expect(d58, describeOutcome(d58)).toMatchObject({ kind: 'ok' });
        if (d64.kind === 'ok') expect(d64.bytes.equals(bytes)).toBe(true);
        if (d58.kind === 'ok') expect(d58.bytes.equals(bytes)).toBe(true);
        expect(b58).toEqual(b64);
      }),
      fcParams(SEED, 80),
    );
  });

  it('size limits: encoded length (UTF-8 bytes) over 1644 / 1683, then decoded over 1232, with Agave\'s messages', () => {
    const sized = fc.tuple(fc.integer({ min: 1100, max: 1300 }), fc.nat(30), fc.nat()).map(([n, zeros, salt]) => {
      const b = Buffer.alloc(n);
      for (let i = Math.min(zeros, n); i < n; i++) b[i] = (i * 131 + salt) & 0xff || 1;
      return b;
    });
    fc.assert(
      fc.property(sized, (bytes) => {
        const n = bytes.length;
        const t64 = bytes.toString('base64');
        const r64 = decodeText(t64, 'base64');
        if (t64.length > 1644) {
          expect(r64).toMatchObject({ kind: 'refused', reason: 'tx_too_large_encoded', code: -32602, message: `base64 encoded ${T} too large: ${t64.length} bytes (max: encoded/raw 1644/1232)` });
        } else if (n > 1232) {
          expect(r64).toMatchObject({ kind: 'refused', reason: 'tx_too_large_decoded', code: -32602, message: `decoded ${T} too large: ${n} bytes (max: 1232 bytes)` });
        } else {
          expect(r64.kind, describeOutcome(r64)).toBe('ok');
        }
        const t58 = bs58.encode(bytes);
        const r58 = decodeText(t58, 'base58');
        if (t58.length > 1683) {
          expect(r58).toMatchObject({ kind: 'refused', reason: 'tx_too_large_encoded', code: -32602, message: `base58 encoded ${T} too large: ${t58.length} bytes (max: encoded/raw 1683/1232)` });
        } else if (n > 1232) {
          expect(r58).toMatchObject({ kind: 'refused', reason: 'tx_too_large_decoded', code: -32602, message: `decoded ${T} too large: ${n} bytes (max: 1232 bytes)` });
        } else {
          expect(r58.kind, describeOutcome(r58)).toBe('ok');
        }
      }),
      fcParams(SEED + 1, 60),
    );
  });

  it('any text longer than the encoded limit in UTF-8 bytes is "encoded ... too large" with its UTF-8 length, whatever its characters', () => {
    // A short random pattern (any code points) repeated to 400-1700 characters: cheap to generate, and long texts of
    // multi-byte characters straddle the limit in UTF-8 bytes while staying under it in characters.
    const text = fc
      .tuple(fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }), fc.integer({ min: 400, max: 1700 }))
      .map(([p, n]) => p.repeat(Math.ceil(n / p.length)).slice(0, n));
    const long = fc.tuple(text, fc.constantFrom('base64', 'base58') as fc.Arbitrary<'base64' | 'base58'>);
    fc.assert(
      fc.property(long, ([s, enc]) => {
        const max = enc === 'base64' ? 1644 : 1683;
        const r = decodeText(s, enc);
        expect(r.kind, describeOutcome(r)).not.toBe('exception');
        if (utf8Length(s) > max) {
          expect(r).toMatchObject({ kind: 'refused', reason: 'tx_too_large_encoded', message: `${enc} encoded ${T} too large: ${utf8Length(s)} bytes (max: encoded/raw ${max}/1232)` });
        } else {
          expect(r.kind === 'ok' || (r.kind === 'refused' && r.reason !== 'tx_too_large_encoded'), describeOutcome(r)).toBe(true);
        }
      }),
      fcParams(SEED + 2, 100),
    );
  });

  it('configurable limit (4096, SIMD-0296): the same rules with the maxima derived from it (5464 / 5594)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 4094, max: 4100 }), fc.nat(), (n, salt) => {
        const bytes = Buffer.alloc(n, (salt % 255) + 1);
        const r64 = decodeText(bytes.toString('base64'), 'base64', 4096);
        const len64 = bytes.toString('base64').length;
        if (len64 > 5464) expect(r64).toMatchObject({ reason: 'tx_too_large_encoded', message: `base64 encoded ${T} too large: ${len64} bytes (max: encoded/raw 5464/4096)` });
        else if (n > 4096) expect(r64).toMatchObject({ reason: 'tx_too_large_decoded', message: `decoded ${T} too large: ${n} bytes (max: 4096 bytes)` });
        else expect(r64.kind === 'ok' && r64.bytes.equals(bytes)).toBe(true);
        const t58 = bs58.encode(bytes);
        const r58 = decodeText(t58, 'base58', 4096);
        if (t58.length > 5594) expect(r58).toMatchObject({ reason: 'tx_too_large_encoded', message: `base58 encoded ${T} too large: ${t58.length} bytes (max: encoded/raw 5594/4096)` });
        else if (n > 4096) expect(r58).toMatchObject({ reason: 'tx_too_large_decoded', message: `decoded ${T} too large: ${n} bytes (max: 4096 bytes)` });
        else expect(r58.kind === 'ok' && r58.bytes.equals(bytes)).toBe(true);
      }),
      fcParams(SEED + 3, 10),
    );
  });

  it('base64: accepted iff canonical (strict oracle), with exactly Node\'s bytes; otherwise "invalid base64 encoding: <base64 crate error>"', () => {
    const text = fc.oneof(
      { weight: 3, arbitrary: someBytes.chain((b) => mutateText(b.toString('base64').slice(0, 1644))) },
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b).toString('base64')) },
      { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(...B64.split(''), '=', '=', '-', '_', ' '), maxLength: 40 }) },
    );
    fc.assert(
      fc.property(text, (s) => {
        const r = decodeText(s, 'base64');
        expect(r.kind, `${JSON.stringify(s.slice(0, 80))}: ${describeOutcome(r)}`).not.toBe('exception');
        if (utf8Length(s) > 1644) return; // the size rule above
        if (isCanonicalBase64(s)) {
          const bytes = Buffer.from(s, 'base64');
          if (bytes.length > 1232) expect(r).toMatchObject({ reason: 'tx_too_large_decoded' });
          else expect(r.kind === 'ok' && r.bytes.equals(bytes), `${JSON.stringify(s.slice(0, 80))}: ${describeOutcome(r)}`).toBe(true);
        } else {
          expect(r, JSON.stringify(s)).toMatchObject({ kind: 'refused', reason: 'tx_bad_encoding', code: -32602 });
          if (r.kind === 'refused') {
            expect(r.message).toMatch(/^invalid base64 encoding: (InvalidByte\(\d+, \d+\)|InvalidLength\(\d+\)|InvalidPadding|InvalidLastSymbol\(\d+, \d+\))$/);
          }
        }
      }),
      fcParams(SEED + 4, 400),
    );
  });

  it('base64: one bad character before the final quad is reported as InvalidByte(its UTF-8 index, its first UTF-8 byte)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 9, maxLength: 900 }), fc.nat(), nastyChar.filter((c) => c !== '+' && c !== '/' && c !== '0' && c !== 'O' && c !== 'I' && c !== 'l'), (b, i, c) => {
        const s = Buffer.from(b).toString('base64');
        const at = i % (s.length - 4);
        const t = s.slice(0, at) + c + s.slice(at + 1);
        const r = decodeText(t, 'base64');
        expect(r, JSON.stringify(t)).toMatchObject({ kind: 'refused', reason: 'tx_bad_encoding', message: `invalid base64 encoding: InvalidByte(${at}, ${Buffer.from(c, 'utf8')[0]})` });
      }),
      fcParams(SEED + 5, 500),
    );
  });

  it('base58: accepted iff every character is in the alphabet, with bs58\'s bytes; else the first bad character as bs58 reports it', () => {
    const text = fc.oneof(
      { weight: 3, arbitrary: someBytes.chain((b) => mutateText(bs58.encode(b).slice(0, 1683))) },
      { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(...B58.split(''), '0', 'O', 'I', 'l', ' ', '\u00e9'), maxLength: 60 }) },
    );
    fc.assert(
      fc.property(text, (s) => {
        const r = decodeText(s, 'base58');
        expect(r.kind, `${JSON.stringify(s.slice(0, 80))}: ${describeOutcome(r)}`).not.toBe('exception');
        if (utf8Length(s) > 1683) return;
        const bad = [...s].findIndex((ch) => !B58.includes(ch));
        if (bad < 0) {
          const bytes = Buffer.from(bs58.decode(s));
          if (bytes.length > 1232) expect(r).toMatchObject({ reason: 'tx_too_large_decoded', message: `decoded ${T} too large: ${bytes.length} bytes (max: 1232 bytes)` });
          else expect(r.kind === 'ok' && r.bytes.equals(bytes), describeOutcome(r)).toBe(true);
          return;
        }
        // Every character before the first bad one is ASCII, so its char index is its byte index.
        const index = [...s].slice(0, bad).join('').length;
        const code = s.codePointAt(index)!;
        const detail = code > 127 ? `NonAsciiCharacter { index: ${index} }` : `InvalidCharacter { character: ${rustDebugChar(code)}, index: ${index} }`;
        expect(r, JSON.stringify(s.slice(0, 80))).toMatchObject({ kind: 'refused', reason: 'tx_bad_encoding', code: -32602, message: `invalid base58 encoding: ${detail}` });
      }),
      fcParams(SEED + 6, 300),
    );
  });

  it('the hot-path base58 encoders equal bs58 for any signature (64 bytes) and key (32 bytes) at any offset', () => {
    const leadingZeros = (n: number): fc.Arbitrary<Uint8Array> =>
      fc.oneof(
        fc.uint8Array({ minLength: n, maxLength: n }),
        fc.tuple(fc.nat(n), fc.uint8Array({ minLength: n, maxLength: n })).map(([z, b]) => Uint8Array.from(b, (x, i) => (i < z ? 0 : x))),
        fc.constantFrom(new Uint8Array(n), new Uint8Array(n).fill(0xff), Uint8Array.from({ length: n }, (_, i) => (i === n - 1 ? 1 : 0))),
      );
    fc.assert(
      fc.property(leadingZeros(64), leadingZeros(32), fc.nat(100), fc.nat(100), (sig, key, before, after) => {
        const buf = Buffer.concat([Buffer.alloc(before, 0x33), sig, Buffer.alloc(after, 0x44)]);
        expect(signatureBase58(buf, before)).toEqual({ kind: 'ok', text: bs58.encode(sig) });
        const kbuf = Buffer.concat([Buffer.alloc(before, 0x55), key, Buffer.alloc(after, 0x66)]);
        expect(pubkeyBase58(kbuf, before)).toEqual({ kind: 'ok', text: bs58.encode(key) });
      }),
      fcParams(SEED + 7, 1000),
    );
  });

  it('sendTransaction `encoding` values: absent/null base58, binary = base58, base64, json/jsonParsed refused, anything else -32602', () => {
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(undefined, null, 'base58', 'binary', 'base64', 'json', 'jsonParsed', 'BASE64', 'base64 ', ''), fc.jsonValue({ maxDepth: 2 })), (v) => {
        const r = encodingParam(v);
        expect(r.kind, describeOutcome(r)).not.toBe('exception');
        if (v === undefined || v === null || v === 'base58' || v === 'binary') expect(r).toEqual({ kind: 'ok', encoding: 'base58' });
        else if (v === 'base64') expect(r).toEqual({ kind: 'ok', encoding: 'base64' });
        else if (v === 'json' || v === 'jsonParsed') {
          expect(r).toEqual({ kind: 'refused', reason: 'tx_unsupported_encoding', code: -32602, message: `unsupported encoding: ${v}. Supported encodings: base58, base64` });
        } else if (typeof v === 'string') {
          expect(r).toMatchObject({ kind: 'refused', reason: 'invalid_params', code: -32602 });
          if (r.kind === 'refused') expect(r.message).toContain(`unknown variant \`${v}\``);
        } else {
          expect(r).toMatchObject({ kind: 'refused', reason: 'invalid_params', code: -32602 });
        }
      }),
      fcParams(SEED + 8, 300),
    );
  });
});
