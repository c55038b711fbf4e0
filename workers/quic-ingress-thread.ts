// The QUIC ingress's own thread, the quic-ingress thread, for a relay that has no quic-egress thread to host it (routes.discard, the benches;
// src/ingress/ingress-task-runner.ts): a Piscina task module, one long-lived task in a pool of one, that starts the QUIC
// ingress, says where it listens, and returns once the front thread asked it to stop. Everything else lives in
// src/ingress/start-quic-ingress.ts, which the relay's quic-egress thread (workers/quic-threads.ts) runs the same way.
import { startQuicIngress } from '../src/ingress/start-quic-ingress.js';
import type { QuicThreadTask } from '../src/ingress/ingress-task-runner.js';
import { publishThreadMemory } from '../src/metrics/thread-memory.js';

export default async function quicWorker(task: QuicThreadTask): Promise<void> {
  const stopMemory = publishThreadMemory('quic-ingress');
  try {
    const h = await startQuicIngress(task.ingress, task.channels);
    task.port.postMessage(h.listening);
    await h.stopped;
  } finally {
    stopMemory();
    task.port.close();
  }
}
