// resolveIdentity (main thread, once at start): no keypairPath = a keypair in memory, nothing written; a configured
// path that does not exist yet = a fresh keypair written there (0600) and loaded from it; an existing one = loaded.
import { Keypair } from '@solana/web3.js';
import { existsSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readKeypairFile, resolveIdentity } from '../../../src/egress/quic/identity.js';
import { createLogger } from '../../../src/log/logger.js';
import { createIdentityCertificate } from '../../../src/quic/index.js';

const log = createLogger('silent', 'test');

describe('resolveIdentity', () => {
  it('no keypairPath: a fresh keypair in memory whose certificate is the logged identity', async () => {
    const a = resolveIdentity(undefined, log);
    const b = resolveIdentity(undefined, log);
    expect(a.keypairPath).toBeUndefined();
    expect(a.secret).toHaveLength(64);
    expect((await createIdentityCertificate(a.secret!)).identity).toBe(a.identity);
    expect(b.identity).not.toBe(a.identity);
  });

  it('a configured path that does not exist is created 0600 and used; an existing one is loaded, not rewritten', () => {
    const dir = mkdtempSync(join(tmpdir(), 'slotrelay-identity-unit-'));
    const path = join(dir, 'sub', 'relay.json');
    const made = resolveIdentity(path, log);
    expect(made).toMatchObject({ keypairPath: path });
    expect(made.secret).toBeUndefined();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(Keypair.fromSecretKey(readKeypairFile(path)).publicKey.toBase58()).toBe(made.identity);

    const kp = Keypair.generate();
    const existing = join(dir, 'existing.json');
    writeFileSync(existing, JSON.stringify(Array.from(kp.secretKey)));
    expect(resolveIdentity(existing, log)).toEqual({ keypairPath: existing, identity: kp.publicKey.toBase58() });
    expect(readdirSync(dir).sort()).toEqual(['existing.json', 'sub']);
    expect(existsSync(join(dir, 'sub', 'relay.json'))).toBe(true);
  });
});
