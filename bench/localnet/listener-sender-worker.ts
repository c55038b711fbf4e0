// Bench helper (worker thread): the sender for listener-throughput.bench.ts, off the listener's event loop. One QUIC
// connection (src/quic QuicClientConnection, a random identity) per run; writes whenever the transport can (tryWrite
// until no stream credit / no congestion room, again on onWritable and a 2 ms timer) so the listener's 128-stream
// credit is the only limit. Bounded by count and time.
// workerData: {bytes: ArrayBuffer, offsets: number[]} = N pre-signed transactions back to back (offsets has N + 1).
// Messages in: {cmd:'connect', host, port} -> {ready}; {cmd:'go', durationMs, maxCount, cycle} -> {done, given
// (written to the kernel), ms, busy (this thread's event-loop utilization during the run)}; {cmd:'stop'} exits.
// With cycle the transactions are sent round and round up to maxCount, without it each at most once.
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { QuicClientConnection, createRandomIdentityCertificate } from '../../src/quic/index.js';

interface Go {
  readonly durationMs: number;
  readonly maxCount: number;
  readonly cycle: boolean;
}

const data = workerData as { bytes: ArrayBuffer; offsets: number[] };
const all = new Uint8Array(data.bytes);
const txs: Uint8Array[] = [];
for (let i = 0; i + 1 < data.offsets.length; i++) txs.push(all.subarray(data.offsets[i], data.offsets[i + 1]));
const identity = await createRandomIdentityCertificate();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let conn: QuicClientConnection | null = null;
/** The running fill loop, called again when the connection may write again (onWritable). */
let refill = (): void => undefined;

async function run(go: Go): Promise<void> {
  const c = conn!;
  const limit = go.cycle ? go.maxCount : Math.min(go.maxCount, txs.length);
  let i = 0;
  let running = true;
  // Anything but written (no credit, no room, closed) waits for the next onWritable / tick; a transaction partly
  // written at the window edge is the same i, so it is offered again first.
  const fill = (): void => {
    while (running && i < limit && c.tryWrite(txs[i % txs.length]) === 'written') i++;
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
  // Everything given was written (its datagram with the kernel).
  const busy = performance.eventLoopUtilization(elu0).utilization;
  parentPort!.postMessage({ done: true, given: i, ms, busy });
}

parentPort!.on('message', (m: { cmd: string; host?: string; port?: number } & Partial<Go>) => {
  if (m.cmd === 'connect') {
    conn?.close();
    void (async () => {
      conn = await QuicClientConnection.connect({
        host: m.host!,
        port: m.port!,
        identity,
        onWritable: () => refill(),
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

