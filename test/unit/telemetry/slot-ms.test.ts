// Readers of the measured slot time (src/telemetry/slot-ms.ts) and the egress timers built on it (slot-timers.ts).
import { describe, expect, it } from 'vitest';
import { BLOCKHASH_TTL_SLOTS, STALE_SLOTS, slotTimer } from '../../../src/egress/contract/slot-timers.js';
import { createSnapshotBuffer } from '../../../src/shm/snapshot-layout.js';
import { FALLBACK_SLOT_MS } from '../../../src/telemetry/slot-duration.js';
import { SnapshotSlotMs, slotMsSource } from '../../../src/telemetry/slot-ms.js';
import { SnapshotWriter } from '../../../src/telemetry/snapshot.js';

function publish(w: SnapshotWriter, slotMs: number, slotMsSamples: number): void {
  w.publish({ schemaVersion: 1, firstSlot: 10, snapshotSlot: 10, generatedAtUnixMs: Date.now(), slotMs, slotMsSamples, leaders: [{ identity: 'A', tpuQuic: null, stake: 1 }], leaderIndex: [0], rows: ['{}'] });
}

describe('SnapshotSlotMs', () => {
  it('reads the fallback until a measured slot time is published, then follows each generation', () => {
    const sab = createSnapshotBuffer(8192);
    const r = new SnapshotSlotMs(sab);
    expect(r.current()).toBe(FALLBACK_SLOT_MS);
    const w = new SnapshotWriter(sab);
    publish(w, 400, 0); // a figure nobody measured (samples 0): still the fallback
    expect(r.current()).toBe(FALLBACK_SLOT_MS);
    publish(w, 201.5, 12);
    expect(r.current()).toBe(201.5);
    publish(w, 350, 32);
    expect(r.current()).toBe(350);
    expect(slotMsSource(undefined)()).toBe(FALLBACK_SLOT_MS);
    expect(slotMsSource(sab)()).toBe(350);
  });

  it('slotTimer: slots x slot time unless the operator configured ms', () => {
    let slotMs = 400;
    const stale = slotTimer(undefined, STALE_SLOTS, () => slotMs);
    expect(stale()).toBe(2_000);
    slotMs = 200;
    expect(stale()).toBe(1_000);
    expect(slotTimer(undefined, BLOCKHASH_TTL_SLOTS, () => 200)()).toBe(45_000);
    expect(slotTimer(30_000, STALE_SLOTS, () => slotMs)()).toBe(30_000);
  });
});
