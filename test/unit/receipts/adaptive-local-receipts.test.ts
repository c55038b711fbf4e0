// The adaptive routing's scans and a receipt the QUIC thread admitted locally (src/ingress/local-admission.ts): the
// thread reserves and claims the shared entry, the direct route writes its outcome, and only then does the front file
// the receipt's own half (route mask, acceptance time) from the thread's note. A scan in between must not read the
// entry's previous occupant's half: here the previous occupant went by rpc alone, long ago, so reading its mask would
// skip the local receipt's direct failures for good. The scan waits for the note instead, and learns from them.
import { describe, expect, it } from 'vitest';
import { AdaptiveRouting } from '../../../src/receipts/adaptive-routing.js';
import { ReceiptTable } from '../../../src/receipts/receipt-table.js';
import { ReceiptWriter } from '../../../src/egress/contract/receipt-writer.js';
import { KeyTable, routeMask } from '../../../src/admission/key-table.js';
import { keySchema } from '../../../src/config/schema.js';
import { routingSchema } from '../../../src/config/routing-schema.js';
import { EGRESS_OUTCOMES, ROUTE_IDS } from '../../../src/shm/layout.js';
import { CAUSE, claimReceipt, receiptViews, reserveReceiptSeq } from '../../../src/shm/receipts-layout.js';
import { createWidenBuffer } from '../../../src/shm/widen-layout.js';
import type { LeaderInfo, LeaderSource } from '../../../src/telemetry/leader-source.js';

const A = 'LeaderAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const STALE = EGRESS_OUTCOMES.indexOf('dropped:stale');
const SENT = EGRESS_OUTCOMES.indexOf('sent');
const DIRECT = routeMask(['direct']);
const RPC = routeMask(['rpc']);

const oneLeader: LeaderSource = {
  currentSlot: () => 1,
  leaderAt: (): LeaderInfo => ({ identity: A, tpuQuic: '127.0.0.1:1', stake: 1 }),
  ageMs: () => 0,
};

describe('adaptive routing and locally admitted receipts', () => {
  it("waits for a local receipt's note before reading it, so its direct failures are not read under the previous occupant's mask", () => {
    const table = new ReceiptTable({ capacity: 8, ttlMs: 600_000 });
    const writer = new ReceiptWriter(table.sab);
    const now = Date.now();
    // Eight receipts by rpc alone, a minute ago, all sent: every entry's front half says "rpc, long ago".
    for (let i = 0; i < 8; i++) {
      const seq = table.accept(`old${i}`, 0, RPC, `o${i}`, now - 60_000, 1);
      writer.routeOutcome(seq, ROUTE_IDS.rpc, SENT, 1, -1, now - 60_000);
    }
    const keys = new KeyTable([keySchema.parse({ key: '6f1c2a4e-9b7d-4c3a-8e21-5d0f4b6a7c19', name: 'k', allowedRoutes: ['direct', 'rpc'] })], ['direct'], 0);
    const config = routingSchema.parse({ adaptive: { enabled: true, minEvidence: 4, halfLifeMs: 10_000, judgeAfterMs: 60_000 } }).adaptive;
    const adaptive = new AdaptiveRouting({ config, table, leaders: oneLeader, keys, available: routeMask(['rpc', 'direct']), widen: createWidenBuffer(), judgeAfterMs: config.judgeAfterMs });
    // The QUIC thread admits six, as local-admission.ts does: reserve, claim, send; the direct sends go stale for
    // lack of stream credit. Their notes have not reached the front yet.
    const v = receiptViews(table.sab);
    const local: number[] = [];
    for (let i = 0; i < 6; i++) {
      const seq = reserveReceiptSeq(v);
      claimReceipt(v, seq);
      writer.routeCause(seq, ROUTE_IDS.direct, CAUSE.no_stream_credit, 0);
      writer.routeOutcome(seq, ROUTE_IDS.direct, STALE, 0, 1, now);
      local.push(seq);
    }
    adaptive.tick(now + 10);
    expect(adaptive.scoreboard.score(A, ROUTE_IDS.direct, now + 10).bad).toBe(0);
    // The notes arrive: the front files each receipt's half.
    for (const [i, seq] of local.entries()) table.acceptReserved(seq, `local${i}`, 0, DIRECT, `l${i}`, now, 1);
    adaptive.tick(now + 20);
    expect(adaptive.scoreboard.score(A, ROUTE_IDS.direct, now + 20).bad).toBeCloseTo(6, 1);
    expect(adaptive.status().parkedLeaders.map((l) => l.leader)).toEqual([A]);
  });

  it('passes a claimed receipt whose note never comes after the outcome wait (5 s), and reads the ones after it', () => {
    const table = new ReceiptTable({ capacity: 16, ttlMs: 600_000 });
    const writer = new ReceiptWriter(table.sab);
    const now = Date.now();
    const keys = new KeyTable([keySchema.parse({ key: '6f1c2a4e-9b7d-4c3a-8e21-5d0f4b6a7c19', name: 'k', allowedRoutes: ['direct', 'rpc'] })], ['direct'], 0);
    const config = routingSchema.parse({ adaptive: { enabled: true, minEvidence: 4, halfLifeMs: 60_000, judgeAfterMs: 60_000 } }).adaptive;
    const adaptive = new AdaptiveRouting({ config, table, leaders: oneLeader, keys, available: routeMask(['rpc', 'direct']), widen: createWidenBuffer(), judgeAfterMs: config.judgeAfterMs });
    const v = receiptViews(table.sab);
    claimReceipt(v, reserveReceiptSeq(v)); // a thread that ended before its note went out
    for (let i = 0; i < 5; i++) {
      const seq = table.accept(`sig${i}`, 0, DIRECT, `r${i}`, now, 1);
      writer.routeCause(seq, ROUTE_IDS.direct, CAUSE.no_stream_credit, 0);
      writer.routeOutcome(seq, ROUTE_IDS.direct, STALE, 0, 1, now);
    }
    adaptive.tick(now + 10);
    expect(adaptive.scoreboard.score(A, ROUTE_IDS.direct, now + 10).bad).toBe(0);
    adaptive.tick(now + 5_100);
    expect(adaptive.scoreboard.score(A, ROUTE_IDS.direct, now + 5_100).bad).toBeGreaterThan(4.5);
  });
});
