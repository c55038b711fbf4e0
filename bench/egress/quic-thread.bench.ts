// The QUIC thread end to end (issue #12 part 1): the relay's real EgressPool with its route plan, so the static route
// runs in the QUIC thread (its own Piscina pool of size 1, its own ring), fed by a producer thread in the front's role,
// into the same receivers as quic-egress.bench.ts (quinn-tpu-sink with a 128-stream limit in its own process when
// scripts/build-quinn-sink.sh has built it, else the localnet's TpuListener in a thread). 1232-byte transactions, one
// target (the fanout of one static peer; direct fans out over the same connection code).
//   throughput      transactions the quiet sink received per second over >= 3 s after a 1 s warm-up, the producer
//                   publishing as fast as the QUIC ring takes them (ring full = the producer waits its next slot).
//   entry->outcome  at 5,000 tx/s evenly paced: from the record's receivedAtMs (stamped at publish) to the static
//                   route's outcome in the QUIC thread (the pool's ring->route latency histogram). `sent` is answered
//                   once stream data + FIN went to the kernel, so this is ring entry -> kernel, as quic-egress.bench.ts
//                   measures it on its own thread (entryToKernelUs), here across the real thread boundary.
//   entry->sink     the same records, entry to the sink reading FIN (CLOCK_MONOTONIC in the transaction).
// Next to them: today's committed figures of bench/results/quic-egress.json (same receivers, the consumer loop and
// the static route on the bench's own thread).
// Ingress idle and ingress busy (issue #12: "direct fanout tx/s with ingress idle and with ingress busy"): the QUIC
// ingress listener runs in the same QUIC thread in every phase, hosted as the relay hosts it
// (EgressPool.hostInQuicThread through IngressTaskRunner), its front half a stub on this thread (ingress-front-stub.ts:
// every key is key 0, every uni stream accepted and dropped, so the egress records stay the producer's alone).
//   idle (quicThread.throughput, quicThread.pacedRing)  the listener bound, no client;
//   busy (quicThread.ingressBusy)                        the same two measurements while a client in its own process
//                                                        (ingress-load-client.ts: 2 connections, 1232-byte uni streams)
//                                                        offers INGRESS_RATE streams/s (argv[2], default 10,000; 0 = as
//                                                        fast as the listener takes them), with the rate the listener
//                                                        accepted in the measured window next to it.
// On a 2-core box the load client's own CPU competes with the QUIC thread; the figures say what one QUIC thread
// delivers while its ingress is that busy on this box, not the thread's capacity in isolation.
// Run: node dist/bench/egress/quic-thread.bench.js [ingressRate]. Writes bench/results/quic-threads.json. Bounded: ~45 s.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { ROUTE_IDS } from '../../src/shm/layout.js';
import { INGRESS_CONNECTIONS, ask, busy as busyRig, produce, repoRoot, rigFor, sinkKind, sleep, startSink, stopRig, stopSink, warm, type LoadResult, type Rig } from './quic-thread-rig.js';

const THROUGHPUT_MS = 3_000;
const RATE = 5_000;
const RATE_MS = 3_000;
const INGRESS_RATE = Number(process.argv[2] ?? 10_000);
const busy = (r: Rig): ReturnType<typeof busyRig> => busyRig(r, INGRESS_RATE);

/** Streams the ingress accepted per second over a window, and what the client did over its whole run. */
function ingressFigures(accepted: number, seconds: number, client: LoadResult): Record<string, number> {
  return { offeredPerS: INGRESS_RATE, acceptedPerS: Math.round(accepted / seconds), acceptedInWindow: accepted, clientWritten: client.written, clientSeconds: client.seconds };
}

const loadAtStart = loadavg().map((x) => Math.round(x * 100) / 100);

