// getLeaderSlots through the real relay process (dist/src/cli.js start) following the real localnet (in this
// process, as its upstream): rows match the schedule and stake, the limit default and cap, the batch rule, invalid
// params, and each fail-closed family triggered for real with the request id preserved.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { ensureDistFresh } from '../../unit/telemetry/dist-fresh.js';

let localnet: Localnet;
let relay: RelayHandle;

const telemetry = { maxSnapshotAgeMs: 1_500, probe: { enabled: false }, horizonSlots: 300 };

async function rpc(url: string, body: unknown, headers: Record<string, string> = { 'x-api-key': TEST_KEY }): Promise<{ status: number; json: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text === '' ? null : JSON.parse(text) };
}

const gls = (id: unknown, params: unknown[]) => ({ jsonrpc: '2.0', id, method: 'getLeaderSlots', params });

async function firstAnswer(url: string): Promise<any> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await rpc(url, gls(0, [localnet.clock.current]));
    if (r.json.result) return r.json.result;
    if (Date.now() > deadline) throw new Error(`no snapshot: ${JSON.stringify(r.json)}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

beforeAll(async () => {
  ensureDistFresh();
  localnet = await startLocalnet({ validators: 3, slotMs: 100 });
  relay = await startRelay({ upstream: { rpcUrl: localnet.rpcUrl }, telemetry, log: { level: 'warn' } });
  await firstAnswer(relay.rpcUrl);
});

afterAll(async () => {
  await relay?.stop();
  await localnet?.stop();
});

describe('getLeaderSlots on the JSON-RPC host', () => {
  it('answers rows that match the localnet schedule and stake, default limit 20', async () => {
    const start = localnet.clock.current;
    const r = await rpc(relay.rpcUrl, gls('a', [start]));
    expect(r.status).toBe(200);
    expect(r.json.id).toBe('a');
    const res = r.json.result;
    expect(res).toMatchObject({ success: true, total: 20 });
    expect(res.data).toHaveLength(20);
    expect(Math.abs(res.snapshotSlot - start)).toBeLessThanOrEqual(3);
    expect(res.snapshotAgeMs).toBeGreaterThanOrEqual(0);
    expect(res.snapshotAgeMs).toBeLessThan(1_500);
    expect(Math.abs(Date.now() - res.snapshotAgeMs - res.snapshotGeneratedAtUnixMs)).toBeLessThan(200);
    const stake = new Map(localnet.validators.map((v) => [v.identity, v.stake]));
    res.data.forEach((row: any, i: number) => {
      expect(row.slot).toBe(start + i);
      expect(row.identity).toBe(localnet.schedule.leaderAt(row.slot));
      expect(row.stake).toBe(stake.get(row.identity));
      expect(row.location).toBeUndefined(); // no location dataset configured
      // Default routes: no direct, no static peers, no jito -> no txPath (the probe is off: the ping is an estimate).
      expect(row.txPaths).toEqual([]);
      expect(row.pingToLeaders).toEqual([{ region: 'local', latencyMs: 200, estimated: true, measuredAtUnixMs: null }]);
      expect(row.routeScores).toEqual([{ active_region: 'local', market_latency_ms: 0, tx_latency_ms: 100, score_ms: 100, selected: true }]);
    });
  });

  it('caps limit at 100 and accepts it in every key carrier (x-token, x-api-key, Bearer, ?key=)', async () => {
    const r = await rpc(`${relay.rpcUrl}/?key=${TEST_KEY}`, gls(7, [localnet.clock.current, 1_000]), {});
    expect(r.json.result.total).toBe(100);
    expect(r.json.result.data).toHaveLength(100);
    const one = await rpc(relay.rpcUrl, gls(8, [localnet.clock.current, 1]), { authorization: `Bearer ${TEST_KEY}` });
    expect(one.json.result.total).toBe(1);
    const token = await rpc(relay.rpcUrl, gls('t', [localnet.clock.current, 3]), { 'x-token': TEST_KEY });
    expect(token.status).toBe(200);
    expect(token.json).toMatchObject({ id: 't', result: { success: true, total: 3 } });
    expect(token.json.result.data.map((x: any) => x.identity)).toEqual([0, 1, 2].map((i) => localnet.schedule.leaderAt(token.json.result.data[0].slot + i)));
    expect((await rpc(relay.rpcUrl, gls(9, [localnet.clock.current]), { 'x-token': 'not-a-key' })).status).toBe(401);
    expect((await rpc(relay.rpcUrl, gls(9, [localnet.clock.current]), {})).status).toBe(401);
  });

  it('rejects a batch that contains getLeaderSlots as a whole: one error, id null', async () => {
    const r = await rpc(relay.rpcUrl, [gls(1, [localnet.clock.current]), { jsonrpc: '2.0', id: 2, method: 'sendTransaction', params: ['x'] }]);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: expect.stringMatching(/getLeaderSlots must be sent as its own request/) }, id: null });
  });

  it.each([
    [[-5], /expected u64/],
    [[1.5], /floating point/],
    [[1e20], /invalid type: floating point `100000000000000000000`, expected u64/],
    [['1'], /expected u64/],
    [[], /Expected from 1 to 2 parameters/],
  ])('invalid params %j -> -32602 with the id', async (params, msg) => {
    const r = await rpc(relay.rpcUrl, gls('bad', params));
    expect(r.json.id).toBe('bad');
    expect(r.json.error.code).toBe(-32602);
    expect(r.json.error.message).toMatch(msg);
  });

  it('range not covered: before the first slot or past the horizon -> -32016 with the snapshot slot', async () => {
    // The snapshot starts 8 slots (lookbackSlots) before the current one: slot 0 is "before" it once the localnet
    // is past slot 8 (this file can get here within a second of the localnet's start).
    const deadline = Date.now() + 10_000;
    while (localnet.clock.current < 12 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const now = localnet.clock.current;
    // 2^60 is a valid u64 (beyond 2^53 - 1): simply not covered.
    for (const start of [Math.max(0, now - 200), now + 10_000, 2 ** 60]) {
      const r = await rpc(relay.rpcUrl, gls('r', [start]));
      expect(r.json.id).toBe('r');
      expect(r.json.error).toMatchObject({ code: -32016, data: { startSlot: start } });
      expect(r.json.error.data.contextSlot).toBeGreaterThanOrEqual(now - 2);
      expect(start < r.json.error.data.firstSlot || start > r.json.error.data.lastSlot).toBe(true);
    }
  });

  it('unsupported schema: a relay whose telemetry publishes schema version 2 -> -32015', async () => {
    const other = await startRelay({ upstream: { rpcUrl: localnet.rpcUrl }, telemetry: { ...telemetry, publishSchemaVersion: 2 }, log: { level: 'warn' } });
    try {
      const deadline = Date.now() + 15_000;
      let r;
      do {
        r = await rpc(other.rpcUrl, gls(42, [localnet.clock.current]));
        if (r.json.error?.code !== -32014) break;
        await new Promise((res) => setTimeout(res, 50));
      } while (Date.now() < deadline);
      expect(r.json).toMatchObject({ id: 42, error: { code: -32015, data: { schemaVersion: 2, supportedSchemaVersions: [1] } } });
    } finally {
      await other.stop();
    }
  });

  it('snapshot missing: a relay whose telemetry cannot reach its cluster -> -32014', async () => {
    const other = await startRelay({ upstream: { rpcUrl: localnet.rpcUrl }, telemetry: { ...telemetry, rpcUrl: 'http://127.0.0.1:9' }, log: { level: 'error' } });
    try {
      await new Promise((res) => setTimeout(res, 300));
      const r = await rpc(other.rpcUrl, gls('m', [localnet.clock.current]));
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ id: 'm', error: { code: -32014, message: expect.stringMatching(/not available yet/) } });
    } finally {
      await other.stop();
    }
  });

  it('stale: when the cluster stops advancing the snapshot ages past maxSnapshotAgeMs -> -32004 (last: stops the clock)', async () => {
    localnet.clock.stop();
    const slot = localnet.clock.current;
    await new Promise((res) => setTimeout(res, 1_700));
    const r = await rpc(relay.rpcUrl, gls('s', [slot]));
    expect(r.json).toMatchObject({ id: 's', error: { code: -32004, data: { maxSnapshotAgeMs: 1_500 } } });
    expect(r.json.error.data.snapshotAgeMs).toBeGreaterThan(1_500);
  });
});
