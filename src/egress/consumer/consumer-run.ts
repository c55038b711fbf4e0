// One run of a ring consumer task on a Piscina thread (main thread, cold: once per start and restart), for the
// egress workers (./egress-host.ts) and QUIC thread 0 (./quic-egress-host.ts): the control port (latency histograms,
// readiness, thread id, log level), the task payload, the run. One long-lived task per ring, never one per
// transaction (pool.run costs ~30-80 us); the replacement resumes at the ring's TAIL.
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import type { RouteFamily } from '../../config/route-plan.js';
import { isLatencyFinal } from '../../metrics/histogram-merge.js';
import { isThreadIdMessage } from '../../metrics/thread-cpu.js';
import type { LaunchContext, SupervisedRun } from '../../threads/supervisor.js';
import { isConsumerReady } from '../contract/consumer-ready.js';
import type { EgressTask } from './consumer-loop.js';
import type { PoolContext } from './pool-context.js';

export interface ConsumerRun extends SupervisedRun {
  /** Main's end of the task's port (latency / ready): a reload's log.level goes down it. */
  readonly control: MessagePort;
  /** Resolves when the consumer sent its last latency histogram. */
  readonly final: Promise<void>;
}

/** What only QUIC thread 0's task carries (its probe and host ports, its links). */
export interface QuicExtras {
  readonly probePort?: MessagePort;
  readonly hostPort?: MessagePort;
  readonly quicLinks?: EgressTask['quicLinks'];
}

export function launchConsumer(ctx: PoolContext, piscina: Piscina, index: number, family: RouteFamily, launch: LaunchContext, extras: QuicExtras = {}): ConsumerRun {
  const o = ctx.options;
  const { port1, port2 } = new MessageChannel();
  const final = new Promise<void>((resolve) => {
    port1.on('message', (m: unknown) => {
      if (isLatencyFinal(m)) resolve();
      else if (isConsumerReady(m)) {
        ctx.markReady(index);
        launch.ready();
      } else if (isThreadIdMessage(m)) ctx.setQuicTid(0, m.tid);
      else ctx.latency.accept(m);
    });
  });
  port1.unref();
  const plan = o.plan;
  const task: EgressTask = {
    ringIndex: index,
    ring: ctx.allRings[index],
    counters: ctx.counters,
    config: ctx.config(), // cloned into the worker (frozen again there: workers/egress-worker.ts); not workerData
    attempt: launch.attempt,
    latencyPort: port2,
    testHooks: o.testHooks?.[index],
    snapshot: o.snapshot,
    measurementPort: o.measurementPort?.(),
    identitySecret: o.identitySecret,
    receipts: o.receipts,
    widen: o.widen,
    sojourn: o.sojourn,
    plan,
    family: plan === undefined ? undefined : family,
    join: ctx.join ?? undefined,
    ...extras,
  };
  const transferList: MessagePort[] = task.measurementPort ? [port2, task.measurementPort] : [port2];
  if (extras.probePort !== undefined) transferList.push(extras.probePort);
  if (extras.hostPort !== undefined) transferList.push(extras.hostPort);
  const ended = piscina.run(task, { transferList }) as Promise<void>;
  // Let the last histogram flush arrive before the port goes away.
  const close = (): void => void setTimeout(() => port1.close(), 100).unref();
  ended.then(close, close);
  return { ended, control: port1, final };
}
