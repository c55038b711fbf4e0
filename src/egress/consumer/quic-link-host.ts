// The quic-link threads' owner (QUIC threads k >= 1, rings.quicThreads > 1; main thread, cold): one long-lived task per
// link on the QUIC threads' Piscina pool (./quic-egress-host.ts createQuicPiscina), each owning the connections of the
// targets it owns (src/egress/quic/quic-link-owner.ts), fed by QUIC thread 0 over its link ring; each task kept running
// by its own supervisor (src/threads/supervisor.ts, the quic-link row of src/threads/policies.ts).
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import { isThreadIdMessage } from '../../metrics/thread-cpu.js';
import { Supervisor, type LaunchContext, type SupervisedRun } from '../../threads/supervisor.js';
import { isConsumerReady } from '../contract/consumer-ready.js';
import type { QuicLinkOwnerTask } from '../quic/quic-link-owner.js';
import type { PoolContext } from './pool-context.js';

export class QuicLinkHost {
  private readonly supervisors: Supervisor[];
  private readonly controlPorts: (MessagePort | null)[];

  /** `firstIndex`: the pool slot (counter region) of link 0; link k - 1 is QUIC thread k. */
  constructor(private readonly ctx: PoolContext, private readonly piscina: Piscina, private readonly firstIndex: number) {
    const o = ctx.options;
    this.controlPorts = ctx.quicLinks.map(() => null);
    this.supervisors = ctx.quicLinks.map(
      (_, link) =>
        new Supervisor({
          role: 'quic-link',
          log: o.log,
          policy: o.restartBackoffMs === undefined ? undefined : { firstBackoffMs: o.restartBackoffMs },
          fields: () => ctx.restartFields(firstIndex + link),
          message: 'quic-link thread ended unexpectedly; restarting it on the same link',
          launch: (launch) => this.launch(link, launch),
        }),
    );
  }

  private launch(link: number, launch: LaunchContext): SupervisedRun {
    const ctx = this.ctx;
    const o = ctx.options;
    const index = this.firstIndex + link;
    const { port1, port2 } = new MessageChannel();
    this.controlPorts[link] = port1;
    port1.on('message', (m: unknown) => {
      if (isConsumerReady(m)) {
        ctx.markReady(index);
        launch.ready();
      } else if (isThreadIdMessage(m)) ctx.setQuicTid(link + 1, m.tid);
    });
    port1.unref();
    const task: QuicLinkOwnerTask = {
      kind: 'quic-link-owner',
      thread: link + 1,
      link: ctx.quicLinks[link],
      config: ctx.config(),
      plan: o.plan!,
      counters: ctx.counters,
      counterRegion: index,
      readyPort: port2,
      measurementPort: o.measurementPort?.(),
      identitySecret: o.identitySecret,
      snapshot: o.snapshot,
      testHooks: launch.attempt === 0 ? o.quicLinkTestHooks?.[link + 1] : undefined,
    };
    const transferList: MessagePort[] = task.measurementPort ? [port2, task.measurementPort] : [port2];
    const ended = this.piscina.run(task, { transferList }) as Promise<void>;
    const close = (): void => void port1.close();
    ended.then(close, close);
    return { ended };
  }

  start(): void {
    for (const s of this.supervisors) s.start();
  }

  get restarts(): number {
    return this.supervisors.reduce((n, s) => n + s.restarts, 0);
  }

  controls(): MessagePort[] {
    return this.controlPorts.filter((p): p is MessagePort => p !== null);
  }

  stop(graceMs: number): Promise<void[]> {
    return Promise.all(this.supervisors.map((s) => s.stop(graceMs)));
  }
}
