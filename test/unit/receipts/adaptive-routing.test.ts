// The adaptive routing's decisions on a real receipt table (src/receipts/adaptive-routing.ts), without a localnet:
// route outcomes written the way the egress side writes them (ReceiptWriter), a fixed leader schedule, the key table.
// A leader whose direct sends go stale for lack of stream credit parks the relay: its slots are widened (the widen
// table) and get rpc, which the key allows, never jito, which it does not; a receipt is read once its routes answered.
import { describe, expect, it } from 'vitest';
import { AdaptiveRouting, RELEASE_MARGIN } from '../../../src/receipts/adaptive-routing.js';
import { ReceiptTable } from '../../../src/receipts/receipt-table.js';
import { ReceiptWriter } from '../../../src/egress/contract/receipt-writer.js';
import { KeyTable, routeMask } from '../../../src/admission/key-table.js';
import { keySchema } from '../../../src/config/schema.js';
import { routingSchema } from '../../../src/config/routing-schema.js';
import { EGRESS_OUTCOMES, ROUTE_IDS } from '../../../src/shm/layout.js';
import { CAUSE } from '../../../src/shm/receipts-layout.js';
import { createWidenBuffer, WidenReader } from '../../../src/shm/widen-layout.js';
import type { LeaderInfo, LeaderSource } from '../../../src/telemetry/leader-source.js';

const A = 'LeaderAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const B = 'LeaderBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';
const STALE = EGRESS_OUTCOMES.indexOf('dropped:stale');
const SENT = EGRESS_OUTCOMES.indexOf('sent');
const FAILED = EGRESS_OUTCOMES.indexOf('failed');
const DIRECT = routeMask(['direct']);

/** Slots 0..3 led by A, 4..7 by B, repeating; the current slot is set by the test. */
class Schedule implements LeaderSource {
  slot = 0;
  currentSlot(): number {
    return this.slot;
  }
  leaderAt(slot: number): LeaderInfo | undefined {
    return { identity: Math.floor(slot / 4) % 2 === 0 ? A : B, tpuQuic: '127.0.0.1:1', stake: 1 };
  }
  ageMs(): number {
    return 0;
  }
}

function setup(policy: Record<string, unknown> = { widenWithPartners: true }, runs: readonly ('rpc' | 'direct' | 'jito')[] = ['rpc', 'direct', 'jito']) {
  const table = new ReceiptTable({ capacity: 1024, ttlMs: 60_000 });
  const writer = new ReceiptWriter(table.sab);
  const leaders = new Schedule();
  // Key 0 allows direct and rpc; key 1 direct, rpc and jito.
  const keys = new KeyTable(
    [
      keySchema.parse({ key: '6f1c2a4e-9b7d-4c3a-8e21-5d0f4b6a7c19', name: 'k', allowedRoutes: ['direct', 'rpc'] }),
      keySchema.parse({ key: '0b7e5d3c-1a2f-4e6d-9c8b-7a6f5e4d3c2b', name: 'all', allowedRoutes: ['direct', 'rpc', 'jito'] }),
    ],
    ['direct'],
    0,
  );
  const widen = createWidenBuffer();
  const config = routingSchema.parse({ adaptive: { enabled: true, minEvidence: 4, halfLifeMs: 10_000, judgeAfterMs: 60_000, ...policy } }).adaptive;
  // The relay runs rpc, direct and jito unless the test says otherwise.
  const available = routeMask([...runs]);
  const adaptive = new AdaptiveRouting({ config, table, leaders, keys, available, widen, judgeAfterMs: config.judgeAfterMs });
  return { table, writer, leaders, adaptive, widen };
}

/** Six direct sends aimed at A that went stale for stream credit: enough to park the relay at A. */
function parkAtA(table: ReceiptTable, writer: ReceiptWriter, now: number): void {
  for (let i = 0; i < 6; i++) {
    const seq = table.accept(`sig${i}`, 0, DIRECT, `r${i}`, now, 1);
    writer.routeCause(seq, ROUTE_IDS.direct, CAUSE.no_stream_credit, 0);
    writer.routeOutcome(seq, ROUTE_IDS.direct, STALE, 0, 1, now);
  }
}

