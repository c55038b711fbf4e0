import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { SNAP_CTL_MAGIC, SNAP_CTL_VERSION, SNAPSHOT_SCHEMA_VERSION, createSnapshotBuffer } from '../../../src/telemetry/snapshot-layout.js';
import { SnapshotReader, SnapshotWriter, rowsSlice, type SnapshotContent } from '../../../src/telemetry/snapshot.js';
import { SnapshotLeaderSource } from '../../../src/telemetry/snapshot-leader-source.js';
import { FALLBACK_SLOT_MS } from '../../../src/telemetry/slot-duration.js';
import { distUrl, ensureDistFresh } from './dist-fresh.js';

function content(k: number, schemaVersion = SNAPSHOT_SCHEMA_VERSION): SnapshotContent {
  const rows = Array.from({ length: 8 }, (_, i) => `{"slot":${100 + k + i},"k":${k}}`);
  return {
    schemaVersion,
    firstSlot: 100 + k,
    snapshotSlot: 102 + k,
    generatedAtUnixMs: 1_000 + k,
    slotMs: 400,
    slotMsSamples: 32,
    leaders: [
      { identity: `A${k}`, tpuQuic: '127.0.0.1:1', stake: 5 },
      { identity: `B${k}`, tpuQuic: null, stake: 7 },
    ],
    leaderIndex: rows.map((_, i) => (i >> 2) & 1),
    rows,
  };
}

