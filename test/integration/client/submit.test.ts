// The client library's submit over HTTP against a real relay on its embedded localnet, imported only through the
// package entry (`slotrelay/client` -> package.json exports -> dist/), as a user would: web3.js legacy and v0
// transactions, a kit transaction, raw bytes and base64 all land (confirmed on the localnet), with the compute-unit
// price instruction the library builds for each library; the answer carries the routes and the request id; both key
// headers are sent. Then every typed error the relay answers, for real: bad key, rate limited (retryAfterMs),
// oversized transaction and body, route not allowed, overloaded; and the client's own: no answer (timeout, refused
// connection), an answer that is not the relay's, and 'quic' asked for by name (it lives in slotrelay/client/quic).
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import {
  address,
  appendTransactionMessageInstructions,
  createKeyPairSignerFromBytes,
  createTransactionMessage,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Blockhash,
} from '@solana/kit';
import * as web3 from '@solana/web3.js';
import { Connection, Keypair, SystemProgram, Transaction, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RelayClient,
  RelaySubmitError,
  SlotrelayError,
  TransportUnavailableError,
  kitComputeUnitPriceInstruction,
  web3ComputeUnitPriceInstruction,
  type FetchLike,
  type RequestInitLike,
} from 'slotrelay/client';
import { ensureClientBuilt } from '../../helpers/client-dist.js';
import { embeddedLocalnetUrl, fundedPayer } from '../../helpers/embedded-localnet.js';
import { startFakeRpcUpstream, type FakeRpcUpstream } from '../../helpers/fake-upstream.js';
import { defaultKeys, startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { landed } from '../../helpers/landed.js';

const TIGHT_KEY = '0c3d5e7f-1a2b-4c6d-8e9f-a0b1c2d3e4f5';
const RPC_ONLY_KEY = '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b';
const UNKNOWN_KEY = 'deadbeef-dead-4bee-8eef-deadbeefdead';

let relay: RelayHandle;
let localnet: Connection;
let payer: Keypair;
let client: RelayClient;

beforeAll(async () => {
  ensureClientBuilt();
  relay = await startRelay({
    keys: [
      ...defaultKeys(),
      { key: TIGHT_KEY, name: 'tight', rateLimit: { perSecond: 0.5, burst: 1 } },
      { key: RPC_ONLY_KEY, name: 'rpc-only', allowedRoutes: ['rpc'] },
    ],
  });
  localnet = new Connection(embeddedLocalnetUrl(relay), 'confirmed');
  payer = await fundedPayer(localnet, 5);
  client = new RelayClient({ url: relay.relayUrl, apiKey: TEST_KEY });
}, 60_000);

afterAll(async () => {
  await client?.close();
  await relay?.stop('SIGTERM');
});

async function blockhash(): Promise<string> {
  return (await localnet.getLatestBlockhash('confirmed')).blockhash;
}

/** Above the rent-exempt minimum of a fresh account (890,880 lamports). */
function transfer(lamports = 1_000_000): web3.TransactionInstruction {
  return SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports });
}

