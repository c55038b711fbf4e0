// Optional Ed25519 verification of every signature of a parsed transaction (front thread; HOT when a key enables
// verifySignatures, ~100 us per signature, so it is a per-key option and never a default).
//
// node:crypto needs a KeyObject per public key and building one from raw bytes costs ~76 us (DER parse), so
// KeyObjects of recently seen signers are kept in a small LRU (a Map in insertion order: a hit is re-inserted at
// the end, the oldest entry is evicted). The caller maps `false` to Errors.SIGNATURE_VERIFICATION_FAILED.
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { ParsedTransaction } from './parse-transaction.js';
import { PUBKEY_BYTES, SIGNATURE_BYTES } from './parse-transaction.js';

/** DER SubjectPublicKeyInfo header for Ed25519 (RFC 8410): SEQUENCE { SEQUENCE { OID 1.3.101.112 }, BIT STRING }. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** Signer keys kept; a relay sees a long tail of signers, the hot ones (bots, market makers) stay resident. */
export const KEY_CACHE_CAPACITY = 4096;

const cache = new Map<string, KeyObject>();
const der = Buffer.alloc(ED25519_SPKI_PREFIX.length + PUBKEY_BYTES);
ED25519_SPKI_PREFIX.copy(der, 0);

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
  b.copy(der, ED25519_SPKI_PREFIX.length, offset, offset + PUBKEY_BYTES);
  const key = createPublicKey({ key: der, format: 'der', type: 'spki' });
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
