// JSON-RPC notifications (no `id`) are never answered, refused or not (issue #30 item 11; docs/errors.md): HTTP 200,
// `application/json; charset=utf-8`, an empty body and no Retry-After, as Agave's jsonrpc-http-server answers every
// notification. Every refusal made after the body is read agrees: the key's submission and read limits, its
// simulateLimit met by a preflight, a failed preflight, a full ring. The same requests with an id get the documented
// error (the control). A refusal made before the body is read (401) cannot know it is a notification: documented error.
import { describe, expect, it } from 'vitest';
import { relayOnFakeRpcUpstream } from '../../helpers/relay-on-upstream.js';
import { legacyTransfer } from '../../helpers/transactions.js';

const SEND_KEY = '0c6a3f1e-2b4d-4e8f-9a1c-7d5e3b2a1f08';
const SIM_KEY = '1d7b4a2f-3c5e-4f9a-8b2d-6e4c2a1b0f17';
const READ_KEY = '2e8c5b3a-4d6f-4a0b-9c3e-5f3d1b2c0a26';
const FREE_KEY = '3f9d6c4b-5e7a-4b1c-8d4f-4a2e0c3d1b35';
// Refill so slow (one token in ~17 min) that nothing refills during the test.
const SLOW = 0.001;

const env = relayOnFakeRpcUpstream({
  keys: [
    { key: SEND_KEY, name: 'send-metered', rateLimit: { perSecond: SLOW, burst: 1 } },
    { key: SIM_KEY, name: 'sim-metered', simulateLimit: { perSecond: SLOW, burst: 1 } },
    { key: READ_KEY, name: 'read-metered', readLimit: { perSecond: SLOW, burst: 1 } },
    { key: FREE_KEY, name: 'free', rateLimit: { perSecond: 10_000, burst: 10_000 } },
  ],
  rings: { workers: 1, slotsPerRing: 4 },
});

interface Answer {
  readonly status: number;
  readonly type: string | null;
  readonly retryAfter: string | null;
  readonly body: string;
}

async function post(key: string | null, body: unknown): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key !== null) headers['x-api-key'] = key;
  const res = await fetch(env.relay.rpcUrl, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.status, type: res.headers.get('content-type'), retryAfter: res.headers.get('retry-after'), body: await res.text() };
}

/**
 * sendTransaction without an id (a notification) or with one; preflight unless `skip`. maxRetries 0: the fake
 * upstream never reports a landing, and a rebroadcast of an earlier test's transaction (every 2 s by default) would
 * count among the sends a later test counts.
 */
function send(id: number | undefined, skip: boolean): Record<string, unknown> {
  const call: Record<string, unknown> = { jsonrpc: '2.0', method: 'sendTransaction', params: [legacyTransfer().base64, { encoding: 'base64', skipPreflight: skip, maxRetries: 0 }] };
  if (id !== undefined) call.id = id;
  return call;
}

const NO_REPLY = { status: 200, type: 'application/json; charset=utf-8', retryAfter: null, body: '' };

