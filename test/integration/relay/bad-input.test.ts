// Every bad input gets its exact, specified error — and the relay keeps serving afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRecordingUpstream, type RecordingUpstream } from '../../helpers/recording-upstream.js';
import { OTHER_KEY, startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer } from '../../helpers/transactions.js';

let upstream: RecordingUpstream;
let relay: RelayHandle;

beforeAll(async () => {
  upstream = await startRecordingUpstream();
  relay = await startRelay({
    upstream: { rpcUrl: upstream.url },
    routes: { rpc: { endpoints: [upstream.url] } },
    http: { maxBatchSize: 5, maxBodyBytes: 8192 },
  });
});
afterAll(async () => {
  await relay?.stop();
  await upstream?.close();
});

async function post(body: string, headers: Record<string, string> = { 'x-api-key': TEST_KEY }, path = '/'): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(relay.rpcUrl + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
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
    expect((await post('{"jsonrpc":"1.0","id":4,"method":"sendTransaction"}')).json).toEqual(err(-32600, 'Unsupported JSON-RPC protocol version', 4));
    expect((await post('[]')).json).toEqual(err(-32600, 'Invalid request', null));
    const six = JSON.stringify(Array.from({ length: 6 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'getSlot' })));
    expect((await post(six)).json).toEqual(err(-32600, 'Invalid request: batch too large', null));
    expect((await post('{"jsonrpc":"2.0","id":"x","method":"getBalance","params":[]}')).json).toEqual(err(-32601, 'Method not found', 'x'));
    expect((await post('{"jsonrpc":"2.0","id":5,"method":"sendTransaction","params":{"a":1}}')).json).toEqual(err(-32602, '`params` should be an array', 5));
    const r = await post('{"jsonrpc":"2.0","id":1,"method":"sendTransaction","params":[]}');
    expect(r.json).toEqual(err(-32602, 'Invalid parameters: Expected from 1 to 2 parameters.', 1, 'Got: 0'));
    expect(r.status).toBe(200);
  });

  it('oversized body -> 413; wrong content type -> 415', async () => {
    const big = await post(send('A'.repeat(9000)));
    expect(big.status).toBe(413);
    expect(big.json.error.code).toBe(-32600);
    const res = await fetch(relay.rpcUrl, { method: 'POST', headers: { 'content-type': 'text/plain', 'x-api-key': TEST_KEY }, body: '{}' });
    expect(res.status).toBe(415);
  });

  it('transaction decoding and sanitizing errors use Agave wording', async () => {
    const tx = legacyTransfer();
    expect((await post(send('A'.repeat(1645)))).json).toEqual(
      err(-32602, 'base64 encoded solana_transaction::versioned::VersionedTransaction too large: 1645 bytes (max: encoded/raw 1644/1232)'),
    );
    expect((await post(send('1'.repeat(1684), { skipPreflight: true }))).json).toEqual(
      err(-32602, 'base58 encoded solana_transaction::versioned::VersionedTransaction too large: 1684 bytes (max: encoded/raw 1683/1232)'),
    );
    const badChars = await post(send(tx.base64.slice(0, 20) + '!!' + tx.base64.slice(22)));
    expect(badChars.json.error.code).toBe(-32602);
    expect(badChars.json.error.message).toMatch(/^invalid base64 encoding: /);
    const bad58 = await post(send('0OIl' + tx.base58.slice(4), { skipPreflight: true }));
    expect(bad58.json.error.message).toMatch(/^invalid base58 encoding: /);
    const undecodable = await post(send(Buffer.from([1, 2, 3]).toString('base64')));
    expect(undecodable.json.error.code).toBe(-32602);
    expect(undecodable.json.error.message).toMatch(/^failed to deserialize solana_transaction::versioned::VersionedTransaction: /);
    const zeroSigs = Buffer.concat([Buffer.from([0]), tx.bytes.subarray(65)]);
    const z = await post(send(zeroSigs.toString('base64')));
    expect(z.json.error.code).toBe(-32602);
    expect(z.json.error.message).toMatch(/^invalid transaction: /);
    expect((await post(send(tx.base64, { encoding: 'json', skipPreflight: true }))).json).toEqual(
      err(-32602, 'unsupported encoding: json. Supported encodings: base58, base64'),
    );
  });

  it('missing or unknown key -> 401 with a JSON error that never echoes the key', async () => {
    const none = await post(send(legacyTransfer().base64), {});
    expect(none.status).toBe(401);
    expect(none.json.error.code).toBe(-32600);
    const wrongKey = 'deadbeef-dead-4bee-8eef-deadbeefdead';
    const wrong = await post(send(legacyTransfer().base64), { 'x-api-key': wrongKey });
    expect(wrong.status).toBe(401);
    expect(JSON.stringify(wrong.json)).not.toContain(wrongKey);
    expect(relay.logs.join('\n')).not.toContain(wrongKey);
    expect(relay.logs.join('\n')).not.toContain(TEST_KEY);
  });

  it('rate limit -> 429 with Retry-After and a -32005 error kit can decode; every batch element counts', async () => {
    // tight-bot: burst 3, 1/s. A batch of 4 can never pass; then three singles pass and the fourth is refused.
    const batch = JSON.stringify(Array.from({ length: 4 }, (_, i) => JSON.parse(send(legacyTransfer().base64, undefined, i))));
    const b = await post(batch, { 'x-api-key': OTHER_KEY });
    expect(b.status).toBe(429);
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof post>> | undefined;
    for (let i = 0; i < 4; i++) {
      last = await post(send(legacyTransfer().base64, undefined, `r${i}`), { 'x-api-key': OTHER_KEY });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(last!.json.id).toBe('r3');
    expect(last!.json.error.code).toBe(-32005);
    expect(last!.json.error.data.reason).toBe('rate_limited');
  });

  it('keeps serving after all of that', async () => {
    const tx = legacyTransfer();
    expect((await post(send(tx.base64))).json).toEqual({ jsonrpc: '2.0', result: tx.signature, id: 1 });
    await upstream.waitForSends(1);
  });
});
