// Passthrough reads (docs/passthrough.md) through the real relay process, driven by unchanged real clients
// (@solana/web3.js Connection, @solana/kit createSolanaRpc, fetch) pointed at the relay's JSON-RPC URL only.
// Part 1: the embedded localnet is the upstream (startRelay({})); the localnet's own URL (from the relay's
// localnet_started log line) is used only to fund accounts and to compare answers byte for byte.
// Part 2: the upstream is a stand-in HTTP server this file controls: stopped, silent, erroring, then back.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionMessage,
} from '@solana/web3.js';
import { address, createSolanaRpc, signature as kitSignature, type Base64EncodedBytes, type TransactionMessageBytesBase64 } from '@solana/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PASSTHROUGH_METHODS } from '../../../src/config/schema.js';
import { defaultKeys, startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { waitFor } from '../../helpers/wait-for.js';

/** A key whose readLimit is tight: 3 at once, 1 per second. */
const READ_KEY = '3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f';

interface Answer {
  readonly status: number;
  readonly text: string;
  readonly json: any;
  readonly headers: Headers;
}

async function post(url: string, body: unknown, headers: Record<string, string> = { 'x-api-key': TEST_KEY }): Promise<Answer> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, text, json: text === '' ? null : JSON.parse(text), headers: res.headers };
}

