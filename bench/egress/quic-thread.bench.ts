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
// (EgressPool.hostInQuicThread through QuicThreadPool), its front half a stub on this thread (ingress-front-stub.ts:
// every key is key 0, every uni stream accepted and dropped, so the egress records stay the producer's alone).
//   idle (quicThread.throughput, quicThread.pacedRing)  the listener bound, no client;
//   busy (quicThread.ingressBusy)                        the same two measurements while a client in its own process
//                                                        (ingress-load-client.ts: 2 connections, 1232-byte uni streams)
//                                                        offers INGRESS_RATE streams/s (argv[2], default 10,000; 0 = as
//                                                        fast as the listener takes them), with the rate the listener
//                                                        accepted in the measured window next to it.
// On a 2-core box the load client's own CPU competes with the QUIC thread; the figures say what one QUIC thread
// delivers while its ingress is that busy on this box, not the thread's capacity in isolation.
// Run: node dist/bench/egress/quic-thread.bench.js [ingressRate]. Writes bench/results/quic-thread.json. Bounded: ~45 s.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { Worker } from 'node:worker_threads';
import { buildRoutePlan } from '../../src/config/route-plan.js';
import { configSchema } from '../../src/config/schema.js';
import { generateKeypairSecret } from '../../src/egress/identity.js';
import { EgressPool } from '../../src/egress/pool.js';
import { createLogger } from '../../src/log/logger.js';
import { EGRESS_OUTCOMES, ROUTE_IDS, egressCounterIndex } from '../../src/shm/layout.js';
import { QuicThreadPool } from '../../src/ingress/quic-thread-pool.js';
import { createRandomIdentityCertificate } from '../../src/quic/identity-certificate.js';
import { IngressFrontStub } from './ingress-front-stub.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const THROUGHPUT_MS = 3_000;
const RATE = 5_000;
const RATE_MS = 3_000;
const STATIC = 1 << ROUTE_IDS.static;
const INGRESS_RATE = Number(process.argv[2] ?? 10_000);
const INGRESS_CONNECTIONS = 2;

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

/** The relay's QUIC thread as the relay wires it: the pool with its route plan, the ingress listener hosted in it. */
interface Rig {
  readonly pool: EgressPool;
  readonly ingress: QuicThreadPool;
  readonly front: IngressFrontStub;
  readonly address: { host: string; port: number };
}

const serverCert = await createRandomIdentityCertificate();

async function rigFor(sinkPort: number): Promise<Rig> {
  const config = configSchema.parse({
    rings: { workers: 1, slotsPerRing: 4096 },
    routes: { static: { peers: [`127.0.0.1:${sinkPort}`], everyTransaction: false }, direct: { staleAfterMs: 30_000, maxQueuedPerConnection: 4096 } },
    retries: { defaultMaxRetries: 0 },
    telemetry: { enabled: false },
    relayHost: { host: '127.0.0.1', quicPort: -1 },
    log: { level: 'silent' },
  });
  const plan = buildRoutePlan(config);
  const pool = new EgressPool({ config, log, identitySecret: secret, plan });
  if (pool.quicRing === null || !plan.ingress) throw new Error('route plan: no QUIC thread or no ingress');
  pool.start();
  const q = config.relayHost.quic;
  const ingress = new QuicThreadPool(
    {
      host: '127.0.0.1',
      port: 0,
      keyPem: serverCert.keyPem,
      certPem: serverCert.certPem,
      maxConnections: q.maxConnections,
      maxConnectionsPerKey: q.maxConnectionsPerKey,
      maxConcurrentStreams: q.maxConcurrentStreams,
      maxTransactionBytes: config.transactions.maxTransactionBytes,
      idleTimeoutMs: q.idleTimeoutMs,
      streamTimeoutMs: q.streamTimeoutMs,
      replyTimeoutMs: q.replyTimeoutMs,
    },
    q.queueSlots,
    log,
    undefined,
    (task, transferList) => pool.hostInQuicThread('quic-ingress', task, transferList),
  );
  const front = new IngressFrontStub(ingress.channels);
  front.start();
  const address = await ingress.start();
  return { pool, ingress, front, address };
}

async function stopRig(r: Rig): Promise<Awaited<ReturnType<EgressPool['drain']>>> {
  await r.ingress.stop();
  await r.front.stop();
  return r.pool.drain(5_000);
}

interface LoadResult {
  written: number;
  issued: number;
  seconds: number;
  offeredPerS: number;
}

/** The ingress load client in its own process; resolves once its connections are up. */
async function startLoad(address: { host: string; port: number }): Promise<{ stop(): Promise<LoadResult> }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./ingress-load-client.js', import.meta.url)), address.host, String(address.port), String(INGRESS_RATE), String(INGRESS_CONNECTIONS), '60000'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const next = (event: string): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const onLine = (l: string): void => {
        try {
          const m = JSON.parse(l) as Record<string, unknown>;
          if (m.event !== event) return;
          lines.off('line', onLine);
          resolve(m);
        } catch {
          // not ours
        }
      };
      lines.on('line', onLine);
      child.once('exit', (code) => reject(new Error(`ingress load client exited ${String(code)} before '${event}'`)));
    });
  await next('ready');
  return {
    stop: async () => {
      const done = next('done');
      child.stdin!.write('stop\n');
      const m = await done;
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
      return { written: Number(m.written), issued: Number(m.issued), seconds: Number(m.seconds), offeredPerS: Number(m.offeredPerS) };
    },
  };
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

/** The load client runs and the listener accepts its streams (a connection's handshake is not in the window). */
async function busy(r: Rig): Promise<{ stop(): Promise<LoadResult> }> {
  const load = await startLoad(r.address);
  const before = r.front.uniStreams;
  const deadline = Date.now() + 10_000;
  while (r.front.uniStreams - before < 1_000) {
    if (Date.now() > deadline) throw new Error('the ingress accepted no stream from the load client');
    await sleep(20);
  }
  await sleep(300);
  return load;
}

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