describe('submit over HTTP lands', () => {
  it('web3.js legacy Transaction (with our SetComputeUnitPrice) and VersionedTransaction', async () => {
    const legacy = new Transaction({ feePayer: payer.publicKey, blockhash: await blockhash(), lastValidBlockHeight: 1_000_000 }).add(
      web3ComputeUnitPriceInstruction(web3, 1_000),
      transfer(),
    );
    legacy.sign(payer);
    const a = await client.submit(legacy);
    expect(a).toEqual({ accepted: true, signature: bs58.encode(legacy.signature!), routes: ['rpc'], requestId: expect.any(String) });
    await landed(localnet, a.signature);

    const v0 = new VersionedTransaction(new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash: await blockhash(), instructions: [transfer()] }).compileToV0Message());
    v0.sign([payer]);
    const b = await client.submit(v0, { routes: ['rpc'], maxRetries: 0 });
    expect(b.routes).toEqual(['rpc']);
    await landed(localnet, b.signature);
  });

  it('@solana/kit transaction (with our kit SetComputeUnitPrice instruction)', async () => {
    const signer = await createKeyPairSignerFromBytes(payer.secretKey);
    const recent = (await blockhash()) as Blockhash;
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(signer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: recent, lastValidBlockHeight: 1_000_000n }, m),
      (m) =>
        appendTransactionMessageInstructions(
          [
            kitComputeUnitPriceInstruction(2_500, address),
            {
              programAddress: address('11111111111111111111111111111111'),
              accounts: [
                { address: signer.address, role: 3 /* writable signer */ },
                { address: address(Keypair.generate().publicKey.toBase58()), role: 1 /* writable */ },
              ],
              // SystemInstruction::Transfer (u32 2) of 1,000,000 lamports (u64 LE).
              data: new Uint8Array([2, 0, 0, 0, 0x40, 0x42, 0x0f, 0, 0, 0, 0, 0]),
            },
          ],
          m,
        ),
    );
    const tx = await signTransactionMessageWithSigners(message);
    const a = await client.submit(tx);
    expect(a.accepted).toBe(true);
    await landed(localnet, a.signature);
  });

  it('raw wire bytes and a base64 string; x-request-id kept; both key headers sent', async () => {
    const seen: Record<string, string>[] = [];
    const recording: FetchLike = (url: string, init: RequestInitLike) => {
      seen.push(init.headers);
      return fetch(url, init as RequestInit);
    };
    const c = new RelayClient({ url: `${relay.relayUrl}/v1/submit`, apiKey: TEST_KEY, fetch: recording });
    const make = async (): Promise<Transaction> => {
      const t = new Transaction({ feePayer: payer.publicKey, blockhash: await blockhash(), lastValidBlockHeight: 1_000_000 }).add(transfer());
      t.sign(payer);
      return t;
    };
    const bytes = await c.submit(new Uint8Array((await make()).serialize()), { requestId: 'client-test-bytes' });
    expect(bytes.requestId).toBe('client-test-bytes');
    const b64 = await c.submit((await make()).serialize().toString('base64'));
    expect(b64.requestId).toMatch(/^[0-9a-f-]{8,}/);
    await landed(localnet, bytes.signature);
    await landed(localnet, b64.signature);
    expect(seen).toHaveLength(2);
    for (const h of seen) expect(h).toMatchObject({ authorization: `Bearer ${TEST_KEY}`, 'x-api-key': TEST_KEY, 'content-type': 'application/json' });
  });
});

describe('an undici dispatcher: the request() fast path', () => {
  it('the same answers: accepted and landed with x-request-id read, a typed refusal, timeout and refused connection', async () => {
    const agent = new Agent({ connections: 4 });
    try {
      const c = new RelayClient({ url: relay.relayUrl, apiKey: TEST_KEY, dispatcher: agent });
      const tx = new Transaction({ feePayer: payer.publicKey, blockhash: await blockhash(), lastValidBlockHeight: 1_000_000 }).add(transfer());
      tx.sign(payer);
      const a = await c.submit(tx, { requestId: 'via-agent' });
      expect(a).toEqual({ accepted: true, signature: bs58.encode(tx.signature!), routes: ['rpc'], requestId: 'via-agent' });
      await landed(localnet, a.signature);
      const e = await refusal(new RelayClient({ url: relay.relayUrl, apiKey: UNKNOWN_KEY, dispatcher: agent }).submit(legacyTransfer().base64));
      expect(e).toMatchObject({ status: 401, code: -32600, reason: 'unauthorized', requestId: expect.any(String) });
      const silent = createTcpServer((s) => s.on('error', () => {}));
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const t = await refusal(new RelayClient({ url, apiKey: TEST_KEY, dispatcher: agent, timeoutMs: 200 }).submit(legacyTransfer().base64));
      expect(t).toMatchObject({ reason: 'timeout' });
      silent.close();
      await new Promise((r) => setTimeout(r, 50));
      const n = await refusal(new RelayClient({ url, apiKey: TEST_KEY, dispatcher: agent }).submit(legacyTransfer().base64));
      expect(n).toMatchObject({ reason: 'network_error' });
      expect(n.message).toMatch(/ECONNREFUSED/);
    } finally {
      await agent.destroy();
    }
  });
});