describe('passthrough reads on the embedded localnet', () => {
  let relay: RelayHandle;
  let localnetUrl: string;
  let localnet: Connection;
  let web3: Connection;
  const payer = Keypair.generate();
  const recipient = Keypair.generate().publicKey;
  let transferSig: string;

  beforeAll(async () => {
    relay = await startRelay({ keys: [...defaultKeys(), { key: READ_KEY, name: 'read-bot', readLimit: { perSecond: 1, burst: 3 } }] });
    const started = relay.logs.map((l) => (l.includes('"event":"localnet_started"') ? (JSON.parse(l) as { rpcUrl: string }) : null)).find((x) => x != null);
    localnetUrl = started!.rpcUrl;
    localnet = new Connection(localnetUrl, 'confirmed');
    web3 = new Connection(relay.rpcUrl, { httpHeaders: { 'x-api-key': TEST_KEY }, disableRetryOnRateLimit: true, commitment: 'confirmed' });
    // Funding and one landed transfer, made on the localnet itself: what the reads below look at.
    // Confirmation by polling, not confirmTransaction: its WebSocket would outlive the localnet and log reconnects.
    const confirmed = (sig: string) =>
      waitFor(`${sig} confirmed`, async () => (await localnet.getSignatureStatuses([sig])).value[0], (st) => st?.confirmationStatus === 'confirmed' || st?.confirmationStatus === 'finalized');
    await confirmed(await localnet.requestAirdrop(payer.publicKey, 2 * LAMPORTS_PER_SOL));
    const tx = new Transaction({ feePayer: payer.publicKey, ...(await localnet.getLatestBlockhash('confirmed')) }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: recipient, lamports: LAMPORTS_PER_SOL / 10 }),
    );
    tx.sign(payer);
    transferSig = await localnet.sendRawTransaction(tx.serialize());
    await confirmed(transferSig);
  }, 90_000);

  afterAll(async () => {
    await relay?.stop();
  });

  it('serves the documented default list (and nothing else by default)', async () => {
    expect([...DEFAULT_PASSTHROUGH_METHODS]).toEqual([
      'getLatestBlockhash',
      'isBlockhashValid',
      'getSignatureStatuses',
      'getSlot',
      'getBlockHeight',
      'getEpochInfo',
      'getBalance',
      'getAccountInfo',
      'getMultipleAccounts',
      'getMinimumBalanceForRentExemption',
      'getFeeForMessage',
      'getTransaction',
      'getVersion',
      'getHealth',
      'getGenesisHash',
      'getIdentity',
      'getAgGenesisCert',
    ]);
  });

  it('every default method through an unchanged web3.js Connection (key in x-api-key)', async () => {
    const latest = await web3.getLatestBlockhash('processed');
    expect(latest.blockhash).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    expect((await web3.isBlockhashValid(latest.blockhash, { commitment: 'processed' })).value).toBe(true);
    const statuses = await web3.getSignatureStatuses([transferSig]);
    expect(statuses.value[0]).toMatchObject({ err: null });
    expect(['confirmed', 'finalized']).toContain(statuses.value[0]?.confirmationStatus);
    const slot = await web3.getSlot('processed');
    expect(slot).toBeGreaterThan(0);
    expect(await web3.getBlockHeight('processed')).toBeGreaterThanOrEqual(slot);
    expect((await web3.getEpochInfo('processed')).absoluteSlot).toBeGreaterThanOrEqual(slot);
    expect(await web3.getBalance(recipient)).toBe(LAMPORTS_PER_SOL / 10);
    const info = await web3.getAccountInfo(recipient);
    expect(info).toMatchObject({ lamports: LAMPORTS_PER_SOL / 10, executable: false });
    expect(info?.owner.equals(SystemProgram.programId)).toBe(true);
    const many = await web3.getMultipleAccountsInfo([recipient, Keypair.generate().publicKey, payer.publicKey]);
    expect(many.map((a) => a?.lamports ?? null)).toEqual([LAMPORTS_PER_SOL / 10, null, await localnet.getBalance(payer.publicKey)]);
    expect(await web3.getMinimumBalanceForRentExemption(0)).toBe(await localnet.getMinimumBalanceForRentExemption(0));
    const message = new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: latest.blockhash,
      instructions: [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: recipient, lamports: 1 })],
    }).compileToLegacyMessage();
    expect((await web3.getFeeForMessage(message, 'processed')).value).toBe(5000);
    const landed = await web3.getTransaction(transferSig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(landed?.transaction.signatures[0]).toBe(transferSig);
    expect(landed?.meta?.err).toBeNull();
    expect((await web3.getVersion())['solana-core']).toBe((await localnet.getVersion())['solana-core']);
    expect(await web3.getGenesisHash()).toBe(await localnet.getGenesisHash());
    // web3.js has no getHealth / getIdentity helpers: its private _rpcRequest is the Connection's own transport.
    const rpcRequest = (web3 as unknown as { _rpcRequest(m: string, a: unknown[]): Promise<{ result: unknown }> })._rpcRequest.bind(web3);
    expect((await rpcRequest('getHealth', [])).result).toBe('ok');
    expect((await rpcRequest('getIdentity', [])).result).toEqual((await post(localnetUrl, { jsonrpc: '2.0', id: 1, method: 'getIdentity' }, {})).json.result);
  });

  it('every default method through an unchanged @solana/kit createSolanaRpc (key in headers)', async () => {
    const rpc = createSolanaRpc(relay.rpcUrl, { headers: { 'x-api-key': TEST_KEY } });
    const { value: latest } = await rpc.getLatestBlockhash({ commitment: 'processed' }).send();
    expect((await rpc.isBlockhashValid(latest.blockhash, { commitment: 'processed' }).send()).value).toBe(true);
    const { value: statuses } = await rpc.getSignatureStatuses([kitSignature(transferSig)]).send();
    expect(statuses[0]?.err).toBeNull();
    const slot = await rpc.getSlot({ commitment: 'processed' }).send();
    expect(typeof slot).toBe('bigint');
    expect(await rpc.getBlockHeight({ commitment: 'processed' }).send()).toBeGreaterThanOrEqual(slot);
    expect((await rpc.getEpochInfo({ commitment: 'processed' }).send()).absoluteSlot).toBeGreaterThanOrEqual(slot);
    expect((await rpc.getBalance(address(recipient.toBase58())).send()).value).toBe(BigInt(LAMPORTS_PER_SOL / 10));
    const { value: info } = await rpc.getAccountInfo(address(recipient.toBase58()), { encoding: 'base64' }).send();
    expect(info).toMatchObject({ lamports: BigInt(LAMPORTS_PER_SOL / 10), owner: '11111111111111111111111111111111', data: ['', 'base64'] });
    const { value: many } = await rpc.getMultipleAccounts([address(recipient.toBase58()), address(Keypair.generate().publicKey.toBase58())], { encoding: 'base64' }).send();
    expect(many.map((a) => a?.lamports ?? null)).toEqual([BigInt(LAMPORTS_PER_SOL / 10), null]);
    expect(await rpc.getMinimumBalanceForRentExemption(0n).send()).toBe(BigInt(await localnet.getMinimumBalanceForRentExemption(0)));
    const message = new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: latest.blockhash,
      instructions: [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: recipient, lamports: 1 })],
    }).compileToV0Message();
    const msg64 = Buffer.from(message.serialize()).toString('base64') as TransactionMessageBytesBase64;
    expect((await rpc.getFeeForMessage(msg64, { commitment: 'processed' }).send()).value).toBe(5000n);
    const landed = await rpc.getTransaction(kitSignature(transferSig), { commitment: 'confirmed', encoding: 'base64', maxSupportedTransactionVersion: 0 }).send();
    expect(landed?.transaction[1]).toBe('base64');
    expect(Buffer.from(landed!.transaction[0] as Base64EncodedBytes, 'base64').length).toBeGreaterThan(64);
    expect((await rpc.getVersion().send())['solana-core']).toBe('2.2.0');
    expect(await rpc.getHealth().send()).toBe('ok');
    expect(await rpc.getGenesisHash().send()).toBe(await localnet.getGenesisHash());
    expect((await rpc.getIdentity().send()).identity).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
  });

  it('the key in ?key= works too (web3.js and kit)', async () => {
    const url = `${relay.rpcUrl}/?key=${TEST_KEY}`;
    expect(await new Connection(url, { disableRetryOnRateLimit: true }).getGenesisHash()).toBe(await localnet.getGenesisHash());
    expect(await createSolanaRpc(url).getHealth().send()).toBe('ok');
    const noKey = await post(relay.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'getSlot' }, {});
    expect(noKey.status).toBe(401);
  });

  it('answers byte for byte what the upstream answered, with the caller\'s id', async () => {
    // Answers that do not move with the slot: the same request straight to the localnet and through the relay.
    const calls: [string, unknown[]][] = [
      ['getGenesisHash', []],
      ['getVersion', []],
      ['getIdentity', []],
      ['getMinimumBalanceForRentExemption', [165]],
      ['getTransaction', [transferSig, { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 }]],
      ['getTransaction', [transferSig, { commitment: 'confirmed', encoding: 'jsonParsed', maxSupportedTransactionVersion: 0 }]],
    ];
    for (const [method, params] of calls) {
      const direct = await post(localnetUrl, { jsonrpc: '2.0', id: 1, method, params }, {});
      const relayed = await post(relay.rpcUrl, { jsonrpc: '2.0', id: 'caller-id-7', method, params });
      expect(relayed.status).toBe(200);
      expect(relayed.text).toBe(direct.text.replace(/,"id":1}$/, ',"id":"caller-id-7"}'));
    }
    // A numeric id keeps its type; a null id is echoed as null.
    expect((await post(relay.rpcUrl, { jsonrpc: '2.0', id: 42, method: 'getHealth' })).text).toBe('{"jsonrpc":"2.0","result":"ok","id":42}');
    expect((await post(relay.rpcUrl, { jsonrpc: '2.0', id: null, method: 'getHealth' })).text).toBe('{"jsonrpc":"2.0","result":"ok","id":null}');
  });

  it('a batch mixing passthrough reads, the relay\'s own methods and unknown ones answers in order with the right ids', async () => {
    const r = await post(relay.rpcUrl, [
      { jsonrpc: '2.0', id: 'a', method: 'getGenesisHash' },
      { jsonrpc: '2.0', id: 'b', method: 'sendTransaction', params: ['not a transaction', { encoding: 'base64' }] },
      { jsonrpc: '2.0', id: 'c', method: 'getNoSuchThing' },
      { jsonrpc: '2.0', id: 'd', method: 'getBalance', params: [recipient.toBase58()] },
      { jsonrpc: '2.0', id: 'e', method: 'getAccountInfo', params: ['not-a-pubkey'] },
      { jsonrpc: '2.0', method: 'getSlot' }, // a notification: executed, never answered
      { jsonrpc: '2.0', id: 'f', method: 'getHealth' },
    ]);
    expect(r.status).toBe(200);
    expect(r.json.map((e: { id: string }) => e.id)).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(r.json[0].result).toBe(await localnet.getGenesisHash());
    expect(r.json[1].error.code).toBe(-32602);
    expect(r.json[2].error).toEqual({ code: -32601, message: 'Method not found' });
    expect(r.json[3].result.value).toBe(LAMPORTS_PER_SOL / 10);
    expect(r.json[4].error).toEqual({ code: -32602, message: 'Invalid param: Invalid' }); // '-' is not base58
    expect(r.json[5].result).toBe('ok');
    // getLeaderSlots in a batch is still refused, passthrough elements or not.
    const withLeaderSlots = await post(relay.rpcUrl, [
      { jsonrpc: '2.0', id: 1, method: 'getSlot' },
      { jsonrpc: '2.0', id: 2, method: 'getLeaderSlots', params: [0] },
    ]);
    expect(withLeaderSlots.json.error.code).toBe(-32600);
    expect(withLeaderSlots.json.id).toBeNull();
  });

  it('a method off the list answers -32601 although the upstream serves it', async () => {
    for (const method of ['getClusterNodes', 'getEpochSchedule', 'requestAirdrop']) {
      const params = method === 'requestAirdrop' ? [recipient.toBase58(), 1] : [];
      const direct = await post(localnetUrl, { jsonrpc: '2.0', id: 1, method, params }, {});
      expect(direct.json.result).toBeDefined();
      const relayed = await post(relay.rpcUrl, { jsonrpc: '2.0', id: 'x', method, params });
      expect(relayed.json).toEqual({ jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 'x' });
    }
  });

  it("the upstream's own answers come back as it gave them: an error with its code and message, a null result", async () => {
    const bad = await post(relay.rpcUrl, { jsonrpc: '2.0', id: 'q1', method: 'getAccountInfo', params: ['0OIl'] });
    const direct = await post(localnetUrl, { jsonrpc: '2.0', id: 'q1', method: 'getAccountInfo', params: ['0OIl'] }, {});
    expect(bad.json).toEqual({ jsonrpc: '2.0', error: { code: -32602, message: 'Invalid param: Invalid' }, id: 'q1' });
    expect(bad.json).toEqual(direct.json);
    const badParams = await post(relay.rpcUrl, { jsonrpc: '2.0', id: 'q2', method: 'getBalance', params: [] });
    expect(badParams.json).toEqual({ jsonrpc: '2.0', error: { code: -32602, message: 'Invalid parameters: Expected from 1 to 2 parameters.', data: 'Got: 0' }, id: 'q2' });
    const unknownSig = Keypair.generate().secretKey; // 64 bytes: a well-formed signature nobody made
    const bs58 = (await import('bs58')).default;
    const none = await post(relay.rpcUrl, { jsonrpc: '2.0', id: 'q3', method: 'getTransaction', params: [bs58.encode(unknownSig), { commitment: 'confirmed' }] });
    expect(none.text).toBe('{"jsonrpc":"2.0","result":null,"id":"q3"}');
    expect(await web3.getTransaction(bs58.encode(unknownSig), { commitment: 'confirmed', maxSupportedTransactionVersion: 0 })).toBeNull();
    // web3.js surfaces the upstream's error as it does for any node.
    await expect(web3.getAccountInfo(new PublicKey(recipient), { commitment: 'processed', minContextSlot: 1e12 })).rejects.toThrow(/Minimum context slot has not been reached/);
  });

  it('charges the key\'s readLimit: 429 + Retry-After past it, a batch counting each element', async () => {
    const h = { 'x-api-key': READ_KEY };
    const four = await post(relay.rpcUrl, [1, 2, 3, 4].map((id) => ({ jsonrpc: '2.0', id, method: 'getHealth' })), h);
    expect(four.status).toBe(429); // 4 elements > burst 3: refused as a whole
    expect(Number(four.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const three = await post(relay.rpcUrl, [1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'getHealth' })), h);
    expect(three.status).toBe(200);
    expect(three.json.map((e: { result: string }) => e.result)).toEqual(['ok', 'ok', 'ok']);
    const fourth = await post(relay.rpcUrl, { jsonrpc: '2.0', id: 9, method: 'getSlot' }, h);
    expect(fourth.status).toBe(429);
    expect(fourth.json.error.code).toBe(-32005);
    expect(fourth.json.id).toBe(9);
    expect(Number(fourth.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Through web3.js (no retry on 429): the refusal surfaces as an error, the key's other budgets untouched.
    const limited = new Connection(relay.rpcUrl, { httpHeaders: h, disableRetryOnRateLimit: true });
    await expect(limited.getSlot()).rejects.toThrow(/429/);
  });
});

