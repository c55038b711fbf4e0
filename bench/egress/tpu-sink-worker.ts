// Bench helper (worker thread): the receiving TPU with a 128-stream limit, off the sender's event loop.
//   kind 'quinn':    quinn-tpu-sink (Rust, quinn + rustls: Agave's QUIC stack family) in its own process, run with
//                    --print-tx; this thread parses its TX lines (first signature, length, CLOCK_MONOTONIC ns at FIN).
//   kind 'localnet': the embedded localnet's TpuListener (our quiche server endpoint) in this thread.
// A timed transaction carries its entry time as CLOCK_MONOTONIC ns (process.hrtime.bigint(), the same clock the
// quinn sink prints) in bytes 1..8, i.e. the first 8 bytes of its first signature (byte 0 = 1 signature); 0 = not
// timed. The sink records entry -> arrival (stream read to FIN) in us.
// Protocol: posts {port} once listening; 'count' -> {received}; 'lat' -> {count, p50, p99, max} and resets; 'stop'.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parentPort, workerData } from 'node:worker_threads';
import hdr from 'hdr-histogram-js';
import { TpuListener } from '../../src/localnet/tpu-listener.js';

export interface SinkWorkerData {
  readonly kind: 'quinn' | 'localnet';
  /**
   * quinn only, default true: one TX line per transaction (latency). false: the sink prints only its STATS line each
   * second, so a throughput run does not pay ~5-10k lines/s of printing and parsing on the same 2 cores; counts then
   * come from STATS lines ('count-next' answers at the next one, with its arrival time).
   */
  readonly printTx?: boolean;
  /** quinn: directory with quinn-tpu-sink, server.key.der, server.crt.der (scripts/build-quinn-sink.sh). */
  readonly quinnDir?: string;
}

const data = workerData as SinkWorkerData;
let received = 0;
const h = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });
const record = (entryNs: bigint, finNs: bigint): void => {
  if (entryNs === 0n || entryNs > finNs) return;
  const us = Number(finNs - entryNs) / 1000;
  h.recordValue(us < 1 ? 1 : Math.round(us));
};

let port = 0;
/** 'count-next' requests waiting for the next STATS line (quiet quinn sink). */
const statsWaiters: ((atMs: number) => void)[] = [];
let stop: () => Promise<void>;
if (data.kind === 'quinn') {
  const dir = data.quinnDir!;
  const printTx = data.printTx !== false;
  // --max-tx 4096: v1 transactions (SIMD-0296) are up to 4,096 bytes; the sink's default is the legacy 1,232.
  const args = ['127.0.0.1:0', join(dir, 'server.key.der'), join(dir, 'server.crt.der'), '--max-uni', '128', '--max-tx', '4096'];
  const child: ChildProcess = spawn(join(dir, 'quinn-tpu-sink'), printTx ? [...args, '--print-tx'] : args, {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  port = await new Promise<number>((resolve) => {
    createInterface({ input: child.stdout! }).on('line', (l) => {
      if (l.startsWith('TX ')) {
        received++;
        const sp1 = l.indexOf(' ', 3);
        const sig = l.slice(3, sp1);
        let entry = 0n;
        for (let i = 7; i >= 0; i--) entry = (entry << 8n) | BigInt(parseInt(sig.slice(i * 2, i * 2 + 2), 16));
        record(entry, BigInt(l.slice(l.lastIndexOf(' ') + 1)));
      } else if (!printTx && l.startsWith('STATS ')) {
        const m = / tx=(\d+)/.exec(l);
        if (m !== null) received = Number(m[1]);
        const atMs = performance.timeOrigin + performance.now();
        for (const w of statsWaiters.splice(0)) w(atMs);
      } else if (l.startsWith('LISTEN ')) {
        resolve(Number(l.slice(l.lastIndexOf(':') + 1)));
      }
    });
  });
  stop = async () => void child.kill();
} else {
  const listener = new TpuListener({
    host: '127.0.0.1',
    port: 0,
    validatorIdentity: 'bench',
    maxStreams: 128,
    maxTransactionBytes: 4096,
    onTransaction: (tx, info) => {
      received++;
      if (tx[0] === 1) record(new DataView(tx.buffer, tx.byteOffset, tx.byteLength).getBigUint64(1, true), info.arrivalNs);
    },
  });
  await listener.start();
  port = listener.address().port;
  stop = () => listener.stop();
}

parentPort!.postMessage({ port });
parentPort!.on('message', (m: string) => {
  if (m === 'stop') void stop().then(() => process.exit(0));
  else if (m === 'lat') {
    const n = h.totalCount;
    parentPort!.postMessage({ count: n, p50: n ? h.getValueAtPercentile(50) : 0, p99: n ? h.getValueAtPercentile(99) : 0, max: n ? h.maxValue : 0 });
    h.reset();
  } else if (m === 'count-next' && data.kind === 'quinn' && data.printTx === false) {
    statsWaiters.push((atMs) => parentPort!.postMessage({ received, atMs }));
  } else parentPort!.postMessage({ received, atMs: performance.timeOrigin + performance.now() });
});
