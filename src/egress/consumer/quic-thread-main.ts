// The quic-egress thread's body (QUIC thread 0 of the QUIC threads' Piscina pool, one long-lived task; HOT): consumes the QUIC ring with the
// QUIC routes, answers the telemetry probe's handshakes and hosts the QUIC ingress listener when the front asks, so
// every QUIC socket of the process and the one quiche load are here (docs/architecture.md). Returns when the pool sets
// the ring's STOP word, like every egress consumer.
import type { MessagePort } from 'node:worker_threads';
import { serveProbes } from '../../telemetry/probe-relay.js';
import { runEgressConsumer, type EgressTask } from './consumer-loop.js';
import { isHostRequest, type HostAnswer } from '../quic/hosted-jobs.js';
import { THREAD_ID_KIND, currentThreadId, type ThreadIdMessage } from '../../metrics/thread-cpu.js';
import { createLogger } from '../../log/logger.js';
import type { LocalDispatch } from '../../ingress/local-admission.js';
import type { LocalSendHost } from '../../ingress/start-quic-ingress.js';

/**
 * The consumer loop's local dispatch (local-dispatch.ts, set up by consumer-loop.ts) while it runs: the QUIC
 * ingress's local admission sends through it (src/ingress/local-admission.ts). One per thread; a restarted loop sets
 * its own.
 */
let localDispatch: LocalDispatch | null = null;

export function runQuicThread(task: EgressTask): Promise<void> {
  const tid = currentThreadId();
  if (tid !== null) task.latencyPort?.postMessage({ kind: THREAD_ID_KIND, tid } satisfies ThreadIdMessage);
  if (task.probePort !== undefined) serveProbes(task.probePort);
  if (task.hostPort !== undefined) serveHostRequests(task.hostPort, task);
  return runEgressConsumer(task, { exposeLocal: (d) => (localDispatch = d) });
}

/** Runs each hosted job (the QUIC ingress) in this thread; answers when it ends. */
function serveHostRequests(port: MessagePort, egress: EgressTask): void {
  const log = createLogger(egress.config.log.level, 'quic-egress', { job: 'quic-ingress' });
  const host: LocalSendHost = { dispatch: () => localDispatch, receipts: egress.receipts, log };
  port.on('message', (m: unknown) => {
    if (!isHostRequest(m)) return;
    void runHosted(m.job, m.task, host).then(
      () => port.postMessage({ type: 'host-ended', id: m.id, error: null } satisfies HostAnswer),
      (err: unknown) => port.postMessage({ type: 'host-ended', id: m.id, error: err instanceof Error ? err.message : String(err) } satisfies HostAnswer),
    );
  });
  port.unref();
}

async function runHosted(job: 'quic-ingress', task: unknown, host: LocalSendHost): Promise<void> {
  if (job !== 'quic-ingress') throw new Error(`QUIC thread: unknown hosted job ${String(job)}`);
  // The QUIC ingress's own task (workers/quic-ingress-thread.ts does the same in a thread of its own): start the listener, say
  // where it listens, return once the front asked it to stop. Imported here so a QUIC thread without it never loads it.
  const { startQuicIngress } = await import('../../ingress/start-quic-ingress.js');
  const t = task as import('../../ingress/ingress-task-runner.js').QuicThreadTask;
  try {
    const h = await startQuicIngress(t.ingress, t.channels, host);
    t.port.postMessage(h.listening);
    await h.stopped;
  } finally {
    t.port.close();
  }
}