/** An upstream this file controls: answers getSlot/getGenesisHash, or errors, or nothing, or is not there at all. */
interface StandIn {
  url: string;
  port: number;
  /** 'agave': Agave's member order; 'reordered': id first; 'error': a JSON-RPC error with data null; 'http500'; 'garbage'; 'silent': never answers. */
  mode: 'agave' | 'reordered' | 'error' | 'http500' | 'garbage' | 'silent';
  bodies: string[];
  server: Server;
}

async function listen(s: StandIn, port: number): Promise<void> {
  s.server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body = JSON.parse(text) as { id: number; method: string };
      if (body.method === 'getSlot' || body.method === 'getGenesisHash') s.bodies.push(text);
      if (s.mode === 'silent' && body.method !== 'getHealth') return; // the relay's health probe still gets answers
      res.writeHead(s.mode === 'http500' ? 500 : 200, { 'content-type': 'application/json' });
      const result = body.method === 'getSlot' ? '4242' : body.method === 'getGenesisHash' ? '"GH"' : null;
      if (result === null) return res.end(`{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":${body.id}}`);
      if (s.mode === 'garbage') return res.end('<html>bad gateway</html>');
      if (s.mode === 'error') return res.end(`{"jsonrpc":"2.0","error":{"code":-32004,"message":"Block not available for slot 4242","data":null},"id":${body.id}}`);
      if (s.mode === 'reordered') return res.end(`{"id":${body.id}, "result": {"b":1,"a":[1,2]}, "jsonrpc":"2.0"}`);
      res.end(`{"jsonrpc":"2.0","result":${result},"id":${body.id}}\n`);
    });
  });
  await new Promise<void>((r) => s.server.listen(port, '127.0.0.1', () => r()));
  s.port = (s.server.address() as AddressInfo).port;
  s.url = `http://127.0.0.1:${s.port}`;
}

