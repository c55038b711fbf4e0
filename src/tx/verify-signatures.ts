// Optional Ed25519 verification of every signature of a parsed transaction (front thread; HOT when a key enables
// verifySignatures, 170-270 us per signature on the 2-core box, so it is a per-key option and never a default).
//
// node:crypto needs a KeyObject per public key, so KeyObjects of recently seen signers are kept in a small LRU (a
// Map in insertion order: a hit is re-inserted at the end, the oldest entry is evicted). A miss imports the key as a
// JWK (`x` = the key's 32 bytes, base64url), not as SPKI DER: the DER import goes through OpenSSL 3's decoder
// framework, 188-198 us a key on Node 20 and 16-19 us on Node 24 against 12-13 and 7-8 us for the JWK import
// (medians, bench/tx/tx-intake.bench.ts, both in one run: bench/results/verify-key-import.md); same key, same
// verdicts. The caller maps `false` to Errors.SIGNATURE_VERIFICATION_FAILED.
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { ParsedTransaction } from './parse-transaction.js';
import { PUBKEY_BYTES, SIGNATURE_BYTES } from './parse-transaction.js';

/** Signer keys kept; a relay sees a long tail of signers, the hot ones (bots, market makers) stay resident. */
export const KEY_CACHE_CAPACITY = 4096;

const cache = new Map<string, KeyObject>();

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** KeyObject for the 32-byte Ed25519 public key at bytes[offset..offset+32), cached. */
export function ed25519KeyObject(bytes: Uint8Array, offset: number): KeyObject {
  const b = toBuffer(bytes);
  const id = b.toString('latin1', offset, offset + PUBKEY_BYTES);
  const hit = cache.get(id);
  if (hit !== undefined) {
    cache.delete(id);
    cache.set(id, hit);
    return hit;
  }
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: b.toString('base64url', offset, offset + PUBKEY_BYTES) }, format: 'jwk' });
  if (cache.size >= KEY_CACHE_CAPACITY) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
  cache.set(id, key);
  return key;
}

/** Drops every cached KeyObject (tests, or a reload). */
export function clearKeyCache(): void {
  cache.clear();
}

export function keyCacheSize(): number {
  return cache.size;
}

/**
 * True when every signature verifies against its signer key (account key i signs signature i) over the message
 * bytes. `offset` is the transaction's first byte; `parsed` comes from parseTransaction over the same bytes.
 */
export function verifyTransactionSignatures(bytes: Uint8Array, offset: number, parsed: ParsedTransaction): boolean {
  const b = toBuffer(bytes);
  const messageStart = offset + parsed.messageOffset;
  const message = b.subarray(messageStart, messageStart + parsed.messageLength);
  const sigBase = offset + parsed.firstSignatureOffset;
  const keyBase = offset + parsed.accountKeysOffset;
  for (let i = 0; i < parsed.signatureCount; i++) {
    const s = sigBase + i * SIGNATURE_BYTES;
    try {
      const key = ed25519KeyObject(b, keyBase + i * PUBKEY_BYTES);
      if (!verify(null, message, key, b.subarray(s, s + SIGNATURE_BYTES))) return false;
    } catch {
      return false; // a key OpenSSL refuses (not a curve point) cannot have signed anything
    }
  }
  return true;
}
