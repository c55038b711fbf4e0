// One QUIC thread against N (rings.quicThreads, docs/quic-sharding.md), same run, alternating: the relay's real
// EgressPool with the static route to K sinks (quinn-tpu-sink processes when scripts/build-quinn-sink.sh built them,
// else localnet TpuListeners in threads), picked so that each of the N threads owns K/N of them. 1232-byte records.
//   throughput   records per second that reached every sink (sum of the sinks' receive rates / K) over ~3 s after a
//                1 s warm-up, the producer publishing as fast as the QUIC ring takes them; with the QUIC ingress idle,
//                and busy (a client process offering INGRESS_RATE uni streams/s to the listener in QUIC thread 0:
//                the configuration where thread 0 is the limit, bench/results/quic-thread.md)
//   paced        3,000 records/s into the ring while the ingress is offered 5,000 streams/s.
//   In every phase: each QUIC thread's CPU time over the window (/proc, EgressPool.quicThreadCpuSeconds) as a share
//   of a core, thread 0's CPU per record, and what the busiest thread would carry at a full core (records/s / its
//   share): the capacity where the QUIC threads are the limit and each has a core of its own, which this 2-core box
//   (the sinks, the producer and the load client share its cores) cannot show as throughput.
//   entry->sink  at 2,000 records/s evenly paced, ingress idle: ring entry -> each sink reading FIN, p50/p99, split by
//                whether thread 0 owns the sink (its own connection) or another thread does (one link hop more)
// Run: node dist/bench/egress/quic-threads.bench.js [threads=2] [rounds=3] [ingressRate=0 (as fast as taken)].
// Writes bench/results/quic-threads.json. Bounded: ~15 s per configuration and phase.
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { quicThreadOf } from '../../src/egress/quic/shard-owner.js';
import { ask, busy, produce, repoRoot, rigFor, sinkKind, sleep, startSink, stopRig, stopSink, warm } from './quic-thread-rig.js';

const THREADS = Number(process.argv[2] ?? 2);
const ROUNDS = Number(process.argv[3] ?? 3);
const INGRESS_RATE = Number(process.argv[4] ?? 0);
const SINKS = 4;
const WINDOW_MS = 3_000;
const PACED_RATE = 2_000;
/** The paced load for the ELU comparison: records/s into the QUIC ring and ingress streams/s offered. */
const PACED_LOAD_RATE = 3_000;
const PACED_INGRESS_RATE = 5_000;
const PACED_MS = 3_000;

interface Sink {
  readonly worker: Worker;
  readonly port: number;
  readonly owner: number;
}

/** K sinks, K / THREADS owned by each thread (ephemeral ports: start more, keep those that fit). */
async function startSinks(printTx: boolean): Promise<Sink[]> {
  const kept: Sink[] = [];
  const spare: Worker[] = [];
  const per = new Array<number>(THREADS).fill(0);
  for (let i = 0; i < 64 && kept.length < SINKS; i++) {
    const s = await startSink(printTx);
    const owner = quicThreadOf(`127.0.0.1:${s.port}`, THREADS);
    if (per[owner] < SINKS / THREADS) {
      per[owner]++;
      kept.push({ ...s, owner });
    } else spare.push(s.worker);
  }
  await Promise.all(spare.map(stopSink));
  if (kept.length < SINKS) throw new Error('could not spread the sinks over the threads');
  return kept;
}

async function throughput(sinks: Sink[], threads: number, withLoad: boolean, rate = 200_000, ingressRate = INGRESS_RATE): Promise<Record<string, number>> {
  const rig = await rigFor(sinks.map((s) => s.port), threads);
  await warm(rig.pool);
  const load = withLoad ? await busy(rig, ingressRate) : null;
  const producing = produce(rig.pool.quicRing!, rate, WINDOW_MS + 2_500);
  await sleep(1_000);
  const next = (): Promise<{ received: number; atMs: number }[]> => Promise.all(sinks.map((s) => ask<{ received: number; atMs: number }>(s.worker, 'count-next')));
  const u0 = rig.front.uniStreams;
  const t0 = performance.now();
  const c0 = await next();
  const cpu0 = rig.pool.quicThreadCpuSeconds();
  const w0 = performance.now();
  await sleep(WINDOW_MS);
  const cpu1 = rig.pool.quicThreadCpuSeconds();
  const windowS = (performance.now() - w0) / 1000;
  const c1 = await next();
  const seconds = (performance.now() - t0) / 1000;
  const u1 = rig.front.uniStreams;
  await producing;
  if (load !== null) await load.stop();
  await stopRig(rig);
  let perS = 0;
  for (let i = 0; i < sinks.length; i++) perS += (c1[i].received - c0[i].received) / ((c1[i].atMs - c0[i].atMs) / 1000);
  const recordsPerS = perS / sinks.length;
  // Each QUIC thread's share of a core over the window (CPU seconds / wall seconds), and what the busiest would carry
  // at a full core: the QUIC threads' capacity where they are the limit and each has a core of its own (not this box).
  const share = cpu1.map((c, i) => (c - cpu0[i]) / windowS);
  const busiest = Math.max(...share);
  const out: Record<string, number> = {
    recordsPerS: Math.round(recordsPerS),
    thread0CoreShare: Math.round(share[0] * 1000) / 1000,
    otherThreadsCoreShare: Math.round(share.slice(1).reduce((a, b) => a + b, 0) * 1000) / 1000,
    thread0CpuUsPerRecord: Math.round((share[0] / recordsPerS) * 1e7) / 10,
    recordsPerSAtFullBusiestThread: Math.round(recordsPerS / busiest),
  };
  if (rate < 200_000) out.pacedRecordsPerS = rate;
  if (withLoad) out.ingressAcceptedPerS = Math.round((u1 - u0) / seconds);
  return out;
}

