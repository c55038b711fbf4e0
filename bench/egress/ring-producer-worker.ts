// Bench helper (worker thread): the front's role in quic-egress.bench.ts. Publishes 1232-byte records into the ring
// at an even pace: one record every 1/rate s (a 5,000 tx/s front receiving one request every 200 us), sleeping in
// Atomics.wait between records (this thread has nothing else to do; a 1 ms timer tick would publish bursts of 5, and
// the 5th would wait for the 4 sends before it, which measures the bench's pacing rather than the relay). Because it
// never returns to its event loop between records it uses the per-record wake-up ({ coalesceWakeups: false });
// coalesced wake-ups need an event-loop turn, and a front receiving one request per turn wakes once per record anyway.
// Each record's receivedAtMs is the wall clock at publish; its bytes carry the same instant as CLOCK_MONOTONIC ns for
// the sink (tpu-sink-worker.ts). workerData: {ring, rate, ms, mask, maxRetries?}; posts {published, ringFull, lateUs} when done.
import { parentPort, workerData } from 'node:worker_threads';
import { RingProducer } from '../../src/shm/ring.js';

const { ring, rate, ms, mask, maxRetries = 0 } = workerData as { ring: SharedArrayBuffer; rate: number; ms: number; mask: number; maxRetries?: number };
const TX_BYTES = 1232;
const producer = new RingProducer(ring, { coalesceWakeups: false });
const nap = new Int32Array(new SharedArrayBuffer(4));
const periodMs = 1000 / rate;
let published = 0;
let ringFull = 0;
/** Sum of how late each publish was against its schedule (us): the pacing's own error. */
let lateUs = 0;
const t0 = performance.now();
for (;;) {
  const due = t0 + published * periodMs;
  if (due - t0 >= ms) break;
  const wait = due - performance.now();
  if (wait > 0.02) Atomics.wait(nap, 0, 0, wait);
  const off = producer.reserve();
  if (off < 0) {
    ringFull++;
    published++; // the slot in the schedule passes
    continue;
  }
  const bytes = producer.bytes;
  bytes.fill(3, off, off + TX_BYTES);
  bytes[off] = 1; // one signature; its first 8 bytes: entry time for the sink
  const now = performance.now();
  lateUs += Math.max(0, now - due) * 1000;
  bytes.writeBigUInt64LE(process.hrtime.bigint(), off + 1);
  producer.publish(TX_BYTES, 0, mask, maxRetries, performance.timeOrigin + now, 'bench');
  published++;
}
parentPort!.postMessage({ published: published - ringFull, ringFull, meanLateUs: Math.round(lateUs / Math.max(1, published - ringFull)) });
