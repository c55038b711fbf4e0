// v1 transactions (SIMD-0385, up to 4,096 bytes) through a real relay on a real localnet (issue #24), built and
// signed by unchanged @solana/kit 8.4 next to web3.js legacy/v0: a v1 transfer lands through every ingress
// (JSON-RPC sendTransaction, /v1/submit, /v1/transactions, /v1/sendTransaction, QUIC uni and bidi streams) and by
// every route (rpc, direct, jito, static); a ~4 KB v1 with several signers lands by the direct route (one QUIC stream
// of several packets); receipts, getTransaction and balances agree; simulateTransaction takes v1; a v1 bundle lands;
// a v1 with one signature byte changed is refused where the key verifies signatures, and otherwise is relayed, fails
// on chain and its receipt never says landed.
import { Connection, Keypair } from '@solana/web3.js';
import { createKeyPairSignerFromBytes, generateKeyPairSigner, type KeyPairSigner } from '@solana/kit';
import bs58 from 'bs58';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JitoJsonRpcClient } from 'jito-js-rpc';
import { IngressClient } from '../../../src/client/quic/ingress-client.js';
import { createIdentityCertificate, type IdentityCertificate } from '../../../src/quic/identity-certificate.js';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { fundedPayer } from '../../helpers/embedded-localnet.js';
import { OTHER_KEY, startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer, v0Transfer } from '../../helpers/transactions.js';
import { buildV1, memoIx, transferIx, type V1Tx } from '../../helpers/v1-transactions.js';
import { inflightStatusWhen, type RpcAnswer } from '../../helpers/bundles.js';
import { waitFor } from '../../helpers/wait-for.js';
import { confirmedStatus } from '../../helpers/landed.js';

/** Enough for a transfer and a 4 KB memo; a v1 without a loaded-data limit gets a budget of 0 bytes (docs/transactions.md). */
const CONFIG = { computeUnitLimit: 200_000, loadedAccountsDataSizeLimit: 1_000_000, priorityFeeLamports: 3_000n } as const;

let localnet: Localnet;
let relay: RelayHandle;
let conn: Connection;
let payer: KeyPairSigner;
let payerKeypair: Keypair;
let cert: IdentityCertificate;

async function blockhash(): Promise<string> {
  return (await conn.getLatestBlockhash('confirmed')).blockhash;
}

async function transfer(lamports: bigint, to?: string): Promise<V1Tx & { to: string }> {
  const dest = to ?? (await generateKeyPairSigner()).address;
  return { ...(await buildV1(payer, await blockhash(), [transferIx(payer, dest, lamports)], CONFIG)), to: dest };
}

async function rpc(url: string, method: string, params: unknown[], key = TEST_KEY): Promise<{ result?: any; error?: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return (await res.json()) as { result?: any; error?: any };
}

