// What submit accepts, turned into wire bytes or base64 (caller's thread, on the submit path). Transactions are
// recognised by shape, so neither @solana/web3.js nor @solana/kit is a dependency of the entry:
//   string                         a base64 wire transaction, sent as it is
//   Uint8Array (Buffer too)        wire bytes
//   { serialize(): Uint8Array }    @solana/web3.js 1.x Transaction (signed: serialize() checks the signatures) or
//                                  VersionedTransaction
//   { messageBytes, signatures }   an @solana/kit Transaction, encoded as kit's getTransactionEncoder() does
// HTTP needs base64 and QUIC needs bytes: each is computed once, on first use. The transaction's id (its first
// signature, after the message for v1) is read from the bytes when asked for (transaction-signature.ts).
import { transactionSignature } from './transaction-signature.js';

/** @solana/web3.js Transaction / VersionedTransaction, by shape. */
export interface SerializableTransaction {
  serialize(): Uint8Array;
}

/** Read-only bytes (kit brands its Uint8Arrays read-only); a Uint8Array at run time. */
export type ReadonlyBytes = ArrayLike<number>;

/** @solana/kit Transaction, by shape: signatures in signer order (kit's record order), null when unsigned. */
export interface KitTransactionLike {
  readonly messageBytes: ReadonlyBytes;
  readonly signatures: Readonly<Record<string, ReadonlyBytes | null>>;
}

export type TransactionInput = string | Uint8Array | SerializableTransaction | KitTransactionLike;

interface BufferCtor {
  from(buffer: ArrayBufferLike, byteOffset: number, length: number): { toString(encoding: 'base64'): string };
  from(text: string, encoding: 'base64'): Uint8Array;
}
/** Node's Buffer when present (fast native base64); a plain loop in a browser. */
const NodeBuffer = (globalThis as { Buffer?: BufferCtor }).Buffer;

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

export function bytesToBase64(bytes: Uint8Array): string {
  // A view over the same memory: no copy.
  if (NodeBuffer !== undefined) return NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out += B64[n >> 18] + B64[(n >> 12) & 63] + B64[(n >> 6) & 63] + B64[n & 63];
  }
  const rest = bytes.length - i;
  if (rest === 1) out += B64[bytes[i] >> 2] + B64[(bytes[i] & 3) << 4] + '==';
  else if (rest === 2) {
    const n = (bytes[i] << 8) | bytes[i + 1];
    out += B64[n >> 10] + B64[(n >> 4) & 63] + B64[(n & 15) << 2] + '=';
  }
  return out;
}

export function base64ToBytes(text: string): Uint8Array {
  if (NodeBuffer !== undefined) return NodeBuffer.from(text, 'base64');
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function shortVec(n: number): number[] {
  const out: number[] = [];
  let v = n;
  for (;;) {
    const b = v & 0x7f;
    v >>= 7;
    if (v === 0) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

const ZERO_SIGNATURE: ReadonlyBytes = new Uint8Array(64);

/** kit's getTransactionEncoder(): signatures first (legacy, v0), or the message first for a version-1 message. */
export function encodeKitTransaction(tx: KitTransactionLike): Uint8Array {
  const sigs = Object.values(tx.signatures).map((s) => s ?? ZERO_SIGNATURE);
  const m = tx.messageBytes;
  if (m.length === 0) throw new TypeError('kit transaction has empty messageBytes');
  const messageFirst = (m[0] & 0x80) !== 0 && (m[0] & 0x7f) === 1;
  const prefix = messageFirst ? [] : shortVec(sigs.length);
  const out = new Uint8Array(prefix.length + sigs.length * 64 + m.length);
  let o = 0;
  if (messageFirst) {
    out.set(m, 0);
    o = m.length;
  } else {
    out.set(prefix, 0);
    o = prefix.length;
  }
  for (const s of sigs) {
    if (s.length !== 64) throw new TypeError(`kit transaction has a signature of ${s.length} bytes (expected 64)`);
    out.set(s, o);
    o += 64;
  }
  if (!messageFirst) out.set(m, o);
  return out;
}

/** A transaction to send, as base64 and/or bytes, each made once when first asked for. */
export class WireTransaction {
  private b64: string | undefined;
  private raw: Uint8Array | undefined;
  private constructor(b64: string | undefined, raw: Uint8Array | undefined) {
    this.b64 = b64;
    this.raw = raw;
  }

  static from(input: TransactionInput): WireTransaction {
    if (typeof input === 'string') return new WireTransaction(input, undefined);
    if (input instanceof Uint8Array) return new WireTransaction(undefined, input);
    if (input !== null && typeof input === 'object') {
      if (typeof (input as SerializableTransaction).serialize === 'function') {
        const bytes = (input as SerializableTransaction).serialize();
        if (!(bytes instanceof Uint8Array)) throw new TypeError('transaction.serialize() did not return bytes');
        return new WireTransaction(undefined, bytes);
      }
      const k = input as KitTransactionLike;
      if (k.messageBytes instanceof Uint8Array && k.signatures !== null && typeof k.signatures === 'object') {
        return new WireTransaction(undefined, encodeKitTransaction(k));
      }
    }
    throw new TypeError(
      'transaction must be a base64 string, wire bytes (Uint8Array), a @solana/web3.js Transaction or VersionedTransaction, or an @solana/kit Transaction',
    );
  }

  get base64(): string {
    if (this.b64 === undefined) this.b64 = bytesToBase64(this.raw!);
    return this.b64;
  }

  get bytes(): Uint8Array {
    if (this.raw === undefined) this.raw = base64ToBytes(this.b64!);
    return this.raw;
  }

  /** Base-58 first signature: after the short-vec count (legacy, v0) or after the message (v1). Throws
   *  TransactionFormatError when the bytes are not one wire transaction. */
  get signature(): string {
    return transactionSignature(this.bytes);
  }
}
