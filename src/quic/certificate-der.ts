// The DER of Agave's self-signed identity certificate (cold; any thread that makes a certificate: the quic-egress thread,
// the QUIC ingress, the localnet's TPU listeners, the client library). The certificate is a fixed template: only the
// Ed25519 public key, the common name and the signature vary (tls-utils' new_dummy_x509_certificate: X.509 v3, serial
// 1, issuer = subject = one CN, validity 1970-01-01 .. 4096-01-01, SAN DNS "localhost", signed with the same key).
// Written out here rather than through an X.509 library: @peculiar/x509's module graph (some 20 packages) cost ~225 ms
// of CPU to load in each thread or process that made one, for a template of a few hundred bytes; the unit test checks
// the bytes against that library's output (test/unit/quic/identity-certificate.test.ts).

/** AlgorithmIdentifier { id-Ed25519 (1.3.101.112) }, no parameters (RFC 8410). */
export const ED25519_ALGORITHM = Uint8Array.from([0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70]);
/** [0] EXPLICIT INTEGER 2 (v3), then serialNumber INTEGER 1. */
const VERSION_AND_SERIAL = Uint8Array.from([0xa0, 0x03, 0x02, 0x01, 0x02, 0x02, 0x01, 0x01]);
/** Validity: UTCTime 700101000000Z, GeneralizedTime 40960101000000Z (RFC 5280: UTCTime until 2049). */
const VALIDITY = Uint8Array.from([
  0x30, 0x20, 0x17, 0x0d, ...Buffer.from('700101000000Z', 'latin1'), 0x18, 0x0f, ...Buffer.from('40960101000000Z', 'latin1'),
]);
/** extensions [3] EXPLICIT { SEQUENCE { subjectAltName (2.5.29.17) OCTET STRING { GeneralNames { dNSName "localhost" } } } } */
const SAN_LOCALHOST_EXTENSIONS = Uint8Array.from([
  0xa3, 0x18, 0x30, 0x16, 0x30, 0x14, 0x06, 0x03, 0x55, 0x1d, 0x11, 0x04, 0x0d, 0x30, 0x0b, 0x82, 0x09,
  ...Buffer.from('localhost', 'latin1'),
]);
/** id-at-commonName (2.5.4.3). */
const COMMON_NAME_OID = Uint8Array.from([0x06, 0x03, 0x55, 0x04, 0x03]);
const PRINTABLE_STRING = 0x13;
const UTF8_STRING = 0x0c;
/** PrintableString's alphabet (X.680); any other character makes the name a UTF8String, as @peculiar/x509 does. */
const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/;

/** One DER TLV: tag, definite length (short or long form), the parts' bytes. */
function tlv(tag: number, ...parts: Uint8Array[]): Uint8Array {
  const length = parts.reduce((n, p) => n + p.length, 0);
  const lengthBytes: number[] = [];
  if (length < 0x80) lengthBytes.push(length);
  else {
    for (let n = length; n > 0; n = Math.floor(n / 256)) lengthBytes.unshift(n & 0xff);
    lengthBytes.unshift(0x80 | lengthBytes.length);
  }
  const out = new Uint8Array(1 + lengthBytes.length + length);
  out[0] = tag;
  out.set(lengthBytes, 1);
  let pos = 1 + lengthBytes.length;
  for (const p of parts) {
    out.set(p, pos);
    pos += p.length;
  }
  return out;
}

/** Name: SEQUENCE { SET { SEQUENCE { commonName, string } } }. */
function nameOf(commonName: string): Uint8Array {
  const value = Buffer.from(commonName, 'utf8');
  const attribute = tlv(0x30, COMMON_NAME_OID, tlv(PRINTABLE.test(commonName) ? PRINTABLE_STRING : UTF8_STRING, value));
  return tlv(0x30, tlv(0x31, attribute));
}

/** The to-be-signed part of the certificate for this Ed25519 public key (32 bytes) and common name. */
export function tbsCertificateDer(publicKey: Uint8Array, commonName: string): Uint8Array {
  const name = nameOf(commonName);
  const spki = tlv(0x30, ED25519_ALGORITHM, tlv(0x03, Uint8Array.of(0), publicKey));
  return tlv(0x30, VERSION_AND_SERIAL, ED25519_ALGORITHM, name, VALIDITY, name, spki, SAN_LOCALHOST_EXTENSIONS);
}

/** Certificate: SEQUENCE { tbsCertificate, signatureAlgorithm Ed25519, BIT STRING signature (64 bytes) }. */
export function certificateDer(tbs: Uint8Array, signature: Uint8Array): Uint8Array {
  return tlv(0x30, tbs, ED25519_ALGORITHM, tlv(0x03, Uint8Array.of(0), signature));
}

/** PEM of a DER certificate: base64 in lines of 64, ending with a newline. */
export function certificatePem(der: Uint8Array): string {
  const b64 = Buffer.from(der).toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 64) lines.push(b64.slice(i, i + 64));
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}