async function paced(sinks: Sink[], threads: number): Promise<Record<string, unknown>> {
  const rig = await rigFor(sinks.map((s) => s.port), threads);
  await warm(rig.pool);
  for (const s of sinks) await ask(s.worker, 'lat'); // reset
  await produce(rig.pool.quicRing!, PACED_RATE, PACED_MS);
  await sleep(500);
  await stopRig(rig);
  const bySink = await Promise.all(sinks.map((s) => ask<{ count: number; p50: number; p99: number }>(s.worker, 'lat')));
  const pick = (local: boolean): { p50: number[]; p99: number[] } => {
    const rows = bySink.filter((_, i) => (threads === 1 || sinks[i].owner === 0) === local);
    return { p50: rows.map((r) => r.p50), p99: rows.map((r) => r.p99) };
  };
  return { entryToSinkUs: { ownedByThread0: pick(true), ownedByOthers: pick(false) } };
}

const loadAtStart = loadavg().map((x) => Math.round(x * 100) / 100);
const rounds: Record<string, unknown>[] = [];
const quiet = await startSinks(false);
const fmt = (f: Record<string, number>): string =>
  `${f.recordsPerS} records/s, QUIC thread 0 ${f.thread0CoreShare} core (${f.thread0CpuUsPerRecord} us/record), others ${f.otherThreadsCoreShare}, ${f.recordsPerSAtFullBusiestThread}/s at a full core` +
  (f.ingressAcceptedPerS === undefined ? '' : `, ${f.ingressAcceptedPerS} ingress streams/s`);
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 === 0 ? [1, THREADS] : [THREADS, 1];
  const round: Record<string, unknown> = { round: r + 1 };
  for (const t of order) {
    const idle = await throughput(quiet, t, false);
    const busyFig = await throughput(quiet, t, true);
    // Below saturation the threads' ELU is their share of a core: records/s / ELU is what the busiest would carry.
    const pacedBusy = await throughput(quiet, t, true, PACED_LOAD_RATE, PACED_INGRESS_RATE);
    round[`threads${t}`] = { idle, ingressBusy: busyFig, pacedIngressBusy: pacedBusy };
    console.log(`round ${r + 1} quicThreads ${t}: idle ${fmt(idle)}; ingress busy ${fmt(busyFig)}; paced ${PACED_LOAD_RATE}/s + ${PACED_INGRESS_RATE} streams/s: ${fmt(pacedBusy)}`);
  }
  rounds.push(round);
}
await Promise.all(quiet.map((s) => stopSink(s.worker)));
const printing = await startSinks(true);
const latency: Record<string, unknown> = {};
for (const t of [1, THREADS]) {
  latency[`threads${t}`] = await paced(printing, t);
  console.log(`paced ${PACED_RATE}/s quicThreads ${t}: ${JSON.stringify(latency[`threads${t}`])}`);
}
await Promise.all(printing.map((s) => stopSink(s.worker)));

const result = {
  bench: 'bench/egress/quic-threads.bench.ts',
  date: new Date().toISOString(),
  node: process.version,
  cpus: cpus().length,
  loadavgAtStart: loadAtStart,
  sink: sinkKind === 'quinn' ? 'quinn-tpu-sink --max-uni 128 (own process each)' : 'localnet TpuListener maxStreams 128 (own thread each)',
  sinks: SINKS,
  threads: THREADS,
  txBytes: 1232,
  ingressBusy: `a client process offering ${INGRESS_RATE === 0 ? 'as many as the listener takes' : INGRESS_RATE} 1232-byte uni streams/s to the listener in QUIC thread 0`,
  rounds,
  pacedRate: PACED_RATE,
  latency,
};
const out = join(repoRoot, 'bench', 'results', 'quic-threads.json');
writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
console.log(`written ${out}`);
process.exit(0);
