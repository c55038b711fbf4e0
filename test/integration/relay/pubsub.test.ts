// The JSON-RPC host's PubSub WebSocket (issue #11 item 4, docs/pubsub.md) against a real relay on the embedded
// localnet, driven by unchanged clients: @solana/web3.js's Connection (onSlotChange, onSignature, onAccountChange),
// @solana/kit's createSolanaRpcSubscriptions, and a plain `ws` client for the exact wire shapes. Auth on the upgrade
// (401 without or with an unknown key), the per-key subscription limit across sockets, released by closing and by a
// fired signature subscription, and Agave's errors for bad params. Payers are funded on the localnet directly
// (requestAirdrop is not a relay method); everything else goes through the relay.
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction, type AccountInfo, type Context, type SignatureResult } from '@solana/web3.js';
import { createSolanaRpcSubscriptions, signature as kitSignature } from '@solana/kit';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PubsubClient } from '../../helpers/pubsub-client.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { waitFor } from '../../helpers/wait-for.js';

const LIMITED_KEY = '0c6f9a12-3b4d-4e5f-8a6b-7c8d9e0f1a2b';
const LIMIT = 3;
const UNKNOWN_KEY = 'ffffffff-ffff-4fff-8fff-ffffffffffff';
const UNAUTHORIZED_BODY = {
  jsonrpc: '2.0',
  error: { code: -32600, message: 'Unauthorized: a valid API key is required (x-token, x-api-key, Authorization: Bearer, or ?key=)' },
  id: null,
};

let relay: RelayHandle;
let localnet: Connection;
const payer = Keypair.generate();

function keyed(url: string, key = TEST_KEY): string {
  return `${url}/?key=${key}`;
}

async function fund(pubkey: PublicKey, sol: number): Promise<void> {
  const sig = await localnet.requestAirdrop(pubkey, sol * LAMPORTS_PER_SOL);
  const latest = await localnet.getLatestBlockhash('confirmed');
  await localnet.confirmTransaction({ signature: sig, ...latest }, 'confirmed');
}

/** A signed transfer from the payer (not sent). */
async function transfer(to: PublicKey, lamports: number): Promise<{ bytes: Buffer; signature: string }> {
  const { blockhash, lastValidBlockHeight } = await localnet.getLatestBlockhash('confirmed');
  const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports }),
  );
  tx.sign(payer);
  return { bytes: tx.serialize(), signature: bs58.encode(tx.signature!) };
}

/** Sent through the relay's JSON-RPC host. */
async function sendThroughRelay(bytes: Buffer): Promise<string> {
  const res = await fetch(relay.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [bytes.toString('base64'), { encoding: 'base64', skipPreflight: true }] }),
  });
  const body = (await res.json()) as { result?: string; error?: unknown };
  if (typeof body.result !== 'string') throw new Error(`sendTransaction failed: ${JSON.stringify(body)}`);
  return body.result;
}

async function gauge(name: string, keyName: string): Promise<number> {
  const text = await (await fetch(`${relay.rpcUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{key_name="${keyName}"}`));
  return line === undefined ? NaN : Number(line.split(' ')[1]);
}

beforeAll(async () => {
  relay = await startRelay({
    keys: [
      { key: TEST_KEY, name: 'test-bot', rateLimit: { perSecond: 10_000, burst: 10_000 } },
      { key: LIMITED_KEY, name: 'limited-bot', subscriptionLimit: LIMIT },
    ],
  });
  const started = relay.logs.map((l) => (l.includes('"event":"localnet_started"') ? (JSON.parse(l) as { rpcUrl: string }) : null)).find((x) => x !== null);
  localnet = new Connection(started!.rpcUrl, 'confirmed');
  await fund(payer.publicKey, 10);
}, 60_000);

afterAll(async () => {
  await relay?.stop('SIGTERM');
});

