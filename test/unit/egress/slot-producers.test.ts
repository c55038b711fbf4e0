// Several block producers per slot (issue #44 item 5): the leader snapshot carries up to K producers per slot in
// shared memory (src/shm/snapshot-layout.ts), SnapshotLeaderSource reads them back, and the direct route's scheduler
// sends to all of a slot's producers or to its leader alone (routes.direct.producers). Real buffers, a real writer and
// reader; no network.
import { describe, expect, it } from 'vitest';
import { Scheduler, type SchedulerOptions } from '../../../src/egress/quic/scheduler.js';
import { NO_PRODUCER, SNAPSHOT_SCHEMA_VERSION, createSnapshotBuffer } from '../../../src/shm/snapshot-layout.js';
import { SnapshotReader, SnapshotWriter, producersOfRow, rowsSlice } from '../../../src/telemetry/snapshot.js';
import { SnapshotLeaderSource } from '../../../src/telemetry/snapshot-leader-source.js';
import { configSchema } from '../../../src/config/schema.js';

const NOW = 1_000_000;
const leaders = [
  { identity: 'A', tpuQuic: '127.0.0.1:1001', stake: 1 },
  { identity: 'B', tpuQuic: '127.0.0.1:1002', stake: 1 },
  { identity: 'C', tpuQuic: '127.0.0.1:1003', stake: 1 },
];

/** Slots 100..111: A leads 100-103 alone, 104-107 are produced by B and C together, A again 108-111 (K = 2). */
function publishTwoProducers(sab: SharedArrayBuffer): void {
  const rows = Array.from({ length: 12 }, (_, i) => `{"slot":${100 + i}}`);
  const idx: number[] = [];
  for (let i = 0; i < 12; i++) idx.push(...(i >= 4 && i < 8 ? [1, 2] : [0, NO_PRODUCER]));
  new SnapshotWriter(sab).publish({
    schemaVersion: SNAPSHOT_SCHEMA_VERSION,
    firstSlot: 100,
    snapshotSlot: 100,
    generatedAtUnixMs: NOW,
    slotMs: 400,
    slotMsSamples: 32, // measured: the source extrapolates the slot at 400 ms
    leaders,
    leaderIndex: idx,
    producersPerSlot: 2,
    rows,
  });
}

const opts: SchedulerOptions = { fanout: 'next-leaders', leaders: 0, windowTailSlots: 2, lookahead: 1, staleLeaderMs: 5_000 };

describe('several producers per slot', () => {
  it('the snapshot carries each slot’s producers; the leader is the first, rows are unchanged', () => {
    const sab = createSnapshotBuffer(8192);
    publishTwoProducers(sab);
    const v = new SnapshotReader(sab).current()!;
    expect(v.producersPerSlot).toBe(2);
    expect(Array.from(v.leaderIndex)).toEqual([0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0]);
    expect(producersOfRow(v, 0)).toEqual([0]);
    expect(producersOfRow(v, 5)).toEqual([1, 2]);
    expect(JSON.parse('[' + rowsSlice(v, 4, 2) + ']')).toEqual([{ slot: 104 }, { slot: 105 }]);
    const src = new SnapshotLeaderSource(sab, { now: () => NOW });
    expect(src.leaderAt(105)?.identity).toBe('B');
    expect(src.producersAt(105)?.map((l) => l.identity)).toEqual(['B', 'C']);
    expect(src.producersAt(101)?.map((l) => l.identity)).toEqual(['A']);
    // A leaders-only reader (the egress side's) finds the leader table after K entries per row too.
    const lean = new SnapshotLeaderSource(new SnapshotReader(sab, { rows: false }), { now: () => NOW });
    expect(lean.producersAt(106)?.map((l) => l.identity)).toEqual(['B', 'C']);
  });

  it('producers: all sends to both producers of a slot, first to its leader alone; one-producer slots are as before', () => {
    const sab = createSnapshotBuffer(8192);
    publishTwoProducers(sab);
    const slot = { v: 105 };
    const source = new SnapshotLeaderSource(sab, { now: () => NOW + (slot.v - 100) * 400 });
    const all = new Scheduler(source, { ...opts, producers: 'all' });
    const first = new Scheduler(source, { ...opts, producers: 'first' });
    expect(all.targets().map((t) => t.identity)).toEqual(['B', 'C']);
    expect(all.targets().map((t) => t.target)).toEqual(['127.0.0.1:1002', '127.0.0.1:1003']);
    expect(first.targets().map((t) => t.identity)).toEqual(['B']);
    // From A's slot, the next leader's slot (104) is produced by B and C: `all` reaches both of them.
    slot.v = 101;
    const ahead = new Scheduler(source, { ...opts, leaders: 1, producers: 'all' });
    expect(ahead.targets().map((t) => t.identity)).toEqual(['A', 'B', 'C']);
    expect(new Scheduler(source, { ...opts, leaders: 1, producers: 'first' }).targets().map((t) => t.identity)).toEqual(['A', 'B']);
    // Connections are opened ahead for every producer the targets may hold.
    expect(ahead.prewarmTargets()?.map((t) => t.identity).sort()).toEqual(['A', 'B', 'C']);
  });

  it('routes.direct.producers defaults to all and takes only its two words', () => {
    const parsed = configSchema.parse({});
    expect(parsed.routes.direct.producers).toBe('all');
    expect(configSchema.safeParse({ routes: { direct: { producers: 'some' } } }).success).toBe(false);
  });
});
