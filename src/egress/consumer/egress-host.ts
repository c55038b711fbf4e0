// The egress workers' owner (main thread, cold): one Piscina pool of rings.workers threads, one long-lived consumer
// task per egress ring (./consumer-run.ts), each task kept running by its own supervisor (src/threads/supervisor.ts,
// the egress row of src/threads/policies.ts). Piscina runs with atomics 'disabled' (its default 'sync' mode parks
// idle threads in Atomics.wait, which would block their event loop) and idleTimeout Infinity; it replaces a dead
// thread, the supervisor decides when the ring's task runs again.
import type { MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { Supervisor } from '../../threads/supervisor.js';
import { launchConsumer, type ConsumerRun } from './consumer-run.js';
import type { PoolContext } from './pool-context.js';

export class EgressHost {
  private readonly piscina: Piscina;
  private readonly supervisors: Supervisor[];
  private readonly runs: (ConsumerRun | null)[];

  constructor(private readonly ctx: PoolContext, rings: number) {
    const o = ctx.options;
    const workerFile = o.workerFile ?? new URL('../../../workers/egress-worker.js', import.meta.url);
    this.piscina = new Piscina({ filename: workerFile.href, minThreads: rings, maxThreads: rings, idleTimeout: Infinity, atomics: 'disabled', concurrentTasksPerWorker: 1 });
    // Piscina reports thread-level errors here too; the task's rejection drives the restart.
    this.piscina.on('error', (err: unknown) => o.log.error({ role: 'egress', err: err instanceof Error ? err.message : String(err) }, 'egress worker: Piscina error'));
    this.runs = Array.from({ length: rings }, () => null);
    this.supervisors = this.runs.map(
      (_, index) =>
        new Supervisor({
          role: 'egress',
          log: o.log,
          policy: o.restartBackoffMs === undefined ? undefined : { firstBackoffMs: o.restartBackoffMs },
          fields: () => ctx.restartFields(index),
          message: 'egress consumer ended unexpectedly; restarting it on the same ring',
          launch: (launch) => (this.runs[index] = launchConsumer(ctx, this.piscina, index, 'workers', launch)),
        }),
    );
  }

  start(): void {
    for (const s of this.supervisors) s.start();
  }

  get restarts(): number {
    return this.supervisors.reduce((n, s) => n + s.restarts, 0);
  }

  /** Each current task's control port (a reload's log level). */
  controls(): MessagePort[] {
    return this.runs.flatMap((r) => (r === null ? [] : [r.control]));
  }

  /** The last latency histograms of the tasks that ran. */
  finals(): Promise<void>[] {
    return this.runs.flatMap((r) => (r === null ? [] : [r.final]));
  }

  /** No more restarts; each task (asked to stop by its ring's STOP word) gets `graceMs` to return. */
  stop(graceMs: number): Promise<void[]> {
    return Promise.all(this.supervisors.map((s) => s.stop(graceMs)));
  }

  destroy(): Promise<void> {
    return this.piscina.destroy();
  }
}
