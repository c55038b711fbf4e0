// The client certificate of the QUIC transport (caller's thread, cold: once per transport): a self-signed X.509 v3
// certificate whose subject (and issuer) CN is the API key, over an ephemeral Ed25519 keypair made here. The relay's
// QUIC ingress reads the key from the CN (docs/quic-ingress.md); the keypair proves nothing else and never leaves the
// process. Built as DER by hand with node:crypto (a few fixed fields): the server's src/quic/identity-certificate.ts
// uses @peculiar/x509, which `slotrelay/client/quic` must not pull into a user's bundle.
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import type { IdentityCertificate } from '../../quic/identity-certificate.js';
import { encodePubkeyBase58 } from '../../tx/base58.js';

/** AlgorithmIdentifier for Ed25519 (OID 1.3.101.112, no parameters), RFC 8410. */
const ED25519_ALG = Uint8Array.from([0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70]);
/** OID 2.5.4.3 (id-at-commonName). */
const CN_OID = Uint8Array.from([0x06, 0x03, 0x55, 0x04, 0x03]);
/** RFC 5280 caps a CN at 64 characters; the relay reads no longer one. */
const MAX_CN = 64;

function der(tag: number, ...parts: Uint8Array[]): Uint8Array {
  const len = parts.reduce((n, p) => n + p.length, 0);
  const head = len < 0x80 ? [tag, len] : len < 0x100 ? [tag, 0x81, len] : [tag, 0x82, len >> 8, len & 0xff];
  const out = new Uint8Array(head.length + len);
  out.set(head, 0);
  let o = head.length;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

const ascii = (s: string): Uint8Array => new TextEncoder().encode(s);

function pem(label: string, bytes: Uint8Array): string {
  const b64 = Buffer.from(bytes).toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

/** A certificate for `commonName` (the API key) on a fresh Ed25519 keypair; `keyPem`/`certPem` are what quiche loads. */
export function createKeyCertificate(commonName: string): IdentityCertificate {
  if (commonName.length === 0 || commonName.length > MAX_CN) throw new TypeError(`the certificate CN (API key) must be 1-${MAX_CN} characters`);
  const { privateKey, publicKey }: { privateKey: KeyObject; publicKey: KeyObject } = generateKeyPairSync('ed25519');
  const spki = new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }));
  const name = der(0x30, der(0x31, der(0x30, CN_OID, der(0x0c, ascii(commonName)))));
  const tbs = der(
    0x30,
    der(0xa0, der(0x02, Uint8Array.of(2))), // v3
    der(0x02, Uint8Array.of(1)), // serial
    ED25519_ALG,
    name,
    // 1970-01-01 .. 4096-01-01, as the server's identity certificates: the relay checks no validity.
    der(0x30, der(0x17, ascii('700101000000Z')), der(0x18, ascii('40960101000000Z'))),
    name,
    spki,
  );
  const signature = new Uint8Array(sign(null, tbs, privateKey));
  const cert = der(0x30, tbs, ED25519_ALG, der(0x03, Uint8Array.of(0), signature));
  const raw = spki.subarray(spki.length - 32);
  return Object.freeze({
    identity: encodePubkeyBase58(raw, 0),
    publicKey: raw,
    keyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    certPem: pem('CERTIFICATE', cert),
    certDer: cert,
  });
}
