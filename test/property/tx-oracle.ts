// The one adapter between the property tests and src/tx: every call into the transaction intake code goes through
// here and comes back as a plain value — accepted (with what was decoded), refused (a Failure returned by the
// hot-path try* functions, or a RelayError thrown: its registry reason, JSON-RPC code and message) or `exception`
// (anything thrown that is not a RelayError, which is always a bug). When the intake functions change shape, only this
// file changes.
//
// src/tx functions called (through src/tx/index.ts), the ones Intake runs on the hot path: tryDecodeTransactionInto,
// tryParseTransaction, tryParseEncodingParam, createParsedTransaction, encodeSignatureBase58, encodePubkeyBase58.
import { Failure, RelayError } from '../../src/errors/registry.js';
import {
  createParsedTransaction,
  encodePubkeyBase58,
  encodeSignatureBase58,
  tryDecodeTransactionInto,
  tryParseEncodingParam,
  tryParseTransaction,
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

function refused(f: Failure): Refused {
  return { kind: 'refused', reason: f.spec.reason, code: f.spec.rpcCode, message: f.message };
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
    const n = tryDecodeTransactionInto(target, text, encoding, maxTransactionBytes);
    if (n instanceof Failure) return refused(n);
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
    const failure = tryParseTransaction(buf, offset, bytes.length, parsed);
    if (failure !== null) return refused(failure);
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
    const e = tryParseEncodingParam(value);
    return e instanceof Failure ? refused(e) : { kind: 'ok', encoding: e };
  } catch (err) {
    return caught(err);
  }
}
