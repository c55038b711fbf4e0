import { describe, expect, it } from 'vitest';
import { Keypair } from '@solana/web3.js';
import * as x509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';
import {
  base58Decode,
  base58Encode,
  createIdentityCertificate,
  ed25519KeyFromCertificate,
  identityFromCertificate,
} from '../../../src/quic/index.js';
import { RetryTokens } from '../../../src/quic/retry-token.js';

describe('identity certificate', () => {
  it('carries the Solana identity of a 64-byte keypair secret and of its 32-byte seed', async () => {
    const kp = Keypair.generate();
    const a = await createIdentityCertificate(kp.secretKey);
    const b = await createIdentityCertificate(Array.from(kp.secretKey.subarray(0, 32)));
    expect(a.identity).toBe(kp.publicKey.toBase58());
    expect(b.identity).toBe(kp.publicKey.toBase58());
    expect(identityFromCertificate(a.certDer)).toBe(kp.publicKey.toBase58());
    expect(Buffer.from(ed25519KeyFromCertificate(a.certDer)!)).toEqual(kp.publicKey.toBuffer());
    expect(a.keyPem).toContain('BEGIN PRIVATE KEY');
    expect(a.certPem).toContain('BEGIN CERTIFICATE');
  });

  it('looks like Agave dummy certificate: CN Solana node, SAN localhost, self-signed, long validity', async () => {
    const c = await createIdentityCertificate(Keypair.generate().secretKey);
    const cert = new x509.X509Certificate(c.certDer);
    expect(cert.subject).toBe('CN=Solana node');
    expect(cert.issuer).toBe('CN=Solana node');
    expect(cert.notAfter.getUTCFullYear()).toBe(4096);
    const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
    expect(san?.names.items.map((n) => n.value)).toEqual(['localhost']);
    x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
    expect(await cert.verify({ signatureOnly: true })).toBe(true);
  });

  it('is byte for byte the certificate @peculiar/x509 makes from the same key and name (DER and PEM)', async () => {
    // The reference: what src/quic/identity-certificate.ts made with @peculiar/x509 until the DER template replaced it
    // (Ed25519 signatures are deterministic, so equal inputs give equal bytes). Names: Agave's, an API key (the QUIC
    // ingress's client certificates), PrintableString's odd characters, UTF-8 ones, and one long enough for the
    // long form of DER lengths (> 127 bytes in the name, > 255 in the certificate).
    x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
    const names = ['Solana node', '3f0b8f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b', "A z'()+,-./:=?", 'a_b', 'a@b', 'clé', 'x'.repeat(200)];
    for (const [i, name] of names.entries()) {
      const kp = Keypair.generate();
      const mine = await createIdentityCertificate(kp.secretKey, name);
      const privateKey = await webcrypto.subtle.importKey('pkcs8', pkcs8Of(kp.secretKey.subarray(0, 32)), { name: 'Ed25519' }, false, ['sign']);
      const publicKey = await webcrypto.subtle.importKey('raw', kp.publicKey.toBytes(), { name: 'Ed25519' }, true, ['verify']);
      const ref = await x509.X509CertificateGenerator.createSelfSigned({
        serialNumber: '01',
        name: [{ CN: [name] }],
        notBefore: new Date(Date.UTC(1970, 0, 1)),
        notAfter: new Date(Date.UTC(4096, 0, 1)),
        keys: { privateKey, publicKey } as unknown as Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[0]['keys'],
        signingAlgorithm: { name: 'Ed25519' },
        extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'localhost' }])],
      });
      expect(Buffer.from(mine.certDer).toString('hex'), `name ${i}`).toBe(Buffer.from(ref.rawData).toString('hex'));
      expect(mine.certPem, `name ${i}`).toBe(ref.toString('pem') + '\n');
      const parsed = new x509.X509Certificate(mine.certDer);
      expect(parsed.subject).toBe(ref.subject);
      expect(await parsed.verify({ signatureOnly: true })).toBe(true);
    }
  });

  it('refuses a keypair whose public half does not match, and wrong lengths', async () => {
    const kp = Keypair.generate();
    const bad = Uint8Array.from(kp.secretKey);
    bad[40] ^= 1;
    await expect(createIdentityCertificate(bad)).rejects.toThrow(/does not match/);
    await expect(createIdentityCertificate(new Uint8Array(31))).rejects.toThrow(/32 \(seed\) or 64/);
  });

  it('yields null for non-Ed25519 or malformed certificates', async () => {
    x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
    const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
    const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
    const ec = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: '02',
      name: 'CN=ec',
      keys: keys as unknown as Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[0]['keys'],
      signingAlgorithm: alg,
    });
    expect(identityFromCertificate(new Uint8Array(ec.rawData))).toBeNull();
    expect(identityFromCertificate(new Uint8Array([0x30, 0x82, 0xff]))).toBeNull();
    expect(identityFromCertificate(new Uint8Array(0))).toBeNull();
  });

  it('base58 matches web3.js', () => {
    for (let i = 0; i < 20; i++) {
      const pk = Keypair.generate().publicKey;
      expect(base58Encode(pk.toBytes())).toBe(pk.toBase58());
      expect(Buffer.from(base58Decode(pk.toBase58()))).toEqual(pk.toBuffer());
    }
    expect(base58Encode(new Uint8Array(32))).toBe('11111111111111111111111111111111');
    expect(() => base58Encode(new Uint8Array([0, 0, 1]))).toThrow(RangeError); // identities only
  });
});

describe('retry tokens', () => {
  it('round-trips the original dcid for the same address only, and expires', () => {
    const t = new RetryTokens();
    const odcid = Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
    const tok = t.mint(odcid, '127.0.0.1', 5000, 1_000_000);
    expect(t.validate(tok, '127.0.0.1', 5000, 1_000_500)).toEqual(odcid);
    expect(t.validate(tok, '127.0.0.1', 5001, 1_000_500)).toBeNull();
    expect(t.validate(tok, '127.0.0.1', 5000, 1_020_000)).toBeNull();
    const forged = Uint8Array.from(tok);
    forged[10] ^= 1;
    expect(t.validate(forged, '127.0.0.1', 5000, 1_000_500)).toBeNull();
  });
});

/** PKCS#8 v1 DER of an Ed25519 seed (RFC 8410), for webcrypto's importKey. */
function pkcs8Of(seed: Uint8Array): Uint8Array {
  return Uint8Array.from([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20, ...seed]);
}
