// The receipt stream (issue #43 item 4, docs/receipts.md "The receipt stream"): receiptSubscribe on a real relay's
// PubSub WebSocket on the embedded localnet (Alpenglow), read through the client library (relay.receipts(),
// relay.receiptsFor()) and a plain `ws` client for the wire shapes. Every state a receipt goes through arrives as a
// receiptNotification: accepted, each route's first answer (sent; failed and dropped:no_connection on a second relay
// whose leader is down and whose RPC endpoint answers errors), processed (slot, leader), finalized, not landed with
// its reason (a blockhash that never existed). A key never sees another key's receipts; the per-key subscription bound
// answers -32005; a reader that stops reading is closed 1008 slow_consumer.
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';
import { RelayClient, type ReceiptUpdate } from 'slotrelay/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureClientBuilt } from '../../helpers/client-dist.js';
import { embeddedLocalnetUrl } from '../../helpers/embedded-localnet.js';
import { startFakeRpcUpstream } from '../../helpers/fake-upstream.js';
import { PubsubClient } from '../../helpers/pubsub-client.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { waitFor } from '../../helpers/wait-for.js';

const KEY_B = '3e2d1c0b-a9f8-4e7d-8c6b-5a4f3e2d1c0b';
const SUBS_PER_KEY = 200;
const TRACK_MS = 3_000;
let relay: RelayHandle;

function keys(): Record<string, unknown>[] {
  const budget = { perSecond: 10_000, burst: 10_000 };
  return [
    { key: TEST_KEY, name: 'desk-a', rateLimit: budget, readLimit: budget },
    { key: KEY_B, name: 'desk-b', rateLimit: budget, readLimit: budget },
  ];
}

function client(r: RelayHandle, key: string): RelayClient {
  return new RelayClient({ url: r.relayUrl, rpcUrl: r.rpcUrl, pubsubUrl: r.wsUrl, apiKey: key });
}

/** Signed transfers from a freshly funded payer (base64); `bogus`: a blockhash that never existed. */
async function transfers(r: RelayHandle, n: number, bogus = false): Promise<string[]> {
  const ln = new Connection(embeddedLocalnetUrl(r), 'confirmed');
  const payer = Keypair.generate();
  const sig = await ln.requestAirdrop(payer.publicKey, 10 * LAMPORTS_PER_SOL);
  await waitFor('airdrop', () => ln.getSignatureStatuses([sig]), (s) => s.value[0] !== null, 10_000);
  const blockhash = bogus ? Keypair.generate().publicKey.toBase58() : (await ln.getLatestBlockhash('confirmed')).blockhash;
  return Array.from({ length: n }, (_, i) => {
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight: 1e9 }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 + i }),
    );
    tx.sign(payer);
    return tx.serialize().toString('base64');
  });
}

/** Collects a stream's updates into `into` until it ends or fails (the failure is kept). */
function drain(stream: AsyncIterableIterator<ReceiptUpdate>, into: ReceiptUpdate[]): Promise<unknown> {
  return (async () => {
    try {
      for await (const u of stream) into.push(u);
      return null;
    } catch (err) {
      return err;
    }
  })();
}

const events = (us: readonly ReceiptUpdate[], sig: string): string[] => us.filter((u) => u.signature === sig).map((u) => (u.event === 'route' ? `route:${u.route}:${u.outcome}` : u.event));

beforeAll(async () => {
  ensureClientBuilt();
  relay = await startRelay({
    localnet: { validators: 1, slotMs: 200 },
    receipts: { pollMs: 100, trackForMs: TRACK_MS },
    retries: { defaultMaxRetries: 0 },
    jsonRpc: { pubsub: { receiptSubscriptionsPerKey: SUBS_PER_KEY, maxBufferedBytes: 64 * 1024 } },
    keys: keys(),
  });
}, 60_000);

afterAll(async () => {
  await relay?.stop('SIGTERM');
});

