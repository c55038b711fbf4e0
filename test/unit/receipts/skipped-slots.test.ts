// Skipped target slots, the parts a localnet run does not reach at will: the skip detector's gap arithmetic (parent
// jumps, duplicates from two subscriptions, out-of-order notifications, dead before or after the gap, a long gap), and
// the target-slot index (a receipt told once, only when its direct route aimed at the skipped slot, a route that
// answers after the skip, a landed receipt left alone). End to end: test/integration/relay/receipt-skipped.test.ts.
import { describe, expect, it } from 'vitest';
import { MAX_GAP_SLOTS, SkippedSlots, type SkipSource } from '../../../src/receipts/skipped-slots.js';
import { TargetSkips } from '../../../src/receipts/target-skips.js';
import { LANDING, ReceiptTable } from '../../../src/receipts/receipt-table.js';
import type { ReceiptEvent } from '../../../src/receipts/receipt-events.js';
import { ReceiptWriter } from '../../../src/egress/contract/receipt-writer.js';
import { ROUTE_IDS } from '../../../src/shm/layout.js';

function detector(): { d: SkippedSlots; told: [number, SkipSource][] } {
  const told: [number, SkipSource][] = [];
  return { d: new SkippedSlots((slot, source) => void told.push([slot, source])), told };
}

describe('skip detector', () => {
  it('a parent further back than slot-1: the slots between, in order, once', () => {
    const { d, told } = detector();
    d.bank(10, 9, 'pubsub');
    d.bank(13, 10, 'pubsub');
    d.bank(14, 13, 'pubsub');
    expect(told).toEqual([
      [11, 'pubsub'],
      [12, 'pubsub'],
    ]);
  });

  it('duplicates (slotNotification and createdBank of the same block) and a dead for a gap already told: nothing twice', () => {
    const { d, told } = detector();
    d.bank(20, 19, 'pubsub');
    d.dead(21, 'pubsub'); // slotsUpdates dead first...
    d.bank(22, 20, 'pubsub'); // ...then the next block's gap names it again
    d.bank(22, 20, 'pubsub');
    d.dead(21, 'grpc');
    expect(told).toEqual([[21, 'pubsub']]);
    expect(d.counts).toEqual({ pubsub: 1, grpc: 0 });
  });

  it('out of order: a block seen before its gap is closed is never told skipped; a dead slot that had a block is ignored', () => {
    const { d, told } = detector();
    d.bank(30, 29, 'pubsub');
    d.bank(32, 31, 'pubsub'); // 31's own notification comes later
    d.bank(31, 30, 'pubsub');
    d.dead(31, 'grpc');
    expect(told).toEqual([]);
    d.bank(35, 32, 'pubsub');
    d.bank(34, 33, 'pubsub'); // late, on a parent inside the gap (a fork): already told, not taken back
    expect(told.map(([s]) => s)).toEqual([33, 34]);
  });

  it('the source that told first is counted; a gap wider than MAX_GAP_SLOTS (a reconnect) is not told slot by slot', () => {
    const { d, told } = detector();
    d.dead(41, 'grpc');
    d.bank(42, 40, 'pubsub');
    d.bank(42 + MAX_GAP_SLOTS + 2, 42, 'pubsub');
    expect(told).toEqual([[41, 'grpc']]);
    expect(d.counts).toEqual({ pubsub: 0, grpc: 1 });
  });

  it('bounded: a long run of slots keeps a window, not every slot', () => {
    const { d, told } = detector();
    for (let s = 1; s < 20_000; s += 2) d.bank(s + 1, s - 1, 'pubsub'); // every odd slot skipped
    expect(told.length).toBe(10_000);
    const sizes = d as unknown as { banks: Set<number>; told: Set<number> };
    expect(sizes.banks.size).toBeLessThanOrEqual(1_100);
    expect(sizes.told.size).toBeLessThanOrEqual(1_100);
  });
});

const sig = (i: number): string => `S${String(i).padStart(87, '1')}`;

function setup(): { t: ReceiptTable; w: ReceiptWriter; ts: TargetSkips; events: [number, ReceiptEvent][] } {
  const t = new ReceiptTable({ capacity: 64, ttlMs: 60_000 });
  const events: [number, ReceiptEvent][] = [];
  t.observers.push({ receiptChanged: (seq, e) => void events.push([seq, e]) });
  const ts = new TargetSkips(t, 200);
  return { t, w: new ReceiptWriter(t.sab), ts, events };
}

