// The QUIC thread's entry (Piscina task module; one long-lived task in a pool of one): starts the QUIC ingress, says
// where it listens, and returns once the front thread asked it to stop. Everything else lives in
// src/ingress/start-quic-ingress.ts, so this thread can host the egress's QUIC connections as well later.
import { startQuicIngress } from '../src/ingress/start-quic-ingress.js';
import type { QuicThreadTask } from '../src/ingress/quic-thread-pool.js';
import { publishThreadMemory } from '../src/metrics/thread-memory.js';

export default async function quicWorker(task: QuicThreadTask): Promise<void> {
  const stopMemory = publishThreadMemory('quic-ingress');
  try {
    const h = await startQuicIngress(task.ingress, task.channels);
    task.port.postMessage({ event: 'listening', host: h.address.host, port: h.address.port });
    await h.stopped;
  } finally {
    stopMemory();
    task.port.close();
  }
}
