// Every bad input gets its exact, specified error — and the relay keeps serving afterwards.
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { relayOnFakeRpcUpstream } from '../../helpers/relay-on-upstream.js';
import { defaultKeys, OTHER_KEY, TEST_KEY } from '../../helpers/relay-process.js';
import { legacyTransfer, type SignedTx } from '../../helpers/transactions.js';
import { signedV1, v1Layout } from '../../fixtures/tx/v1-transactions.js';
import { generateKeyPairSigner } from '@solana/kit';

/** burst 3, 1/s: the relay host's rate-limit test (OTHER_KEY's bucket is drained by the JSON-RPC host's). */
const TIGHT_RELAY_KEY = '3c9d5e7f-1a2b-4c3d-9e4f-5a6b7c8d9e0f';
const WRONG_KEY = 'deadbeef-dead-4bee-8eef-deadbeefdead';
const UNAUTHORIZED = 'Unauthorized: a valid API key is required (x-token, x-api-key, Authorization: Bearer, or ?key=)';
const RATE_LIMITED = 'Rate limit exceeded: retry after the Retry-After delay';
const UNDECODABLE = 'failed to deserialize solana_transaction::versioned::VersionedTransaction: io error: failed to fill whole buffer';
const SANITIZE_FAILURE = 'invalid transaction: Transaction failed to sanitize accounts offsets correctly';

const env = relayOnFakeRpcUpstream({
  http: { maxBatchSize: 5, maxBodyBytes: 8192 },
  keys: [...defaultKeys(), { key: TIGHT_RELAY_KEY, name: 'tight-relay-bot', rateLimit: { perSecond: 1, burst: 3 } }],
});
async function post(body: string, headers: Record<string, string> = { 'x-api-key': TEST_KEY }, path = '/'): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(env.relay.rpcUrl + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null, headers: res.headers };
}

function send(tx: string, cfg: Record<string, unknown> = { encoding: 'base64', skipPreflight: true }, id: unknown = 1): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'sendTransaction', params: [tx, cfg] });
}

function err(code: number, message: string, id: unknown = 1, data?: unknown) {
  return { jsonrpc: '2.0', error: data === undefined ? { code, message } : { code, message, data }, id };
}