describe('adaptive routing decisions', () => {
  it('parks a leader whose direct sends go stale for stream credit: widen its slots, add rpc (allowed), never jito (not)', () => {
    const { table, writer, leaders, adaptive, widen } = setup();
    const now = Date.now();
    for (let i = 0; i < 6; i++) {
      const seq = table.accept(`sig${i}`, 0, DIRECT, `r${i}`, now, 1);
      writer.routeCause(seq, ROUTE_IDS.direct, CAUSE.no_stream_credit, 0);
      writer.routeOutcome(seq, ROUTE_IDS.direct, STALE, 0, 1, now);
    }
    adaptive.tick(now + 10);
    // Read once however many passes: 6 bad, not 6 per pass.
    adaptive.tick(now + 20);
    expect(adaptive.scoreboard.score(A, ROUTE_IDS.direct, now + 20).bad).toBeCloseTo(6, 1);
    expect(adaptive.status().parkedLeaders.map((l) => l.leader)).toEqual([A]);
    // The widen table: A's slots ahead get maxExtraCopies (2), B's none.
    const w = new WidenReader(widen);
    expect(w.extraFor(1)).toBe(2);
    expect(w.extraFor(5)).toBe(0);
    expect(w.extraFor(8)).toBe(2);
    // Intake in A's slot: direct + rpc; jito, which the relay runs, is not added (the key does not allow it).
    leaders.slot = 2;
    expect(adaptive.adjust(0, DIRECT)).toBe(DIRECT | routeMask(['rpc']));
    const seq = table.accept('sigX', 0, DIRECT | routeMask(['rpc']), 'rX', now, 2);
    adaptive.filed(seq);
    expect(table.toJson(seq).adaptive).toEqual({ leader: A, decisions: ['widen', 'add_route'], extraCopies: 2, addedRoutes: ['rpc'] });
    // In B's slot nothing changes, and the receipt says nothing.
    leaders.slot = 5;
    expect(adaptive.adjust(0, DIRECT)).toBe(DIRECT);
    const other = table.accept('sigY', 0, DIRECT, 'rY', now, 5);
    adaptive.filed(other);
    expect(table.toJson(other).adaptive).toBeNull();
    // A transaction without the direct route is left as it is.
    leaders.slot = 2;
    expect(adaptive.adjust(0, routeMask(['rpc']))).toBe(routeMask(['rpc']));
  });

  it('waits for every route of a receipt before reading it, and a sent direct is no evidence', () => {
    const { table, writer, adaptive } = setup();
    const now = Date.now();
    const both = DIRECT | routeMask(['rpc']);
    const seqs: number[] = [];
    for (let i = 0; i < 4; i++) {
      const seq = table.accept(`sig${i}`, 0, both, `r${i}`, now, 1);
      writer.routeCause(seq, ROUTE_IDS.direct, CAUSE.refused, 4);
      writer.routeOutcome(seq, ROUTE_IDS.direct, STALE, 0, 1, now);
      seqs.push(seq);
    }
    const sent = table.accept('sent', 0, DIRECT, 'rs', now, 1);
    writer.routeOutcome(sent, ROUTE_IDS.direct, SENT, 1, 1, now);
    for (let k = 0; k < 5; k++) adaptive.tick(now + k);
    expect(adaptive.scoreboard.score(A, ROUTE_IDS.direct, now).bad).toBe(0); // rpc still pending
    for (const seq of seqs) writer.routeOutcome(seq, ROUTE_IDS.rpc, SENT, 0, -1, now);
    for (let k = 0; k < 5; k++) adaptive.tick(now + 10 + k);
    expect(adaptive.scoreboard.score(A, ROUTE_IDS.direct, now + 14).bad).toBeCloseTo(4, 1);
    expect(adaptive.scoreboard.score(A, ROUTE_IDS.direct, now + 14).good).toBe(0);
  });

  it('by default does not widen where a partner route is added, and widens where the relay runs no partner', () => {
    const withPartner = setup({});
    const now = Date.now();
    parkAtA(withPartner.table, withPartner.writer, now);
    withPartner.adaptive.tick(now + 10);
    expect(withPartner.adaptive.status().parkedLeaders.map((l) => l.leader)).toEqual([A]);
    expect(new WidenReader(withPartner.widen).extraFor(1)).toBe(0);
    withPartner.leaders.slot = 2;
    expect(withPartner.adaptive.adjust(0, DIRECT)).toBe(DIRECT | routeMask(['rpc']));
    const seq = withPartner.table.accept('sigX', 0, DIRECT | routeMask(['rpc']), 'rX', now, 2);
    withPartner.adaptive.filed(seq);
    expect(withPartner.table.toJson(seq).adaptive).toEqual({ leader: A, decisions: ['add_route'], extraCopies: 0, addedRoutes: ['rpc'] });

    const alone = setup({}, ['direct']);
    parkAtA(alone.table, alone.writer, now);
    alone.adaptive.tick(now + 10);
    expect(new WidenReader(alone.widen).extraFor(1)).toBe(2);
    alone.leaders.slot = 2;
    expect(alone.adaptive.adjust(0, DIRECT)).toBe(DIRECT);
    const s2 = alone.table.accept('sigZ', 0, DIRECT, 'rZ', now, 2);
    alone.adaptive.filed(s2);
    expect(alone.table.toJson(s2).adaptive).toEqual({ leader: A, decisions: ['widen'], extraCopies: 2, addedRoutes: [] });
  });

  it('treats marginSlots slots before and after a parking leader\'s window as its own', () => {
    const { table, writer, leaders, adaptive } = setup({});
    const now = Date.now();
    parkAtA(table, writer, now);
    adaptive.tick(now + 10);
    const rpc = DIRECT | routeMask(['rpc']);
    // A leads 0..3 and 8..11; B 4..7. marginSlots 1 (default): 7 (before A's window) and 4 (just after) get rpc.
    leaders.slot = 7;
    expect(adaptive.adjust(0, DIRECT)).toBe(rpc);
    const before = table.accept('sigB', 0, rpc, 'rB', now, 7);
    adaptive.filed(before);
    expect(table.toJson(before).adaptive).toMatchObject({ leader: A, decisions: ['add_route'] });
    leaders.slot = 4;
    expect(adaptive.adjust(0, DIRECT)).toBe(rpc);
    leaders.slot = 5;
    expect(adaptive.adjust(0, DIRECT)).toBe(DIRECT);
    leaders.slot = 6;
    expect(adaptive.adjust(0, DIRECT)).toBe(DIRECT);

    const strict = setup({ marginSlots: 0 });
    parkAtA(strict.table, strict.writer, now);
    strict.adaptive.tick(now + 10);
    for (const slot of [4, 7]) {
      strict.leaders.slot = slot;
      expect(strict.adaptive.adjust(0, DIRECT)).toBe(DIRECT);
    }
    strict.leaders.slot = 8;
    expect(strict.adaptive.adjust(0, DIRECT)).toBe(rpc);
  });

  it('adds at most maxPartners partner routes, the request\'s own counted, the best at that leader first', () => {
    const now = Date.now();
    const rpc = routeMask(['rpc']);
    const jito = routeMask(['jito']);
    const one = setup({});
    parkAtA(one.table, one.writer, now);
    one.adaptive.tick(now + 10);
    one.leaders.slot = 2;
    // Key 1 allows both: maxPartners 1 (default) adds the first of `partners` (both unknown at A): rpc.
    expect(one.adaptive.adjust(1, DIRECT)).toBe(DIRECT | rpc);
    // A request that already names rpc has its partner: jito is not added.
    expect(one.adaptive.adjust(1, DIRECT | rpc)).toBe(DIRECT | rpc);

    const two = setup({ maxPartners: 2 });
    parkAtA(two.table, two.writer, now);
    two.adaptive.tick(now + 10);
    two.leaders.slot = 2;
    expect(two.adaptive.adjust(1, DIRECT)).toBe(DIRECT | rpc | jito);

    // rpc failing at A (its share below parkedBelow): jito is the partner for key 1, none for key 0.
    const failing = setup({});
    for (let i = 0; i < 6; i++) {
      const seq = failing.table.accept(`f${i}`, 0, DIRECT | rpc, `f${i}`, now, 1);
      failing.writer.routeCause(seq, ROUTE_IDS.direct, CAUSE.no_stream_credit, 0);
      failing.writer.routeOutcome(seq, ROUTE_IDS.direct, STALE, 0, 1, now);
      failing.writer.routeOutcome(seq, ROUTE_IDS.rpc, FAILED, 0, -1, now);
    }
    failing.adaptive.tick(now + 10);
    failing.leaders.slot = 2;
    expect(failing.adaptive.adjust(1, DIRECT)).toBe(DIRECT | jito);
    expect(failing.adaptive.adjust(0, DIRECT)).toBe(DIRECT);
    expect(failing.adaptive.verdictFor(A)).toMatchObject({ parked: true, addRoutes: ['jito'] });
  });

  it('releases a parking leader only above parkedBelow + RELEASE_MARGIN (hysteresis)', () => {
    const { table, writer, adaptive } = setup({});
    const now = Date.now();
    parkAtA(table, writer, now); // 6 bad at A
    adaptive.tick(now + 10);
    expect(adaptive.parkedCount).toBe(1);
    // 7 good: share 7/13 = 0.54, above parkedBelow (0.5) but below 0.5 + RELEASE_MARGIN: still parked.
    adaptive.scoreboard.note(A, ROUTE_IDS.direct, true, 7, now + 10);
    adaptive.tick(now + 20);
    expect(RELEASE_MARGIN).toBe(0.1);
    expect(adaptive.parkedCount).toBe(1);
    // 3 more: 10/16 = 0.625: released.
    adaptive.scoreboard.note(A, ROUTE_IDS.direct, true, 3, now + 20);
    adaptive.tick(now + 30);
    expect(adaptive.parkedCount).toBe(0);
    // A leader not parked yet is parked below parkedBelow only: 0.54 does not park it again.
    adaptive.scoreboard.note(A, ROUTE_IDS.direct, false, 2.5, now + 30); // 10 / 18.5 = 0.54
    adaptive.tick(now + 40);
    expect(adaptive.parkedCount).toBe(0);
  });
});
