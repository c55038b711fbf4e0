import { describe, expect, it } from 'vitest';
import { RelayError } from '../../../src/errors/registry.js';
import { getLeaderSlotsMethod } from '../../../src/front/methods/get-leader-slots.js';
import type { JsonRpcCall } from '../../../src/jsonrpc/envelope.js';
import { createSnapshotBuffer } from '../../../src/telemetry/snapshot-layout.js';
import { SnapshotReader, SnapshotWriter } from '../../../src/telemetry/snapshot.js';

const call: JsonRpcCall = { id: 1, notification: false, method: 'getLeaderSlots', params: [] };

function setup(schemaVersion = 1, rows = 150, slotMsSamples = 0) {
  const sab = createSnapshotBuffer(1 << 20);
  const w = new SnapshotWriter(sab);
  let now = 10_000;
  const publish = () =>
    w.publish({
      schemaVersion,
      firstSlot: 1_000,
      snapshotSlot: 1_004,
      generatedAtUnixMs: 10_000,
      slotMs: 400,
      slotMsSamples,
      leaders: [{ identity: 'L', tpuQuic: null, stake: 1 }],
      leaderIndex: new Array(rows).fill(0),
      rows: Array.from({ length: rows }, (_, i) => `{"slot":${1_000 + i}}`),
    });
  const m = getLeaderSlotsMethod<unknown>({ reader: new SnapshotReader(sab), defaultLimit: 20, maxSnapshotAgeMs: 2_000, now: () => now });
  const ask = (params: unknown) => JSON.parse(m(params, {}, call) as string);
  const fail = (params: unknown): RelayError => {
    try {
      m(params, {}, call);
    } catch (e) {
      return e as RelayError;
    }
    throw new Error('expected a RelayError');
  };
  return { publish, ask, fail, setNow: (t: number) => (now = t) };
}

describe('getLeaderSlots handler', () => {
  it('answers rows from the snapshot, default limit 20, cap 100, truncated at the horizon', () => {
    const t = setup();
    t.publish();
    t.setNow(10_250);
    const r = t.ask([1_004]);
    expect(r).toMatchObject({ success: true, total: 20, snapshotSlot: 1_004, snapshotGeneratedAtUnixMs: 10_000, snapshotAgeMs: 250 });
    expect(r.data.map((x: { slot: number }) => x.slot)).toEqual(Array.from({ length: 20 }, (_, i) => 1_004 + i));
    expect(t.ask([1_000, 5_000]).total).toBe(100);
    expect(t.ask([1_140, 50]).total).toBe(10);
    expect(t.ask([1_149, 1]).data).toEqual([{ slot: 1_149 }]);
  });

  it('fails closed: missing, unsupported schema, stale, range', () => {
    const t = setup();
    expect(t.fail([1_000]).spec.reason).toBe('leader_snapshot_missing');
    t.publish();
    t.setNow(12_001);
    expect(t.fail([1_000])).toMatchObject({ spec: { rpcCode: -32004 }, data: { snapshotAgeMs: 2_001, maxSnapshotAgeMs: 2_000 } });
    expect(t.fail([1_000]).data).not.toHaveProperty('slotMs'); // nothing measured: no slot time to wait for
    const measured = setup(1, 150, 32);
    measured.publish();
    measured.setNow(12_001);
    expect(measured.fail([1_000])).toMatchObject({ spec: { rpcCode: -32004 }, data: { slotMs: 400 } });
    t.setNow(10_000);
    expect(t.fail([999])).toMatchObject({ spec: { rpcCode: -32016 }, data: { contextSlot: 1_004, firstSlot: 1_000, lastSlot: 1_149 } });
    expect(t.fail([1_150]).spec.reason).toBe('leader_range_not_covered');
    const u = setup(2);
    u.publish();
    expect(u.fail([1_000])).toMatchObject({ spec: { rpcCode: -32015 }, data: { schemaVersion: 2, supportedSchemaVersions: [1] } });
  });

  it('a valid u64 startSlot beyond 2^53 - 1 is a range the snapshot does not cover (-32016), a huge limit is capped', () => {
    const t = setup();
    t.publish();
    for (const start of [2 ** 53, 2 ** 60, 2 ** 64]) {
      expect(t.fail([start])).toMatchObject({ spec: { rpcCode: -32016 }, data: { contextSlot: 1_004, startSlot: start, lastSlot: 1_149 } });
    }
    expect(t.ask([1_000, 2 ** 60]).total).toBe(100);
  });

  it.each([
    [[], /Expected from 1 to 2 parameters/],
    [[-1], /invalid value: integer `-1`, expected u64/],
    [[1.5], /floating point `1.5`, expected u64/],
    [['5'], /string "5", expected u64/],
    [[1e20], /invalid type: floating point `100000000000000000000`, expected u64 for `startSlot`/],
    [[1_000, 1e21], /floating point .* expected u64 for `limit`/],
    [[1_000, 0], /at least 1/],
    [[1_000, -3], /expected u64 for `limit`/],
    [[1, 2, 3], /Expected from 1 to 2/],
    [{ startSlot: 1 }, /should be an array/],
  ])('invalid params %j -> -32602', (params, msg) => {
    const t = setup();
    t.publish();
    const e = t.fail(params);
    expect(e.spec.rpcCode).toBe(-32602);
    expect(e.message).toMatch(msg);
  });
});
