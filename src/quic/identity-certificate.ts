// Solana identity <-> X.509 certificate, as Agave's tls-utils does it: a self-signed X.509 v3 certificate whose
// Ed25519 SubjectPublicKeyInfo IS the node/sender identity key (issuer = subject = CN "Solana node", SAN DNS
// localhost, validity 1970..4096). Cold path: certificates are made once per identity at startup (the DER template in
// certificate-der.ts, signed with node:crypto); the key is read from a peer certificate once per connection.
import { createPrivateKey, createPublicKey, sign, webcrypto, type KeyObject } from 'node:crypto';
import { base58Encode } from './base58.js';
import { ED25519_ALGORITHM, certificateDer, certificatePem, tbsCertificateDer } from './certificate-der.js';

/** PKCS#8 v1 prefix for an Ed25519 private key; the 32-byte seed follows (RFC 8410). */
const ED25519_PKCS8_PREFIX = Uint8Array.from([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
]);

/** What quiche's Config.withBoringSslCtx needs, plus the identity it proves. */
export interface IdentityCertificate {
  /** Base58 Solana identity (the certificate's Ed25519 public key). */
  readonly identity: string;
  /** 32-byte Ed25519 public key. */
  readonly publicKey: Uint8Array;
  /** PKCS#8 PEM private key. */
  readonly keyPem: string;
  /** X.509 PEM certificate. */
  readonly certPem: string;
  /** The same certificate, DER. */
  readonly certDer: Uint8Array;
}

/**
 * Builds the certificate for a Solana keypair. `secret` is either the 64-byte Solana secret key (seed || public key,
 * as in a keypair JSON file: pass the parsed number array or bytes) or the 32-byte seed. A 64-byte secret whose public
 * half does not match its seed is refused.
 */
export async function createIdentityCertificate(
  secret: Uint8Array | readonly number[],
  /** Subject and issuer CN; Agave's "Solana node" by default. The QUIC ingress reads an API key here (docs/quic-ingress.md). */
  commonName = 'Solana node',
): Promise<IdentityCertificate> {
  const bytes = Uint8Array.from(secret);
  if (bytes.length !== 32 && bytes.length !== 64) {
    throw new Error(`identity secret must be 32 (seed) or 64 (Solana keypair) bytes, got ${bytes.length}`);
  }
  const seed = bytes.subarray(0, 32);
  const pkcs8 = new Uint8Array(ED25519_PKCS8_PREFIX.length + 32);
  pkcs8.set(ED25519_PKCS8_PREFIX, 0);
  pkcs8.set(seed, ED25519_PKCS8_PREFIX.length);
  const privateKey: KeyObject = createPrivateKey({ key: Buffer.from(pkcs8), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  const publicKey = new Uint8Array(spki.subarray(spki.length - 32));
  if (bytes.length === 64 && !equalBytes(publicKey, bytes.subarray(32))) {
    throw new Error('keypair secret: the public half does not match the seed');
  }

  // Ed25519 signatures are deterministic: one key and name always give the same certificate.
  const tbs = tbsCertificateDer(publicKey, commonName);
  const certDer = certificateDer(tbs, new Uint8Array(sign(null, tbs, privateKey)));
  return Object.freeze({
    identity: base58Encode(publicKey),
    publicKey,
    keyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    certPem: certificatePem(certDer),
    certDer,
  });
}

/** A certificate for a fresh random identity (tests, throwaway servers). */
export async function createRandomIdentityCertificate(): Promise<IdentityCertificate> {
  return createIdentityCertificate(webcrypto.getRandomValues(new Uint8Array(32)));
}

/**
 * The Ed25519 public key in a certificate's SubjectPublicKeyInfo, or null when the DER is malformed or the key is
 * not Ed25519. A minimal DER walk (Certificate -> tbsCertificate -> 7th field), no dependency, no exceptions.
 */
export function ed25519KeyFromCertificate(der: Uint8Array): Uint8Array | null {
  const cert = readTlv(der, 0);
  if (cert === null || der[0] !== 0x30) return null;
  const tbs = readTlv(der, cert.start);
  if (tbs === null || der[cert.start] !== 0x30) return null;
  let pos = tbs.start;
  // [0] EXPLICIT version is optional (absent in v1 certificates).
  if (der[pos] === 0xa0) {
    const v = readTlv(der, pos);
    if (v === null) return null;
    pos = v.end;
  }
  // serialNumber, signature, issuer, validity, subject
  for (let i = 0; i < 5; i++) {
    const f = readTlv(der, pos);
    if (f === null || f.end > tbs.end) return null;
    pos = f.end;
  }
  const spki = readTlv(der, pos);
  if (spki === null || der[pos] !== 0x30) return null;
  const alg = readTlv(der, spki.start);
  if (alg === null || alg.end - spki.start !== ED25519_ALGORITHM.length) return null;
  if (!equalBytes(der.subarray(spki.start, alg.end), ED25519_ALGORITHM)) return null;
  const bits = readTlv(der, alg.end);
  // BIT STRING of 33 bytes: 0 unused bits, then the 32-byte key.
  if (bits === null || der[alg.end] !== 0x03 || bits.end - bits.start !== 33 || der[bits.start] !== 0) return null;
  return der.slice(bits.start + 1, bits.end);
}

/** Base58 identity of a peer certificate (DER), or null when it does not carry an Ed25519 key. */
export function identityFromCertificate(der: Uint8Array): string | null {
  const key = ed25519KeyFromCertificate(der);
  return key === null ? null : base58Encode(key);
}

/** One DER TLV at `pos`: its value's [start, end), or null when it runs past the buffer (also used by
 * src/ingress/client-certificate.ts). */
export function readTlv(der: Uint8Array, pos: number): { start: number; end: number } | null {
  if (pos + 2 > der.length) return null;
  let len = der[pos + 1];
  let start = pos + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 3 || start + n > der.length) return null;
    len = 0;
    for (let i = 0; i < n; i++) len = (len << 8) | der[start + i];
    start += n;
  }
  const end = start + len;
  return end > der.length ? null : { start, end };
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
