// Bundles through the relay (#16), driven by Jito's own client (jito-js-rpc, unchanged: `new
// JitoJsonRpcClient(relay + '/v1', key)` posts to POST /v1/bundles with the key as ?uuid=) and by fetch on the
// JSON-RPC host. The bundle service is a real localnet's Jito-compatible block engine, in this process so the test
// can turn its rate limit down; the relay runs on that localnet as its upstream.
import { createHash } from 'node:crypto';
import { Connection, LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import { isAxiosError } from 'axios';
import bs58 from 'bs58';
import { JitoJsonRpcClient } from 'jito-js-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { inflightStatusWhen, nextSlotStart, orderedBundle, tippedTransfer, type InflightStatus, type RpcAnswer } from '../../helpers/bundles.js';
import { fundedPayer } from '../../helpers/embedded-localnet.js';
import { OTHER_KEY, startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { waitFor } from '../../helpers/wait-for.js';

const TIGHT_KEY = '0d6b3c8a-52e1-4f7a-9c3e-7a1b2c3d4e5f';

interface Inflight {
  context: { slot: number };
  value: InflightStatus[];
}

let localnet: Localnet;
let relay: RelayHandle;
let conn: Connection;
let jito: JitoJsonRpcClient;

beforeAll(async () => {
  localnet = await startLocalnet({ validators: 2, slotMs: 800, blockEngineRateLimitPerSecond: 0 });
  relay = await startRelay({
    upstream: { rpcUrl: localnet.rpcUrl },
    routes: { rpc: { endpoints: [localnet.rpcUrl] } },
    bundles: { url: localnet.blockEngineUrl },
    receipts: { pollMs: 100 },
    keys: [
      { key: TEST_KEY, name: 'bundler', bundles: true, verifySignatures: true, rateLimit: { perSecond: 10_000, burst: 10_000 } },
      { key: OTHER_KEY, name: 'no-bundles', rateLimit: { perSecond: 10_000, burst: 10_000 } },
      { key: TIGHT_KEY, name: 'tight-bundler', bundles: true, rateLimit: { perSecond: 1, burst: 4 } },
    ],
  });
  conn = new Connection(localnet.rpcUrl, 'confirmed');
  jito = new JitoJsonRpcClient(`${relay.relayUrl}/v1`, TEST_KEY);
}, 60_000);

afterAll(async () => {
  await relay?.stop();
  await localnet?.stop();
});

async function tipAccount(): Promise<string> {
  return ((await jito.getTipAccounts()) as RpcAnswer<string[]>).result![0];
}

/** The engine's own view of a bundle (asked directly, not through the relay). */
async function engineStatus(signatures: readonly string[]): Promise<string> {
  const h = createHash('sha256');
  for (const s of signatures) h.update(bs58.decode(s));
  const direct = new JitoJsonRpcClient(`${localnet.blockEngineUrl}/api/v1`);
  return ((await direct.getInFlightBundleStatuses([[h.digest('hex')]])) as RpcAnswer<Inflight>).result!.value[0].status;
}

describe('bundles through the relay', () => {
  it('serves the service tip accounts (cached) to a key with bundles', async () => {
    const r = (await jito.getTipAccounts()) as RpcAnswer<string[]>;
    expect(r.result).toEqual(localnet.bundles.tipAccounts);
  });

  it('lands a 3-transaction bundle atomically and in order; statuses go Pending -> Landed; receipts carry the bundle id', async () => {
    const payer = await fundedPayer(conn, 2);
    const { blockhash } = await conn.getLatestBlockhash();
    const plan = orderedBundle(payer, blockhash, await tipAccount());
    await nextSlotStart(localnet.clock); // then the bundle is Pending for most of an 800 ms slot
    const sent = (await jito.sendBundle([plan.base64, { encoding: 'base64' }])) as RpcAnswer<string>;
    expect(sent.error).toBeUndefined();
    const id = sent.result!;
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    const first = (await jito.getInFlightBundleStatuses([[id]])) as RpcAnswer<Inflight>;
    expect(first.result!.value[0].status).toBe('Pending');
    const landed = await inflightStatusWhen(jito, id, (v) => v.status === 'Landed', 10_000);
    const st = await conn.getSignatureStatuses(plan.signatures);
    expect(st.value.map((v) => v?.slot)).toEqual([landed.landed_slot, landed.landed_slot, landed.landed_slot]);
    expect(await conn.getBalance(plan.d)).toBe(LAMPORTS_PER_SOL / 10);
    const statuses = (await jito.getBundleStatuses([[id]])) as RpcAnswer<{ value: { bundle_id: string; transactions: string[]; slot: number }[] }>;
    expect(statuses.result!.value[0]).toMatchObject({ bundle_id: id, transactions: plan.signatures, slot: landed.landed_slot });

    // The landing receipt of each transaction names the bundle and its place in it, and sees it land.
    const receipt = await waitFor(
      'the receipt to see the landing',
      async () => (await (await fetch(`${relay.relayUrl}/v1/transactions/${plan.signatures[1]}`, { headers: { 'x-api-key': TEST_KEY } })).json()) as { status: string; bundle: unknown; landed: { slot: number; firstRoute: string } | null },
      (r) => r.status === 'landed',
      10_000,
    );
    expect(receipt.bundle).toEqual({ id, index: 1 });
    expect(receipt.landed).toMatchObject({ slot: landed.landed_slot, firstRoute: 'bundle' });
    const metrics = await (await fetch(`${relay.relayUrl}/metrics`)).text();
    expect(metrics).toMatch(/slotrelay_bundles_total\{outcome="accepted"\} [1-9]/);
  });

  it('a bundle whose second transaction fails lands nothing', async () => {
    const payer = await fundedPayer(conn, 2);
    const before = await conn.getBalance(payer.publicKey);
    const { blockhash } = await conn.getLatestBlockhash();
    const plan = orderedBundle(payer, blockhash, await tipAccount(), { failSecond: true });
    const id = ((await jito.sendBundle([plan.base64, { encoding: 'base64' }])) as RpcAnswer<string>).result!;
    const final = await inflightStatusWhen(jito, id, (v) => v.status !== 'Pending', 10_000);
    expect(final.status).toBe('Failed');
    expect(await conn.getBalance(payer.publicKey)).toBe(before);
    expect((await conn.getSignatureStatuses(plan.signatures)).value).toEqual([null, null, null]);
  });

  it('refuses a bundle without a tip with the documented error, before the service sees it', async () => {
    const payer = await fundedPayer(conn, 1);
    const { blockhash } = await conn.getLatestBlockhash();
    const plan = orderedBundle(payer, blockhash, await tipAccount(), { tipLamports: 0 });
    const r = (await jito.sendBundle([plan.base64, { encoding: 'base64' }])) as RpcAnswer<string>;
    expect(r.error).toMatchObject({ code: -32602, data: { reason: 'bundle_tip_too_low', tipLamports: 0, minTipLamports: 1000 } });
    expect(r.error!.message).toMatch(/^Invalid params: bundle tip below the minimum: the bundle transfers 0 lamports/);
    expect(await engineStatus(plan.signatures)).toBe('Invalid'); // never forwarded
    const low = orderedBundle(payer, blockhash, await tipAccount(), { tipLamports: 999 });
    expect(((await jito.sendBundle([low.base58])) as RpcAnswer<string>).error?.data?.reason).toBe('bundle_tip_too_low');
  });

  it('refuses a key without bundles, 6 transactions, duplicates and a bad transaction, each with its error', async () => {
    const payer = await fundedPayer(conn, 1);
    const { blockhash } = await conn.getLatestBlockhash();
    const tip = await tipAccount();
    const plan = orderedBundle(payer, blockhash, tip);
    const other = new JitoJsonRpcClient(`${relay.relayUrl}/v1`, OTHER_KEY);
    const denied = (await other.sendBundle([plan.base64, { encoding: 'base64' }])) as RpcAnswer<string>;
    expect(denied.error).toMatchObject({ code: -32602, message: 'Invalid params: bundles are not enabled for this API key', data: { reason: 'bundles_not_enabled' } });
    expect(((await other.getTipAccounts()) as RpcAnswer<string[]>).error?.data?.reason).toBe('bundles_not_enabled');
    expect(await engineStatus(plan.signatures)).toBe('Invalid');

    const t = tippedTransfer(payer, blockhash, tip);
    const six = [...plan.base64, t.base64, tippedTransfer(payer, blockhash, tip).base64, tippedTransfer(payer, blockhash, tip).base64];
    const r6 = (await jito.sendBundle([six, { encoding: 'base64' }])) as RpcAnswer<string>;
    expect(r6.error).toMatchObject({ code: -32602, message: 'Invalid params: invalid bundle: a bundle holds 1 to 5 transactions, this one 6', data: { reason: 'bundle_invalid' } });
    const dup = (await jito.sendBundle([[t.base64, t.base64], { encoding: 'base64' }])) as RpcAnswer<string>;
    expect(dup.error).toMatchObject({ code: -32602, data: { reason: 'bundle_invalid', transactionIndex: 1 } });
    const bad = (await jito.sendBundle([[t.base64, 'AAAA'], { encoding: 'base64' }])) as RpcAnswer<string>;
    expect(bad.error).toMatchObject({ code: -32602, data: { transactionIndex: 1 } });
    // The key verifies signatures: a transaction whose signature does not match its message is refused by index.
    const forged = Buffer.from(t.base64, 'base64');
    forged[1] ^= 0xff; // first byte of the first signature
    const bad2 = (await jito.sendBundle([[forged.toString('base64'), t.base64], { encoding: 'base64' }])) as RpcAnswer<string>;
    expect(bad2.error).toMatchObject({ code: -32003, data: { reason: 'signature_verification_failed', transactionIndex: 0 } });
    const ids = (await jito.getBundleStatuses([['not-an-id']])) as RpcAnswer<unknown>;
    expect(ids.error?.code).toBe(-32602);
  });

  it("charges a bundle to the key's submission budget per transaction (429 + Retry-After)", async () => {
    const payer = await fundedPayer(conn, 1);
    const { blockhash } = await conn.getLatestBlockhash();
    const tip = await tipAccount();
    const five = [0, 1, 2, 3, 4].map(() => tippedTransfer(payer, blockhash, tip).base64);
    const res = await fetch(`${relay.relayUrl}/v1/bundles`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': TIGHT_KEY },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'sendBundle', params: [five, { encoding: 'base64' }] }),
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await res.json()) as RpcAnswer<string> & { id: number }).error).toMatchObject({ code: -32005, data: { reason: 'rate_limited' } });
  });

  it("translates the bundle service's 429 / -32097 into the relay's rate-limit error", async () => {
    localnet.blockEngine.rateLimitPerSecond = 1;
    try {
      let limited: unknown = null;
      for (let i = 0; i < 6 && limited === null; i++) {
        try {
          await jito.getInFlightBundleStatuses([['00'.repeat(32)]]);
        } catch (err) {
          limited = err;
        }
      }
      expect(isAxiosError(limited)).toBe(true);
      if (!isAxiosError(limited)) return;
      expect(limited.response?.status).toBe(429);
      expect(limited.response?.headers['retry-after']).toBeDefined();
      expect((limited.response?.data as RpcAnswer<never>).error).toMatchObject({ code: -32005, data: { reason: 'bundle_service_rate_limited' } });
    } finally {
      localnet.blockEngine.rateLimitPerSecond = 0;
    }
  });

  it('serves the same methods on the JSON-RPC host (key in a header)', async () => {
    const res = await fetch(relay.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'a', method: 'getTipAccounts', params: [] }),
    });
    expect(((await res.json()) as RpcAnswer<string[]>).result).toEqual(localnet.bundles.tipAccounts);
    const payer = await fundedPayer(conn, 1);
    const { blockhash } = await conn.getLatestBlockhash();
    const t = tippedTransfer(payer, blockhash, localnet.bundles.tipAccounts[3]);
    const sent = await fetch(relay.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'b', method: 'sendBundle', params: [[t.base64], { encoding: 'base64' }] }),
    });
    const id = ((await sent.json()) as RpcAnswer<string>).result!;
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    await waitFor('the one-transaction bundle to land', async () => (await conn.getSignatureStatuses([t.signature])).value[0], (v) => v !== null, 10_000);
    expect(await conn.getBalance(new PublicKey(localnet.bundles.tipAccounts[3]))).toBeGreaterThan(10_000_000);
  });
});