describe('where web3.js looks for PubSub', () => {
  it('is served on the rpc port + 1, and the WebSocket web3.js derives from the rpc URL carries ?key=', async () => {
    const rpcPort = Number(new URL(relay.rpcUrl).port);
    expect(relay.wsUrl).toBe(`ws://127.0.0.1:${rpcPort + 1}`);
    // A user pastes the keyed rpc URL; web3.js derives ws://host:(port + 1)/?key=... from it.
    const conn = new Connection(keyed(relay.rpcUrl), 'confirmed');
    const slots: number[] = [];
    const id = conn.onSlotChange((s) => slots.push(s.slot));
    await waitFor('two slot notifications', () => slots.length >= 2);
    expect(slots[1]).toBeGreaterThan(slots[0]);
    await conn.removeSlotChangeListener(id);
  });

  it('refuses the derived endpoint without a key with HTTP 401 and the JSON-RPC host\'s body', async () => {
    const rpcPort = Number(new URL(relay.rpcUrl).port);
    const refused = await PubsubClient.refused(`ws://127.0.0.1:${rpcPort + 1}/`);
    expect(refused.status).toBe(401);
    expect(refused.contentType).toBe('application/json; charset=utf-8');
    expect(JSON.parse(refused.body)).toEqual(UNAUTHORIZED_BODY);
  });
});

describe('web3.js Connection with httpHeaders and a keyed wsEndpoint', () => {
  const conn = (): Connection =>
    new Connection(relay.rpcUrl, { commitment: 'confirmed', httpHeaders: { 'x-api-key': TEST_KEY }, wsEndpoint: keyed(relay.wsUrl), disableRetryOnRateLimit: true });

  it('onSlotChange fires', async () => {
    const c = conn();
    const slots: number[] = [];
    const id = c.onSlotChange((s) => slots.push(s.slot));
    await waitFor('slot notifications', () => slots.length >= 2);
    await c.removeSlotChangeListener(id);
  });

  it('onSignature fires for a transaction sent through the relay', async () => {
    const c = conn();
    const tx = await transfer(Keypair.generate().publicKey, 1_000_000);
    const fired = new Promise<{ result: SignatureResult; context: Context }>((resolve) => c.onSignature(tx.signature, (result, context) => resolve({ result, context }), 'confirmed'));
    await new Promise((r) => setTimeout(r, 200)); // the subscription is made before the send
    expect(await sendThroughRelay(tx.bytes)).toBe(tx.signature);
    const { result, context } = await fired;
    expect(result).toEqual({ err: null });
    expect(context.slot).toBeGreaterThan(0);
  });

  it('onAccountChange fires on a balance change, with the new balance', async () => {
    const c = conn();
    const account = Keypair.generate().publicKey;
    const seen: AccountInfo<Buffer>[] = [];
    const id = c.onAccountChange(account, (info) => seen.push(info), { commitment: 'confirmed', encoding: 'base64' });
    await new Promise((r) => setTimeout(r, 200));
    await sendThroughRelay((await transfer(account, 2_500_000)).bytes);
    await waitFor('an account notification', () => seen.length >= 1);
    expect(seen[0].lamports).toBe(2_500_000);
    expect(seen[0].owner.toBase58()).toBe('11111111111111111111111111111111');
    await c.removeAccountChangeListener(id);
  });
});

describe('@solana/kit createSolanaRpcSubscriptions on ws://...?key=', () => {
  it('slotNotifications and signatureNotifications work', async () => {
    const subs = createSolanaRpcSubscriptions(keyed(relay.wsUrl));
    const abort = new AbortController();
    try {
      const slotsIter = await subs.slotNotifications().subscribe({ abortSignal: abort.signal });
      const got: bigint[] = [];
      for await (const n of slotsIter) {
        got.push(n.slot);
        if (got.length === 2) break;
      }
      expect(got[1]).toBeGreaterThan(got[0]);

      const tx = await transfer(Keypair.generate().publicKey, 1_000_000);
      const sigIter = await subs.signatureNotifications(kitSignature(tx.signature), { commitment: 'confirmed' }).subscribe({ abortSignal: abort.signal });
      await sendThroughRelay(tx.bytes);
      for await (const n of sigIter) {
        expect(n.value).toEqual({ err: null });
        expect(n.context.slot).toBeGreaterThan(0n);
        break;
      }
    } finally {
      abort.abort();
    }
  });
});

