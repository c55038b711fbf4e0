// The QUIC ingress's local dispatch as a set-up of the record handler (src/egress/consumer/local-dispatch.ts,
// src/egress/contract/send-record.ts): more transactions in flight than its first slot table holds, answered out of
// order by a route that holds them, each gets its outcome counted, its receipt-bound cause and targets, and its `done`
// exactly once; the counters sum like a ring record's.
import { describe, expect, it } from 'vitest';
import { localDispatcher } from '../../../src/egress/consumer/local-dispatch.js';
import { RecordLogs } from '../../../src/egress/contract/record-logs.js';
import type { RecordObservers } from '../../../src/egress/contract/send-record.js';
import { sendResult, type EgressRoute, type RouteAnswer, type TxView } from '../../../src/egress/contract/route.js';
import { createLogger } from '../../../src/log/logger.js';
import { createWorkerCounters, workerCounterRegion } from '../../../src/metrics/worker-counters.js';
import { EGRESS_OUTCOMES, ROUTE_IDS, WORKER_COUNTER, egressCounterIndex, type EgressOutcome } from '../../../src/shm/layout.js';

const N = 200; // > 64 (the first local slot table) and > 128: the table grows twice while all are in flight

/** A route that holds every send until released, then answers `sent` for even first bytes, else a failure with a cause. */
class HeldRoute implements EgressRoute {
  readonly id = ROUTE_IDS.rpc;
  readonly name = 'rpc' as const;
  readonly held: { n: number; answer: (a: RouteAnswer) => void }[] = [];
  send(tx: TxView): Promise<RouteAnswer> {
    const n = tx.bytes[0] | (tx.bytes[1] << 8);
    return new Promise((answer) => this.held.push({ n, answer }));
  }
  releaseAll(): void {
    // Out of order: last first.
    for (const h of this.held.reverse()) h.answer(h.n % 2 === 0 ? 'sent' : sendResult('failed', 0, -1, 3, 500));
  }
  async close(): Promise<void> {}
}

/** A route answering synchronously with targets (a QUIC route's reused result). */
class TargetsRoute implements EgressRoute {
  readonly id = ROUTE_IDS.direct;
  readonly name = 'direct' as const;
  private readonly out = { ...sendResult('sent') };
  send(): RouteAnswer {
    this.out.targets = 2;
    this.out.targetSlot = 77;
    return this.out;
  }
  async close(): Promise<void> {}
}

describe('local dispatch (record handler over local slots)', () => {
  it('200 in flight at once: every transaction is counted once per route and done once, after its last answer', () => {
    const counters = workerCounterRegion(createWorkerCounters(1), 0);
    const held = new HeldRoute();
    const outcomes: { routeId: number; idx: number; targets: number; targetSlot: number }[] = [];
    const causes: { routeId: number; cause: number; code: number }[] = [];
    const receipts = {
      routeOutcome: (_seq: number, routeId: number, idx: number, targets: number, targetSlot: number) => outcomes.push({ routeId, idx, targets, targetSlot }),
      routeCause: (_seq: number, routeId: number, cause: number, code: number) => causes.push({ routeId, cause, code }),
    };
    const observers: RecordObservers = {
      counters,
      latency: { record: () => undefined },
      receipts: receipts as unknown as RecordObservers['receipts'],
      retry: null,
      logs: new RecordLogs(createLogger('silent', 'test')),
    };
    const routes = [held, new TargetsRoute(), null, null];
    const { dispatch } = localDispatcher({ ownMask: -1, routes, observers, beforeEach: () => undefined });
    const sab = new SharedArrayBuffer(N * 4);
    const bytes = Buffer.from(sab);
    const done = new Array<number>(N).fill(0);
    const mask = (1 << ROUTE_IDS.rpc) | (1 << ROUTE_IDS.direct) | (1 << ROUTE_IDS.jito);
    for (let n = 0; n < N; n++) {
      bytes.writeUInt16LE(n, n * 4);
      dispatch(sab, n * 4, 4, 0, mask, performance.timeOrigin + performance.now(), `t${n}`, n + 1, () => done[n]++);
    }
    expect(held.held).toHaveLength(N);
    expect(done.every((d) => d === 0)).toBe(true); // rpc has not answered: nothing is released
    held.releaseAll();
    return new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      expect(done.every((d) => d === 1)).toBe(true);
      const count = (route: number, o: EgressOutcome) => counters[egressCounterIndex(route, EGRESS_OUTCOMES.indexOf(o))];
      expect(counters[WORKER_COUNTER.consumed]).toBe(N);
      expect(counters[WORKER_COUNTER.released]).toBe(N);
      expect(counters[WORKER_COUNTER.undelivered]).toBe(0); // direct sent every one
      expect(count(ROUTE_IDS.rpc, 'sent')).toBe(N / 2);
      expect(count(ROUTE_IDS.rpc, 'failed')).toBe(N / 2);
      expect(count(ROUTE_IDS.direct, 'sent')).toBe(N);
      expect(count(ROUTE_IDS.jito, 'dropped:route_unavailable')).toBe(N);
      // The answers' values reached the receipt: the direct route's targets, the rpc failures' cause and code.
      expect(outcomes.filter((o) => o.routeId === ROUTE_IDS.direct).every((o) => o.targets === 2 && o.targetSlot === 77)).toBe(true);
      expect(causes).toHaveLength(N / 2);
      expect(causes.every((c) => c.routeId === ROUTE_IDS.rpc && c.cause === 3 && c.code === 500)).toBe(true);
    });
  });
});
