import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { Errors, Failure, RelayError } from '../../../src/errors/registry.js';
import {
  canonicalBase64Length,
  decodeTransactionInto,
  describeBase64Error,
  maxEncodedLengths,
  parseEncodingParam,
  tryDecodeTransactionInto,
  tryParseEncodingParam,
} from '../../../src/tx/decode-transaction-string.js';
import { legacyTwoSigners, v0WithLookup } from '../../fixtures/tx/transactions.js';

const T = 'solana_transaction::versioned::VersionedTransaction';

function sabTarget(bytes = 1232): Buffer {
  return Buffer.from(new SharedArrayBuffer(bytes + 96), 96, bytes);
}

/** The refusal a try* function returned (intake's hot path returns refusals, it never throws them). */
function rejection(fn: () => unknown): Failure {
  const r = fn();
  if (r instanceof Failure) return r;
  throw new Error(`expected a Failure, got ${String(r)}`);
}

describe('encoded limits', () => {
  it("reproduces Agave's golden numbers and derives SIMD-0296's", () => {
    expect(maxEncodedLengths(1232)).toEqual({ base58Chars: 1683, base64Chars: 1644 });
    expect(maxEncodedLengths(4096)).toEqual({ base58Chars: 5594, base64Chars: 5464 });
  });
});

describe('decodeTransactionInto', () => {
  it('decodes base64 and base58 of real transactions into a SharedArrayBuffer-backed slot', () => {
    for (const { bytes } of [legacyTwoSigners(), v0WithLookup()]) {
      const slot = sabTarget();
      expect(tryDecodeTransactionInto(slot, bytes.toString('base64'), 'base64', 1232)).toBe(bytes.length);
      expect(slot.subarray(0, bytes.length).equals(bytes)).toBe(true);
      const slot58 = sabTarget();
      expect(tryDecodeTransactionInto(slot58, bs58.encode(bytes), 'base58', 1232)).toBe(bytes.length);
      expect(slot58.subarray(0, bytes.length).equals(bytes)).toBe(true);
    }
  });

  it('refuses over-long encodings before decoding, with Agave wording', () => {
    let e = rejection(() => tryDecodeTransactionInto(sabTarget(), 'A'.repeat(1700), 'base64', 1232));
    expect(e.spec).toBe(Errors.TX_TOO_LARGE_ENCODED);
    expect(e.message).toBe(`base64 encoded ${T} too large: 1700 bytes (max: encoded/raw 1644/1232)`);
    e = rejection(() => tryDecodeTransactionInto(sabTarget(), '2'.repeat(1684), 'base58', 1232));
    expect(e.message).toBe(`base58 encoded ${T} too large: 1684 bytes (max: encoded/raw 1683/1232)`);
    // Agave measures UTF-8 bytes: 1600 chars of which 100 are 2-byte 'é' is 1700 bytes.
    e = rejection(() => tryDecodeTransactionInto(sabTarget(), 'A'.repeat(1500) + 'é'.repeat(100), 'base64', 1232));
    expect(e.message).toBe(`base64 encoded ${T} too large: 1700 bytes (max: encoded/raw 1644/1232)`);
    e = rejection(() => tryDecodeTransactionInto(sabTarget(4096), 'A'.repeat(5468), 'base64', 4096));
    expect(e.message).toBe(`base64 encoded ${T} too large: 5468 bytes (max: encoded/raw 5464/4096)`);
  });

  it('refuses decoded transactions over the raw limit', () => {
    let e = rejection(() => tryDecodeTransactionInto(sabTarget(), 'A'.repeat(1644), 'base64', 1232));
    expect(e.spec).toBe(Errors.TX_TOO_LARGE_DECODED);
    expect(e.message).toBe(`decoded ${T} too large: 1233 bytes (max: 1232 bytes)`);
    e = rejection(() => tryDecodeTransactionInto(sabTarget(), '1'.repeat(1300), 'base58', 1232));
    expect(e.message).toBe(`decoded ${T} too large: 1300 bytes (max: 1232 bytes)`);
  });

  it('reports bad base64 like the base64 0.22 crate (Node would silently skip these)', () => {
    const cases: [string, string][] = [
      ['AAA!AAAA', 'InvalidByte(3, 33)'],
      ['AAAA-AAA', 'InvalidByte(4, 45)'],
      ['AAAA=AAA', 'InvalidByte(4, 61)'],
      ['AA=AAAAA', 'InvalidByte(2, 61)'],
      ['AAAAA', 'InvalidLength(5)'],
      ['AAAA\n', 'InvalidByte(4, 10)'],
      ['AAAAAA', 'InvalidPadding'],
      ['AAA==', 'InvalidByte(3, 61)'],
      ['AB==', 'InvalidLastSymbol(1, 66)'],
      ['AAB=', 'InvalidLastSymbol(2, 66)'],
      ['A===', 'InvalidByte(1, 61)'],
      ['AA=A', 'InvalidByte(2, 61)'],
      ['AAé=', 'InvalidByte(2, 195)'],
    ];
    for (const [input, detail] of cases) {
      const e = rejection(() => tryDecodeTransactionInto(sabTarget(), input, 'base64', 1232));
      expect(e.spec, input).toBe(Errors.TX_BAD_ENCODING);
      expect(e.message, input).toBe(`invalid base64 encoding: ${detail}`);
    }
    expect(describeBase64Error(Buffer.from('AAAA'))).toBeNull();
    expect(describeBase64Error(Buffer.from('AA=='))).toBeNull();
  });

  it('accepts exactly the canonical strings (random mutations vs the char-by-char oracle)', () => {
    // Beyond the alphabet: url-safe symbols, whitespace, Latin-1 and characters whose low byte is a base64 symbol
    // (Node reads '\u0151' as 'Q').
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ !\n\u00e9\u00c1\u0151\u0141\u012f\u{1F600}';
    let accepted = 0;
    for (let i = 0; i < 6000; i++) {
      const raw = Buffer.from(Array.from({ length: i % 40 }, () => Math.floor(Math.random() * 256)));
      const chars = raw.toString('base64').split('');
      const edits = i % 3;
      for (let k = 0; k < edits && chars.length > 0; k++) {
        const at = Math.floor(Math.random() * chars.length);
        const op = Math.floor(Math.random() * 3);
        const c = alphabet[Math.floor(Math.random() * alphabet.length)];
        if (op === 0) chars[at] = c;
        else if (op === 1) chars.splice(at, 1);
        else chars.splice(at, 0, c);
      }
      const input = chars.join('');
      const oracle = canonicalBase64Length(input);
      const slot = sabTarget();
      const got = tryDecodeTransactionInto(slot, input, 'base64', 1232);
      if (typeof got !== 'number') {
        expect(got, input).toBeInstanceOf(Failure);
        expect(got.spec, input).toBe(Errors.TX_BAD_ENCODING);
        expect(oracle, input).toBe(-1);
        continue;
      }
      accepted++;
      expect(got, input).toBe(oracle);
      expect(slot.subarray(0, got).equals(Buffer.from(input, 'base64')), input).toBe(true);
    }
    expect(accepted).toBeGreaterThan(1000);
  });

  it('reports bad base58 like the bs58 crate', () => {
    const e = rejection(() => tryDecodeTransactionInto(sabTarget(), '3yZe7d0', 'base58', 1232));
    expect(e.spec).toBe(Errors.TX_BAD_ENCODING);
    expect(e.message).toBe("invalid base58 encoding: InvalidCharacter { character: '0', index: 6 }");
    const f = rejection(() => tryDecodeTransactionInto(sabTarget(), 'abcé', 'base58', 1232));
    expect(f.message).toBe('invalid base58 encoding: NonAsciiCharacter { index: 3 }');
  });

  it('refuses a target smaller than the limit (programming error)', () => {
    expect(() => tryDecodeTransactionInto(Buffer.alloc(100), 'AAAA', 'base64', 1232)).toThrow(RangeError);
  });
});

