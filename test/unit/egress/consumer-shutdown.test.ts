// A stop that finds records still in the ring (issue #18 defect 5): records in flight on a route that never answers,
// and records published but never taken. Each requested route of each gets exactly one outcome (dropped:shutdown;
// dropped:route_unavailable for a route this relay lacks), the records are counted (consumed, undelivered,
// shutdown), and the log gets the first SHUTDOWN_LOG_RECORDS records one line each with their trace ids, then one
// summary line with the count per route and outcome.
import { pino, type Logger } from 'pino';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runEgressConsumer } from '../../../src/egress/consumer/consumer-loop.js';
import type { EgressOutcome, EgressRoute, TxView } from '../../../src/egress/contract/route.js';
import { SHUTDOWN_LOG_RECORDS } from '../../../src/egress/consumer/shutdown-report.js';
import { configSchema } from '../../../src/config/schema.js';
import { createWorkerCounters, workerCounterRegion } from '../../../src/metrics/worker-counters.js';
import { EGRESS_OUTCOMES, ROUTE_IDS, WORKER_COUNTER, egressCounterIndex } from '../../../src/shm/layout.js';
import { createRing, requestStop, RingProducer } from '../../../src/shm/ring.js';
import { until } from '../../helpers/wait-for.js';

const config = configSchema.parse({ rings: { workers: 1, slotsPerRing: 256 }, log: { level: 'info' } });
const RPC = 1 << ROUTE_IDS.rpc;
const JITO = 1 << ROUTE_IDS.jito;

function capturingLog(): { log: Logger; lines: Record<string, any>[] } {
  const lines: Record<string, any>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      // The start's one line (the ring wait policy) is not the stop's business.
      for (const l of chunk.toString('utf8').split('\n')) if (l !== '' && !l.includes('ring wait policy')) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines };
}

/** An rpc route that never answers, not even when closed (a hung send). */
class HungRoute implements EgressRoute {
  readonly id = ROUTE_IDS.rpc;
  readonly name = 'rpc' as const;
  sends = 0;
  send(_tx: TxView): Promise<EgressOutcome> {
    this.sends++;
    return new Promise(() => undefined);
  }
  async close(): Promise<void> {}
}

function publish(p: RingProducer, n: number, mask: number): void {
  const off = p.reserve();
  if (off < 0) throw new Error('ring full');
  p.bytes.writeUInt32LE(n, off);
  p.publish(4, 0, mask, 0, performance.timeOrigin + performance.now(), `req-${n}`);
}

describe('egress consumer loop: a stop with records left in the ring', () => {
  it('in flight and never taken: each route gets one outcome, every record is counted and logged (bounded)', async () => {
    const ring = createRing(256, 1232);
    const counters = createWorkerCounters(1);
    const p = new RingProducer(ring);
    const rpc = new HungRoute();
    const { log, lines } = capturingLog();
    const loop = runEgressConsumer({ ringIndex: 0, ring, counters, config, attempt: 0 }, { routes: [rpc, null, null, null], log, retry: null });
    // 60 records taken and stuck in flight on the hung route (half of them also ask for jito, which this relay lacks) ...
    for (let n = 0; n < 60; n++) publish(p, n, n % 2 === 0 ? RPC | JITO : RPC);
    await until(() => rpc.sends === 60);
    // ... and 90 published as the stop comes: the consumer stops before it takes them.
    requestStop(ring);
    for (let n = 60; n < 150; n++) publish(p, n, RPC);
    await loop;

    const c = workerCounterRegion(counters, 0);
    const count = (route: number, o: EgressOutcome) => c[egressCounterIndex(route, EGRESS_OUTCOMES.indexOf(o))];
    expect(c[WORKER_COUNTER.consumed]).toBe(150);
    expect(c[WORKER_COUNTER.released]).toBe(0);
    expect(c[WORKER_COUNTER.shutdown]).toBe(150);
    expect(c[WORKER_COUNTER.undelivered]).toBe(150);
    // Exactly one outcome per (record, requested route).
    expect(count(ROUTE_IDS.rpc, 'dropped:shutdown')).toBe(150);
    expect(count(ROUTE_IDS.jito, 'dropped:route_unavailable')).toBe(30);
    let total = 0;
    for (let o = 0; o < EGRESS_OUTCOMES.length; o++) total += c[egressCounterIndex(ROUTE_IDS.rpc, o)];
    expect(total).toBe(150);

    const records = lines.filter((l) => l.event === 'shutdown_undelivered');
    expect(records).toHaveLength(SHUTDOWN_LOG_RECORDS);
    expect(records[0]).toMatchObject({ traceId: 'req-0', keyId: 0, delivered: false, outcomes: { rpc: 'dropped:shutdown', jito: 'dropped:route_unavailable' } });
    expect(new Set(records.map((r) => r.traceId)).size).toBe(SHUTDOWN_LOG_RECORDS);
    const summary = lines.filter((l) => l.event === 'shutdown_undelivered_summary');
    expect(summary).toHaveLength(1);
    expect(summary[0]).toMatchObject({
      records: 150,
      undelivered: 150,
      logged: SHUTDOWN_LOG_RECORDS,
      byRoute: { rpc: { 'dropped:shutdown': 150 }, jito: { 'dropped:route_unavailable': 30 } },
    });
    expect(lines).toHaveLength(SHUTDOWN_LOG_RECORDS + 1);
  });

  it('a stop with an empty ring writes nothing', async () => {
    const ring = createRing(16, 1232);
    const counters = createWorkerCounters(1);
    const { log, lines } = capturingLog();
    const loop = runEgressConsumer({ ringIndex: 0, ring, counters, config, attempt: 0 }, { routes: [new HungRoute(), null, null, null], log, retry: null });
    await new Promise((r) => setTimeout(r, 20));
    requestStop(ring);
    await loop;
    expect(lines).toEqual([]);
    expect(workerCounterRegion(counters, 0)[WORKER_COUNTER.shutdown]).toBe(0);
  });
});
