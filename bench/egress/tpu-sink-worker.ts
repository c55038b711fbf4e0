// Bench helper (worker thread): a localnet TPU listener with a 128-stream limit, off the sender's event loop (as a
// validator would be another process). Counts every transaction it receives; a transaction whose first byte is
// TIMED_MARKER carries its entry time (f64, performance.timeOrigin + performance.now() of the sender's thread, which
// agrees across threads to ~10 us) at byte 8, and the sink records entry -> arrival (stream read to FIN) in us.
// Protocol: posts {port} once listening; 'count' -> {received}; 'lat' -> {count, p50, p99, max} and resets; 'stop'.
import { parentPort } from 'node:worker_threads';
import hdr from 'hdr-histogram-js';
import { TpuListener } from '../../src/localnet/tpu-listener.js';

// Same value in quic-egress.bench.ts (importing this module there would run the worker code).
const TIMED_MARKER = 0x5a;

let received = 0;
const h = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });
const listener = new TpuListener({
  host: '127.0.0.1',
  port: 0,
  validatorIdentity: 'bench',
  maxStreams: 128,
  onTransaction: (tx) => {
    received++;
    if (tx[0] !== TIMED_MARKER) return;
    const entry = new DataView(tx.buffer, tx.byteOffset, tx.byteLength).getFloat64(8, true);
    const us = (performance.timeOrigin + performance.now() - entry) * 1000;
    h.recordValue(us < 1 ? 1 : Math.round(us));
  },
});
await listener.start();
parentPort!.postMessage({ port: listener.address().port });
parentPort!.on('message', (m: string) => {
  if (m === 'stop') void listener.stop().then(() => process.exit(0));
  else if (m === 'lat') {
    const n = h.totalCount;
    parentPort!.postMessage({ count: n, p50: n ? h.getValueAtPercentile(50) : 0, p99: n ? h.getValueAtPercentile(99) : 0, max: n ? h.maxValue : 0 });
    h.reset();
  } else parentPort!.postMessage({ received });
});
