// The receipts' failures as the status page reads them (ReceiptTable.recentFailures): route failures newest first,
// sent and discarded ones left out, the scan floor following the oldest receipt still pending, not-landed ones listed.
import { describe, expect, it } from 'vitest';
import { ReceiptWriter } from '../../../src/egress/contract/receipt-writer.js';
import { LANDING, ReceiptTable } from '../../../src/receipts/receipt-table.js';
import { EGRESS_OUTCOMES, ROUTE_IDS } from '../../../src/shm/layout.js';

const sig = (i: number): string => `S${i.toString().padStart(87, '1')}`;
const out = (o: string): number => EGRESS_OUTCOMES.indexOf(o as (typeof EGRESS_OUTCOMES)[number]);
const RPC_DIRECT = (1 << ROUTE_IDS.rpc) | (1 << ROUTE_IDS.direct);

describe('receipt failures for the status page', () => {
  it('lists failed and dropped routes with the trace id, newest first; sent and discarded are not failures', () => {
    const t = new ReceiptTable({ capacity: 1024, ttlMs: 60_000 });
    const w = new ReceiptWriter(t.sab);
    const a = t.accept(sig(1), 2, RPC_DIRECT, 'trace-a', 1_000, 5);
    const b = t.accept(sig(2), 2, RPC_DIRECT, 'trace-b', 1_001, 5);
    const c = t.accept(sig(3), 2, RPC_DIRECT, 'trace-c', 1_002, 5);
    w.routeOutcome(a, ROUTE_IDS.rpc, out('failed'), 0, -1, 1);
    w.routeOutcome(a, ROUTE_IDS.direct, out('sent'), 1, 7, 1);
    w.routeOutcome(b, ROUTE_IDS.rpc, out('sent'), 0, -1, 1);
    w.routeOutcome(b, ROUTE_IDS.direct, out('dropped:discarded'), 0, -1, 1);
    w.routeOutcome(c, ROUTE_IDS.rpc, out('sent'), 0, -1, 1);
    w.routeOutcome(c, ROUTE_IDS.direct, out('dropped:no_leader'), 0, -1, 1);
    const r = t.recentFailures(0, 32_768, 20);
    expect(r.failures.map((f) => [f.traceId, f.outcomes, f.keyId, f.signature])).toEqual([
      ['trace-c', { direct: 'dropped:no_leader' }, 2, sig(3)],
      ['trace-a', { rpc: 'failed' }, 2, sig(1)],
    ]);
    // Nothing pending: the next scan starts after the newest receipt.
    expect(r.floor).toBe(c + 1);
    expect(t.recentFailures(0, 32_768, 1).failures).toHaveLength(1);
  });

  it('keeps its floor at the oldest receipt with a route pending, and finds its failure once written', () => {
    const t = new ReceiptTable({ capacity: 1024, ttlMs: 60_000 });
    const w = new ReceiptWriter(t.sab);
    const a = t.accept(sig(1), 0, 1 << ROUTE_IDS.rpc, 'trace-a', 1, 5);
    const b = t.accept(sig(2), 0, 1 << ROUTE_IDS.rpc, 'trace-b', 1, 5);
    w.routeOutcome(b, ROUTE_IDS.rpc, out('sent'), 0, -1, 1);
    const first = t.recentFailures(0, 32_768, 20);
    expect(first).toEqual({ failures: [], floor: a });
    w.routeOutcome(a, ROUTE_IDS.rpc, out('failed'), 0, -1, 2);
    const second = t.recentFailures(first.floor, 32_768, 20);
    expect(second.failures.map((f) => f.traceId)).toEqual(['trace-a']);
    expect(second.floor).toBe(b + 1);
    // Below the floor nothing is read again.
    expect(t.recentFailures(second.floor, 32_768, 20).failures).toEqual([]);
  });

  it('lists the receipts the landing tracker gave up on, with how their routes ended', () => {
    const t = new ReceiptTable({ capacity: 1024, ttlMs: 60_000 });
    const w = new ReceiptWriter(t.sab);
    const a = t.accept(sig(1), 0, 1 << ROUTE_IDS.rpc, 'trace-a', 1, 5);
    w.routeOutcome(a, ROUTE_IDS.rpc, out('sent'), 0, -1, 1);
    t.setLandingState(a, LANDING.notLanded);
    const r = t.recentFailures(a + 1, 32_768, 20);
    expect(r.failures).toEqual([{ seq: a, signature: sig(1), traceId: 'trace-a', keyId: 0, acceptedAtMs: 1, outcomes: { rpc: 'sent' }, notLanded: true }]);
  });
});