describe('leader-slot snapshot', () => {
  it('refuses a buffer without the magic or with another layout version', () => {
    const sab = createSnapshotBuffer(4096);
    const ctl = new Int32Array(sab, 0, 64);
    ctl[SNAP_CTL_VERSION] = 9;
    expect(() => new SnapshotReader(sab)).toThrow(/layout version 9/);
    ctl[SNAP_CTL_MAGIC] = 0;
    expect(() => new SnapshotWriter(sab)).toThrow(/magic/);
  });

  it('publishes and reads back every field; unchanged generation returns the same object', () => {
    const sab = createSnapshotBuffer(8192);
    const w = new SnapshotWriter(sab);
    const r = new SnapshotReader(sab);
    expect(r.current()).toBeNull();
    expect(w.publish(content(1))).toBe(1);
    const v = r.current()!;
    expect(v).toMatchObject({ generation: 1, supported: true, firstSlot: 101, lastSlot: 108, rowCount: 8, snapshotSlot: 103, generatedAtUnixMs: 1001, slotMs: 400, slotMsSamples: 32 });
    expect(v.leaders).toEqual(content(1).leaders);
    expect(Array.from(v.leaderIndex)).toEqual([0, 0, 0, 0, 1, 1, 1, 1]);
    expect(JSON.parse('[' + rowsSlice(v, 2, 3) + ']')).toEqual([{ slot: 103, k: 1 }, { slot: 104, k: 1 }, { slot: 105, k: 1 }]);
    expect(JSON.parse('[' + rowsSlice(v, 0, 8) + ']')).toHaveLength(8);
    expect(r.current()).toBe(v);
    w.publish(content(2));
    w.publish(content(3));
    expect(r.current()!.firstSlot).toBe(103);
  });

  it('decodes only the header of an unsupported schema version', () => {
    const sab = createSnapshotBuffer(8192);
    new SnapshotWriter(sab).publish(content(1, 77));
    const v = new SnapshotReader(sab).current()!;
    expect(v).toMatchObject({ supported: false, schemaVersion: 77, snapshotSlot: 103, rowCount: 0 });
  });

  it('refuses non-ASCII rows and content larger than the buffer', () => {
    const sab = createSnapshotBuffer(1024);
    const w = new SnapshotWriter(sab);
    expect(() => w.publish({ ...content(1), rows: content(1).rows.map(() => '"é"') })).toThrow(/ASCII/);
    expect(() => w.publish({ ...content(1), rows: content(1).rows.map(() => 'x'.repeat(200)) })).toThrow(/capacity/);
    expect(w.generation).toBe(0);
  });

  it('SnapshotLeaderSource answers leaders, extrapolates the slot and fails closed when stale', () => {
    const sab = createSnapshotBuffer(8192);
    new SnapshotWriter(sab).publish(content(0));
    let now = 1_000;
    const src = new SnapshotLeaderSource(sab, { maxAgeMs: 1_000, now: () => now });
    expect(src.currentSlot()).toBe(102);
    expect(src.leaderAt(100)?.identity).toBe('A0');
    expect(src.leaderAt(104)).toEqual({ identity: 'B0', tpuQuic: null, stake: 7 });
    expect(src.leaderAt(99)).toBeUndefined();
    expect(src.leaderAt(108)).toBeUndefined();
    expect(src.nextLeaders(101, 5).map((l) => l.identity)).toEqual(['A0', 'B0']);
    now = 1_850;
    expect(src.currentSlot()).toBe(104);
    expect(src.ageMs()).toBe(850);
    now = 2_001;
    expect(src.currentSlot()).toBe(-1);
    expect(src.leaderAt(100)).toBeUndefined();
  });

  it('SnapshotLeaderSource extrapolates with the fallback slot time while nothing is measured (never 400 ms)', () => {
    const sab = createSnapshotBuffer(8192);
    new SnapshotWriter(sab).publish({ ...content(0), slotMs: 400, slotMsSamples: 0 });
    let now = 1_000;
    const src = new SnapshotLeaderSource(sab, { maxAgeMs: 1_000, now: () => now });
    now = 1_000 + 2 * FALLBACK_SLOT_MS + 1;
    expect(src.currentSlot()).toBe(104);
  });

  it('rows: false decodes the same header, leaders and leader index without copying the row text', () => {
    const sab = createSnapshotBuffer(1 << 20);
    const big = { ...content(1), rows: content(1).rows.map((r) => r.slice(0, -1) + `,"pad":"${'x'.repeat(4_000)}"}`) };
    new SnapshotWriter(sab).publish(big);
    const full = new SnapshotReader(sab);
    const lean = new SnapshotReader(sab, { rows: false });
    const f = full.current()!;
    const l = lean.current()!;
    expect(l).toMatchObject({ generation: 1, supported: true, firstSlot: 101, lastSlot: 108, rowCount: 8, snapshotSlot: 103, slotMs: 400, slotMsSamples: 32 });
    expect(l.leaders).toEqual(f.leaders);
    expect(Array.from(l.leaderIndex)).toEqual(Array.from(f.leaderIndex));
    expect(l.rowsText).toBe('');
    expect(f.rowsText.length).toBeGreaterThan(32_000);
    // The copy out of shared memory stops at the end of the leader table.
    expect(full.lastCopyBytes).toBeGreaterThan(32_000);
    expect(lean.lastCopyBytes).toBeLessThan(1_000);
    // What the egress scheduler reads through: a SnapshotLeaderSource built on the buffer is leaders-only too.
    const src = new SnapshotLeaderSource(sab);
    expect(src.leaderAt(105)?.identity).toBe('B1');
  });

  it('parses the leader table again only when its bytes change between generations', () => {
    const sab = createSnapshotBuffer(8192);
    const w = new SnapshotWriter(sab);
    const r = new SnapshotReader(sab, { rows: false });
    w.publish(content(1));
    const a = r.current()!.leaders;
    w.publish({ ...content(2), leaders: content(1).leaders }); // new slots, same leaders
    const b = r.current()!;
    expect(b.generation).toBe(2);
    expect(b.firstSlot).toBe(102);
    expect(b.leaders).toBe(a);
    w.publish(content(3)); // other leaders
    const c = r.current()!.leaders;
    expect(c).not.toBe(a);
    expect(c.map((x) => x.identity)).toEqual(['A3', 'B3']);
  });

  it.each([
    ['a fresh full reader per read', 'full'],
    ['one reused leaders-only reader (rows: false, leader table cache)', 'lean'],
  ] as const)('torn-read: a writer thread publishing continuously never shows %s an inconsistent snapshot', async (_name, mode) => {
    ensureDistFresh();
    const sab = createSnapshotBuffer(1 << 20);
    const stop = new Int32Array(new SharedArrayBuffer(4));
    // Writer thread: generation k has a k-dependent row count, row length and leader table.
    const code = `
      const { workerData, parentPort } = require('node:worker_threads');
      import(workerData.url).then(({ SnapshotWriter }) => {
        const w = new SnapshotWriter(workerData.sab);
        const stop = new Int32Array(workerData.stop);
        // 64 precomputed variants so a publish is mostly the copy: the writer laps slow readers often.
        const variants = [];
        for (let k = 1; k <= 64; k++) {
          const n = 20 + ((k * 37) % 300);
          const pad = 'x'.repeat((k * 13) % 97);
          const rows = new Array(n);
          const idx = new Array(n);
          for (let i = 0; i < n; i++) { rows[i] = '{"slot":' + (k + i) + ',"k":' + k + ',"p":"' + pad + '"}'; idx[i] = (k + i) % 3; }
          variants.push({ schemaVersion: 1, firstSlot: k, snapshotSlot: k, generatedAtUnixMs: k, slotMs: 1,
            leaders: [0, 1, 2].map((j) => ({ identity: 'L' + k + '-' + j, tpuQuic: null, stake: k })), leaderIndex: idx, rows });
        }
        let count = 0;
        while (Atomics.load(stop, 0) === 0) w.publish(variants[count++ % 64]);
        const k = count;
        parentPort.postMessage(k);
      });`;
    const writer = new Worker(code, { eval: true, workerData: { url: distUrl('src/telemetry/snapshot.js'), sab, stop: stop.buffer } });
    const writerDone = new Promise<number>((res, rej) => {
      writer.once('message', res);
      writer.once('error', rej);
    });
    let seen = 0;
    let lastGen = 0;
    const until = Date.now() + 1_500;
    const lean = new SnapshotReader(sab, { rows: false });
    while (Date.now() < until) {
      // A fresh reader copies on every call (no cached generation): as many copies as possible race the writer. The
      // reused leaders-only reader copies on every new generation and keeps its leader table across them.
      const v = mode === 'full' ? new SnapshotReader(sab).current() : lean.current();
      if (v === null || v.generation === lastGen) continue;
      lastGen = v.generation;
      seen++;
      const k = v.snapshotSlot;
      expect(v.firstSlot).toBe(k);
      expect(v.rowCount).toBe(20 + ((k * 37) % 300));
      expect(v.generatedAtUnixMs).toBe(k);
      expect(v.leaders.map((l) => l.identity)).toEqual([0, 1, 2].map((j) => `L${k}-${j}`));
      if (mode === 'lean') {
        for (let i = 0; i < v.rowCount; i++) if (v.leaderIndex[i] !== (k + i) % 3) throw new Error(`torn leader index at generation ${v.generation}, row ${i}`);
        continue;
      }
      const rows = JSON.parse('[' + rowsSlice(v, 0, v.rowCount) + ']') as { slot: number; k: number; p: string }[];
      expect(rows).toHaveLength(v.rowCount);
      for (let i = 0; i < rows.length; i++) {
        if (rows[i].slot !== k + i || rows[i].k !== k || rows[i].p.length !== (k * 13) % 97 || v.leaderIndex[i] !== (k + i) % 3) {
          throw new Error(`torn snapshot at generation ${v.generation}, row ${i}`);
        }
      }
    }
    Atomics.store(stop, 0, 1);
    const published = await writerDone;
    await writer.terminate();
    expect(seen).toBeGreaterThan(20);
    expect(published).toBeGreaterThan(seen);
  });
});
