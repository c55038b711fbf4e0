// The facade's reads the passthrough list needs, against a real localnet over HTTP (fetch and web3.js): Agave's
// params, results and refusals for getMultipleAccounts, getAccountInfo encodings, getFeeForMessage, getTransaction's
// signature check and isBlockhashValid at a commitment.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, TransactionMessage, ComputeBudgetProgram } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { waitFor } from '../../helpers/wait-for.js';

let ln: Localnet;
let conn: Connection;
const funded = Keypair.generate();

async function call(method: string, params: unknown[]): Promise<any> {
  const res = await fetch(ln.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return res.json();
}

beforeAll(async () => {
  ln = await startLocalnet({ slotMs: 100, finalizedDepth: 4 });
  conn = new Connection(ln.rpcUrl, { commitment: 'processed' });
  const sig = await conn.requestAirdrop(funded.publicKey, LAMPORTS_PER_SOL);
  await waitFor('airdrop', async () => (await conn.getSignatureStatuses([sig])).value[0]);
});

afterAll(async () => {
  await ln?.stop();
});

describe('getMultipleAccounts', () => {
  it('answers {context, value} in order, null for missing accounts, base64 by default', async () => {
    const missing = Keypair.generate().publicKey.toBase58();
    const r = await call('getMultipleAccounts', [[funded.publicKey.toBase58(), missing], { commitment: 'processed' }]);
    expect(r.result.context).toMatchObject({ apiVersion: '2.2.0' });
    expect(r.result.value).toEqual([
      { data: ['', 'base64'], executable: false, lamports: LAMPORTS_PER_SOL, owner: '11111111111111111111111111111111', rentEpoch: expect.any(Number), space: 0 },
      null,
    ]);
    const infos = await conn.getMultipleAccountsInfo([funded.publicKey, Keypair.generate().publicKey]);
    expect(infos[0]?.lamports).toBe(LAMPORTS_PER_SOL);
    expect(infos[1]).toBeNull();
  });

  it("refuses more than 100 addresses and malformed ones with Agave's messages", async () => {
    const many = Array.from({ length: 101 }, () => Keypair.generate().publicKey.toBase58());
    expect((await call('getMultipleAccounts', [many])).error).toEqual({ code: -32602, message: 'Too many inputs provided; max 100' });
    expect((await call('getMultipleAccounts', [['abc']])).error).toEqual({ code: -32602, message: 'Invalid param: WrongSize' });
    expect((await call('getMultipleAccounts', [['0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl']])).error).toEqual({ code: -32602, message: 'Invalid param: Invalid' });
  });
});

describe('account encodings', () => {
  it('binary is a bare base58 string (getAccountInfo default); jsonParsed with a slice is refused (-32600)', async () => {
    const r = await call('getAccountInfo', [funded.publicKey.toBase58(), { commitment: 'processed' }]);
    expect(r.result.value.data).toBe('');
    const sliced = await call('getAccountInfo', [funded.publicKey.toBase58(), { encoding: 'jsonParsed', dataSlice: { offset: 0, length: 1 } }]);
    expect(sliced.error).toEqual({ code: -32600, message: 'Sliced account data can only be encoded using binary (base 58) or base64 encoding.' });
    const unknown = await call('getAccountInfo', [funded.publicKey.toBase58(), { encoding: 'hex' }]);
    expect(unknown.error.code).toBe(-32602);
    expect(unknown.error.message).toContain('unknown variant `hex`');
  });

  it.skipIf(!existsSync('/usr/bin/zstd'))('base64+zstd is a zstd frame that decompresses to the account data', async () => {
    // Builtin program accounts carry data in litesvm; whatever they hold, both encodings must agree on it.
    const keys = [funded.publicKey.toBase58(), 'NativeLoader1111111111111111111111111111111', '11111111111111111111111111111111', 'ComputeBudget111111111111111111111111111111'];
    const zstd = (await call('getMultipleAccounts', [keys, { encoding: 'base64+zstd' }])).result.value;
    const plain = (await call('getMultipleAccounts', [keys, { encoding: 'base64' }])).result.value;
    for (let i = 0; i < keys.length; i++) {
      if (plain[i] === null) continue;
      expect(zstd[i].data[1]).toBe('base64+zstd');
      const out = execFileSync('/usr/bin/zstd', ['-d', '-c', '-q'], { input: Buffer.from(zstd[i].data[0], 'base64') });
      expect(out.toString('base64')).toBe(plain[i].data[0]);
    }
  });
});

describe('getFeeForMessage', () => {
  it('prices a message with a known blockhash: 5,000 per signature plus the prioritization fee', async () => {
    const { blockhash } = await conn.getLatestBlockhash('processed');
    const plain = new TransactionMessage({
      payerKey: funded.publicKey,
      recentBlockhash: blockhash,
      instructions: [SystemProgram.transfer({ fromPubkey: funded.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 })],
    }).compileToV0Message();
    expect((await conn.getFeeForMessage(plain, 'processed')).value).toBe(5000);
    const priced = new TransactionMessage({
      payerKey: funded.publicKey,
      recentBlockhash: blockhash,
      instructions: [
        ComputeBudgetProgram.setComputeUnitLimit({ units: 1_000 }),
        ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 2_500_000 }),
        SystemProgram.transfer({ fromPubkey: funded.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 }),
      ],
    }).compileToLegacyMessage();
    expect((await conn.getFeeForMessage(priced, 'processed')).value).toBe(5000 + 2500); // ceil(2.5e6 × 1000 / 1e6)
  });

  it('answers null for a blockhash the bank does not know, and refuses undecodable messages', async () => {
    const unknown = new TransactionMessage({
      payerKey: funded.publicKey,
      recentBlockhash: bs58.encode(Buffer.alloc(32, 9)),
      instructions: [SystemProgram.transfer({ fromPubkey: funded.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 })],
    }).compileToLegacyMessage();
    const r = await call('getFeeForMessage', [Buffer.from(unknown.serialize()).toString('base64')]);
    expect(r.result.value).toBeNull();
    expect((await call('getFeeForMessage', ['AAAA'])).error.message).toMatch(/^failed to deserialize solana_message::versioned::VersionedMessage: /);
    expect((await call('getFeeForMessage', ['!!!!'])).error).toEqual({ code: -32602, message: 'invalid base64 encoding: InvalidByte(0, 33)' });
    expect((await call('getFeeForMessage', ['A'.repeat(5468)])).error.message).toBe(
      'base64 encoded solana_message::versioned::VersionedMessage too large: 5468 bytes (max: encoded/raw 5464/4096)',
    );
  });
});

describe('getTransaction and isBlockhashValid', () => {
  it("getTransaction checks the signature first, with Agave's words", async () => {
    expect((await call('getTransaction', ['abc'])).error).toEqual({ code: -32602, message: 'Invalid param: WrongSize' });
    expect((await call('getTransaction', ['0OIl'])).error).toEqual({ code: -32602, message: 'Invalid param: Invalid' });
    expect((await call('getTransaction', [bs58.encode(Buffer.alloc(64, 1)), { commitment: 'confirmed' }])).result).toBeNull();
  });

  it('isBlockhashValid is false at a commitment the blockhash is newer than', async () => {
    await waitFor('slot past the finalized depth', () => ln.clock.current > 6);
    const { blockhash } = await conn.getLatestBlockhash('processed');
    expect((await call('isBlockhashValid', [blockhash, { commitment: 'processed' }])).result.value).toBe(true);
    expect((await call('isBlockhashValid', [blockhash, { commitment: 'finalized' }])).result.value).toBe(false);
  });
});