async function rejections(reason: string): Promise<number> {
  const text = await (await fetch(`${env.relay.rpcUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('slotrelay_rejections_total{') && l.includes(`reason="${reason}"`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('JSON-RPC notifications get no reply, whatever refuses them', () => {
  it('over the submission limit: a notification and a batch of notifications get 200 and no body; with an id, 429 and the error', async () => {
    expect(await post(SEND_KEY, send(undefined, true))).toEqual(NO_REPLY); // within the budget: sent, not answered
    await env.upstream.waitForSends(1);
    const before = await rejections('rate_limited');
    expect(await post(SEND_KEY, send(undefined, true))).toEqual(NO_REPLY);
    expect(await post(SEND_KEY, [send(undefined, true), send(undefined, true)])).toEqual(NO_REPLY);
    expect(await rejections('rate_limited')).toBe(before + 2); // refused all the same, and counted
    const control = await post(SEND_KEY, send(7, true));
    expect([control.status, Number(control.retryAfter) >= 1]).toEqual([429, true]);
    expect(JSON.parse(control.body)).toMatchObject({ id: 7, error: { code: -32005, data: { reason: 'rate_limited' } } });
    expect(env.upstream.sent().length).toBe(1);
  });

  it("over the key's simulateLimit through a preflight: 200 and no body; with an id, 429 and the error", async () => {
    const sendsBefore = env.upstream.sent().length;
    expect(await post(SIM_KEY, send(undefined, false))).toEqual(NO_REPLY); // the one simulation of the budget
    await env.upstream.waitForSends(sendsBefore + 1);
    const before = await rejections('rate_limited');
    expect(await post(SIM_KEY, send(undefined, false))).toEqual(NO_REPLY);
    expect(await rejections('rate_limited')).toBe(before + 1);
    const control = await post(SIM_KEY, send(8, false));
    expect(control.status).toBe(429);
    expect(JSON.parse(control.body)).toMatchObject({ id: 8, error: { code: -32005 } });
    expect(env.upstream.sent().length).toBe(sendsBefore + 1);
  });

  it('over the read limit, and a getLeaderSlots batch of notifications: 200 and no body', async () => {
    const read = { jsonrpc: '2.0', method: 'getLeaderSlots', params: [0] };
    expect(await post(READ_KEY, read)).toEqual(NO_REPLY);
    expect(await post(READ_KEY, read)).toEqual(NO_REPLY); // over the read limit
    expect(await post(FREE_KEY, [read, read])).toEqual(NO_REPLY); // leader_slots_in_batch
    const control = await post(READ_KEY, { ...read, id: 9 });
    expect(control.status).toBe(429);
  });

  it('a failed preflight: 200 and no body; with an id, the -32002 error', async () => {
    env.upstream.simulation = { err: { InstructionError: [0, 'Custom'] }, logs: ['Program failed'], unitsConsumed: 10 };
    try {
      const sendsBefore = env.upstream.sent().length;
      expect(await post(FREE_KEY, send(undefined, false))).toEqual(NO_REPLY);
      const control = await post(FREE_KEY, send(10, false));
      expect(JSON.parse(control.body)).toMatchObject({ id: 10, error: { code: -32002 } });
      expect(env.upstream.sent().length).toBe(sendsBefore);
    } finally {
      env.upstream.simulation = { err: null, logs: [], unitsConsumed: 150 };
    }
  });

  it('a full ring: every notification gets 200 and no body, none a 503; with an id, 503 and the error', async () => {
    env.upstream.delayMs = 1_500; // the route holds each transaction: the 4-slot ring fills at once
    try {
      const before = await rejections('overloaded');
      const answers = await Promise.all(Array.from({ length: 16 }, () => post(FREE_KEY, send(undefined, true))));
      expect(answers.filter((a) => JSON.stringify(a) !== JSON.stringify(NO_REPLY))).toEqual([]);
      expect(await rejections('overloaded')).toBeGreaterThan(before); // some were refused, silently
      const ids = await Promise.all(Array.from({ length: 16 }, (_, i) => post(FREE_KEY, send(100 + i, true))));
      const refused = ids.filter((a) => a.status === 503);
      expect(refused.length).toBeGreaterThan(0);
      expect(refused[0]!.retryAfter).toBe('1');
      expect(JSON.parse(refused[0]!.body)).toMatchObject({ error: { code: -32005, data: { reason: 'overloaded' } } });
    } finally {
      env.upstream.delayMs = 0;
    }
  });

  it('without a key: 401 and the documented error, since the refusal comes before the body is read', async () => {
    const r = await post(null, send(undefined, true));
    expect(r.status).toBe(401);
    expect(JSON.parse(r.body)).toMatchObject({ id: null, error: { code: -32600 } });
  });
});
