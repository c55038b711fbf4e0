// Stress for the quiche binding used from several threads of one process, as a relay does (egress workers, the
// telemetry probe, the main thread): every thread runs a TPU listener and a client connection into it and sends
// transactions as fast as stream credit allows, for a bounded time. Exit 0 and one JSON summary line when every
// thread delivered; a native crash kills the process (see src/quic/quiche.ts and docs/known-issues.md).
// Run: node dist/scripts/quiche-thread-stress.js [--threads 3] [--seconds 4]
import { Worker, isMainThread, parentPort, threadId, workerData } from 'node:worker_threads';
import { parseArgs } from 'node:util';
import { startCountingListener } from '../bench/counting-tpu-listener.js';
import { QuicClientConnection, createRandomIdentityCertificate } from '../src/quic/index.js';

interface ThreadResult {
  threadId: number;
  sent: number;
  received: number;
}

async function runPair(seconds: number): Promise<ThreadResult> {
  const sink = await startCountingListener();
  const identity = await createRandomIdentityCertificate();
  let sent = 0;
  let connection: QuicClientConnection | null = null;
  /** A transaction the transport refused (no credit / no room; maybe partly written): offered again first. */
  let next: Uint8Array | null = null;
  // A fresh buffer per transaction: every one is a new typed-array reference for the binding to release. Writes
  // until the transport refuses, then waits for onWritable (or the 2 ms tick below).
  const fill = (): void => {
    if (connection === null) return;
    for (;;) {
      const tx = next ?? new Uint8Array(200).fill(sent & 0xff);
      const r = connection.tryWrite(tx);
      if (r !== 'written') {
        next = r === 'failed' ? null : tx;
        return;
      }
      next = null;
      sent++;
    }
  };
  connection = await QuicClientConnection.connect({
    host: '127.0.0.1',
    port: sink.port,
    identity,
    onWritable: () => fill(),
  });
  const endAt = performance.now() + seconds * 1000;
  while (performance.now() < endAt) {
    fill();
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  connection.close();
  await sink.listener.stop();
  return { threadId, sent, received: sink.received() };
}

if (isMainThread) {
  const { values } = parseArgs({
    options: { threads: { type: 'string', default: '3' }, seconds: { type: 'string', default: '4' } },
  });
  const threads = Number(values.threads);
  const seconds = Number(values.seconds);
  const workers = Array.from({ length: threads }, () =>
    new Promise<ThreadResult>((resolve, reject) => {
      const worker = new Worker(new URL(import.meta.url), { workerData: { seconds } });
      worker.once('message', (result: ThreadResult) => resolve(result));
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`worker exited ${code} before reporting`)));
    }),
  );
  // The main thread uses the binding too, like a relay's main thread and telemetry probe.
  const results = await Promise.all([runPair(seconds), ...workers]);
  console.log(JSON.stringify({ threads: results.length, results }));
  process.exit(results.every((r) => r.received > 0) ? 0 : 1);
} else {
  const { seconds } = workerData as { seconds: number };
  parentPort?.postMessage(await runPair(seconds));
}
