// Per-key rate limits through the real relay: submissions (sendTransaction) and every other JSON-RPC call
// (getLeaderSlots, unknown methods) have separate token buckets, a batch is charged per element to each, all or
// nothing, and a refusal is HTTP 429 + Retry-After with the request id preserved.
import { describe, expect, it } from 'vitest';
import { relayOnFakeRpcUpstream } from '../../helpers/relay-on-upstream.js';
import { legacyTransfer } from '../../helpers/transactions.js';

const KEY = '3b8f0e4c-1d2a-4f6b-9c7e-5a4d3c2b1a09';
// Refill so slow (one token in ~17 min) that nothing refills during the test.
const SLOW = 0.001;

const env = relayOnFakeRpcUpstream({
  keys: [{ key: KEY, name: 'metered', rateLimit: { perSecond: SLOW, burst: 2 }, readLimit: { perSecond: SLOW, burst: 3 } }],
});
async function post(body: unknown): Promise<{ status: number; retryAfter: string | null; json: any }> {
  const res = await fetch(env.relay.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body: JSON.stringify(body) });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), json: await res.json() };
}

const leaderSlots = (id: unknown) => ({ jsonrpc: '2.0', id, method: 'getLeaderSlots', params: [0] });
const send = (id: unknown) => ({ jsonrpc: '2.0', id, method: 'sendTransaction', params: [legacyTransfer().base64, { encoding: 'base64', skipPreflight: true }] });

describe('rate limits: submissions and reads are metered apart', () => {
  it('reads spend the read bucket only; a mixed batch is refused whole and gives its submission token back', async () => {
    for (const id of ['r1', 'r2', 'r3']) {
      const r = await post(leaderSlots(id));
      expect(r.status).toBe(200); // answered (here: snapshot missing), so counted
      expect(r.json.id).toBe(id);
    }
    const refused = await post(leaderSlots('r4'));
    expect(refused.status).toBe(429);
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(refused.json).toMatchObject({ id: 'r4', error: { code: -32005, data: { reason: 'rate_limited' } } });

    // One submission + one read: the read bucket is empty, so the batch is refused and charges nothing.
    const mixed = await post([send('b1'), { jsonrpc: '2.0', id: 'b2', method: 'noSuchMethod', params: [] }]);
    expect(mixed.status).toBe(429);

    // The submission budget (burst 2) is whole: exactly two sends pass, the third is refused.
    const statuses: number[] = [];
    for (const id of [1, 2, 3]) statuses.push((await post(send(id))).status);
    expect(statuses).toEqual([200, 200, 429]);
    await env.upstream.waitForSends(2);
  });
});
