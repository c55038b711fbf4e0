// The receipt table's bounds and ownership rules (front-thread module; egress writes through the shared buffer).
import { describe, expect, it } from 'vitest';
import { ReceiptWriter } from '../../../src/egress/contract/receipt-writer.js';
import { LANDING, ReceiptTable } from '../../../src/receipts/receipt-table.js';
import { EGRESS_OUTCOMES, ROUTE_IDS } from '../../../src/shm/layout.js';

function sig(i: number): string {
  return `S${i.toString().padStart(87, '1')}`;
}

describe('receipt table', () => {
  it("the writer's SENT index is the layout's", () => {
    expect(EGRESS_OUTCOMES[0]).toBe('sent');
  });

  it('holds at most `capacity` receipts through 100,000 acceptances; overwritten ones are gone, the newest are found', () => {
    const t = new ReceiptTable({ capacity: 1024, ttlMs: 60_000 });
    const now = Date.now();
    const seqs: number[] = [];
    for (let i = 0; i < 100_000; i++) seqs.push(t.accept(sig(i), 1, 1, `r${i}`, now, 100));
    expect(t.size).toBe(1024);
    expect(t.find(sig(0), 1, now)).toBe(-1);
    expect(t.find(sig(100_000 - 1024 - 1), 1, now)).toBe(-1);
    expect(t.find(sig(100_000 - 1024), 1, now)).toBe(seqs[100_000 - 1024]);
    expect(t.find(sig(99_999), 1, now)).toBe(seqs[99_999]);
  });

  it('another key, an expired receipt and an unknown signature are not found', () => {
    const t = new ReceiptTable({ capacity: 1024, ttlMs: 1_000 });
    const seq = t.accept(sig(1), 3, 1, 'r', 10_000, 5);
    expect(t.find(sig(1), 3, 10_500)).toBe(seq);
    expect(t.find(sig(1), 4, 10_500)).toBe(-1);
    expect(t.find(sig(1), 3, 11_001)).toBe(-1);
    expect(t.find(sig(2), 3, 10_500)).toBe(-1);
  });

  it('a worker writes outcomes only into the receipt its record carries, never into a newer one in the same entry', () => {
    const t = new ReceiptTable({ capacity: 1024, ttlMs: 60_000 });
    const w = new ReceiptWriter(t.sab);
    const old = t.accept(sig(1), 0, 1 << ROUTE_IDS.direct, 'a', 1, 10);
    for (let i = 0; i < 1024; i++) t.accept(sig(100 + i), 0, 1 << ROUTE_IDS.direct, 'b', 1, 10); // wraps over `old`
    const fresh = t.find(sig(100 + 1023), 0, 2);
    w.routeOutcome(old, ROUTE_IDS.direct, EGRESS_OUTCOMES.indexOf('sent'), 2, 11, 5);
    expect(t.toJson(fresh).routes.direct.outcome).toBe('pending');
    w.routeOutcome(fresh, ROUTE_IDS.direct, EGRESS_OUTCOMES.indexOf('dropped:stale'), 1, 12, 6);
    w.rebroadcastOutcome(fresh, ROUTE_IDS.direct, EGRESS_OUTCOMES.indexOf('sent'), 2, 14, 900);
    w.rebroadcast(fresh);
    const r = t.toJson(fresh);
    expect(r.routes.direct).toEqual({ outcome: 'sent', firstSentAt: 900, targets: 2, leaderSlot: 14 });
    expect(r.rebroadcasts).toBe(1);
    t.setLanded(fresh, { slot: 15, err: null, confirmationStatus: 'confirmed', observedAtMs: 1_000, leader: 'L', execution: 'executed', executionSource: 'status' });
    expect(t.toJson(fresh)).toMatchObject({ status: 'landed', landed: { slot: 15, slotsToLand: 5, msToLand: 999, firstRoute: 'direct', leader: 'L' } });
    expect(t.landingState(fresh)).toBe(LANDING.landed);
  });
});