async function submit(body: Record<string, unknown>, key = TEST_KEY): Promise<{ status: number; json: any }> {
  const res = await fetch(`${relay.relayUrl}/v1/submit`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}

async function receipt(signature: string): Promise<any> {
  return (await (await fetch(`${relay.relayUrl}/v1/transactions/${signature}`, { headers: { 'x-api-key': TEST_KEY } })).json()) as unknown;
}

beforeAll(async () => {
  localnet = await startLocalnet({ validators: 2, slotMs: 400, blockEngineRateLimitPerSecond: 0 });
  conn = new Connection(localnet.rpcUrl, 'confirmed');
  relay = await startRelay({
    upstream: { rpcUrl: localnet.rpcUrl },
    relayHost: { host: '127.0.0.1', port: 0, quicPort: -1 },
    routes: {
      rpc: { endpoints: [localnet.rpcUrl] },
      direct: { enabled: true },
      jito: { url: localnet.blockEngineUrl },
      // Both validators: a static peer takes a transaction whoever leads (the localnet forwards to the leader).
      static: { peers: localnet.validators.map((v) => v.tpuQuic), everyTransaction: false },
    },
    bundles: { url: localnet.blockEngineUrl },
    receipts: { pollMs: 100 },
    keys: [
      { key: TEST_KEY, name: 'v1-bot', bundles: true, rateLimit: { perSecond: 10_000, burst: 10_000 } },
      { key: OTHER_KEY, name: 'v1-verifier', verifySignatures: true, rateLimit: { perSecond: 10_000, burst: 10_000 } },
    ],
  });
  payerKeypair = await fundedPayer(conn, 20);
  payer = await createKeyPairSignerFromBytes(payerKeypair.secretKey);
  cert = await createIdentityCertificate(Keypair.generate().secretKey, TEST_KEY);
  await waitFor('direct deliverable', async () => (await (await fetch(`${relay.rpcUrl}/health?detail`)).json()) as any, (h) => h.routes.direct.deliverable === true, 20_000);
}, 120_000);

afterAll(async () => {
  await relay?.stop();
  await localnet?.stop();
});

describe('v1 transactions through every ingress', () => {
  it('JSON-RPC sendTransaction (base64 and base58) and simulateTransaction take v1 beside legacy and v0', async () => {
    const sim = await transfer(1_000_000n);
    const simulated = await rpc(relay.rpcUrl, 'simulateTransaction', [sim.base64, { encoding: 'base64', sigVerify: true }]);
    expect(simulated.error).toBeUndefined();
    expect(simulated.result.value.err).toBeNull();

    const a = await transfer(1_000_001n);
    expect((await rpc(relay.rpcUrl, 'sendTransaction', [a.base64, { encoding: 'base64' }])).result).toBe(a.signature);
    const b = await transfer(1_000_002n);
    expect((await rpc(relay.rpcUrl, 'sendTransaction', [bs58.encode(b.bytes), { skipPreflight: true }])).result).toBe(b.signature);
    // Legacy and v0 beside them, on the same connection.
    const legacy = legacyTransfer(1_000_000, payerKeypair, await blockhash());
    const v0 = v0Transfer(1_000_000, payerKeypair, await blockhash());
    expect((await rpc(relay.rpcUrl, 'sendTransaction', [legacy.base64, { encoding: 'base64' }])).result).toBe(legacy.signature);
    expect((await rpc(relay.rpcUrl, 'sendTransaction', [v0.base64, { encoding: 'base64' }])).result).toBe(v0.signature);
    for (const s of [a.signature, b.signature, legacy.signature, v0.signature]) expect((await confirmedStatus(conn, s, 30_000)).err).toBeNull();
    // getTransaction through the relay's passthrough: version 1, the config's fee.
    const got = await rpc(relay.rpcUrl, 'getTransaction', [a.signature, { encoding: 'json', maxSupportedTransactionVersion: 1, commitment: 'confirmed' }]);
    expect(got.result.version).toBe(1);
    expect(got.result.meta.fee).toBe(5_000 + 3_000);
    expect(got.result.meta.postBalances[1] - got.result.meta.preBalances[1]).toBe(1_000_001);
    expect(await conn.getBalance(new (await import('@solana/web3.js')).PublicKey(a.to))).toBe(1_000_001);
  });

  it('/v1/submit, /v1/transactions (octet-stream) and /v1/sendTransaction', async () => {
    const a = await transfer(1_100_000n);
    expect(await submit({ transaction: a.base64 })).toMatchObject({ status: 200, json: { accepted: true, signature: a.signature } });
    const b = await transfer(1_200_000n);
    const raw = await fetch(`${relay.relayUrl}/v1/transactions`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'x-api-key': TEST_KEY }, body: Buffer.from(b.bytes) });
    expect(raw.status).toBe(200);
    expect(await raw.json()).toMatchObject({ accepted: true, signature: b.signature });
    const c = await transfer(1_300_000n);
    expect((await rpc(`${relay.relayUrl}/v1/sendTransaction`, 'sendTransaction', [c.base64, { encoding: 'base64' }])).result).toBe(c.signature);
    for (const s of [a.signature, b.signature, c.signature]) expect((await confirmedStatus(conn, s, 30_000)).err).toBeNull();
  });

  it('QUIC ingress: a uni stream and a bidi request (answered with the v1 signature)', async () => {
    const client = await IngressClient.connect({ host: '127.0.0.1', port: relay.quic!.port, certificate: cert });
    try {
      const a = await transfer(1_400_000n);
      expect((await client.sendUni(a.bytes)).kind).toBe('written');
      const b = await transfer(1_500_000n);
      expect(await client.request({ transaction: b.bytes, routes: ['rpc'] })).toEqual({ kind: 'answer', answer: { accepted: true, signature: b.signature, routes: ['rpc'] } });
      for (const s of [a.signature, b.signature]) expect((await confirmedStatus(conn, s, 30_000)).err).toBeNull();
    } finally {
      client.close();
    }
  });
});

