// The QUIC thread end to end (issue #12 part 1): the relay's real EgressPool with its route plan, so the static route
// runs in the QUIC thread (its own Piscina pool of size 1, its own ring), fed by a producer thread in the front's role,
// into the same receivers as quic-egress.bench.ts (quinn-tpu-sink with a 128-stream limit in its own process when
// scripts/build-quinn-sink.sh has built it, else the localnet's TpuListener in a thread). 1232-byte transactions, one
// target (the fanout of one static peer; direct fans out over the same connection code). Bounded: ~25 s.
//   throughput      transactions the quiet sink received per second over >= 3 s after a 1 s warm-up, the producer
//                   publishing as fast as the QUIC ring takes them (ring full = the producer waits its next slot).
//   entry->outcome  at 5,000 tx/s evenly paced: from the record's receivedAtMs (stamped at publish) to the static
//                   route's outcome in the QUIC thread (the pool's ring->route latency histogram). `sent` is answered
//                   once stream data + FIN went to the kernel, so this is ring entry -> kernel, as quic-egress.bench.ts
//                   measures it on its own thread (entryToKernelUs), here across the real thread boundary.
//   entry->sink     the same records, entry to the sink reading FIN (CLOCK_MONOTONIC in the transaction).
// Next to them: today's committed figures of bench/results/quic-egress.json (same receivers, the consumer loop and
// the static route on the bench's own thread). Run: node dist/bench/egress/quic-thread.bench.js. Writes
// bench/results/quic-thread.json.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { buildRoutePlan } from '../../src/config/route-plan.js';
import { configSchema } from '../../src/config/schema.js';
import { generateKeypairSecret } from '../../src/egress/identity.js';
import { EgressPool } from '../../src/egress/pool.js';
import { createLogger } from '../../src/log/logger.js';
import { EGRESS_OUTCOMES, ROUTE_IDS, egressCounterIndex } from '../../src/shm/layout.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const THROUGHPUT_MS = 3_000;
const RATE = 5_000;
const RATE_MS = 3_000;
const STATIC = 1 << ROUTE_IDS.static;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const quinnDir = join(repoRoot, 'out', 'quinn');
const sinkKind: 'quinn' | 'localnet' = existsSync(join(quinnDir, 'quinn-tpu-sink')) && existsSync(join(quinnDir, 'server.key.der')) ? 'quinn' : 'localnet';

function startSink(printTx: boolean): Promise<{ worker: Worker; port: number }> {
  const worker = new Worker(new URL('./tpu-sink-worker.js', import.meta.url), { workerData: { kind: sinkKind, quinnDir, printTx } });
  return new Promise((r) => worker.once('message', (m: { port: number }) => r({ worker, port: m.port })));
}
/** Stops a sink and waits for its thread to end (it ends the quinn process first: none is left behind). */
function stopSink(w: Worker): Promise<unknown> {
  const ended = new Promise((r) => w.once('exit', r));
  w.postMessage('stop');
  return ended;
}
function ask<T>(w: Worker, msg: string): Promise<T> {
  return new Promise((r) => {
    w.once('message', (m: T) => r(m));
    w.postMessage(msg);
  });
}

const secret = generateKeypairSecret();
const log = createLogger('silent', 'bench');

function poolFor(sinkPort: number): EgressPool {
  const config = configSchema.parse({
    rings: { workers: 1, slotsPerRing: 4096 },
    routes: { static: { peers: [`127.0.0.1:${sinkPort}`], everyTransaction: false }, direct: { staleAfterMs: 30_000, maxQueuedPerConnection: 4096 } },
    retries: { defaultMaxRetries: 0 },
    telemetry: { enabled: false },
    relayHost: { quicPort: 0 },
    log: { level: 'silent' },
  });
  const pool = new EgressPool({ config, log, identitySecret: secret, plan: buildRoutePlan(config) });
  if (pool.quicRing === null) throw new Error('route plan: no QUIC thread');
  pool.start();
  return pool;
}

function produce(ring: SharedArrayBuffer, rate: number, ms: number): Promise<{ published: number; ringFull: number; meanLateUs: number }> {
  const w = new Worker(new URL('./ring-producer-worker.js', import.meta.url), { workerData: { ring, rate, ms, mask: STATIC } });
  return new Promise((r) => w.once('message', r));
}

