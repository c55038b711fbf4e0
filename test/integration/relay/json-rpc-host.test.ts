// The JSON-RPC host driven by real clients (@solana/web3.js Connection, @solana/kit, fetch) against the real relay
// process; the rpc route's upstream is a real HTTP listener that records the exact bytes it received.
import { Connection, SendTransactionError } from '@solana/web3.js';
import { createSolanaRpc, type Base64EncodedWireTransaction } from '@solana/kit';
import { describe, expect, it } from 'vitest';
import { relayOnFakeRpcUpstream } from '../../helpers/relay-on-upstream.js';
import { defaultKeys, OTHER_KEY, TEST_KEY } from '../../helpers/relay-process.js';
import { legacyTransfer, v0Transfer } from '../../helpers/transactions.js';

/** A key with verifySignatures: true (and the default preflight policy, simulate). */
const VERIFY_KEY = '5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9';

const env = relayOnFakeRpcUpstream({
  keys: [...defaultKeys(), { key: VERIFY_KEY, name: 'verify-bot', verifySignatures: true }],
});

/** The four key carriers of the spec, as [name, url, headers] for a base URL. */
function carriers(base: string, path = ''): [string, string, Record<string, string>][] {
  return [
  ['x-token', base + path, { 'x-token': TEST_KEY }],
  ['x-api-key', base + path, { 'x-api-key': TEST_KEY }],
  ['Authorization: Bearer', base + path, { authorization: `Bearer ${TEST_KEY}` }],
  ['?key=', `${base}${path || '/'}?key=${TEST_KEY}`, {}],
  ];
}
function connection(url: string, headers: Record<string, string> = {}): Connection {
  return new Connection(url, { httpHeaders: headers, disableRetryOnRateLimit: true, commitment: 'processed' });
}

async function lastSentEquals(bytes: Buffer): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!env.upstream.sent().some((b) => b.equals(bytes))) {
  if (Date.now() > deadline) throw new Error('upstream never received the exact transaction bytes');
  await new Promise((r) => setTimeout(r, 10));
  }
}

async function rpc(body: unknown, headers: Record<string, string> = { 'x-api-key': TEST_KEY }): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(env.relay.rpcUrl, {
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});
  const text = await res.text();
  return { status: res.status, json: text === '' ? null : JSON.parse(text), headers: res.headers };
}

