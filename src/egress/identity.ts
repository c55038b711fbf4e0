// The relay's QUIC identity (cold: main thread at start, once per egress worker at route setup). A Solana keypair
// JSON file (the 64-number array solana-keygen writes: seed || public key) becomes the Ed25519 client certificate
// every direct/static QUIC connection presents; validators grant QoS by the stake of that key.
// - main.ts calls resolveIdentityPath() once: with no `identity.keypairPath` it generates a keypair into a private
//   temp file (so every worker presents the SAME identity) and warns that it is unstaked; a configured path that
//   does not exist yet is created (mode 0600) with a fresh keypair, also with the warning.
// - Each egress worker calls loadIdentityCertificate(path) and never generates anything.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { webcrypto, createPrivateKey, createPublicKey } from 'node:crypto';
import { createIdentityCertificate, base58Encode, type IdentityCertificate } from '../quic/index.js';
import type { Logger } from '../log/logger.js';

/** Reads a Solana keypair JSON file: a JSON array of 64 integers 0..255. Throws with the path on anything else. */
export function readKeypairFile(path: string): Uint8Array {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`identity keypair ${path}: ${(err as Error).message}`);
  }
  if (!Array.isArray(doc) || doc.length !== 64 || !doc.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) {
    throw new Error(`identity keypair ${path}: expected a JSON array of 64 bytes (solana-keygen format)`);
  }
  return Uint8Array.from(doc as number[]);
}

/** A fresh Solana keypair as the 64-byte secret (seed || public key). */
export function generateKeypairSecret(): Uint8Array {
  const seed = webcrypto.getRandomValues(new Uint8Array(32));
  const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  const spki = createPublicKey(createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' })).export({ format: 'der', type: 'spki' });
  const out = new Uint8Array(64);
  out.set(seed, 0);
  out.set(spki.subarray(spki.length - 32), 32);
  return out;
}

function writeKeypairFile(path: string, secret: Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(Array.from(secret)), { mode: 0o600 });
  chmodSync(path, 0o600);
}

/**
 * Main thread, once at start: the keypair path every worker will load. Generates (and warns) when none is configured
 * or the configured file does not exist yet. Returns the path and the base58 identity.
 */
export function resolveIdentityPath(configured: string | undefined, log: Logger): { path: string; identity: string } {
  if (configured !== undefined && existsSync(configured)) {
    const secret = readKeypairFile(configured);
    return { path: configured, identity: base58Encode(secret.subarray(32)) };
  }
  const secret = generateKeypairSecret();
  const path = configured ?? join(mkdtempSync(join(tmpdir(), 'slotrelay-identity-')), 'identity.json');
  writeKeypairFile(path, secret);
  const identity = base58Encode(secret.subarray(32));
  log.warn(
    { event: 'identity_generated', identity, keypairPath: path, persistent: configured !== undefined },
    'relay identity generated: it is UNSTAKED (validators give unstaked QUIC peers the lowest QoS); set identity.keypairPath to a staked keypair',
  );
  return { path, identity };
}

/** Egress worker: the client certificate for the keypair file main.ts resolved. */
export async function loadIdentityCertificate(path: string): Promise<IdentityCertificate> {
  return createIdentityCertificate(readKeypairFile(path));
}