describe('receiptSubscribe: every state, pushed', () => {
  it('the whole key: accepted, the route sent, processed (slot, leader), finalized; another key sees none of it', async () => {
    const a = client(relay, TEST_KEY);
    const b = client(relay, KEY_B);
    const seenA: ReceiptUpdate[] = [];
    const seenB: ReceiptUpdate[] = [];
    const streamA = a.receipts();
    const streamB = b.receipts();
    const doneA = drain(streamA, seenA);
    const doneB = drain(streamB, seenB);
    await new Promise((r) => setTimeout(r, 300)); // both subscribed (a receipt accepted before is not replayed)
    const [txA, txB] = await transfers(relay, 2);
    const sigA = (await a.submit(txA, { routes: ['rpc'] })).signature;
    const sigB = (await b.submit(txB, { routes: ['rpc'] })).signature;
    await waitFor('A finalized', async () => events(seenA, sigA), (e) => e.includes('finalized'), 15_000);
    await waitFor('B finalized', async () => events(seenB, sigB), (e) => e.includes('finalized'), 15_000);
    // Each state once. The rpc route's answer (its HTTP reply, read by the egress thread) and the landing (the
    // upstream's push) race: on a loaded box the block can be seen before the route's reply, so the route event is
    // anywhere after `accepted` (docs/receipts.md); the landing states keep their order.
    const gotA = events(seenA, sigA);
    expect([...gotA].sort()).toEqual(['accepted', 'confirmed', 'finalized', 'processed', 'route:rpc:sent']);
    expect(gotA[0]).toBe('accepted');
    expect(gotA.filter((e) => !e.startsWith('route:'))).toEqual(['accepted', 'processed', 'confirmed', 'finalized']);
    const processed = seenA.find((u) => u.signature === sigA && u.event === 'processed')!;
    expect(processed.receipt.landed).toMatchObject({ slot: expect.any(Number), leader: expect.any(String), execution: 'executed' });
    expect(seenA.find((u) => u.event === 'finalized')!.receipt.landed!.confirmationStatus).toBe('finalized');
    // Isolation: neither key's stream ever carried the other's transaction.
    expect(seenA.every((u) => u.signature !== sigB)).toBe(true);
    expect(seenB.every((u) => u.signature !== sigA)).toBe(true);
    await streamA.return!();
    await streamB.return!();
    expect(await doneA).toBeNull();
    expect(await doneB).toBeNull();
  }, 40_000);

  it("by signature after the submit: the receipt as it stands, then to finalized; another key's signature is silent", async () => {
    const a = client(relay, TEST_KEY);
    const [tx] = await transfers(relay, 1);
    const sig = (await a.submit(tx, { routes: ['rpc'] })).signature;
    // KEY_B asks for A's signature on a raw socket: subscribed (a signature is not a secret) but never notified.
    const spy = await PubsubClient.open(`${relay.wsUrl}/?key=${KEY_B}`);
    const spyId = await spy.subscribe('receiptSubscribe', [sig]);
    const seen: ReceiptUpdate[] = [];
    expect(await drain(a.receiptsFor(sig), seen)).toBeNull(); // ends by itself at the final state
    expect(seen[0].event).toBe('current');
    expect(seen.at(-1)!.event).toBe('finalized');
    expect(seen.at(-1)!.receipt.status).toBe('landed');
    await new Promise((r) => setTimeout(r, 300));
    expect(spy.inbox.filter((m) => m.method === 'receiptNotification' && m.params.subscription === spyId)).toEqual([]);
    spy.close();
  }, 30_000);

  it('slotrelay send --wait finalized: the answer, then one JSON line per state as pushed, exit 0', async () => {
    const [tx] = await transfers(relay, 1);
    const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) =>
      execFile(process.execPath, ['dist/src/cli.js', 'send', tx, '--routes', 'rpc', '--wait', 'finalized', '--relay', relay.relayUrl, '--rpc', relay.rpcUrl], { env: { ...process.env, SLOTRELAY_KEY: TEST_KEY } }, (err, out) =>
        resolve({ code: err === null ? 0 : Number((err as { code?: number }).code), stdout: out }),
      ),
    );
    const lines = stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(code, stdout).toBe(0);
    expect(lines[0]).toMatchObject({ accepted: true, signature: expect.any(String) });
    const states = lines.slice(1);
    expect(states[0].event).toBe('current');
    expect(states.at(-1)).toMatchObject({ event: 'finalized', status: 'landed', slot: expect.any(Number), confirmationStatus: 'finalized' });
    expect(stdout).not.toContain(TEST_KEY);
  }, 30_000);

  it('not landed, with its reason: a blockhash that never existed (sent by rpc, blockhash_expired)', async () => {
    const a = client(relay, TEST_KEY);
    const [bogus] = await transfers(relay, 1, true);
    const seen: ReceiptUpdate[] = [];
    const stream = a.receipts();
    const done = drain(stream, seen);
    await new Promise((r) => setTimeout(r, 300));
    const sig = (await a.submit(bogus, { routes: ['rpc'] })).signature;
    await waitFor('not landed', async () => events(seen, sig), (e) => e.includes('not_landed'), TRACK_MS + 10_000);
    expect(events(seen, sig)).toEqual(['accepted', 'route:rpc:sent', 'not_landed']);
    expect(seen.find((u) => u.event === 'not_landed')!.receipt).toMatchObject({ status: 'not_landed', reason: { code: 'blockhash_expired', sent: true } });
    await stream.return!();
    await done;
  }, 30_000);

  it('the wire: receiptNotification {result, subscription}, receiptUnsubscribe, bad params; the per-key bound (-32005)', async () => {
    const ws = await PubsubClient.open(`${relay.wsUrl}/?key=${TEST_KEY}`);
    expect((await ws.call('receiptSubscribe', ['not-a-signature'])).error).toMatchObject({ code: -32602 });
    expect((await ws.call('receiptSubscribe', [{ all: 'yes' }])).error).toMatchObject({ code: -32602 });
    const ids: number[] = [await ws.subscribe('receiptSubscribe', [{ all: true }])];
    for (let i = 1; i < SUBS_PER_KEY; i++) ids.push(await ws.subscribe('receiptSubscribe'));
    const over = await ws.call('receiptSubscribe', []);
    expect(over.error).toMatchObject({ code: -32005, data: { reason: 'subscription_limit', limit: SUBS_PER_KEY } });
    // Another socket of the same key counts against the same bound; unsubscribing frees one.
    const other = await PubsubClient.open(`${relay.wsUrl}/?key=${TEST_KEY}`);
    expect((await other.call('receiptSubscribe', [])).error).toMatchObject({ code: -32005 });
    for (const id of ids.slice(1)) expect((await ws.call('receiptUnsubscribe', [id])).result).toBe(true);
    expect((await ws.call('receiptUnsubscribe', [ids[1]])).error).toMatchObject({ code: -32602, message: 'Invalid subscription id.' });
    expect(typeof (await other.subscribe('receiptSubscribe', []))).toBe('number');
    const [tx] = await transfers(relay, 1);
    const sig = (await client(relay, TEST_KEY).submit(tx, { routes: ['rpc'] })).signature;
    const n = await ws.next((m) => m.method === 'receiptNotification' && m.params.result.signature === sig);
    expect(n).toMatchObject({ jsonrpc: '2.0', method: 'receiptNotification', params: { subscription: ids[0], result: { event: 'accepted', signature: sig, receipt: { signature: sig } } } });
    ws.close();
    other.close();
  }, 30_000);

  it('a reader that stops reading is closed 1008 slow_consumer, and the relay keeps serving', async () => {
    const ws = await PubsubClient.open(`${relay.wsUrl}/?key=${KEY_B}`);
    // Many whole-key subscriptions on one socket multiply each receipt's notifications: the bound is reached fast.
    for (let i = 0; i < SUBS_PER_KEY; i++) await ws.subscribe('receiptSubscribe', []);
    ws.ws.pause(); // stops reading: the kernel buffers fill, then uWS's
    const b = client(relay, KEY_B);
    const txs = await transfers(relay, 60);
    let closedBy: { code: number; reason: string } | null = null;
    void ws.closed.then((c) => (closedBy = c));
    for (const tx of txs) {
      await b.submit(tx, { routes: ['rpc'] });
      if (closedBy !== null) break;
    }
    ws.ws.resume();
    expect(await ws.closed).toEqual({ code: 1008, reason: 'slow_consumer' });
    const metrics = await (await fetch(`${relay.rpcUrl}/metrics`)).text();
    expect(metrics).toMatch(/^slotrelay_pubsub_slow_consumer_closes_total 1$/m);
    // The key's subscriptions were released with the socket: it can subscribe again.
    const again = await PubsubClient.open(`${relay.wsUrl}/?key=${KEY_B}`);
    expect(typeof (await again.subscribe('receiptSubscribe', []))).toBe('number');
    again.close();
  }, 60_000);
});

