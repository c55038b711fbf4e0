// QUIC threads' entry (Piscina task module of the QUIC pool, rings.quicThreads threads, one long-lived task each): thread
// 0's task (the quic-egress role) consumes the QUIC ring (src/egress/consumer/quic-egress-main.ts), each other thread's (the quic-link role) owns its share of the connections
// (src/egress/quic/quic-link-owner.ts). The config arrives in the task payload (structured-cloned, so it is deep-frozen
// again here, as in workers/egress-worker.ts).
import { deepFreeze } from '../src/config/freeze.js';
import type { EgressTask } from '../src/egress/consumer/consumer-loop.js';
import { runQuicEgress } from '../src/egress/consumer/quic-egress-main.js';
import { isQuicLinkOwnerTask, runQuicLinkOwner, type QuicLinkOwnerTask } from '../src/egress/quic/quic-link-owner.js';
import { publishThreadMemory } from '../src/metrics/thread-memory.js';

export default async function quicThread(task: EgressTask | QuicLinkOwnerTask): Promise<void> {
  deepFreeze(task.config);
  deepFreeze(task.plan);
  const owner = isQuicLinkOwnerTask(task);
  const stop = publishThreadMemory(owner ? 'quic-link' : 'quic-egress');
  try {
    await (owner ? runQuicLinkOwner(task) : runQuicEgress(task));
  } finally {
    stop();
  }
}