/** A connection to the sink exists and took one transaction (no handshake inside the measured part). */
async function warm(pool: EgressPool): Promise<void> {
  await produce(pool.quicRing!, 100, 300);
  const deadline = Date.now() + 10_000;
  while (pool.summedCounters()[egressCounterIndex(ROUTE_IDS.static, EGRESS_OUTCOMES.indexOf('sent'))] < 10) {
    if (Date.now() > deadline) throw new Error('the QUIC thread sent nothing to the sink');
    await sleep(20);
  }
}

const loadAtStart = loadavg().map((x) => Math.round(x * 100) / 100);

// Throughput: the quiet sink (its 1 s STATS lines).
const quiet = await startSink(false);
const tPool = poolFor(quiet.port);
await warm(tPool);
const nextCount = (): Promise<{ received: number; atMs: number }> => ask(quiet.worker, 'count-next');
const load = produce(tPool.quicRing!, 200_000, THROUGHPUT_MS + 2_500);
await sleep(1_000);
const s0 = await nextCount();
let s1 = await nextCount();
while (s1.atMs - s0.atMs < THROUGHPUT_MS - 100) s1 = await nextCount();
const producer = await load;
const seconds = (s1.atMs - s0.atMs) / 1000;
const throughput = { txPerS: Math.round((s1.received - s0.received) / seconds), received: s1.received - s0.received, seconds: Math.round(seconds * 100) / 100, producer };
await tPool.drain(5_000);
await stopSink(quiet.worker);
console.log(`QUIC thread throughput (static route, 1 target): ${throughput.txPerS} tx/s received`);

// Latency: the printing sink, evenly paced.
const sink = await startSink(true);
const lPool = poolFor(sink.port);
await warm(lPool);
await ask(sink.worker, 'lat'); // reset
const paced = await produce(lPool.quicRing!, RATE, RATE_MS);
await sleep(500);
const drained = await lPool.drain(5_000);
const h = lPool.latency.byRoute[ROUTE_IDS.static];
const entryToOutcomeUs = { count: h.totalCount, p50: h.getValueAtPercentile(50), p99: h.getValueAtPercentile(99), max: h.maxValue };
const entryToSinkUs = await ask<{ count: number; p50: number; p99: number; max: number }>(sink.worker, 'lat');
await stopSink(sink.worker);
console.log(`QUIC thread @${RATE}/s ring entry -> kernel (outcome) p50 ${entryToOutcomeUs.p50} us p99 ${entryToOutcomeUs.p99} us; entry -> sink p50 ${entryToSinkUs.p50} us p99 ${entryToSinkUs.p99} us`);

const baselineFile = join(repoRoot, 'bench', 'results', 'quic-egress.json');
const base = existsSync(baselineFile)
  ? (JSON.parse(readFileSync(baselineFile, 'utf8')) as { date: string; ours: { throughput: { txPerS: number }; pacedRing: { cubic: { entryToKernelUs: unknown; entryToSinkUs: unknown } } } })
  : null;
const result = {
  bench: 'bench/egress/quic-thread.bench.ts',
  date: new Date().toISOString(),
  node: process.version,
  cpus: cpus().length,
  loadavgAtStart: loadAtStart,
  sink: sinkKind === 'quinn' ? 'quinn-tpu-sink --max-uni 128 (own process)' : 'localnet TpuListener maxStreams 128 (own thread)',
  txBytes: 1232,
  quicThread: {
    throughput,
    pacedRing: { rateTxPerS: RATE, seconds: RATE_MS / 1000, producer: paced, drained, entryToOutcomeUs, entryToSinkUs },
  },
  committedQuicEgressBaseline: base === null ? null : { date: base.date, throughputTxPerS: base.ours.throughput.txPerS, entryToKernelUs: base.ours.pacedRing.cubic.entryToKernelUs, entryToSinkUs: base.ours.pacedRing.cubic.entryToSinkUs },
};
const out = join(repoRoot, 'bench', 'results', 'quic-thread.json');
writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
console.log(`written ${out}`);
process.exit(0);
