// What the QUIC ingress reads from a client certificate (QUIC thread, cold: once per connection): the subject's
// common name (an API key, for clients made by our library) and the Ed25519 identity (a Solana TPU client's keypair,
// looked up in the keys' quicIdentities). A minimal DER walk, no dependency and no exception on malformed input.
import { equalBytes, identityFromCertificate, readTlv } from '../quic/identity-certificate.js';

/** OID 2.5.4.3 (id-at-commonName), DER-encoded with its tag and length. */
const CN_OID = Uint8Array.from([0x06, 0x03, 0x55, 0x04, 0x03]);
/** String types a CN may use: UTF8String, PrintableString, T61String, IA5String. */
const STRING_TAGS = new Set([0x0c, 0x13, 0x14, 0x16]);
/** Longer CNs are not keys (a UUID is 36 characters); RFC 5280 caps the CN at 64. */
const MAX_CN = 64;

export interface ClientCertificateInfo {
  /** The subject CN ('' when absent or not a string). */
  readonly commonName: string;
  /** Base58 Ed25519 key; null when not a single Ed25519 certificate. */
  readonly identity: string | null;
}

export function readClientCertificate(chain: readonly Uint8Array[]): ClientCertificateInfo {
  const leaf = chain[0];
  // A TPU peer's identity is read only from a single self-signed certificate, as Agave does.
  return { commonName: commonNameOf(leaf), identity: chain.length === 1 ? identityFromCertificate(leaf) : null };
}

export function commonNameOf(der: Uint8Array): string {
  const cert = readTlv(der, 0);
  if (cert === null || der[0] !== 0x30) return '';
  const tbs = readTlv(der, cert.start);
  if (tbs === null) return '';
  let pos = tbs.start;
  if (der[pos] === 0xa0) {
    const v = readTlv(der, pos);
    if (v === null) return '';
    pos = v.end;
  }
  // serialNumber, signature, issuer, validity; then subject.
  for (let i = 0; i < 4; i++) {
    const f = readTlv(der, pos);
    if (f === null || f.end > tbs.end) return '';
    pos = f.end;
  }
  const subject = readTlv(der, pos);
  if (subject === null || der[pos] !== 0x30) return '';
  for (let set = subject.start; set < subject.end; ) {
    const s = readTlv(der, set);
    if (s === null || s.end > subject.end) return '';
    for (let atv = s.start; atv < s.end; ) {
      const a = readTlv(der, atv);
      if (a === null || a.end > s.end) return '';
      const oidEnd = a.start + CN_OID.length;
      if (oidEnd <= a.end && equalBytes(der.subarray(a.start, oidEnd), CN_OID)) {
        const v = readTlv(der, oidEnd);
        if (v === null || v.end > a.end || !STRING_TAGS.has(der[oidEnd]) || v.end - v.start > MAX_CN) return '';
        return Buffer.from(der.buffer, der.byteOffset + v.start, v.end - v.start).toString('utf8');
      }
      atv = a.end;
    }
    set = s.end;
  }
  return '';
}
