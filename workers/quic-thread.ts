// QUIC thread entry (Piscina task module of the QUIC pool, size 1: one long-lived task on the QUIC ring). The config
// arrives in the task payload (structured-cloned, so it is deep-frozen again here, as in workers/egress-worker.ts).
// Everything else lives in src/egress/quic-thread.ts.
import { deepFreeze } from '../src/config/freeze.js';
import type { EgressTask } from '../src/egress/consumer-loop.js';
import { runQuicThread } from '../src/egress/quic-thread.js';

export default function quicThread(task: EgressTask): Promise<void> {
  deepFreeze(task.config);
  deepFreeze(task.plan);
  return runQuicThread(task);
}
