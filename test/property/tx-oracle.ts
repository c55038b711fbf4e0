// The one adapter between the property tests and src/tx: every call into the transaction intake code goes through
// here and comes back as a plain value — accepted (with what was decoded), refused (a RelayError: its registry reason,
// JSON-RPC code and message) or `exception` (anything else, which is always a bug). When the intake functions change
// shape (throwing -> returning errors), only this file changes.
//
// src/tx functions called: decodeTransactionInto, parseTransaction, createParsedTransaction, encodeSignatureBase58,
// encodePubkeyBase58, parseEncodingParam (all through src/tx/index.ts).
import { RelayError } from '../../src/errors/registry.js';
import {
  createParsedTransaction,
  decodeTransactionInto,
  encodePubkeyBase58,
  encodeSignatureBase58,
  parseEncodingParam,
  parseTransaction,
  type ParsedTransaction,
  type TransactionEncoding,
} from '../../src/tx/index.js';

export interface Refused {
  readonly kind: 'refused';
  readonly reason: string;
  readonly code: number;
  readonly message: string;
}
export interface Exception {
  readonly kind: 'exception';
  readonly error: unknown;
}
export type Outcome<T> = ({ readonly kind: 'ok' } & T) | Refused | Exception;

/** The intake family of the error registry: every refusal of transaction text or bytes is one of these. */
export const INTAKE_REASONS: ReadonlySet<string> = new Set([
  'tx_too_large_encoded',
  'tx_too_large_decoded',
  'tx_bad_encoding',
  'tx_undecodable',
  'tx_invalid',
  'tx_unsupported_encoding',
]);

function caught(err: unknown): Refused | Exception {
  if (err instanceof RelayError) return { kind: 'refused', reason: err.spec.reason, code: err.spec.rpcCode, message: err.message };
  return { kind: 'exception', error: err };
}

/** Short text for assertion messages. */
export function describe<T>(o: Outcome<T>): string {
  switch (o.kind) {
    case 'ok':
      return 'accepted';
    case 'refused':
      return `refused ${o.reason} (${o.code}): ${o.message}`;
    case 'exception': {
      const e = o.error;
      return `EXCEPTION ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`;
    }
  }
}

/** Encoded text -> wire bytes (a copy), as intake decodes it into a ring slot of maxTransactionBytes. */
export function decodeText(text: string, encoding: TransactionEncoding, maxTransactionBytes = 1232): Outcome<{ bytes: Buffer }> {
  // A slot-sized target with garbage in it, like a reused ring slot.
  const target = Buffer.alloc(maxTransactionBytes, 0xa5);
  try {
    const n = decodeTransactionInto(target, text, encoding, maxTransactionBytes);
    return { kind: 'ok', bytes: Buffer.from(target.subarray(0, n)) };
  } catch (err) {
    return caught(err);
  }
}

export interface ParsedSummary {
  /** base58 of the first signature, as intake answers it. */
  readonly signature: string;
  /** -1 legacy, 0 v0. */
  readonly version: number;
  readonly signatureCount: number;
  readonly numRequiredSignatures: number;
  readonly numReadonlySigned: number;
  readonly numReadonlyUnsigned: number;
  readonly accountKeysCount: number;
  readonly instructionCount: number;
  readonly addressTableLookupCount: number;
  readonly lookupAccountCount: number;
  /** base58 of each static account key. */
  readonly accountKeys: readonly string[];
}

const parsed: ParsedTransaction = createParsedTransaction();

/**
 * Parse + sanitize wire bytes placed at `offset` inside a buffer of `offset + bytes.length + after` bytes whose other
 * bytes are `fill` (a ring slot: the transaction never starts at 0 and is followed by garbage).
 */
export function parseWire(bytes: Uint8Array, offset = 0, after = 0, fill = 0x5a): Outcome<ParsedSummary> {
  const buf = Buffer.alloc(offset + bytes.length + after, fill);
  buf.set(bytes, offset);
  try {
    parseTransaction(buf, offset, bytes.length, parsed);
    const keys: string[] = [];
    for (let i = 0; i < parsed.accountKeysCount; i++) keys.push(encodePubkeyBase58(buf, offset + parsed.accountKeysOffset + 32 * i));
    return {
      kind: 'ok',
      signature: encodeSignatureBase58(buf, offset + parsed.firstSignatureOffset),
      version: parsed.version,
      signatureCount: parsed.signatureCount,
      numRequiredSignatures: parsed.numRequiredSignatures,
      numReadonlySigned: parsed.numReadonlySigned,
      numReadonlyUnsigned: parsed.numReadonlyUnsigned,
      accountKeysCount: parsed.accountKeysCount,
      instructionCount: parsed.instructionCount,
      addressTableLookupCount: parsed.addressTableLookupCount,
      lookupAccountCount: parsed.lookupAccountCount,
      accountKeys: keys,
    };
  } catch (err) {
    return caught(err);
  }
}

/** Text -> decode -> parse -> first signature: what every submission path does before the ring publish. */
export function intakeText(text: string, encoding: TransactionEncoding, maxTransactionBytes = 1232): Outcome<ParsedSummary & { bytes: Buffer }> {
  const d = decodeText(text, encoding, maxTransactionBytes);
  if (d.kind !== 'ok') return d;
  const p = parseWire(d.bytes, 96, maxTransactionBytes - d.bytes.length);
  return p.kind === 'ok' ? { ...p, bytes: d.bytes } : p;
}

/** base58 of 64 bytes at `offset` (signatures) or 32 bytes (keys), with src's hot-path encoders. */
export function signatureBase58(bytes: Uint8Array, offset: number): Outcome<{ text: string }> {
  try {
    return { kind: 'ok', text: encodeSignatureBase58(bytes, offset) };
  } catch (err) {
    return caught(err);
  }
}
export function pubkeyBase58(bytes: Uint8Array, offset: number): Outcome<{ text: string }> {
  try {
    return { kind: 'ok', text: encodePubkeyBase58(bytes, offset) };
  } catch (err) {
    return caught(err);
  }
}

/** sendTransaction's `encoding` config value -> the binary encoding. */
export function encodingParam(value: unknown): Outcome<{ encoding: TransactionEncoding }> {
  try {
    return { kind: 'ok', encoding: parseEncodingParam(value) };
  } catch (err) {
    return caught(err);
  }
}