describe('bad input on the JSON-RPC host', () => {
  it('envelope errors', async () => {
    expect((await post('{"jsonrpc":')).json).toEqual(err(-32700, 'Parse error', null));
    expect((await post('{"jsonrpc":"1.0","id":4,"method":"sendTransaction"}')).json).toEqual(err(-32600, 'Invalid request', 4));
    expect((await post('{"id":5,"method":"sendTransaction"}')).json).toEqual(err(-32600, 'Unsupported JSON-RPC protocol version', 5));
    expect((await post('[]')).json).toEqual(err(-32600, 'Invalid request', null));
    const six = JSON.stringify(Array.from({ length: 6 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'getSlot' })));
    expect((await post(six)).json).toEqual(err(-32600, 'Invalid request: batch too large', null));
    expect((await post('{"jsonrpc":"2.0","id":"x","method":"getBalance","params":[]}')).json).toEqual(err(-32601, 'Method not found', 'x'));
    expect((await post('{"jsonrpc":"2.0","id":5,"method":"sendTransaction","params":{"a":1}}')).json).toEqual(err(-32602, '`params` should be an array', 5));
    const r = await post('{"jsonrpc":"2.0","id":1,"method":"sendTransaction","params":[]}');
    expect(r.json).toEqual(err(-32602, 'Invalid parameters: Expected from 1 to 2 parameters.', 1, 'Got: 0'));
    expect(r.status).toBe(200);
  });

  it('oversized body -> 413 with the exact error, connection closed; wrong content type -> 415', async () => {
    const big = await post(send('A'.repeat(9000)));
    expect(big.status).toBe(413);
    expect(big.json).toEqual(err(-32600, 'Payload too large', null));
    expect(big.headers.get('connection')).toBe('close');
    const res = await fetch(env.relay.rpcUrl, { method: 'POST', headers: { 'content-type': 'text/plain', 'x-api-key': TEST_KEY }, body: '{}' });
    expect(res.status).toBe(415);
    expect(await res.json()).toEqual(err(-32600, 'Unsupported media type', null));
  });

  it('transaction decoding and sanitizing errors use Agave wording, exactly', async () => {
    const tx = legacyTransfer();
    // The encoded limits are those of the largest transaction (v1, 4096 bytes: docs/transactions.md).
    expect((await post(send('A'.repeat(5465)))).json).toEqual(
      err(-32602, 'base64 encoded solana_transaction::versioned::VersionedTransaction too large: 5465 bytes (max: encoded/raw 5464/4096)'),
    );
    expect((await post(send('1'.repeat(5595), { skipPreflight: true }))).json).toEqual(
      err(-32602, 'base58 encoded solana_transaction::versioned::VersionedTransaction too large: 5595 bytes (max: encoded/raw 5594/4096)'),
    );
    // '!' is byte 33 at index 20 (base64 crate's InvalidByte(index, byte), Debug-formatted as Agave does).
    expect((await post(send(tx.base64.slice(0, 20) + '!!' + tx.base64.slice(22)))).json).toEqual(err(-32602, 'invalid base64 encoding: InvalidByte(20, 33)'));
    expect((await post(send('0OIl' + tx.base58.slice(4), { skipPreflight: true }))).json).toEqual(
      err(-32602, "invalid base58 encoding: InvalidCharacter { character: '0', index: 0 }"),
    );
    expect((await post(send(Buffer.from([1, 2, 3]).toString('base64')))).json).toEqual(err(-32602, UNDECODABLE));
    // Zero signatures while the header requires one: sanitize fails even with skipPreflight.
    const zeroSigs = Buffer.concat([Buffer.from([0]), tx.bytes.subarray(65)]);
    expect((await post(send(zeroSigs.toString('base64')))).json).toEqual(err(-32602, SANITIZE_FAILURE));
    expect((await post(send(tx.base64, { encoding: 'json', skipPreflight: true }))).json).toEqual(
      err(-32602, 'unsupported encoding: json. Supported encodings: base58, base64'),
    );
    expect(env.upstream.sent().some((b) => b.equals(tx.bytes))).toBe(false);
  });

  it('v1 and the per-format sizes: each bad v1 gets its exact error (sdk detail in data), a good one is relayed', async () => {
    const v1 = await signedV1({ lamports: 1n, priorityFeeLamports: 100n });
    const { addressCount, signaturesAt } = v1Layout(v1.bytes);
    const b64 = (b: Buffer) => b.toString('base64');
    const patched = (f: (b: Buffer) => void) => {
      const b = Buffer.from(v1.bytes);
      f(b);
      return b;
    };
    // A v0 of 1,233 bytes: one over the legacy/v0 cap, though under v1's.
    const v0Big = Buffer.alloc(1233, 3);
    v0Big[0] = 1;
    expect((await post(send(b64(v0Big)))).json).toEqual(err(-32602, 'decoded solana_transaction::versioned::VersionedTransaction too large: 1233 bytes (max: 1232 bytes)'));
    const v1Big = Buffer.concat([v1.bytes, Buffer.alloc(4097 - v1.bytes.length, 1)]);
    expect((await post(send(b64(v1Big)))).json).toEqual(err(-32602, 'decoded solana_transaction::versioned::VersionedTransaction too large: 4097 bytes (max: 4096 bytes)'));
    const mask = (m: number) => patched((b) => b.writeUInt32LE(m, 4));
    expect((await post(send(b64(mask(0b1100000 | 3))))).json).toEqual(err(-32602, UNDECODABLE.replace('io error: failed to fill whole buffer', 'invalid transaction config mask')));
    expect((await post(send(b64(mask(0b01))))).json).toEqual(err(-32602, UNDECODABLE.replace('io error: failed to fill whole buffer', 'invalid transaction config mask')));
    // The config area cut short: the mask names a fee (8 bytes) but the message ends inside it.
    expect((await post(send(b64(v1.bytes.subarray(0, 42 + addressCount * 32 + 5))))).json).toEqual(err(-32602, UNDECODABLE));
    // 13 signers with 13 signatures; the header's signer count above the signatures present.
    const thirteen = Buffer.concat([patched((b) => (b[1] = 13)).subarray(0, signaturesAt), Buffer.alloc(13 * 64, 1)]);
    expect((await post(send(b64(thirteen)))).json).toEqual(err(-32602, SANITIZE_FAILURE, 1, { detail: 'too many signatures (max 12)' }));
    expect((await post(send(b64(patched((b) => (b[1] = 2)))))).json).toEqual(err(-32602, UNDECODABLE));
    // 65 addresses.
    const extra = Buffer.alloc(62 * 32);
    for (let i = 0; i < 62; i++) extra[i * 32] = i + 1;
    const keysEnd = 42 + addressCount * 32;
    const many = Buffer.concat([patched((b) => (b[41] = 65)).subarray(0, keysEnd), extra, v1.bytes.subarray(keysEnd)]);
    expect((await post(send(b64(many)))).json).toEqual(err(-32602, SANITIZE_FAILURE, 1, { detail: 'too many addresses (max 64)' }));
    // The same errors on the relay host, with base58 too.
    expect(await rest('/v1/submit', JSON.stringify({ transaction: b64(mask(0b10)) }), 'application/json')).toMatchObject({
      status: 400,
      json: restErr(-32602, 'tx_undecodable', UNDECODABLE.replace('io error: failed to fill whole buffer', 'invalid transaction config mask')),
    });
    expect(await rest('/v1/transactions', thirteen, 'application/octet-stream')).toMatchObject({
      status: 400,
      json: restErr(-32602, 'tx_invalid', SANITIZE_FAILURE, { detail: 'too many signatures (max 12)' }),
    });
    expect(env.upstream.sent().some((b) => b[0] === 0x81)).toBe(false);
    // A good v1 of ~4 KB, base58 (5,594-character cap), answered with its first signature and relayed as is.
    const big = await signedV1({ memoBytes: 3_500, extraSigners: await Promise.all([1, 2].map(() => generateKeyPairSigner())) });
    expect(big.bytes.length).toBeGreaterThan(3_700);
    expect((await post(send(big.base58, { skipPreflight: true }))).json).toEqual({ jsonrpc: '2.0', result: big.signature, id: 1 });
    await env.upstream.waitForSends(1);
    const sentBig = async () => env.upstream.sent().some((b) => b.equals(big.bytes));
    for (let i = 0; i < 50 && !(await sentBig()); i++) await new Promise((r) => setTimeout(r, 50));
    expect(await sentBig()).toBe(true);
  });

  it('missing or unknown key -> 401 with the exact JSON error, which never echoes the key', async () => {
    const none = await post(send(legacyTransfer().base64), {});
    expect(none.status).toBe(401);
    expect(none.json).toEqual(err(-32600, UNAUTHORIZED, null));
    const wrong = await post(send(legacyTransfer().base64), { 'x-api-key': WRONG_KEY });
    expect(wrong.status).toBe(401);
    expect(wrong.json).toEqual(err(-32600, UNAUTHORIZED, null));
    expect(env.relay.logs.join('\n')).not.toContain(WRONG_KEY);
    expect(env.relay.logs.join('\n')).not.toContain(TEST_KEY);
  });

  it('rate limit -> 429 with Retry-After and the exact -32005 error kit can decode; every batch element counts', async () => {
    // tight-bot: burst 3, 1/s. A batch of 4 can never pass; then three singles pass and the fourth is refused.
    const batch = JSON.stringify(Array.from({ length: 4 }, (_, i) => JSON.parse(send(legacyTransfer().base64, undefined, i))));
    const b = await post(batch, { 'x-api-key': OTHER_KEY });
    expect(b.status).toBe(429);
    expect(b.json).toEqual(err(-32005, RATE_LIMITED, null, { reason: 'rate_limited', retryAfterMs: expect.any(Number) }));
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof post>> | undefined;
    for (let i = 0; i < 4; i++) {
      last = await post(send(legacyTransfer().base64, undefined, `r${i}`), { 'x-api-key': OTHER_KEY });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(last!.json).toEqual(err(-32005, RATE_LIMITED, 'r3', { reason: 'rate_limited', retryAfterMs: expect.any(Number) }));
    expect(last!.json.error.data.retryAfterMs).toBeGreaterThan(0);
  });

  it('keeps serving after all of that', async () => {
    const tx = legacyTransfer();
    expect((await post(send(tx.base64))).json).toEqual({ jsonrpc: '2.0', result: tx.signature, id: 1 });
    await env.upstream.waitForSends(1);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The relay host's REST paths: the same failures with {accepted:false, error:{code, reason, message, data?}}.

async function rest(path: string, body: string | Buffer, contentType: string, headers: Record<string, string> = { 'x-api-key': TEST_KEY }) {
  const res = await fetch(env.relay.relayUrl + path, { method: 'POST', headers: { 'content-type': contentType, ...headers }, body });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null, headers: res.headers };
}

function restErr(code: number, reason: string, message: string, data?: unknown) {
  return { accepted: false, error: data === undefined ? { code, reason, message } : { code, reason, message, data } };
}

const submitBody = (transaction: string) => JSON.stringify({ transaction });

describe('bad input on the relay host', () => {
  it('intake errors carry the exact Agave wording on /v1/submit and /v1/transactions', async () => {
    const tx = legacyTransfer();
    const badChars = tx.base64.slice(0, 20) + '!!' + tx.base64.slice(22);
    expect(await rest('/v1/submit', submitBody(badChars), 'application/json')).toMatchObject({
      status: 400,
      json: restErr(-32602, 'tx_bad_encoding', 'invalid base64 encoding: InvalidByte(20, 33)'),
    });
    const t = await rest('/v1/transactions', badChars, 'text/plain');
    expect([t.status, t.json]).toEqual([400, restErr(-32602, 'tx_bad_encoding', 'invalid base64 encoding: InvalidByte(20, 33)')]);
    const junk = await rest('/v1/transactions', Buffer.from([1, 2, 3]), 'application/octet-stream');
    expect([junk.status, junk.json]).toEqual([400, restErr(-32602, 'tx_undecodable', UNDECODABLE)]);
    const j2 = await rest('/v1/submit', submitBody(Buffer.from([1, 2, 3]).toString('base64')), 'application/json');
    expect([j2.status, j2.json]).toEqual([400, restErr(-32602, 'tx_undecodable', UNDECODABLE)]);
    const zeroSigs = Buffer.concat([Buffer.from([0]), tx.bytes.subarray(65)]);
    const z = await rest('/v1/transactions', zeroSigs, 'application/octet-stream');
    expect([z.status, z.json]).toEqual([400, restErr(-32602, 'tx_invalid', SANITIZE_FAILURE)]);
    // The JSON-RPC path of the relay host answers like the JSON-RPC host.
    const rpcPath = await rest('/v1/sendTransaction', send(zeroSigs.toString('base64')), 'application/json');
    expect([rpcPath.status, rpcPath.json]).toEqual([200, err(-32602, SANITIZE_FAILURE)]);
    expect(env.upstream.sent().some((b) => b.equals(tx.bytes))).toBe(false);
  });

  it('oversized body -> 413 with the exact error and the connection closed', async () => {
    const big = await rest('/v1/submit', submitBody('A'.repeat(9000)), 'application/json');
    expect([big.status, big.json]).toEqual([413, restErr(-32600, 'body_too_large', 'Payload too large')]);
    expect(big.headers.get('connection')).toBe('close');
    const raw = await rest('/v1/transactions', Buffer.alloc(9000, 1), 'application/octet-stream');
    expect([raw.status, raw.json]).toEqual([413, restErr(-32600, 'body_too_large', 'Payload too large')]);
  });

  it('missing or unknown key -> 401 with the exact error on every path', async () => {
    for (const [path, body, type] of [
      ['/v1/submit', submitBody(legacyTransfer().base64), 'application/json'],
      ['/v1/transactions', legacyTransfer().base64, 'text/plain'],
    ] as const) {
      for (const headers of [{}, { 'x-api-key': WRONG_KEY }] as Record<string, string>[]) {
        const r = await rest(path, body, type, headers);
        expect([path, r.status, r.json]).toEqual([path, 401, restErr(-32600, 'unauthorized', UNAUTHORIZED)]);
      }
    }
    const rpcPath = await rest('/v1/sendTransaction', send(legacyTransfer().base64), 'application/json', { 'x-api-key': WRONG_KEY });
    expect([rpcPath.status, rpcPath.json]).toEqual([401, err(-32600, UNAUTHORIZED, null)]);
    expect(env.relay.logs.join('\n')).not.toContain(WRONG_KEY);
  });

  it('rate limit -> 429 + Retry-After with the same data as the JSON-RPC paths: {reason, retryAfterMs}', async () => {
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof rest>> | undefined;
    for (let i = 0; i < 4; i++) {
      last = await rest('/v1/submit', submitBody(legacyTransfer().base64), 'application/json', { 'x-api-key': TIGHT_RELAY_KEY });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(last!.json).toEqual(restErr(-32005, 'rate_limited', RATE_LIMITED, { reason: 'rate_limited', retryAfterMs: expect.any(Number) }));
    expect(last!.json.error.data.retryAfterMs).toBeGreaterThan(0);
  });

  it('?maxRetries= must be decimal digits: empty, signed, exponent or hex -> 400 invalid_params', async () => {
    for (const q of ['', '-1', '1e3', '0x10', '%205', 'abc']) {
      const tx = legacyTransfer();
      const r = await rest(`/v1/transactions?maxRetries=${q}`, tx.base64, 'text/plain');
      expect([q, r.status, r.json]).toEqual([q, 400, restErr(-32602, 'invalid_params', 'Invalid params: `maxRetries` must be a non-negative integer')]);
    }
    const ok = legacyTransfer();
    const r = await rest('/v1/transactions?maxRetries=7', ok.base64, 'text/plain');
    expect(r.json).toMatchObject({ accepted: true, signature: ok.signature });
    const deadline = Date.now() + 10_000;
    while (!env.upstream.calls.some((c) => c.method === 'sendTransaction' && c.tx?.equals(ok.bytes))) {
      if (Date.now() > deadline) throw new Error('never delivered');
      await new Promise((res) => setTimeout(res, 10));
    }
    const call = env.upstream.calls.find((c) => c.method === 'sendTransaction' && c.tx?.equals(ok.bytes));
    expect(call?.params[1]).toMatchObject({ maxRetries: 7 });
  });

  it('keeps serving after all of that', async () => {
    const tx = legacyTransfer();
    const r = await rest('/v1/submit', submitBody(tx.base64), 'application/json');
    expect([r.status, r.json]).toEqual([200, { accepted: true, signature: tx.signature, routes: ['rpc'] }]);
    await arrived(tx);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// A client that sends headers and part of a body, then goes away.

async function arrived(tx: SignedTx): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!env.upstream.sent().some((b) => b.equals(tx.bytes))) {
    if (Date.now() > deadline) throw new Error('the transaction never reached the rpc route upstream');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Raw HTTP/1.1 over a socket: the head announces `declaredLength`, then `body` is written (in two pieces, with a
 * pause, so the server sees more than one chunk) and the socket is destroyed. With declaredLength === body.length
 * the request is complete and the answer is returned instead.
 */
function rawPost(url: string, path: string, contentType: string, body: Buffer, declaredLength: number): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(port), hostname);
    let answer = '';
    sock.on('data', (d) => (answer += d.toString('latin1')));
    sock.on('error', reject);
    sock.on('close', () => resolve(answer));
    sock.on('connect', () => {
      const head =
        `POST ${path} HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: ${contentType}\r\nx-api-key: ${TEST_KEY}\r\n` +
        `content-length: ${declaredLength}\r\n\r\n`;
      const half = body.length >> 1;
      sock.write(Buffer.concat([Buffer.from(head, 'latin1'), body.subarray(0, half)]));
      setTimeout(() => {
        sock.write(body.subarray(half));
        if (declaredLength === body.length) setTimeout(() => sock.end(), 500);
        else setTimeout(() => sock.destroy(), 150);
      }, 100);
    });
  });
}

async function consumedRecords(): Promise<number> {
  const text = await (await fetch(`${env.relay.rpcUrl}/metrics`)).text();
  const m = /slotrelay_egress_records_total\{stage="consumed"\} (\d+)/.exec(text);
  if (!m) throw new Error('no consumed-records metric');
  return Number(m[1]);
}

describe('a client aborting mid-body', () => {
  const cases: [string, string, string, (tx: SignedTx) => Buffer][] = [
    ['rpc', '/', 'application/json', (tx) => Buffer.from(send(tx.base64))],
    ['relay', '/v1/sendTransaction', 'application/json', (tx) => Buffer.from(send(tx.base64))],
    ['relay', '/v1/submit', 'application/json', (tx) => Buffer.from(submitBody(tx.base64))],
    ['relay', '/v1/transactions', 'application/octet-stream', (tx) => tx.bytes],
  ];

  it('the harness sees a complete request published (control)', async () => {
    const tx = legacyTransfer();
    const body = Buffer.from(send(tx.base64));
    const answer = await rawPost(env.relay.rpcUrl, '/', 'application/json', body, body.length);
    expect(answer).toContain(tx.signature);
    await arrived(tx);
  });

  it.each(cases)('%s host %s: nothing is published, and the server keeps serving', async (host, path, type, bodyOf) => {
    const url = host === 'rpc' ? env.relay.rpcUrl : env.relay.relayUrl;
    const before = await consumedRecords();
    // A whole, valid body, but the head announces 40 bytes more: the request is not complete when the client leaves.
    const gone = legacyTransfer();
    const body = bodyOf(gone);
    expect(await rawPost(url, path, type, body, body.length + 40)).toBe('');
    // The next transaction arrives upstream; on one ring, in order, so anything published before it would have too.
    const next = legacyTransfer();
    const r = await rest('/v1/submit', submitBody(next.base64), 'application/json');
    expect(r.json).toMatchObject({ accepted: true, signature: next.signature });
    await arrived(next);
    expect(env.upstream.sent().some((b) => b.equals(gone.bytes))).toBe(false);
    expect((await consumedRecords()) - before).toBe(1);
  });
});