describe('JSON-RPC host: sendTransaction through real clients', () => {
  it('web3.js sendRawTransaction with skipPreflight, key in x-api-key: exact bytes reach the rpc route', async () => {
    const tx = legacyTransfer();
    const sig = await connection(env.relay.rpcUrl, { 'x-api-key': TEST_KEY }).sendRawTransaction(tx.bytes, { skipPreflight: true });
    expect(sig).toBe(tx.signature);
    await lastSentEquals(tx.bytes);
  });

  it.each([
    ['x-token', (u: string) => [u, { 'x-token': TEST_KEY }] as const],
    ['Authorization: Bearer', (u: string) => [u, { authorization: `Bearer ${TEST_KEY}` }] as const],
    ['?key=', (u: string) => [`${u}/?key=${TEST_KEY}`, {}] as const],
  ])('accepts the key in %s', async (_name, carrier) => {
    const [url, headers] = carrier(env.relay.rpcUrl);
    const tx = v0Transfer();
    expect(await connection(url, headers).sendRawTransaction(tx.bytes, { skipPreflight: true })).toBe(tx.signature);
    await lastSentEquals(tx.bytes);
  });

  it('@solana/kit sends a v0 transaction (base64) and gets its signature', async () => {
    const tx = v0Transfer();
    const kit = createSolanaRpc(env.relay.rpcUrl, { headers: { 'x-api-key': TEST_KEY } });
    const sig = await kit
      .sendTransaction(tx.base64 as Base64EncodedWireTransaction, { encoding: 'base64', skipPreflight: true, maxRetries: 3n })
      .send();
    expect(sig).toBe(tx.signature);
    await lastSentEquals(tx.bytes);
    const call = env.upstream.calls.find((c) => c.method === 'sendTransaction' && c.tx?.equals(tx.bytes));
    expect(call?.params[1]).toMatchObject({ encoding: 'base64', skipPreflight: true, maxRetries: 3 });
  });

  it('@solana/kit authenticates with each of the four key carriers', async () => {
    for (const [name, url, headers] of carriers(env.relay.rpcUrl)) {
      const tx = v0Transfer();
      const sig = await createSolanaRpc(url, { headers } as Parameters<typeof createSolanaRpc>[1])
        .sendTransaction(tx.base64 as Base64EncodedWireTransaction, { encoding: 'base64', skipPreflight: true })
        .send();
      expect([name, sig]).toEqual([name, tx.signature]);
      await lastSentEquals(tx.bytes);
    }
  });

  it('a non-Bearer Authorization header does not hide ?key=', async () => {
    const tx = legacyTransfer();
    const body = { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx.base64, { encoding: 'base64', skipPreflight: true }] };
    const res = await fetch(`${env.relay.rpcUrl}/?key=${TEST_KEY}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Basic dXNlcjpwYXNz' },
      body: JSON.stringify(body),
    });
    expect([res.status, await res.json()]).toEqual([200, { jsonrpc: '2.0', result: tx.signature, id: 1 }]);
    await lastSentEquals(tx.bytes);
    // Through a real client too: kit with the proxy's Authorization header and the key in the URL.
    const kitTx = v0Transfer();
    const sig = await createSolanaRpc(`${env.relay.rpcUrl}/?key=${TEST_KEY}`, { headers: { authorization: 'Basic dXNlcjpwYXNz' } })
      .sendTransaction(kitTx.base64 as Base64EncodedWireTransaction, { encoding: 'base64', skipPreflight: true })
      .send();
    expect(sig).toBe(kitTx.signature);
  });

  it('a key with verifySignatures refuses a bad signature before preflight: -32003, the upstream never simulates it', async () => {
    const tx = legacyTransfer();
    const forged = Buffer.from(tx.bytes);
    forged[1] ^= 0xff; // first byte of the first signature
    const r = await rpc({ jsonrpc: '2.0', id: 'v', method: 'sendTransaction', params: [forged.toString('base64'), { encoding: 'base64' }] }, { 'x-api-key': VERIFY_KEY });
    expect(r.json).toEqual({ jsonrpc: '2.0', error: { code: -32003, message: 'Transaction signature verification failure' }, id: 'v' });
    expect(env.upstream.calls.some((c) => c.tx?.equals(forged))).toBe(false);
    // The genuine transaction passes the same key's verification, is simulated, then sent.
    expect(await connection(env.relay.rpcUrl, { 'x-api-key': VERIFY_KEY }).sendRawTransaction(tx.bytes)).toBe(tx.signature);
    await lastSentEquals(tx.bytes);
    expect(env.upstream.calls.filter((c) => c.tx?.equals(tx.bytes)).map((c) => c.method)).toEqual(['simulateTransaction', 'sendTransaction']);
  });

  it('base58 is the default encoding, as in Agave', async () => {
    const tx = legacyTransfer();
    const r = await rpc({ jsonrpc: '2.0', id: 'b58', method: 'sendTransaction', params: [tx.base58, { skipPreflight: true }] });
    expect(r.json).toEqual({ jsonrpc: '2.0', result: tx.signature, id: 'b58' });
    await lastSentEquals(tx.bytes);
  });

  it('web3.js default (skipPreflight false) simulates upstream first, then sends', async () => {
    const tx = legacyTransfer();
    expect(await connection(env.relay.rpcUrl, { 'x-api-key': TEST_KEY }).sendRawTransaction(tx.bytes)).toBe(tx.signature);
    await lastSentEquals(tx.bytes);
    const methods = env.upstream.calls.filter((c) => c.tx?.equals(tx.bytes)).map((c) => c.method);
    expect(methods).toEqual(['simulateTransaction', 'sendTransaction']);
    const sim = env.upstream.calls.find((c) => c.method === 'simulateTransaction' && c.tx?.equals(tx.bytes));
    expect(sim?.params[1]).toMatchObject({ encoding: 'base64', sigVerify: true, commitment: 'processed' });
  });

  it('a failing preflight answers -32002 with the simulation value; web3.js surfaces the logs', async () => {
    env.upstream.simulation = { err: { InstructionError: [0, { Custom: 1 }] }, logs: ['Program log: boom'], unitsConsumed: 77 };
    try {
      const tx = legacyTransfer();
      const err = await connection(env.relay.rpcUrl, { 'x-api-key': TEST_KEY }).sendRawTransaction(tx.bytes).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SendTransactionError);
      expect((err as SendTransactionError).message).toContain('Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1');
      expect((err as SendTransactionError).logs).toEqual(['Program log: boom']);
      const raw = await rpc({ jsonrpc: '2.0', id: 9, method: 'sendTransaction', params: [tx.base64, { encoding: 'base64' }] });
      expect(raw.status).toBe(200);
      expect(raw.json.id).toBe(9);
      expect(raw.json.error.code).toBe(-32002);
      expect(raw.json.error.data).toMatchObject({ err: { InstructionError: [0, { Custom: 1 }] }, logs: ['Program log: boom'], unitsConsumed: 77 });
      // Answered after the upstream's simulation, outside uWS's own callbacks: the relay corks it itself (uWS warns
      // on stderr and sends piece by piece otherwise), with the same headers as a synchronous answer.
      expect(raw.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(raw.headers.get('keep-alive')).toMatch(/^timeout=\d+$/);
      expect(raw.headers.get('access-control-allow-origin')).toBe('*');
      expect(env.relay.logs.filter((l) => l.includes('corked callback'))).toEqual([]);
      expect(env.upstream.sent().some((b) => b.equals(tx.bytes))).toBe(false);
    } finally {
      env.upstream.simulation = { err: null, logs: [], unitsConsumed: 1 };
    }
  });

  it('a key whose preflight policy is "reject" must send with skipPreflight', async () => {
    const tx = legacyTransfer();
    const r = await rpc({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx.base64, { encoding: 'base64' }] }, { 'x-api-key': OTHER_KEY });
    expect(r.json.error).toEqual({
      code: -32602,
      message: 'Invalid params: preflight simulation is not enabled for this API key; send with skipPreflight: true',
    });
  });

  it('notifications get no body; batches answer in order with ids of their type', async () => {
    const a = legacyTransfer();
    const b = v0Transfer();
    const r = await rpc([
      { jsonrpc: '2.0', id: 'first', method: 'sendTransaction', params: [a.base64, { encoding: 'base64', skipPreflight: true }] },
      { jsonrpc: '2.0', method: 'sendTransaction', params: [legacyTransfer().base64, { encoding: 'base64', skipPreflight: true }] },
      { jsonrpc: '2.0', id: 2, method: 'noSuchMethod', params: [] },
      { jsonrpc: '2.0', id: 3, method: 'sendTransaction', params: [b.base64, { encoding: 'base64', skipPreflight: true }] },
    ]);
    expect(r.json).toEqual([
      { jsonrpc: '2.0', result: a.signature, id: 'first' },
      { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 2 },
      { jsonrpc: '2.0', result: b.signature, id: 3 },
    ]);
    const n = await rpc({ jsonrpc: '2.0', method: 'sendTransaction', params: [legacyTransfer().base64, { encoding: 'base64', skipPreflight: true }] });
    expect(n.status).toBe(200);
    expect(n.json).toBeNull();
  });

  it('GET /health, CORS preflight, x-request-id echo, keep-alive hint', async () => {
    const h = await fetch(`${env.relay.rpcUrl}/health`);
    expect([h.status, await h.text()]).toEqual([200, 'ok']);
    const o = await fetch(env.relay.rpcUrl, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-headers': 'x-api-key' } });
    expect(o.status).toBe(204);
    expect(o.headers.get('access-control-allow-origin')).toBe('*');
    expect(o.headers.get('access-control-allow-headers')).toContain('x-api-key');
    const r = await fetch(env.relay.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY, 'x-request-id': 'trace-abc-123' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'nope' }),
    });
    expect(r.headers.get('x-request-id')).toBe('trace-abc-123');
    expect(r.headers.get('keep-alive')).toBe('timeout=60'); // http.idleTimeoutSeconds' default
    expect(o.headers.get('keep-alive')).toBe('timeout=60');
    const g = await fetch(env.relay.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY }, body: '{}' });
    expect(g.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const get = await fetch(`${env.relay.rpcUrl}/other`);
    expect(get.status).toBe(405);
    expect(env.relay.logs.filter((l) => l.includes('corked callback'))).toEqual([]); // every answer above left corked
  });

  it('x-request-id is echoed (or generated) on /health, /metrics, 405 and OPTIONS too', async () => {
    const answers = (id?: string) => {
      const h: Record<string, string> = id === undefined ? {} : { 'x-request-id': id };
      return Promise.all([
        fetch(`${env.relay.rpcUrl}/health`, { headers: h }),
        fetch(`${env.relay.rpcUrl}/metrics`, { headers: h }),
        fetch(`${env.relay.rpcUrl}/other`, { headers: h }),
        fetch(env.relay.rpcUrl, { method: 'OPTIONS', headers: h }),
      ]);
    };
    const echoed = await answers('trace-plain-1');
    expect(echoed.map((r) => [r.status, r.headers.get('x-request-id')])).toEqual([
      [200, 'trace-plain-1'],
      [200, 'trace-plain-1'],
      [405, 'trace-plain-1'],
      [204, 'trace-plain-1'],
    ]);
    const generated = (await answers()).map((r) => r.headers.get('x-request-id'));
    for (const id of generated) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(new Set(generated).size).toBe(generated.length); // every request gets its own
    // Not printable ASCII or too long: replaced, never echoed.
    for (const r of await answers('x'.repeat(65))) expect(r.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('/metrics labels every method in the table (getLeaderSlots is not "unknown")', async () => {
    const r = await rpc({ jsonrpc: '2.0', id: 'g', method: 'getLeaderSlots', params: [1] });
    expect(r.json.id).toBe('g');
    await rpc({ jsonrpc: '2.0', id: 'n', method: 'noSuchMethod', params: [] });
    const text = await (await fetch(`${env.relay.rpcUrl}/metrics`)).text();
    expect(text).toMatch(/slotrelay_requests_total\{host="rpc",method="getLeaderSlots",outcome="[a-z_]+"\} [1-9]/);
    expect(text).toMatch(/slotrelay_requests_total\{host="rpc",method="unknown",outcome="method_not_found"\} [1-9]/);
    expect(text).toMatch(/slotrelay_requests_total\{host="rpc",method="sendTransaction",outcome="ok"\} [1-9]/);
  });
});