describe('v1 transactions by every route', () => {
  it.each(['rpc', 'direct', 'jito', 'static'])('%s: lands, and the receipt says which route sent it and that it executed', async (route) => {
    const tx = await transfer(2_000_000n);
    expect(await submit({ transaction: tx.base64, routes: [route], maxRetries: 0 })).toMatchObject({ status: 200, json: { accepted: true, signature: tx.signature, routes: [route] } });
    const status = await confirmedStatus(conn, tx.signature, 30_000);
    expect(status.err).toBeNull();
    const r = await waitFor('receipt landed', () => receipt(tx.signature), (x) => x.status === 'landed', 20_000);
    expect(Object.keys(r.routes)).toEqual([route]);
    expect(r.routes[route].outcome).toBe('sent');
    expect(r.landed).toMatchObject({ slot: status.slot, err: null, firstRoute: route, execution: 'executed' });
  });

  it('a v1 of 4,000-4,096 bytes with four signers lands by the direct route (one QUIC stream of several packets)', async () => {
    const signers = [payer, ...(await Promise.all([1, 2, 3].map(() => generateKeyPairSigner())))];
    const hash = await blockhash();
    const probe = await buildV1(payer, hash, [memoIx('m', signers)], CONFIG);
    const memo = 'slotrelay v1 '.repeat(400).slice(0, 4_096 - probe.bytes.length + 1);
    const big = await buildV1(payer, hash, [memoIx(memo, signers)], CONFIG);
    expect(big.bytes.length).toBe(4_096);
    expect(await submit({ transaction: big.base64, routes: ['direct'], maxRetries: 0 })).toMatchObject({ status: 200, json: { signature: big.signature } });
    const status = await confirmedStatus(conn, big.signature, 30_000);
    expect(status.err).toBeNull();
    const r = await waitFor('receipt landed', () => receipt(big.signature), (x) => x.status === 'landed', 20_000);
    expect(r.routes.direct.targets).toBeGreaterThan(0);
    const got = await conn.getTransaction(big.signature, { maxSupportedTransactionVersion: 1, commitment: 'confirmed' });
    expect(got?.meta?.fee).toBe(4 * 5_000 + 3_000);
    expect(got?.slot).toBe(r.landed.slot);
    // The payer paid the fee and nothing else (a memo moves no lamports); other transfers of this file may land meanwhile,
    // so the balance is checked from the transaction's own meta.
    expect(got!.meta!.preBalances[0] - got!.meta!.postBalances[0]).toBe(4 * 5_000 + 3_000);
  });

  it('a v1 bundle lands through the relay\'s bundle service (Jito-Solana takes v1: docs/transactions.md)', async () => {
    const jito = new JitoJsonRpcClient(`${relay.relayUrl}/v1`, TEST_KEY);
    const tip = ((await jito.getTipAccounts()) as RpcAnswer<string[]>).result![0];
    const tx = await buildV1(payer, await blockhash(), [transferIx(payer, (await generateKeyPairSigner()).address, 5_000_000n), transferIx(payer, tip, 10_000n)], CONFIG);
    const sent = (await jito.sendBundle([[tx.base64], { encoding: 'base64' }])) as RpcAnswer<string>;
    expect(sent.error).toBeUndefined();
    const id = createHash('sha256').update(bs58.decode(tx.signature)).digest('hex');
    expect(sent.result).toBe(id);
    const settled = await inflightStatusWhen(jito, id, (s) => s.status !== 'Pending' && s.status !== 'Invalid', 30_000);
    expect(settled.status).toBe('Landed');
    expect((await confirmedStatus(conn, tx.signature, 30_000)).err).toBeNull();
  });
});

describe('a v1 with one signature byte changed', () => {
  it('is refused at intake for a key that verifies signatures; otherwise relayed, fails signature checks, never lands', async () => {
    const signers = [payer, await generateKeyPairSigner()];
    const good = await buildV1(payer, await blockhash(), [memoIx('two signers', signers)], CONFIG);
    const bad = Buffer.from(good.bytes);
    bad[bad.length - 1] ^= 0x01; // the last byte of the second signature
    const b64 = bad.toString('base64');
    const refused = await submit({ transaction: b64 }, OTHER_KEY);
    expect(refused.status).toBe(400);
    expect(refused.json.error.reason).toBe('signature_verification_failed');
    // Without verification the relay takes it (the first signature, intact, is its id) and the cluster refuses it.
    const taken = await submit({ transaction: b64, routes: ['rpc'], maxRetries: 0 });
    expect(taken).toMatchObject({ status: 200, json: { accepted: true, signature: good.signature } });
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await conn.getSignatureStatuses([good.signature])).value[0]).toBeNull();
    const r = await receipt(good.signature);
    expect(r.status).not.toBe('landed');
    expect(r.landed ?? null).toBeNull();
  });
});