async function refusal(p: Promise<unknown>): Promise<RelaySubmitError> {
  const e = await p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(RelaySubmitError);
  expect(e).toBeInstanceOf(SlotrelayError);
  return e as RelaySubmitError;
}

describe('typed errors the relay answers', () => {
  it('bad key: 401 unauthorized, -32600, the key in no message', async () => {
    const e = await refusal(new RelayClient({ url: relay.relayUrl, apiKey: UNKNOWN_KEY }).submit(legacyTransfer().base64));
    expect(e).toMatchObject({ status: 401, code: -32600, reason: 'unauthorized', retryAfterMs: undefined, retryable: false });
    expect(e.message).toMatch(/^Unauthorized/);
    expect(e.message).not.toContain(UNKNOWN_KEY);
    expect(e.requestId).toEqual(expect.any(String));
  });

  it('rate limited: 429 rate_limited, -32005, retryAfterMs from the relay (data.retryAfterMs)', async () => {
    const tight = new RelayClient({ url: relay.relayUrl, apiKey: TIGHT_KEY });
    await tight.submit(legacyTransfer().base64); // the bucket's one token
    const e = await refusal(tight.submit(legacyTransfer().base64));
    expect(e).toMatchObject({ status: 429, code: -32005, reason: 'rate_limited', retryable: true });
    expect(e.data).toMatchObject({ reason: 'rate_limited', retryAfterMs: expect.any(Number) });
    expect(e.retryAfterMs).toBe((e.data as { retryAfterMs: number }).retryAfterMs);
    expect(e.retryAfterMs).toBeGreaterThan(0);
    expect(e.retryAfterMs).toBeLessThanOrEqual(2_000); // 0.5 token/s
  });

  it('oversized: a legacy/v0 transaction over 1232 bytes answers 400 with Agave\'s message; a body over maxBodyBytes 413', async () => {
    // 1,300 bytes encode to 1,736 base64 characters, within v1's 5,464: the decoded size is what refuses it.
    const big = new Uint8Array(1_300).fill(1);
    const e = await refusal(client.submit(big));
    expect(e).toMatchObject({ status: 400, code: -32602, reason: 'tx_too_large_decoded' });
    expect(e.message).toBe('decoded solana_transaction::versioned::VersionedTransaction too large: 1300 bytes (max: 1232 bytes)');
    const over = await refusal(client.submit('A'.repeat(5_468)));
    expect(over).toMatchObject({ status: 400, code: -32602, reason: 'tx_too_large_encoded' });
    expect(over.message).toBe('base64 encoded solana_transaction::versioned::VersionedTransaction too large: 5468 bytes (max: encoded/raw 5464/4096)');
    const huge = await refusal(client.submit('A'.repeat(60_000)));
    expect(huge).toMatchObject({ status: 413, code: -32600, reason: 'body_too_large' });
  });

  it('route not allowed for the key: 403 route_not_allowed; an unknown route name never leaves the client', async () => {
    const e = await refusal(new RelayClient({ url: relay.relayUrl, apiKey: RPC_ONLY_KEY }).submit(legacyTransfer().base64, { routes: ['direct'] }));
    expect(e).toMatchObject({ status: 403, code: -32602, reason: 'route_not_allowed' });
    await expect(client.submit(legacyTransfer().base64, { routes: ['carrier-pigeon' as 'rpc'] })).rejects.toThrow(TypeError);
    await expect(client.submit(legacyTransfer().base64, { routes: [] })).rejects.toThrow(TypeError);
  });
});

