// Per-leader counters' window and bounds (src/receipts/leader-counters.ts) over a real receipts table, its shared
// buffer written the way the egress side writes it (src/egress/contract/receipt-writer.ts), and a fixed leader
// schedule: only the last `slots` slots count, one identity per slot is kept (the ring wraps), a key's report holds
// only that key's transactions, and drops are counted by outcome and cause.
import { describe, expect, it } from 'vitest';
import { ReceiptWriter } from '../../../src/egress/contract/receipt-writer.js';
import { LeaderCounters } from '../../../src/receipts/leader-counters.js';
import { ReceiptTable } from '../../../src/receipts/receipt-table.js';
import { EGRESS_OUTCOMES, ROUTE_IDS } from '../../../src/shm/layout.js';
import { CAUSE } from '../../../src/shm/receipts-layout.js';
import type { LeaderInfo, LeaderSource } from '../../../src/telemetry/leader-source.js';

const DIRECT = ROUTE_IDS.direct;
const T0 = 1_000_000;

/** Leaders A, B, C, D in turn, 4 slots each; the current slot is `slot.v`. */
function schedule(slot: { v: number }): LeaderSource {
  const info = (s: number): LeaderInfo => ({ identity: 'ABCD'[Math.floor(s / 4) % 4], tpuQuic: '127.0.0.1:1', stake: 1 });
  return { currentSlot: () => slot.v, leaderAt: (s) => (s < 0 ? undefined : info(s)), ageMs: () => 0 };
}

describe('LeaderCounters', () => {
  it('counts the window only, per leader of the aimed slot, per key; drops by outcome and cause', () => {
    const table = new ReceiptTable({ capacity: 1024, ttlMs: 600_000 });
    const writer = new ReceiptWriter(table.sab);
    const slot = { v: 0 };
    const counters = new LeaderCounters(table, schedule(slot), { slots: 8 });
    let n = 0;
    const send = (keyId: number, aimed: number, outcome: string, cause = 0): number => {
      slot.v = aimed;
      counters.note();
      const seq = table.accept(`sig${n++}`, keyId, 1 << DIRECT, 'trace', T0 + aimed * 400, aimed);
      if (cause !== 0) writer.routeCause(seq, DIRECT, cause, 0);
      writer.routeOutcome(seq, DIRECT, EGRESS_OUTCOMES.indexOf(outcome as (typeof EGRESS_OUTCOMES)[number]), 2, aimed, T0 + aimed * 400 + 5);
      return seq;
    };
    send(0, 1, 'sent'); // A's slot, later outside the window
    const landedSeq = send(0, 13, 'sent'); // D
    send(1, 14, 'sent'); // D, another key
    send(0, 17, 'dropped:stale', CAUSE.no_stream_credit); // A again (slots 16-19)
    send(0, 18, 'sent');
    table.setLanded(landedSeq, { slot: 15, err: null, confirmationStatus: 'confirmed', observedAtMs: T0, leader: 'D', execution: 'executed', executionSource: 'status' });
    slot.v = 19;
    const all = counters.report(null, T0 + 20 * 400);
    expect(all.firstSlot).toBe(12);
    const row = (id: string) => all.leaders.find((l) => l.identity === id)!;
    expect(row('D')).toMatchObject({ slots: [12, 13, 14, 15], sent: 2, copies: 4, landed: 1, landedInSlots: 1, slotsToLand: { p50: 2, max: 2, buckets: { '2': 1 } } });
    expect(row('D').waited).toMatchObject({ n: 2, p50Ms: 5, maxMs: 5 });
    expect(row('A')).toMatchObject({ slots: [16, 17, 18, 19], sent: 1, dropped: { 'dropped:stale': 1 }, dropCauses: { no_stream_credit: 1 } });
    // Slot 1's transaction is older than the window: counted nowhere.
    expect(all.leaders.reduce((s, l) => s + l.sent, 0)).toBe(3);
    const key1 = counters.report(1, T0 + 20 * 400);
    expect(key1.leaders.reduce((s, l) => s + l.sent, 0)).toBe(1);
    expect(key1.leaders.find((l) => l.identity === 'D')?.sent).toBe(1);
    expect(key1.leaders.find((l) => l.identity === 'A')).toMatchObject({ sent: 0, dropped: {} });
    // A scan cut short says so (a report is reused for a second: a later time makes a new one).
    const cut = counters.report(null, T0 + 30 * 400, 2);
    expect(cut).toMatchObject({ complete: false, scanned: 2 });
    expect(counters.report(null, T0 + 30 * 400 + 10)).toBe(cut);
    expect(all.complete).toBe(true);
    // The ring holds `slots` identities: slot 1's leader is gone, the window's are there.
    expect(counters.leaderOf(1)).toBeUndefined();
    expect(counters.leaderOf(13)).toBe('D');
  });

  it('a receipt past ttlMs counts nowhere', () => {
    const table = new ReceiptTable({ capacity: 1024, ttlMs: 1_000 });
    const writer = new ReceiptWriter(table.sab);
    const slot = { v: 5 };
    const counters = new LeaderCounters(table, schedule(slot), { slots: 64 });
    const seq = table.accept('sig', 0, 1 << DIRECT, 'trace', T0, 5);
    writer.routeOutcome(seq, DIRECT, EGRESS_OUTCOMES.indexOf('sent'), 1, 5, T0 + 1);
    expect(counters.report(null, T0 + 500).leaders.reduce((s, l) => s + l.sent, 0)).toBe(1);
    expect(counters.report(null, T0 + 5_000).leaders.reduce((s, l) => s + l.sent, 0)).toBe(0);
  });
});
