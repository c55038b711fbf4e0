// Fresh transactions behind a full rebroadcast queue (issue #28 item 2; bench process, cold orchestration). With the
// default retries.defaultMaxRetries (-1, Agave's), every transaction the direct or static route sends is kept for
// rebroadcast in the thread that sent it, the QUIC thread, which also takes every fresh transaction from its ring;
// a whole queue comes due once per interval. This bench runs the relay's real EgressPool (quic-thread-rig.ts: static
// route to one sink, the QUIC thread) and measures ring entry -> kernel of the FRESH transactions (the pool's
// ring -> route outcome histogram; rebroadcasts do not go through the ring, so they are not in it):
//   off  the same paced load with maxRetries 0 (nothing queued): the reference of the same run;
//   on   the records ask for rebroadcast until expiry (-1); the queue fills to --queue in the first --fill-ms, then
//        the window of --measure-ms is measured while the queue stays full and every entry is sent again every
//        --interval-ms. No upstream: no status poll (expiry by TTL, 120 s): the tick alone is measured;
//   poll the same as `on` with an upstream (bench/wire/null-status-upstream.ts in its own process: null for every
//        signature, -32601 for isBlockhashValid): the scheduler's status poll of the whole queue every 2.5 slots
//        (1 s at the fallback slot time) runs too, in the QUIC thread and its status thread.
// Paired before/after: run this file from two builds alternately (bench/results/session18-ab/README.md).
//   node dist/bench/egress/rebroadcast-tail.bench.js [--rate 1000] [--queue 5000] [--interval-ms 2000]
//     [--fill-ms 6000] [--measure-ms 6000] [--modes off,on[,poll]] [--json FILE]
// Bounded: ~25 s with both modes.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import hdr from 'hdr-histogram-js';
import { LATENCY_FLUSH_MS } from '../../src/metrics/histogram-merge.js';
import { EGRESS_OUTCOMES, RETRY_OUTCOMES, ROUTE_IDS, rebroadcastCounterIndex, retryCounterIndex } from '../../src/shm/layout.js';
import { produce, rigFor, sinkKind, sleep, startSink, stopRig, stopSink, warm } from './quic-thread-rig.js';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '1000' },
    queue: { type: 'string', default: '5000' },
    'interval-ms': { type: 'string', default: '2000' },
    'fill-ms': { type: 'string', default: '6000' },
    'measure-ms': { type: 'string', default: '6000' },
    modes: { type: 'string', default: 'off,on' },
    json: { type: 'string', default: '' },
  },
});
const RATE = Number(values.rate);
const QUEUE = Number(values.queue);
const INTERVAL_MS = Number(values['interval-ms']);
const FILL_MS = Number(values['fill-ms']);
const MEASURE_MS = Number(values['measure-ms']);

const PCTS = [50, 90, 99, 99.9] as const;
const newHist = (): hdr.Histogram => hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });
function summary(h: hdr.Histogram): Record<string, number> {
  const o: Record<string, number> = { count: h.totalCount };
  for (const p of PCTS) o[`p${p}`] = h.getValueAtPercentile(p);
  o.max = h.maxValue;
  return o;
}

/** The null-status upstream in its own process; resolves with its URL. */
async function startUpstream(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('../wire/null-status-upstream.js', import.meta.url))], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => createInterface({ input: child.stdout! }).on('line', (l) => l.startsWith('ready ') && resolve(Number(l.slice(6)))));
  return { url: `http://127.0.0.1:${port}`, child };
}

async function phase(mode: string): Promise<Record<string, unknown>> {
  const rebroadcast = mode !== 'off';
  const upstream = mode === 'poll' ? await startUpstream() : null;
  const sink = await startSink(false);
  const rig = await rigFor(
    sink.port,
    1,
    rebroadcast ? { defaultMaxRetries: -1, maxQueue: QUEUE, intervalMs: INTERVAL_MS, blockhashTtlMs: 120_000 } : { defaultMaxRetries: 0 },
    upstream?.url,
  );
  await warm(rig.pool);
  const fillMs = rebroadcast ? FILL_MS : 1_000;
  const producing = produce(rig.pool.quicRing!, RATE, fillMs + MEASURE_MS, -1);
  // The window starts at the histogram flush after the fill (the threads post theirs every LATENCY_FLUSH_MS).
  await sleep(fillMs + LATENCY_FLUSH_MS / 2);
  const live = rig.pool.latency.byRoute[ROUTE_IDS.static];
  const before = newHist();
  before.add(live);
  const producer = await producing;
  const counters = rig.pool.summedCounters();
  await stopRig(rig);
  await stopSink(sink.worker);
  upstream?.child.kill('SIGTERM');
  const window = newHist();
  window.add(live);
  window.subtract(before);
  const retry = (o: (typeof RETRY_OUTCOMES)[number]): number => counters[retryCounterIndex(RETRY_OUTCOMES.indexOf(o))];
  const out = {
    mode,
    producer,
    entryToKernelUs: summary(window),
    queued: retry('queued'),
    shed: retry('dropped:retry_queue_full'),
    rebroadcastsSent: counters[rebroadcastCounterIndex(ROUTE_IDS.static, EGRESS_OUTCOMES.indexOf('sent'))],
  };
  const s = out.entryToKernelUs;
  console.log(
    `rebroadcast ${out.mode}: fresh ring entry -> kernel p50 ${s.p50} p90 ${s.p90} p99 ${s.p99} p99.9 ${s['p99.9']} max ${s.max} us (${s.count} tx); queued ${out.queued}, shed ${out.shed}, rebroadcasts sent ${out.rebroadcastsSent}`,
  );
  return out;
}

const loadAtStart = loadavg().map((x) => Math.round(x * 100) / 100);
const phases: Record<string, unknown>[] = [];
for (const m of values.modes.split(',')) phases.push(await phase(m));
const result = {
  bench: 'bench/egress/rebroadcast-tail.bench.ts',
  date: new Date().toISOString(),
  node: process.version,
  cpus: cpus().length,
  loadavgAtStart: loadAtStart,
  sink: sinkKind,
  txBytes: 1232,
  rateTxPerS: RATE,
  retries: { maxQueue: QUEUE, intervalMs: INTERVAL_MS, fillMs: FILL_MS, measureMs: MEASURE_MS },
  phases,
};
if (values.json !== '') writeFileSync(values.json, JSON.stringify(result, null, 2) + '\n');
console.log(JSON.stringify(result));
process.exit(0);
