// The relay host's three paths with fetch and the relay client library, route policy, auth carriers, metrics.
import { Connection, SendTransactionError } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { RelayClient, RelaySubmitError } from '../../../src/client/index.js';
import { relayOnFakeRpcUpstream } from '../../helpers/relay-on-upstream.js';
import { TEST_KEY } from '../../helpers/relay-process.js';
import { legacyTransfer, v0Transfer } from '../../helpers/transactions.js';

const env = relayOnFakeRpcUpstream();

async function call(path: string, body: string | Buffer, contentType: string, headers: Record<string, string> = { 'x-api-key': TEST_KEY }) {
  const res = await fetch(env.relay.relayUrl + path, { method: 'POST', headers: { 'content-type': contentType, ...headers }, body });
  return { status: res.status, json: JSON.parse(await res.text()) as any, headers: res.headers };
}

async function arrived(bytes: Buffer): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!env.upstream.sent().some((b) => b.equals(bytes))) {
    if (Date.now() > deadline) throw new Error('the transaction never reached the rpc route upstream');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('relay host', () => {
  it('POST /v1/submit with a route set answers {accepted, signature} and delivers the exact bytes', async () => {
    const tx = v0Transfer();
    const r = await call('/v1/submit', JSON.stringify({ transaction: tx.base64, routes: ['rpc'] }), 'application/json');
    expect(r).toMatchObject({ status: 200, json: { accepted: true, signature: tx.signature, routes: ['rpc'] } });
    await arrived(tx.bytes);
  });

  it('the client library accepts the base URL or the full submit URL and sends Bearer + x-api-key', async () => {
    for (const url of [env.relay.relayUrl, `${env.relay.relayUrl}/v1/submit`]) {
      const tx = legacyTransfer();
      const out = await new RelayClient({ url, apiKey: TEST_KEY }).submit(tx.base64);
      expect(out).toMatchObject({ accepted: true, signature: tx.signature });
      await arrived(tx.bytes);
    }
    const refused = await new RelayClient({ url: env.relay.relayUrl, apiKey: 'deadbeef-dead-4bee-8eef-deadbeefdead' }).submit(legacyTransfer().base64).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RelaySubmitError);
    expect(refused).toMatchObject({ status: 401, reason: 'unauthorized' });
  });

  it('route policy: unknown route 400, a route this relay does not run 400 route_not_configured (not the key\'s 403)', async () => {
    const tx = legacyTransfer();
    const unknown = await call('/v1/submit', JSON.stringify({ transaction: tx.base64, routes: ['carrier-pigeon'] }), 'application/json');
    expect(unknown.status).toBe(400);
    expect(unknown.json).toMatchObject({ accepted: false, error: { code: -32602, reason: 'unknown_route' } });
    const none = await call('/v1/submit', JSON.stringify({ transaction: tx.base64, routes: ['jito'] }), 'application/json');
    expect(none.status).toBe(400);
    expect(none.json).toMatchObject({ accepted: false, error: { code: -32602, reason: 'route_not_configured' } });
  });

  it('POST /v1/transactions takes raw wire bytes or base64/base58 text', async () => {
    const raw = legacyTransfer();
    expect((await call('/v1/transactions', raw.bytes, 'application/octet-stream')).json).toMatchObject({ accepted: true, signature: raw.signature });
    const b64 = v0Transfer();
    expect((await call('/v1/transactions', b64.base64, 'text/plain')).json).toMatchObject({ accepted: true, signature: b64.signature });
    const b58 = legacyTransfer();
    expect((await call('/v1/transactions?encoding=base58', b58.base58, 'text/plain')).json).toMatchObject({ accepted: true, signature: b58.signature });
    for (const t of [raw, b64, b58]) await arrived(t.bytes);
    const junk = await call('/v1/transactions', Buffer.from([1, 0, 0]), 'application/octet-stream');
    expect(junk.status).toBe(400);
    expect(junk.json.error.reason).toBe('tx_undecodable');
    const wrongType = await call('/v1/transactions', '{}', 'application/xml');
    expect(wrongType.status).toBe(415);
  });

  it('POST /v1/sendTransaction is JSON-RPC sendTransaction (other methods: -32601)', async () => {
    const tx = legacyTransfer();
    const ok = await call('/v1/sendTransaction', JSON.stringify({ jsonrpc: '2.0', id: 'z', method: 'sendTransaction', params: [tx.base64, { encoding: 'base64', skipPreflight: true }] }), 'application/json');
    expect(ok.json).toEqual({ jsonrpc: '2.0', result: tx.signature, id: 'z' });
    const other = await call('/v1/sendTransaction', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getSlot' }), 'application/json');
    expect(other.json).toEqual({ jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 1 });
    await arrived(tx.bytes);
  });

  it('accepts every key carrier; refuses a missing key with 401 JSON', async () => {
    const body = () => JSON.stringify({ transaction: legacyTransfer().base64 });
    expect((await call('/v1/submit', body(), 'application/json', { 'x-token': TEST_KEY })).status).toBe(200);
    expect((await call('/v1/submit', body(), 'application/json', { authorization: `Bearer ${TEST_KEY}` })).status).toBe(200);
    expect((await call(`/v1/submit?key=${TEST_KEY}`, body(), 'application/json', {})).status).toBe(200);
    const none = await call('/v1/submit', body(), 'application/json', {});
    expect(none).toMatchObject({ status: 401, json: { accepted: false, error: { reason: 'unauthorized' } } });
    const bad = await call('/v1/submit', '{"transaction": 5}', 'application/json');
    expect(bad).toMatchObject({ status: 400, json: { error: { reason: 'invalid_params' } } });
    const notJson = await call('/v1/submit', '{', 'application/json');
    expect(notJson).toMatchObject({ status: 400, json: { error: { reason: 'parse_error' } } });
  });

  it('each of the four key carriers works on each of the three paths', async () => {
    const carriers: [string, string, Record<string, string>][] = [
      ['x-token', '', { 'x-token': TEST_KEY }],
      ['x-api-key', '', { 'x-api-key': TEST_KEY }],
      ['Authorization: Bearer', '', { authorization: `Bearer ${TEST_KEY}` }],
      ['?key=', `?key=${TEST_KEY}`, {}],
    ];
    for (const [name, query, headers] of carriers) {
      const a = legacyTransfer();
      const submit = await call(`/v1/submit${query}`, JSON.stringify({ transaction: a.base64 }), 'application/json', headers);
      expect([name, submit.status, submit.json]).toEqual([name, 200, { accepted: true, signature: a.signature, routes: ['rpc'] }]);
      const b = v0Transfer();
      const raw = await call(`/v1/transactions${query}`, b.bytes, 'application/octet-stream', headers);
      expect([name, raw.status, raw.json]).toEqual([name, 200, { accepted: true, signature: b.signature, routes: ['rpc'] }]);
      const c = legacyTransfer();
      const rpcBody = JSON.stringify({ jsonrpc: '2.0', id: name, method: 'sendTransaction', params: [c.base64, { encoding: 'base64', skipPreflight: true }] });
      const rpc = await call(`/v1/sendTransaction${query}`, rpcBody, 'application/json', headers);
      expect([name, rpc.status, rpc.json]).toEqual([name, 200, { jsonrpc: '2.0', result: c.signature, id: name }]);
      for (const t of [a, b, c]) await arrived(t.bytes);
    }
  });

  it('a non-Bearer Authorization header does not hide ?key=', async () => {
    const tx = legacyTransfer();
    const r = await call(`/v1/submit?key=${TEST_KEY}`, JSON.stringify({ transaction: tx.base64 }), 'application/json', { authorization: 'Basic dXNlcjpwYXNz' });
    expect([r.status, r.json]).toEqual([200, { accepted: true, signature: tx.signature, routes: ['rpc'] }]);
    await arrived(tx.bytes);
  });

  it('@solana/web3.js Connection pointed at {relay}/v1/sendTransaction: sendRawTransaction with and without preflight', async () => {
    const conn = (url: string, headers: Record<string, string>) =>
      new Connection(url, { httpHeaders: headers, disableRetryOnRateLimit: true, commitment: 'processed' });
    const skip = legacyTransfer();
    expect(await conn(`${env.relay.relayUrl}/v1/sendTransaction`, { 'x-api-key': TEST_KEY }).sendRawTransaction(skip.bytes, { skipPreflight: true })).toBe(skip.signature);
    await arrived(skip.bytes);
    // Default skipPreflight: false, key in the URL: the upstream simulates first, then the route sends.
    const pre = v0Transfer();
    expect(await conn(`${env.relay.relayUrl}/v1/sendTransaction?key=${TEST_KEY}`, {}).sendRawTransaction(pre.bytes)).toBe(pre.signature);
    await arrived(pre.bytes);
    expect(env.upstream.calls.filter((c) => c.tx?.equals(pre.bytes)).map((c) => c.method)).toEqual(['simulateTransaction', 'sendTransaction']);
    // Errors reach web3.js as it expects them: a failed preflight with its logs.
    env.upstream.simulation = { err: { InstructionError: [0, { Custom: 1 }] }, logs: ['Program log: boom'], unitsConsumed: 77 };
    try {
      const bad = legacyTransfer();
      const err = await conn(`${env.relay.relayUrl}/v1/sendTransaction`, { 'x-api-key': TEST_KEY }).sendRawTransaction(bad.bytes).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SendTransactionError);
      expect((err as SendTransactionError).logs).toEqual(['Program log: boom']);
    } finally {
      env.upstream.simulation = { err: null, logs: [], unitsConsumed: 1 };
    }
  });

  it('x-request-id is echoed (or generated) on /health, /metrics, 404 and OPTIONS too', async () => {
    const h = { 'x-request-id': 'relay-trace-7' };
    const answers = await Promise.all([
      fetch(`${env.relay.relayUrl}/health`, { headers: h }),
      fetch(`${env.relay.relayUrl}/metrics`, { headers: h }),
      fetch(`${env.relay.relayUrl}/v2/nothing`, { method: 'POST', headers: h }),
      fetch(`${env.relay.relayUrl}/v1/submit`, { method: 'OPTIONS', headers: h }),
    ]);
    expect(answers.map((r) => [r.status, r.headers.get('x-request-id')])).toEqual([
      [200, 'relay-trace-7'],
      [200, 'relay-trace-7'],
      [404, 'relay-trace-7'],
      [204, 'relay-trace-7'],
    ]);
    const generated = await fetch(`${env.relay.relayUrl}/health`);
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it('unknown path -> 404 JSON; /metrics shows requests, rejections, ring depth and egress outcomes', async () => {
    const nf = await fetch(`${env.relay.relayUrl}/v2/whatever`, { method: 'POST' });
    expect(nf.status).toBe(404);
    expect(((await nf.json()) as any).error.reason).toBe('not_found');
    await env.upstream.waitForSends(3);
    const text = await (await fetch(`${env.relay.relayUrl}/metrics`)).text();
    expect(text).toMatch(/slotrelay_requests_total\{host="relay",method="\/v1\/submit",outcome="ok"\} [1-9]/);
    expect(text).toMatch(/slotrelay_rejections_total\{reason="unauthorized"\} [1-9]/);
    expect(text).toMatch(/slotrelay_egress_outcomes_total\{route="rpc",outcome="sent"\} [1-9]/);
    expect(text).toMatch(/slotrelay_ring_depth\{ring="0"\} \d+/);
    expect(text).toMatch(/slotrelay_request_duration_seconds\{path="\/v1\/submit",quantile="0.99"\}/);
    expect(text).not.toContain(TEST_KEY);
  });
});