describe('receiptSubscribe: route failures and drops', () => {
  let down: RelayHandle;
  let behind: Server;

  beforeAll(async () => {
    // An RPC endpoint that answers every sendTransaction with an error, and (tower, so slots keep coming) a leader
    // that is down: as not-landed-reasons-down.test.ts.
    behind = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32005, message: 'Node is behind by 42 slots' } }));
      });
    });
    await new Promise<void>((resolve) => behind.listen(0, '127.0.0.1', resolve));
    down = await startRelay({
      localnet: { validators: 1, slotMs: 200, links: [{ down: true }], consensus: 'tower' },
      routes: { direct: { enabled: true, connectTimeoutMs: 500, staleAfterMs: 5_000 }, rpc: { endpoints: [`http://127.0.0.1:${(behind.address() as AddressInfo).port}/`], timeoutMs: 8_000 } },
      receipts: { pollMs: 100, trackForMs: TRACK_MS },
      retries: { defaultMaxRetries: 0 },
      keys: keys(),
    });
    await waitFor('direct deliverable', async () => (await (await fetch(`${down.rpcUrl}/health?detail`)).json()) as any, (h) => h.routes?.direct?.deliverable === true, 20_000);
  }, 60_000);

  afterAll(async () => {
    await down?.stop('SIGTERM');
    behind?.close();
  });

  it('rpc failed and direct dropped:no_connection, each pushed with the outcome, then not landed (timed_out)', async () => {
    const a = client(down, TEST_KEY);
    const seen: ReceiptUpdate[] = [];
    const stream = a.receipts();
    const done = drain(stream, seen);
    await new Promise((r) => setTimeout(r, 300));
    const [tx] = await transfers(down, 1);
    const sig = (await a.submit(tx, { routes: ['direct', 'rpc'] })).signature;
    await waitFor('not landed', async () => events(seen, sig), (e) => e.includes('not_landed'), TRACK_MS + 15_000);
    const e = events(seen, sig);
    expect(e[0]).toBe('accepted');
    expect(e.slice(1, 3).sort()).toEqual(['route:direct:dropped:no_connection', 'route:rpc:failed']);
    expect(e[3]).toBe('not_landed');
    expect(seen.find((u) => u.event === 'not_landed')!.receipt.reason).toMatchObject({ code: 'timed_out', sent: false, route: 'direct' });
    await stream.return!();
    await done;
  }, 40_000);
});