describe('overloaded', () => {
  let upstream: FakeRpcUpstream;
  let busy: RelayHandle;
  beforeAll(async () => {
    upstream = await startFakeRpcUpstream();
    upstream.delayMs = 1_500; // the route holds each record this long, so the 4-slot ring fills at once
    busy = await startRelay({ upstream: { rpcUrl: upstream.url }, routes: { rpc: { endpoints: [upstream.url] } }, rings: { workers: 1, slotsPerRing: 4 } });
  });
  afterAll(async () => {
    await busy?.stop('SIGKILL');
    await upstream?.close();
  });

  it('a full ring: 503 overloaded with retryAfterMs from Retry-After; the accepted ones are delivered', async () => {
    const c = new RelayClient({ url: busy.relayUrl, apiKey: TEST_KEY });
    const txs = Array.from({ length: 8 }, () => legacyTransfer());
    const out: (string | RelaySubmitError)[] = [];
    for (const tx of txs) out.push(await c.submit(tx.base64).then((r) => r.signature, (e: RelaySubmitError) => e));
    const refused = out.filter((o): o is RelaySubmitError => o instanceof RelaySubmitError);
    expect(refused).toHaveLength(4);
    for (const e of refused) {
      expect(e).toMatchObject({ status: 503, code: -32005, reason: 'overloaded', retryAfterMs: 1_000, retryable: true, data: { reason: 'overloaded' } });
    }
    const sent = await upstream.waitForSends(4);
    txs.forEach((tx, i) => expect(sent.some((b) => b.equals(tx.bytes))).toBe(typeof out[i] === 'string'));
  });
});

describe("the client's own errors", () => {
  const servers: (HttpServer | TcpServer)[] = [];
  const sockets: Socket[] = [];
  afterAll(() => {
    for (const s of sockets) s.destroy();
    for (const s of servers) s.close();
  });

  async function listen<T extends HttpServer | TcpServer>(s: T): Promise<string> {
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  }

  it("transport: 'quic' as a string: TransportUnavailableError at construction, naming the entry to import", () => {
    const make = (): RelayClient => new RelayClient({ url: relay.relayUrl, apiKey: TEST_KEY, transport: 'quic' });
    expect(make).toThrow(TransportUnavailableError);
    expect(make).toThrow(/slotrelay\/client\/quic/);
    try {
      make();
    } catch (e) {
      expect(e).toMatchObject({ reason: 'transport_unavailable' });
    }
  });

  it('no answer in time: timeout; nothing listening: network_error; the outcome is then unknown', async () => {
    const silent = createTcpServer((s) => sockets.push(s)); // accepts and never answers
    const url = await listen(silent);
    const t0 = Date.now();
    const e = await refusal(new RelayClient({ url, apiKey: TEST_KEY, timeoutMs: 300 }).submit(legacyTransfer().base64));
    expect(e).toMatchObject({ reason: 'timeout', status: undefined, code: undefined, retryable: true });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    const closed = createTcpServer();
    const deadUrl = await listen(closed);
    await new Promise<void>((r) => closed.close(() => r()));
    const n = await refusal(new RelayClient({ url: deadUrl, apiKey: TEST_KEY }).submit(legacyTransfer().base64));
    expect(n).toMatchObject({ reason: 'network_error', status: undefined });
    expect(n.message).toMatch(/ECONNREFUSED/);
  });

  it("an answer that is not the relay's (a proxy's HTML page): bad_answer with the status", async () => {
    const proxy = createHttpServer((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>Bad Gateway</html>');
    });
    const e = await refusal(new RelayClient({ url: await listen(proxy), apiKey: TEST_KEY }).submit(legacyTransfer().base64));
    expect(e).toMatchObject({ reason: 'bad_answer', status: 502 });
  });

  it('construction refuses a key that cannot be a header and a URL that is not http(s), without echoing the key', () => {
    expect(() => new RelayClient({ url: relay.relayUrl, apiKey: 'a b\r\nx' })).toThrow(/apiKey must be/);
    expect(() => new RelayClient({ url: relay.relayUrl, apiKey: 'a b\r\nx' })).not.toThrow(/a b/);
    expect(() => new RelayClient({ url: 'relay:8080', apiKey: TEST_KEY })).toThrow(TypeError);
  });
});
