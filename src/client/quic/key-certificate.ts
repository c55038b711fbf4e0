// The client certificate of the QUIC transport (caller's thread, cold: once per transport): a self-signed X.509 v3
// certificate whose subject (and issuer) CN is the API key, over an ephemeral Ed25519 keypair made here. The relay's
// QUIC ingress reads the key from the CN (docs/quic-ingress.md); the keypair proves nothing else and never leaves the
// process. The DER is the server's identity-certificate template (src/quic/certificate-der.ts: no dependency, so
// `slotrelay/client/quic` pulls no X.509 library into a user's bundle), over the fresh key.
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { certificateDer, certificatePem, tbsCertificateDer } from '../../quic/certificate-der.js';
import type { IdentityCertificate } from '../../quic/identity-certificate.js';
import { encodePubkeyBase58 } from '../../tx/base58.js';

/** RFC 5280 caps a CN at 64 characters; the relay reads no longer one. */
const MAX_CN = 64;

/** A certificate for `commonName` (the API key) on a fresh Ed25519 keypair; `keyPem`/`certPem` are what quiche loads. */
export function createKeyCertificate(commonName: string): IdentityCertificate {
  if (commonName.length === 0 || commonName.length > MAX_CN) throw new TypeError(`the certificate CN (API key) must be 1-${MAX_CN} characters`);
  const { privateKey, publicKey }: { privateKey: KeyObject; publicKey: KeyObject } = generateKeyPairSync('ed25519');
  const spki = new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }));
  const raw = spki.subarray(spki.length - 32);
  const tbs = tbsCertificateDer(raw, commonName);
  const cert = certificateDer(tbs, new Uint8Array(sign(null, tbs, privateKey)));
  return Object.freeze({
    identity: encodePubkeyBase58(raw, 0),
    publicKey: raw,
    keyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    certPem: certificatePem(cert),
    certDer: cert,
  });
}
