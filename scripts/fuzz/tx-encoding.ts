// A mutated transaction put on the wire as a string (base64, base58) or raw bytes, with the intake answer that
// encoding implies (harness process; generation, hot). Agave's order (src/tx/decode-transaction-string.ts, and
// docs/transactions.md): encoded length over the limit first (5464 base64 / 5594 base58 characters: the encodings of
// 4096 bytes, a v1's largest), then characters outside the alphabet (base64 crate InvalidByte(index, byte), bs58
// InvalidCharacter), then the decoded length per format (1232 legacy/v0, 4096 v1), then the bytes' own verdict. The
// pool's transactions are legacy and v0; a mutation that starts with v1's version byte (0x81) is judged loosely (an
// intake refusal or an acceptance), since the v1 rules are checked byte for byte by test/property/tx-wire-v1.test.ts. Text faults (a bad character, an overlong string, the wrong
// alphabet) are made here on top of an intact transaction.
import bs58 from 'bs58';
import type { Rng } from './rng.js';
import { MAX_TX_BYTES } from './tx-pool.js';
import { TX_TYPE, type ByteOutcome, type TxCase } from './tx-mutations.js';

export type TextEncoding = 'base64' | 'base58';

/** The relay's largest transaction (transactions.maxTransactionBytes' default: a v1 of SIMD-0296). */
export const MAX_V1_TX_BYTES = 4096;
export const MAX_BASE64_CHARS = 4 * Math.ceil(MAX_V1_TX_BYTES / 3);
export const MAX_BASE58_CHARS = Math.ceil((MAX_V1_TX_BYTES * Math.log(256)) / Math.log(58));

/** The decoded-size cap of these bytes' format (Agave's wire_size_limit), and the cap that speaks beyond 4096. */
function capOf(bytes: Buffer): number {
  return bytes.length > MAX_V1_TX_BYTES || bytes[0] === 0x81 ? MAX_V1_TX_BYTES : MAX_TX_BYTES;
}

export interface EncodedTx {
  readonly text: string;
  readonly outcome: ByteOutcome;
  readonly label: string;
}

function encodedTooLarge(encoding: TextEncoding, chars: number): ByteOutcome {
  const max = encoding === 'base64' ? MAX_BASE64_CHARS : MAX_BASE58_CHARS;
  return { kind: 'error', reason: 'tx_too_large_encoded', message: `${encoding} encoded ${TX_TYPE} too large: ${chars} bytes (max: encoded/raw ${max}/${MAX_V1_TX_BYTES})` };
}

export function decodedTooLarge(n: number, cap: number = MAX_TX_BYTES): ByteOutcome {
  return { kind: 'error', reason: 'tx_too_large_decoded', message: `decoded ${TX_TYPE} too large: ${n} bytes (max: ${cap} bytes)` };
}

/** The verdict of decoded bytes within the encoded limit: their format's size cap, then their own verdict. */
function decodedOutcome(tx: TxCase): ByteOutcome {
  const cap = capOf(tx.bytes);
  if (tx.bytes.length > cap) return decodedTooLarge(tx.bytes.length, cap);
  return tx.bytes[0] === 0x81 ? { kind: 'loose' } : tx.outcome;
}

/** The outcome of valid text of `encoding` for these bytes (size checks, then the bytes' verdict). */
function sized(encoding: TextEncoding, text: string, tx: TxCase): ByteOutcome {
  const max = encoding === 'base64' ? MAX_BASE64_CHARS : MAX_BASE58_CHARS;
  if (text.length > max) return encodedTooLarge(encoding, text.length);
  return decodedOutcome(tx);
}

/** base58 of the pool's own buffers, computed once (bs58 is quadratic: ~1 ms for 1232 bytes). */
const base58Memo = new WeakMap<Buffer, string>();

function base58(bytes: Buffer): string {
  let s = base58Memo.get(bytes);
  if (s === undefined) base58Memo.set(bytes, (s = bs58.encode(bytes)));
  return s;
}

export function encodeText(tx: TxCase, encoding: TextEncoding): EncodedTx {
  const text = encoding === 'base64' ? tx.bytes.toString('base64') : base58(tx.bytes);
  return { text, outcome: sized(encoding, text, tx), label: `${tx.label} as ${encoding}` };
}

/** Raw bytes (application/octet-stream): only the decoded limit applies. Empty bodies are the endpoint's business. */
export function rawOutcome(tx: TxCase): ByteOutcome {
  return decodedOutcome(tx);
}

const BASE64_BAD = ['!', '-', '_', ' ', '*', '.', '"'];
const BASE58_BAD = ['0', 'O', 'I', 'l', '+', '/', '='];

/** Rust char Debug of the ASCII characters used above. */
function rustChar(c: string): string {
  return c === "'" ? "'\\''" : `'${c}'`;
}

/**
 * Text that is wrong as text, made from an intact transaction `tx` (whose bytes fit the limit): a character outside
 * the alphabet, a string over the encoded limit, or the other alphabet than the one announced.
 */
export function faultyText(rng: Rng, tx: TxCase, encoding: TextEncoding): EncodedTx {
  const good = encodeText(tx, encoding).text;
  const fault = rng.pick(['bad character', 'too long', 'other alphabet']);
  if (fault === 'bad character' && encoding === 'base64' && good.length > 8) {
    // Within the complete quads before the last one the first invalid byte is the one reported.
    const i = rng.int(good.length - 4);
    const c = rng.pick(BASE64_BAD);
    const text = good.slice(0, i) + c + good.slice(i + 1);
    return { text, outcome: { kind: 'error', reason: 'tx_bad_encoding', message: `invalid base64 encoding: InvalidByte(${i}, ${c.charCodeAt(0)})` }, label: `base64 with ${JSON.stringify(c)} at ${i}` };
  }
  if (fault === 'bad character' && encoding === 'base58') {
    const i = rng.int(good.length);
    const c = rng.pick(BASE58_BAD);
    const text = good.slice(0, i) + c + good.slice(i + 1);
    return {
      text,
      outcome: { kind: 'error', reason: 'tx_bad_encoding', message: `invalid base58 encoding: InvalidCharacter { character: ${rustChar(c)}, index: ${i} }` },
      label: `base58 with ${JSON.stringify(c)} at ${i}`,
    };
  }
  if (fault === 'too long') {
    const max = encoding === 'base64' ? MAX_BASE64_CHARS : MAX_BASE58_CHARS;
    const n = max + rng.range(1, encoding === 'base64' ? 40 : 40);
    const text = (encoding === 'base64' ? 'A' : '1').repeat(n);
    return { text, outcome: encodedTooLarge(encoding, n), label: `${n} characters of ${encoding}` };
  }
  // Announced one alphabet, sent the other: some intake error, or (rarely) bytes that happen to parse.
  const other: TextEncoding = encoding === 'base64' ? 'base58' : 'base64';
  return { text: encodeText(tx, other).text, outcome: { kind: 'loose' }, label: `${other} text announced as ${encoding}` };
}