describe('parseEncodingParam', () => {
  it('maps sendTransaction encodings like Agave', () => {
    expect(tryParseEncodingParam(undefined)).toBe('base58');
    expect(tryParseEncodingParam(null)).toBe('base58');
    expect(tryParseEncodingParam('base58')).toBe('base58');
    expect(tryParseEncodingParam('binary')).toBe('base58');
    expect(tryParseEncodingParam('base64')).toBe('base64');
    for (const enc of ['json', 'jsonParsed']) {
      const e = rejection(() => tryParseEncodingParam(enc));
      expect(e.spec).toBe(Errors.TX_UNSUPPORTED_ENCODING);
      expect(e.message).toBe(`unsupported encoding: ${enc}. Supported encodings: base58, base64`);
    }
    const e = rejection(() => tryParseEncodingParam('hex'));
    expect(e.spec).toBe(Errors.INVALID_PARAMS);
    expect(e.message).toContain('unknown variant `hex`');
    expect(rejection(() => tryParseEncodingParam(5)).spec).toBe(Errors.INVALID_PARAMS);
  });
});

describe('refusals are values, and the throwing wrappers throw the same answer', () => {
  const cases: [string, () => unknown, () => unknown][] = [
    ['too large', () => tryDecodeTransactionInto(sabTarget(), 'A'.repeat(1700), 'base64', 1232), () => decodeTransactionInto(sabTarget(), 'A'.repeat(1700), 'base64', 1232)],
    ['bad base64', () => tryDecodeTransactionInto(sabTarget(), 'AA!A', 'base64', 1232), () => decodeTransactionInto(sabTarget(), 'AA!A', 'base64', 1232)],
    ['bad base58', () => tryDecodeTransactionInto(sabTarget(), '3yZe7d0', 'base58', 1232), () => decodeTransactionInto(sabTarget(), '3yZe7d0', 'base58', 1232)],
    ['json encoding', () => tryParseEncodingParam('json'), () => parseEncodingParam('json')],
    ['unknown encoding', () => tryParseEncodingParam('hex'), () => parseEncodingParam('hex')],
  ];
  it.each(cases)('%s', (_name, value, thrower) => {
    const f = rejection(value);
    // Not an Error: no stack trace is captured on the hot path.
    expect(f).not.toBeInstanceOf(Error);
    expect(Object.prototype.hasOwnProperty.call(f, 'stack')).toBe(false);
    let thrown: unknown;
    try {
      thrower();
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(RelayError);
    const e = thrown as RelayError;
    expect([e.spec, e.message, e.data]).toEqual([f.spec, f.message, f.data]);
  });
});
