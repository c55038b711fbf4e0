// Regressions for the answers a fuzzing run found wrong (issue #18, defects 1, 2, 4 and 7), driven over real HTTP
// against a real relay: every answer is valid JSON with the specified code, and no client input reaches a throw
// (no -32603 / HTTP 500, no error-level log line, no stack trace in the log).
import { describe, expect, it } from 'vitest';
import { relayOnFakeRpcUpstream } from '../../helpers/relay-on-upstream.js';
import { TEST_KEY } from '../../helpers/relay-process.js';
import { legacyTransfer } from '../../helpers/transactions.js';

const env = relayOnFakeRpcUpstream();

interface Answer {
  readonly status: number;
  readonly text: string;
  readonly json: any;
}

async function post(url: string, body: string): Promise<Answer> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY }, body });
  const text = await res.text();
  // JSON.parse must succeed: an answer that is not valid JSON fails the test here.
  return { status: res.status, text, json: JSON.parse(text) };
}

const rpc = (body: string): Promise<Answer> => post(env.relay.rpcUrl, body);
const submit = (body: unknown): Promise<Answer> => post(env.relay.relayUrl + '/v1/submit', JSON.stringify(body));

function nested(depth: number, inner: string): string {
  return '['.repeat(depth) + inner + ']'.repeat(depth);
}

/** Log lines at pino's error level or above, or carrying a stack trace. */
function errorLogLines(): string[] {
  return env.relay.logs.filter((l) => /"level":(5\d|60)/.test(l) || l.includes('"stack"') || /\n\s+at /.test(l));
}

describe('answers a fuzzing run found wrong', () => {
  it('a numeric id that does not survive as JSON (1e400) is an invalid request with id null, not Infinity', async () => {
    for (const id of ['1e400', '-1e400']) {
      const a = await rpc(`{"jsonrpc":"2.0","id":${id},"method":"sendTransaction","params":[]}`);
      expect(a.status).toBe(200);
      expect(a.text).not.toContain('Infinity');
      expect(a.json).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id: null });
    }
    // In a batch, only that element is refused; its neighbour keeps its id.
    const batch = await rpc('[{"jsonrpc":"2.0","id":1e400,"method":"getSlot"},{"jsonrpc":"2.0","id":1.5,"method":"nope"}]');
    expect(batch.json).toEqual([
      { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id: null },
      { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 1.5 },
    ]);
  });

  it('preflightCommitment of the wrong type or nested 5,000 deep: -32602 naming the field', async () => {
    const tx = legacyTransfer();
    const cases = [
      '{"toString":1}',
      '{"valueOf":1,"toString":1}',
      nested(5000, '"finalized"'),
      '7',
      'true',
    ];
    for (const value of cases) {
      const body = `{"jsonrpc":"2.0","id":"c","method":"sendTransaction","params":["${tx.base64}",{"encoding":"base64","preflightCommitment":${value}}]}`;
      const a = await rpc(body);
      expect(a.status).toBe(200);
      expect(a.json.id).toBe('c');
      expect(a.json.error.code).toBe(-32602);
      expect(a.json.error.message).toContain('`preflightCommitment`');
      expect(a.json.error.message).toMatch(/^Invalid params: invalid type: (map|sequence|integer `7`|boolean `true`), expected one of/);
    }
    // A nested value in any other config field or as the transaction is described, never walked.
    const deep = nested(5000, '1');
    for (const field of ['encoding', 'skipPreflight', 'maxRetries', 'minContextSlot']) {
      const a = await rpc(`{"jsonrpc":"2.0","id":2,"method":"sendTransaction","params":["${tx.base64}",{"${field}":${deep}}]}`);
      expect(a.json.error.code).toBe(-32602);
      expect(a.json.error.message).toContain('invalid type: sequence');
    }
    const a = await rpc(`{"jsonrpc":"2.0","id":3,"method":"sendTransaction","params":[${deep}]}`);
    expect(a.json.error).toEqual({ code: -32602, message: 'Invalid params: invalid type: sequence, expected a string' });
  });

  it('/v1/submit with routes nested 5,000 deep or of a non-string element: 400 unknown_route naming `routes`', async () => {
    const tx = legacyTransfer();
    // Bodies as text: JSON.stringify in this test would overflow the stack on the nested value itself.
    const deep = nested(5000, '"rpc"');
    for (const routes of [deep, `[${deep}]`, '[{"toString":1}]', '[1]', '["rpc",null]']) {
      const a = await post(env.relay.relayUrl + '/v1/submit', `{"transaction":"${tx.base64}","routes":${routes}}`);
      expect(a.status).toBe(400);
      expect(a.json.accepted).toBe(false);
      expect(a.json.error.reason).toBe('unknown_route');
      expect(a.json.error.message).toContain('`routes`');
    }
    const unknown = await submit({ transaction: tx.base64, routes: ['carrier-pigeon'] });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error.message).toBe('Invalid params: unknown route "carrier-pigeon" in `routes`; known routes: rpc, direct, jito, static');
  });

  it('/v1/submit "encoding": null means the documented default, base64', async () => {
    const tx = legacyTransfer();
    const a = await submit({ transaction: tx.base64, encoding: null });
    expect(a.status).toBe(200);
    expect(a.json).toMatchObject({ accepted: true, signature: tx.signature });
    // A base58 text with encoding null is therefore not base58-decoded.
    const b = await submit({ transaction: tx.base58, encoding: null });
    expect(b.status).toBe(400);
    expect(b.json.error.reason).toBe('tx_bad_encoding');
  });

  it('a transaction listing the same account key twice is refused at intake with Agave\'s message, on every path', async () => {
    const tx = legacyTransfer();
    const bytes = Buffer.from(tx.bytes);
    // Legacy transfer: 1 signature, 3-byte header, 3 keys [payer, recipient, system program]; recipient := system.
    const keys = 1 + 64 + 3 + 1;
    bytes.copy(bytes, keys + 32, keys + 64, keys + 96);
    const dup = bytes.toString('base64');
    const message = 'invalid transaction: Account loaded twice';
    const viaRpc = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'sendTransaction', params: [dup, { encoding: 'base64', skipPreflight: true }] }));
    expect(viaRpc.json).toEqual({ jsonrpc: '2.0', error: { code: -32602, message }, id: 9 });
    const viaSubmit = await submit({ transaction: dup });
    expect(viaSubmit.status).toBe(400);
    expect(viaSubmit.json).toEqual({ accepted: false, error: { code: -32602, reason: 'tx_invalid', message } });
    const raw = await fetch(env.relay.relayUrl + '/v1/transactions', {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream', 'x-api-key': TEST_KEY },
      body: bytes,
    });
    expect(raw.status).toBe(400);
    expect(((await raw.json()) as { error: { message: string } }).error.message).toBe(message);
    expect(env.upstream.sent().some((b) => b.equals(bytes))).toBe(false);
  });

  it('none of it reached a throw: no -32603, no error-level log line, no stack in the log', () => {
    expect(errorLogLines()).toEqual([]);
    expect(env.relay.logs.join('\n')).not.toContain('internal error');
  });
});
