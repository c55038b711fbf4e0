// The relay's QUIC identity (cold: main thread at start, once per egress worker at route setup). A Solana keypair
// (the 64 bytes solana-keygen writes as a JSON array: seed || public key) becomes the Ed25519 client certificate
// every direct/static QUIC connection presents; validators grant QoS by the stake of that key.
// - main.ts calls resolveIdentity() once, so every worker presents the SAME identity:
//   - `identity.keypairPath` names an existing file: workers load it and hot-reload it when it changes;
//   - it names a file that does not exist yet: a fresh keypair is written there (mode 0600, kept across restarts:
//     the operator asked for that file) and used like a configured one, with the UNSTAKED warning;
//   - no keypairPath: a fresh keypair is generated IN MEMORY and never written anywhere. Its secret goes to the
//     workers in their Piscina task (EgressTask.identitySecret), so no private key is left on disk by any exit, a
//     crash or SIGKILL included. Warned as UNSTAKED; a new one per start.
// - Each egress worker builds its certificate from the task's secret or the configured file, never generating.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { webcrypto, createPrivateKey, createPublicKey } from 'node:crypto';
// Not ../quic/index.js: that pulls in the quiche binding, which only the quic-egress thread loads (src/config/route-plan.ts).
import { createIdentityCertificate, type IdentityCertificate } from '../../quic/identity-certificate.js';
import { base58Encode } from '../../quic/base58.js';
import type { Logger } from '../../log/logger.js';

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

/** What main.ts hands the egress workers: a keypair file to load (and watch), or a generated secret. */
export interface RelayIdentity {
  /** Base58 public key. */
  readonly identity: string;
  /** The keypair file the workers load and hot-reload; undefined for a generated identity. */
  readonly keypairPath?: string;
  /** A generated identity's 64-byte secret, held in memory only (passed in each worker's task). */
  readonly secret?: Uint8Array;
}

/**
 * Main thread, once at start: the identity every worker presents. Generates (and warns) when no keypair is
 * configured (in memory) or the configured file does not exist yet (written there, 0600).
 */
export function resolveIdentity(configured: string | undefined, log: Logger): RelayIdentity {
  if (configured !== undefined && existsSync(configured)) {
    const secret = readKeypairFile(configured);
    return { keypairPath: configured, identity: base58Encode(secret.subarray(32)) };
  }
  const secret = generateKeypairSecret();
  const identity = base58Encode(secret.subarray(32));
  if (configured !== undefined) {
    writeKeypairFile(configured, secret);
    log.warn(
      { event: 'identity_generated', identity, keypairPath: configured, persistent: true },
      'relay identity generated into identity.keypairPath: it is UNSTAKED (validators give unstaked QUIC peers the lowest QoS); use a staked keypair',
    );
    return { keypairPath: configured, identity };
  }
  log.warn(
    { event: 'identity_generated', identity, persistent: false },
    'relay identity generated in memory (never written; a new one each start): it is UNSTAKED (validators give unstaked QUIC peers the lowest QoS); set identity.keypairPath to a staked keypair',
  );
  return { secret, identity };
}

/** Egress worker: the client certificate for the configured keypair file. */
export async function loadIdentityCertificate(path: string): Promise<IdentityCertificate> {
  return createIdentityCertificate(readKeypairFile(path));
}