describe('the wire, with a plain WebSocket client', () => {
  it('accountSubscribe notifies in Agave\'s shape with the client\'s subscription id', async () => {
    const ws = await PubsubClient.open(keyed(relay.wsUrl));
    const account = Keypair.generate().publicKey;
    const id = await ws.subscribe('accountSubscribe', [account.toBase58(), { commitment: 'confirmed', encoding: 'base64' }]);
    await sendThroughRelay((await transfer(account, 3_000_000)).bytes);
    const note = await ws.next((m) => m.method === 'accountNotification');
    expect(note).toEqual({
      jsonrpc: '2.0',
      method: 'accountNotification',
      params: {
        result: {
          context: { slot: expect.any(Number) },
          value: { data: ['', 'base64'], executable: false, lamports: 3_000_000, owner: '11111111111111111111111111111111', rentEpoch: expect.any(Number), space: 0 },
        },
        subscription: id,
      },
    });
    expect(await ws.call('accountUnsubscribe', [id])).toEqual({ jsonrpc: '2.0', result: true, id: expect.any(Number) });
    ws.close();
  });

  it('signatureSubscribe fires once, then the subscription is gone (Agave removes it)', async () => {
    const ws = await PubsubClient.open(keyed(relay.wsUrl));
    const tx = await transfer(Keypair.generate().publicKey, 1_000_000);
    const id = await ws.subscribe('signatureSubscribe', [tx.signature, { commitment: 'confirmed' }]);
    await sendThroughRelay(tx.bytes);
    const note = await ws.next((m) => m.method === 'signatureNotification');
    expect(note).toEqual({
      jsonrpc: '2.0',
      method: 'signatureNotification',
      params: { result: { context: { slot: expect.any(Number) }, value: { err: null } }, subscription: id },
    });
    const unsub = await ws.call('signatureUnsubscribe', [id]);
    expect(unsub.error).toEqual({ code: -32602, message: 'Invalid subscription id.' });
    ws.close();
  });

  it('rootSubscribe notifies roots', async () => {
    const ws = await PubsubClient.open(keyed(relay.wsUrl));
    const id = await ws.subscribe('rootSubscribe');
    const note = await ws.next((m) => m.method === 'rootNotification');
    expect(note).toEqual({ jsonrpc: '2.0', method: 'rootNotification', params: { result: expect.any(Number), subscription: id } });
    ws.close();
  });

  it('serves the upgrade on the rpc port too, and every key carrier works', async () => {
    const rpcWs = relay.rpcUrl.replace('http:', 'ws:');
    const carriers: Record<string, string>[] = [{ 'x-api-key': TEST_KEY }, { 'x-token': TEST_KEY }, { authorization: `Bearer ${TEST_KEY}` }];
    for (const headers of carriers) {
      const ws = await PubsubClient.open(rpcWs, headers);
      expect(await ws.subscribe('slotSubscribe')).toEqual(expect.any(Number));
      ws.close();
    }
  });

  it('refuses no key and an unknown key with 401, on both ports', async () => {
    for (const base of [relay.wsUrl, relay.rpcUrl.replace('http:', 'ws:')]) {
      for (const url of [`${base}/`, keyed(base, UNKNOWN_KEY)]) {
        const refused = await PubsubClient.refused(url);
        expect(refused.status).toBe(401);
        expect(JSON.parse(refused.body)).toEqual(UNAUTHORIZED_BODY);
      }
      const header = await PubsubClient.refused(base, { 'x-api-key': UNKNOWN_KEY });
      expect(header.status).toBe(401);
    }
  });

  it('answers bad params with Agave\'s errors and ids, batches in order, -32601 for other methods', async () => {
    const ws = await PubsubClient.open(keyed(relay.wsUrl));
    const err = async (method: string, params: unknown): Promise<unknown> => (await ws.call(method, params)).error;
    expect(await err('accountSubscribe', ['not-a-key'])).toEqual({ code: -32602, message: 'Invalid Request: Invalid pubkey provided' });
    expect(await err('accountSubscribe', [12])).toEqual({ code: -32602, message: 'Invalid params: invalid type: integer `12`, expected a string.' });
    expect(await err('accountSubscribe', [payer.publicKey.toBase58(), { encoding: 'json' }])).toEqual({
      code: -32602,
      message: 'Invalid params: unknown variant `json`, expected one of `binary`, `base58`, `base64`, `jsonParsed`, `base64+zstd`.',
    });
    expect(await err('accountSubscribe', [payer.publicKey.toBase58(), { commitment: 'max' }])).toEqual({
      code: -32602,
      message: 'Invalid params: unknown variant `max`, expected one of `processed`, `confirmed`, `finalized` for `commitment`',
    });
    expect(await err('accountSubscribe', [])).toEqual({ code: -32602, message: 'Invalid parameters: Expected from 1 to 2 parameters.', data: 'Got: 0' });
    expect(await err('signatureSubscribe', ['abc'])).toEqual({ code: -32602, message: 'Invalid Request: Invalid signature provided' });
    expect(await err('slotSubscribe', [1])).toEqual({ code: -32602, message: 'Invalid parameters: No parameters were expected' });
    expect(await err('slotUnsubscribe', [987654])).toEqual({ code: -32602, message: 'Invalid subscription id.' });
    expect(await err('slotUnsubscribe', ['1'])).toEqual({ code: -32602, message: 'Invalid params: invalid type: string "1", expected u64.' });
    expect(await err('blockSubscribe', [])).toEqual({ code: -32601, message: 'Method not found' });

    ws.send('[{"jsonrpc":"2.0","id":"a","method":"slotSubscribe"},{"jsonrpc":"2.0","id":7,"method":"nope"},{"jsonrpc":"2.0","method":"ping"}]');
    const batch = await ws.next((m) => Array.isArray(m));
    expect(batch).toEqual([
      { jsonrpc: '2.0', result: expect.any(Number), id: 'a' },
      { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 7 },
    ]);
    ws.send('{not json');
    expect(await ws.next((m) => m.id === null)).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
    ws.close();
  });

  it('closes a socket that sends a message over http.maxBodyBytes', async () => {
    const ws = await PubsubClient.open(keyed(relay.wsUrl));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'slotSubscribe', params: ['x'.repeat(60_000)] }));
    expect((await ws.closed).code).toBe(1006); // uWS drops the connection without a close frame
  });
});

