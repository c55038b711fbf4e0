// Bench helper (worker thread): the sender for listener-throughput.bench.ts, off the listener's event loop. One QUIC
// connection (src/quic QuicClientConnection, a random identity) per run; keeps its wait queue topped up so the
// listener's 128-stream credit is the only limit. Bounded by count and time.
// workerData: {bytes: ArrayBuffer, offsets: number[]} = N pre-signed transactions back to back (offsets has N + 1).
// Messages in: {cmd:'connect', host, port} -> {ready}; {cmd:'go', durationMs, maxCount, cycle} -> {done, given,
// queuedAtEnd, ms, busy (this thread's event-loop utilization during the run)}; {cmd:'stop'} exits. With cycle the transactions are sent round and round up to maxCount,
// without it each at most once.
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { QuicClientConnection, createRandomIdentityCertificate } from '../../src/quic/index.js';

interface Go {
  readonly durationMs: number;
  readonly maxCount: number;
  readonly cycle: boolean;
}

const QUEUE_TARGET = 1024;
const data = workerData as { bytes: ArrayBuffer; offsets: number[] };
const all = new Uint8Array(data.bytes);
const txs: Uint8Array[] = [];
for (let i = 0; i + 1 < data.offsets.length; i++) txs.push(all.subarray(data.offsets[i], data.offsets[i + 1]));
const identity = await createRandomIdentityCertificate();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let conn: QuicClientConnection | null = null;
/** The running fill loop, called again when the connection's wait queue drains. */
let refill = (): void => undefined;

async function run(go: Go): Promise<void> {
  const c = conn!;
  const limit = go.cycle ? go.maxCount : Math.min(go.maxCount, txs.length);
  let i = 0;
  let running = true;
  const fill = (): void => {
    while (running && i < limit && c.queued < QUEUE_TARGET && c.trySendTransaction(txs[i % txs.length]) !== false) i++;
  };
  refill = fill;
  const t0 = performance.now();
  const elu0 = performance.eventLoopUtilization();
  while (performance.now() - t0 < go.durationMs && i < limit) {
    fill();
    await sleep(2);
  }
  running = false;
  refill = () => undefined;
  const ms = performance.now() - t0;
  // Everything given to trySendTransaction: written now or still queued (sent on the next credit).
  const busy = performance.eventLoopUtilization(elu0).utilization;
  parentPort!.postMessage({ done: true, given: i, queuedAtEnd: c.queued, ms, busy });
}

parentPort!.on('message', (m: { cmd: string; host?: string; port?: number } & Partial<Go>) => {
  if (m.cmd === 'connect') {
    conn?.close();
    void (async () => {
      conn = await QuicClientConnection.connect({
        host: m.host!,
        port: m.port!,
        identity,
        maxQueuedTransactions: 2 * QUEUE_TARGET,
        copyQueued: false, // the pre-signed buffers never change
        onDrain: () => refill(),
      });
      parentPort!.postMessage({ ready: true });
    })();
  } else if (m.cmd === 'go') {
    void run(m as Go);
  } else if (m.cmd === 'stop') {
    conn?.close();
    process.exit(0);
  }
});

