// Ring micro-benchmarks (run: `node dist/bench/shm/ring.bench.js`; build first). Kept short for a shared 2-core box.
//  1. same thread (tinybench): reserve + copy 1232 bytes + publish, then take + complete.
//  2. two threads: front-thread producer, consumer worker (this same file) in two modes — `wait` (the design:
//     Atomics.waitAsync when empty) and `spin` (never sleeps) — reporting msgs/s at saturation, and one-way latency
//     p50/p99 (hdr-histogram-js) with the producer paced so the consumer is idle between records (wake-up cost).
// Timestamps for latency are process.hrtime (CLOCK_MONOTONIC, shared by every thread of the process).
import os from 'node:os';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { build } from 'hdr-histogram-js';
import { Bench } from 'tinybench';
import { RingConsumer, RingProducer, createRing, requestStop } from '../../src/shm/ring.js';

const TX_BYTES = 1232;
const SLOTS = 4096;

interface ConsumerJob {
  readonly sab: SharedArrayBuffer;
  readonly mode: 'wait' | 'spin';
  readonly count: number;
  readonly timed: boolean;
}

async function consume(job: ConsumerJob): Promise<void> {
  const c = new RingConsumer(job.sab);
  const h = build({ lowestDiscernibleValue: 1, highestTrackableValue: 10_000_000_000, numberOfSignificantValueDigits: 3 });
  let n = 0;
  let checksum = 0;
  const warmup = job.timed ? job.count / 10 : 0; // first 10% not recorded (JIT, thread start)
  parentPort!.postMessage('ready');
  while (n < job.count) {
    const slot = c.take();
    if (slot < 0) {
      if (c.stopRequested()) break;
      if (job.mode === 'wait') await c.waitForRecords(1_000);
      continue;
    }
    const off = c.txOffset(slot);
    if (job.timed && n >= warmup) {
      const sentNs = c.bytes.readBigUInt64LE(off);
      h.recordValue(Number(process.hrtime.bigint() - sentNs));
    }
    checksum = (checksum + c.bytes[off + TX_BYTES - 1]) | 0;
    c.complete(slot);
    n++;
  }
  parentPort!.postMessage({ n, checksum, p50: h.getValueAtPercentile(50), p99: h.getValueAtPercentile(99), max: h.maxValue });
}

function sameThread(): Promise<Bench> {
  const sab = createRing(SLOTS, TX_BYTES);
  const p = new RingProducer(sab);
  const c = new RingConsumer(sab);
  const tx = Buffer.alloc(TX_BYTES, 7);
  const bench = new Bench({ time: 500, warmupTime: 100 });
  bench.add('push 1232 B (reserve + copy + publish) + pop (take + complete)', () => {
    const off = p.reserve();
    p.bytes.set(tx, off);
    p.publish(TX_BYTES, 1, 1, -1, 0, 'bench-trace-id');
    c.complete(c.take());
  });
  bench.add('push + pop, header only (no tx copy)', () => {
    p.reserve();
    p.publish(TX_BYTES, 1, 1, -1, 0, 'bench-trace-id');
    c.complete(c.take());
  });
  return bench.run().then(() => bench);
}

interface TwoThreadResult {
  n: number;
  checksum: number;
  p50: number;
  p99: number;
  max: number;
}

async function twoThreads(mode: 'wait' | 'spin', count: number, paceNs: number): Promise<{ msgsPerSec: number; r: TwoThreadResult }> {
  const sab = createRing(SLOTS, TX_BYTES);
  const timed = paceNs > 0;
  const worker = new Worker(new URL(import.meta.url), { workerData: { sab, mode, count, timed } satisfies ConsumerJob });
  await new Promise((resolve, reject) => {
    worker.once('message', resolve); // 'ready': attached
    worker.once('error', reject);
  });
  const done = new Promise<TwoThreadResult>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  await new Promise((r) => setTimeout(r, 20)); // let it fall asleep
  const p = new RingProducer(sab);
  const tx = Buffer.alloc(TX_BYTES, 3);
  const t0 = process.hrtime.bigint();
  let next = t0;
  for (let i = 0; i < count; i++) {
    let off: number;
    while ((off = p.reserve()) < 0) {
      /* ring full: spin (the front answers 503 instead) */
    }
    if (timed) {
      next += BigInt(paceNs);
      while (process.hrtime.bigint() < next) {
        /* pace */
      }
      p.bytes.set(tx, off);
      p.bytes.writeBigUInt64LE(process.hrtime.bigint(), off);
    } else {
      p.bytes.set(tx, off);
    }
    p.publish(TX_BYTES, 1, 1, -1, 0, 't');
  }
  const r = await done;
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  requestStop(sab);
  await worker.terminate();
  return { msgsPerSec: r.n / secs, r };
}

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${os.cpus().length} cpus, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const bench = await sameThread();
  console.log('same thread (tinybench):');
  console.table(
    bench.tasks.map((t) => ({
      task: t.name,
      'ops/s': Math.round(t.result?.throughput?.mean ?? 0),
      'mean ns': Math.round((t.result?.latency?.mean ?? 0) * 1e6),
      'p99 ns': Math.round((t.result?.latency?.p99 ?? 0) * 1e6),
    })),
  );
  const rows = [];
  for (const mode of ['wait', 'spin'] as const) {
    const thr = await twoThreads(mode, 300_000, 0);
    const lat = await twoThreads(mode, 20_000, 50_000); // one record every 50 us: the consumer idles in between
    rows.push({
      consumer: mode,
      'msgs/s (saturated)': Math.round(thr.msgsPerSec),
      'one-way p50 us (paced 50us)': +(lat.r.p50 / 1000).toFixed(2),
      'one-way p99 us': +(lat.r.p99 / 1000).toFixed(2),
      'max us': +(lat.r.max / 1000).toFixed(1),
    });
  }
  console.log('two threads, 1232-byte records, ring of', SLOTS, 'slots:');
  console.table(rows);
}

if (isMainThread) {
  await main();
} else {
  await consume(workerData as ConsumerJob);
}