describe('the per-key subscription limit', () => {
  it('holds across the key\'s sockets with the exact error, and a closed socket gives its subscriptions back', async () => {
    const a = await PubsubClient.open(keyed(relay.wsUrl, LIMITED_KEY));
    const b = await PubsubClient.open(keyed(relay.wsUrl, LIMITED_KEY));
    await a.subscribe('slotSubscribe');
    await a.subscribe('rootSubscribe');
    await b.subscribe('slotSubscribe');
    const limitError = {
      code: -32005,
      message: "Subscription refused: the API key's limit on open subscriptions is reached",
      data: { reason: 'subscription_limit', limit: LIMIT },
    };
    expect((await a.call('slotSubscribe')).error).toEqual(limitError);
    expect((await b.call('accountSubscribe', [payer.publicKey.toBase58()])).error).toEqual(limitError);
    expect(await gauge('slotrelay_pubsub_subscriptions', 'limited-bot')).toBe(LIMIT);

    // Another key is not affected.
    const other = await PubsubClient.open(keyed(relay.wsUrl));
    await other.subscribe('slotSubscribe');
    other.close();

    a.close();
    await a.closed;
    await waitFor('a\'s subscriptions released', () => gauge('slotrelay_pubsub_subscriptions', 'limited-bot'), (v) => v === 1);
    await b.subscribe('slotSubscribe');
    await b.subscribe('accountSubscribe', [payer.publicKey.toBase58()]);
    expect((await b.call('slotSubscribe')).error).toEqual(limitError);

    b.close();
    await b.closed;
    await waitFor('b\'s subscriptions released', () => gauge('slotrelay_pubsub_subscriptions', 'limited-bot'), (v) => v === 0);
  });

  it('a signature subscription that fired no longer counts', async () => {
    const ws = await PubsubClient.open(keyed(relay.wsUrl, LIMITED_KEY));
    const s1 = await ws.subscribe('slotSubscribe');
    const s2 = await ws.subscribe('slotSubscribe');
    const tx = await transfer(Keypair.generate().publicKey, 1_000_000);
    await ws.subscribe('signatureSubscribe', [tx.signature, { commitment: 'confirmed' }]);
    expect((await ws.call('slotSubscribe')).error.data).toEqual({ reason: 'subscription_limit', limit: LIMIT });
    await sendThroughRelay(tx.bytes);
    await ws.next((m) => m.method === 'signatureNotification');
    await ws.subscribe('slotSubscribe');
    // Unsubscribing gives one back as well.
    expect((await ws.call('slotUnsubscribe', [s1])).result).toBe(true);
    await ws.subscribe('rootSubscribe');
    expect((await ws.call('slotSubscribe')).error.data).toEqual({ reason: 'subscription_limit', limit: LIMIT });
    expect(s2).not.toBe(s1);
    ws.close();
  });
});