const DIRECT_MASK = 1 << ROUTE_IDS.direct;
const RPC_MASK = 1 << ROUTE_IDS.rpc;

describe('target-slot index', () => {
  it("tells each pending receipt whose direct route aimed at the skipped slot, once; not another slot's, not a landed one", () => {
    const { t, w, ts, events } = setup();
    const a = t.accept(sig(1), 1, DIRECT_MASK, 'r', Date.now(), 99);
    const b = t.accept(sig(2), 1, DIRECT_MASK, 'r', Date.now(), 99);
    const c = t.accept(sig(3), 1, DIRECT_MASK, 'r', Date.now(), 99);
    const d = t.accept(sig(4), 1, DIRECT_MASK | RPC_MASK, 'r', Date.now(), 99);
    w.routeOutcome(a, ROUTE_IDS.direct, 0, 2, 100, Date.now());
    w.routeOutcome(b, ROUTE_IDS.direct, 0, 2, 101, Date.now());
    w.routeOutcome(c, ROUTE_IDS.direct, 0, 2, 100, Date.now());
    w.routeOutcome(d, ROUTE_IDS.direct, 0, 2, 100, Date.now());
    t.setLanded(c, { slot: 99, err: null, confirmationStatus: 'processed', observedAtMs: 1, leader: null, execution: 'executed', executionSource: 'status' });
    ts.file(Date.now());
    expect(ts.indexed).toBe(4);
    ts.onSkipped(100, 1_234);
    ts.onSkipped(100, 1_235); // told again by another source: nothing new
    expect(events.filter(([, e]) => e === 'skipped')).toEqual([
      [a, 'skipped'],
      [d, 'skipped'],
    ]);
    expect(t.toJson(a).targetSkipped).toEqual({ slot: 100, at: 1_234 });
    expect(t.toJson(b).targetSkipped).toBeNull();
    expect(t.toJson(c).targetSkipped).toBeNull();
    expect(ts.told).toBe(2);
    // The receipt goes on: it lands later, processed after skipped.
    t.setLanded(a, { slot: 104, err: null, confirmationStatus: 'processed', observedAtMs: 2, leader: null, execution: 'executed', executionSource: 'status' });
    expect(events.filter(([s]) => s === a).map(([, e]) => e)).toEqual(['accepted', 'skipped', 'processed']);
    expect(t.toJson(a).targetSkipped).toEqual({ slot: 100, at: 1_234 });
    expect(t.landingState(a)).toBe(LANDING.landed);
  });

  it('a direct route that answers after its slot was told skipped is told when it is read; one without direct never', () => {
    const { t, w, ts, events } = setup();
    const late = t.accept(sig(5), 1, DIRECT_MASK, 'r', Date.now(), 200);
    const rpcOnly = t.accept(sig(6), 1, RPC_MASK, 'r', Date.now(), 200);
    ts.file(Date.now()); // direct not answered yet: it waits
    ts.onSkipped(200, 5_000);
    expect(events.filter(([, e]) => e === 'skipped')).toEqual([]);
    w.routeOutcome(late, ROUTE_IDS.direct, 0, 1, 200, Date.now()); // the handshake to the missing leader took its time
    w.routeOutcome(rpcOnly, ROUTE_IDS.rpc, 0, 0, -1, Date.now());
    ts.file(6_000);
    expect(events.filter(([, e]) => e === 'skipped')).toEqual([[late, 'skipped']]);
    expect(t.toJson(late).targetSkipped).toEqual({ slot: 200, at: 6_000 });
  });

  it('work per skipped slot: the receipts that targeted it (the rest stay indexed under their own slots)', () => {
    const { t, w, ts } = setup();
    for (let i = 0; i < 60; i++) {
      const seq = t.accept(sig(100 + i), 1, DIRECT_MASK, 'r', Date.now(), 300);
      w.routeOutcome(seq, ROUTE_IDS.direct, 0, 1, 300 + (i % 6), Date.now());
    }
    ts.file(Date.now());
    expect(ts.indexed).toBe(60);
    ts.onSkipped(302, Date.now());
    expect(ts.told).toBe(10);
    expect(ts.indexed).toBe(50);
  });
});
