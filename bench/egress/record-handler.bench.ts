// The consumer loop's cost per record (issue #42 item 2: one record handler, the hot path as cheap as before). The
// real runEgressConsumer on this thread over a real ring of 4,096 slots; routes that answer at once, so what is timed
// is the loop and its accounting, not a network: take, dispatch to two routes, count, release. Three cases:
//   sync      rpc + direct answer `sent` synchronously (the QUIC routes' usual answer)
//   async     rpc answers through a resolved promise, direct synchronously (the HTTP routes' shape)
//   troubled  rpc answers `failed` synchronously: every record takes the accounting path (a summarized log line key)
// Fixed work per case (RECORDS records), so the whole process's CPU time compares two builds with a process timer.
// Routes answer bare outcome labels, the one form both the old contract and the returned-result one accept, so this
// file runs unchanged against an older build's dist/. Run: node dist/bench/egress/record-handler.bench.js [records].
import { configSchema } from '../../src/config/schema.js';
import { runEgressConsumer } from '../../src/egress/consumer/consumer-loop.js';
import type { EgressOutcome, EgressRoute } from '../../src/egress/contract/route.js';
import { createLogger } from '../../src/log/logger.js';
import { createWorkerCounters, workerCounterRegion } from '../../src/metrics/worker-counters.js';
import { ROUTE_COUNT, ROUTE_IDS, WORKER_COUNTER } from '../../src/shm/layout.js';
import { createRing, requestStop, RingProducer } from '../../src/shm/ring.js';

const RECORDS = Number(process.argv[2] ?? 300_000);
const SLOTS = 4_096;
const TX_BYTES = 256;
const MASK = (1 << ROUTE_IDS.rpc) | (1 << ROUTE_IDS.direct);

function route(id: number, name: 'rpc' | 'direct', answer: () => EgressOutcome | Promise<EgressOutcome>): EgressRoute {
  return { id, name, send: answer, close: async () => undefined };
}

const CASES: Record<string, () => (EgressRoute | null)[]> = {
  sync: () => [route(ROUTE_IDS.rpc, 'rpc', () => 'sent'), route(ROUTE_IDS.direct, 'direct', () => 'sent')],
  async: () => [route(ROUTE_IDS.rpc, 'rpc', () => Promise.resolve('sent' as const)), route(ROUTE_IDS.direct, 'direct', () => 'sent')],
  troubled: () => [route(ROUTE_IDS.rpc, 'rpc', () => 'failed'), route(ROUTE_IDS.direct, 'direct', () => 'sent')],
};

async function run(name: string): Promise<{ case: string; records: number; ms: number; nsPerRecord: number }> {
  const config = configSchema.parse({ rings: { workers: 1, slotsPerRing: SLOTS }, retries: { defaultMaxRetries: 0 }, log: { level: 'silent' } });
  const ring = createRing(SLOTS, TX_BYTES);
  const counters = createWorkerCounters(1);
  const c = workerCounterRegion(counters, 0);
  const routes = CASES[name]();
  while (routes.length < ROUTE_COUNT) routes.push(null);
  const loop = runEgressConsumer({ ringIndex: 0, ring, counters, config, attempt: 0 }, { routes, log: createLogger('silent', 'bench'), retry: null });
  const p = new RingProducer(ring);
  const t0 = performance.now();
  let published = 0;
  while (c[WORKER_COUNTER.released] < RECORDS) {
    let off: number;
    while (published < RECORDS && (off = p.reserve()) >= 0) {
      p.bytes.writeUInt32LE(published, off);
      p.publish(TX_BYTES, 0, MASK, 0, performance.timeOrigin + performance.now(), 't');
      published++;
    }
    await new Promise((r) => setImmediate(r));
  }
  const ms = performance.now() - t0;
  requestStop(ring);
  await loop;
  return { case: name, records: RECORDS, ms: Math.round(ms), nsPerRecord: Math.round((ms * 1e6) / RECORDS) };
}

const results = [];
for (const name of Object.keys(CASES)) results.push(await run(name));
console.log(JSON.stringify({ bench: 'bench/egress/record-handler.bench.ts', node: process.version, results }));