describe('receiptSubscribe on an upstream that includes a transaction without executing it', () => {
  // The localnet never commits a transaction that cannot pay its fee; an Agave node with SIMD-0290 does, and reports it
  // with InsufficientFundsForFee. A fake upstream (test/helpers/fake-upstream.ts) answers getSignatureStatuses so.
  it('not_executed: the status the node reports, pushed once, the receipt saying not_executed', async () => {
    const upstream = await startFakeRpcUpstream();
    upstream.statuses = new Map();
    const r = await startRelay({ upstream: { rpcUrl: upstream.url }, routes: { rpc: { endpoints: [upstream.url] } }, receipts: { pollMs: 100 }, retries: { defaultMaxRetries: 0 } });
    try {
      const a = client(r, TEST_KEY);
      const seen: ReceiptUpdate[] = [];
      const stream = a.receipts();
      const done = drain(stream, seen);
      await new Promise((res) => setTimeout(res, 300));
      const payer = Keypair.generate(); // never funded: it cannot pay the fee
      const tx = new Transaction({ feePayer: payer.publicKey, blockhash: Keypair.generate().publicKey.toBase58(), lastValidBlockHeight: 1e9 }).add(
        SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000 }),
      );
      tx.sign(payer);
      const sig = (await a.submit(tx.serialize().toString('base64'), { routes: ['rpc'] })).signature;
      await upstream.waitForSends(1);
      upstream.statusSlot = 7;
      upstream.statuses.set(sig, { slot: 7, confirmations: null, err: { InsufficientFundsForFee: null }, confirmationStatus: 'finalized' });
      await waitFor('not_executed', async () => events(seen, sig), (e) => e.includes('not_executed'), 10_000);
      const got = events(seen, sig);
      expect(got[0]).toBe('accepted');
      expect(got.filter((e) => e === 'not_executed')).toHaveLength(1);
      expect(got).toContain('route:rpc:sent');
      expect(seen.find((u) => u.signature === sig && u.event === 'not_executed')!.receipt.landed).toMatchObject({ slot: 7, execution: 'not_executed' });
      await stream.return!();
      expect(await done).toBeNull();
    } finally {
      await r.stop('SIGTERM');
      await upstream.close();
    }
  }, 30_000);
});