function stop(s: StandIn): Promise<void> {
  return new Promise((r) => {
    s.server.close(() => r());
    s.server.closeAllConnections();
  });
}

describe('passthrough reads when the upstream fails', () => {
  const TIMEOUT_MS = 1500;
  const s: StandIn = { url: '', port: 0, mode: 'agave', bodies: [], server: undefined as unknown as Server };
  let relay: RelayHandle;

  beforeAll(async () => {
    await listen(s, 0);
    relay = await startRelay({
      upstream: { rpcUrl: s.url, requestTimeoutMs: TIMEOUT_MS },
      routes: { rpc: { endpoints: [s.url] }, direct: { enabled: false } },
      telemetry: { enabled: false },
    });
  }, 60_000);

  afterAll(async () => {
    await relay?.stop();
    await stop(s).catch(() => undefined);
  });

  const getSlot = (id: string) => post(relay.rpcUrl, { jsonrpc: '2.0', id, method: 'getSlot', params: [{ commitment: 'processed' }] });

  it('forwards with its own numeric id and the client\'s params', async () => {
    s.mode = 'agave';
    s.bodies.length = 0;
    const r = await getSlot('client-id');
    expect(r.text).toBe('{"jsonrpc":"2.0","result":4242,"id":"client-id"}');
    const sent = JSON.parse(s.bodies[0]) as { id: unknown; method: string; params: unknown };
    expect(typeof sent.id).toBe('number');
    expect(sent).toMatchObject({ jsonrpc: '2.0', method: 'getSlot', params: [{ commitment: 'processed' }] });
  });

  it('another member order is parsed and re-serialised; an error keeps its code and message, null data omitted', async () => {
    s.mode = 'reordered';
    expect((await getSlot('r')).text).toBe('{"jsonrpc":"2.0","result":{"b":1,"a":[1,2]},"id":"r"}');
    s.mode = 'error';
    expect((await getSlot('e')).text).toBe('{"jsonrpc":"2.0","error":{"code":-32004,"message":"Block not available for slot 4242"},"id":"e"}');
  });

  it('a non-200 status or a body that is no JSON-RPC answer: -32005 upstream_unavailable', async () => {
    for (const mode of ['http500', 'garbage'] as const) {
      s.mode = mode;
      const r = await getSlot(mode);
      expect(r.status).toBe(200);
      expect(r.json.error).toMatchObject({ code: -32005, data: { reason: 'upstream_unavailable' } });
      expect(r.json.id).toBe(mode);
    }
  });

  it('upstream stopped: -32005 upstream_unavailable at once, no URL or transport detail; back when it is back', async () => {
    s.mode = 'agave';
    expect((await getSlot('before')).json.result).toBe(4242);
    const port = s.port;
    await stop(s);
    const t0 = Date.now();
    const down = await getSlot('down');
    const elapsed = Date.now() - t0;
    expect(down.json).toMatchObject({ jsonrpc: '2.0', error: { code: -32005, data: { reason: 'upstream_unavailable' } }, id: 'down' });
    expect(elapsed).toBeLessThan(TIMEOUT_MS); // refused connections are not waited out
    expect(down.status).toBe(200);
    expect(down.headers.get('retry-after')).toBe('1');
    expect(down.text).not.toContain(String(port));
    expect(down.text).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|connect/i);
    // A batch: each passthrough element answers the same, in order.
    const batch = await post(relay.rpcUrl, [
      { jsonrpc: '2.0', id: 1, method: 'getSlot' },
      { jsonrpc: '2.0', id: 2, method: 'getGenesisHash' },
    ]);
    expect(batch.json.map((e: { id: number; error: { data: { reason: string } } }) => [e.id, e.error.data.reason])).toEqual([
      [1, 'upstream_unavailable'],
      [2, 'upstream_unavailable'],
    ]);
    // web3.js sees the error as a JSON-RPC error.
    const web3 = new Connection(relay.rpcUrl, { httpHeaders: { 'x-api-key': TEST_KEY }, disableRetryOnRateLimit: true });
    await expect(web3.getSlot()).rejects.toThrow(/upstream RPC is unavailable/);
    await listen(s, port);
    const back = await waitFor('the relay to reach the restarted upstream', () => getSlot('back'), (r) => r.json.result === 4242);
    expect(back.text).toBe('{"jsonrpc":"2.0","result":4242,"id":"back"}');
  });

  it('an upstream that never answers: -32005 upstream_timeout within upstream.requestTimeoutMs, then recovery', async () => {
    s.mode = 'silent';
    const t0 = Date.now();
    const [a, b] = await Promise.all([getSlot('slow-1'), getSlot('slow-2')]);
    const elapsed = Date.now() - t0;
    for (const [r, id] of [[a, 'slow-1'], [b, 'slow-2']] as const) {
      expect(r.json).toMatchObject({ error: { code: -32005, data: { reason: 'upstream_timeout' } }, id });
    }
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(elapsed).toBeLessThan(TIMEOUT_MS + 5_000); // never a hang (generous: the box is shared)
    s.mode = 'agave';
    expect((await getSlot('after')).json.result).toBe(4242);
  });
});

describe('passthrough configuration', () => {
  it('refuses to start when the list names a method the relay serves itself', async () => {
    const err = await startRelay({ jsonRpc: { passthroughMethods: ['getSlot', 'sendTransaction'] } }).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/relay exited with 2/);
    expect((err as Error).message).toContain('jsonRpc.passthroughMethods.1: "sendTransaction" is served by the relay itself and is never passed through');
  });
});