// Throughput: the quiet sink (its 1 s STATS lines), the producer publishing as fast as the QUIC ring takes records.
async function throughputPhase(withLoad: boolean): Promise<Record<string, unknown>> {
  const quiet = await startSink(false);
  const rig = await rigFor(quiet.port);
  await warm(rig.pool);
  const load = withLoad ? await busy(rig) : null;
  const nextCount = (): Promise<{ received: number; atMs: number }> => ask(quiet.worker, 'count-next');
  const producing = produce(rig.pool.quicRing!, 200_000, THROUGHPUT_MS + 2_500);
  await sleep(1_000);
  const s0 = await nextCount();
  const u0 = rig.front.uniStreams;
  let s1 = await nextCount();
  while (s1.atMs - s0.atMs < THROUGHPUT_MS - 100) s1 = await nextCount();
  const u1 = rig.front.uniStreams;
  const producer = await producing;
  const client = load === null ? null : await load.stop();
  const seconds = (s1.atMs - s0.atMs) / 1000;
  const throughput: Record<string, unknown> = { txPerS: Math.round((s1.received - s0.received) / seconds), received: s1.received - s0.received, seconds: Math.round(seconds * 100) / 100, producer };
  if (client !== null) throughput.ingress = ingressFigures(u1 - u0, seconds, client);
  await stopRig(rig);
  await stopSink(quiet.worker);
  console.log(
    `QUIC thread throughput (static route, 1 target), ingress ${withLoad ? 'busy' : 'idle'}: ${String(throughput.txPerS)} tx/s received` +
      (client === null ? '' : `; ingress accepted ${Math.round((u1 - u0) / seconds)} uni streams/s (offered ${INGRESS_RATE || 'max'})`),
  );
  return throughput;
}

// Latency: the printing sink, evenly paced.
async function latencyPhase(withLoad: boolean): Promise<Record<string, unknown>> {
  const sink = await startSink(true);
  const rig = await rigFor(sink.port);
  await warm(rig.pool);
  const load = withLoad ? await busy(rig) : null;
  await ask(sink.worker, 'lat'); // reset
  const u0 = rig.front.uniStreams;
  const t0 = performance.now();
  const paced = await produce(rig.pool.quicRing!, RATE, RATE_MS);
  const u1 = rig.front.uniStreams;
  const window = (performance.now() - t0) / 1000;
  await sleep(500);
  const client = load === null ? null : await load.stop();
  const drained = await stopRig(rig);
  const h = rig.pool.latency.byRoute[ROUTE_IDS.static];
  const entryToOutcomeUs = { count: h.totalCount, p50: h.getValueAtPercentile(50), p99: h.getValueAtPercentile(99), max: h.maxValue };
  const entryToSinkUs = await ask<{ count: number; p50: number; p99: number; max: number }>(sink.worker, 'lat');
  await stopSink(sink.worker);
  console.log(
    `QUIC thread @${RATE}/s, ingress ${withLoad ? 'busy' : 'idle'}: ring entry -> kernel (outcome) p50 ${entryToOutcomeUs.p50} us p99 ${entryToOutcomeUs.p99} us; entry -> sink p50 ${entryToSinkUs.p50} us p99 ${entryToSinkUs.p99} us` +
      (client === null ? '' : `; ingress accepted ${Math.round((u1 - u0) / window)} uni streams/s`),
  );
  const out: Record<string, unknown> = { rateTxPerS: RATE, seconds: RATE_MS / 1000, producer: paced, drained, entryToOutcomeUs, entryToSinkUs };
  if (client !== null) out.ingress = ingressFigures(u1 - u0, window, client);
  return out;
}

const throughput = await throughputPhase(false);
const throughputBusy = await throughputPhase(true);
const pacedRing = await latencyPhase(false);
const pacedRingBusy = await latencyPhase(true);

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
  ingressIdle: 'the QUIC ingress listener bound in the QUIC thread, no client',
  ingressBusy: `a client process offering ${INGRESS_RATE === 0 ? 'as many as the listener takes' : `${INGRESS_RATE}`} 1232-byte uni streams/s over ${INGRESS_CONNECTIONS} connections to the same QUIC thread's listener (front half: bench/egress/ingress-front-stub.ts)`,
  quicThread: {
    throughput,
    pacedRing,
    ingressBusy: { throughput: throughputBusy, pacedRing: pacedRingBusy },
  },
  committedQuicEgressBaseline: base === null ? null : { date: base.date, throughputTxPerS: base.ours.throughput.txPerS, entryToKernelUs: base.ours.pacedRing.cubic.entryToKernelUs, entryToSinkUs: base.ours.pacedRing.cubic.entryToSinkUs },
};
const out = join(repoRoot, 'bench', 'results', 'quic-thread.json');
writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
console.log(`written ${out}`);
process.exit(0);
