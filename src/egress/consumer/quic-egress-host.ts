// QUIC thread 0's owner (the quic-egress role; main thread, cold). Its task consumes the QUIC ring (./consumer-run.ts,
// family 'quic': the direct and static routes), runs the telemetry probe's handshakes (probe()) and hosts jobs such
// as the QUIC ingress listener (host()); it is the thread of thread 0's connections and the only one that loads the
// quiche binding besides the quic-link threads. The task is kept running by a supervisor (src/threads/supervisor.ts,
// the quic-egress row of src/threads/policies.ts). The QUIC threads' Piscina pool (rings.quicThreads threads, made
// by createQuicPiscina) also runs the quic-link tasks (./quic-link-host.ts).
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Logger } from '../../log/logger.js';
import { ProbeClient, isProbeAnswer, unmeasured, type Prober } from '../../telemetry/probe-relay.js';
import { Supervisor } from '../../threads/supervisor.js';
import { isHostAnswer, type HostRequest, type HostedJob } from '../quic/hosted-jobs.js';
import { launchConsumer, type ConsumerRun } from './consumer-run.js';
import type { PoolContext } from './pool-context.js';

/** A job hosted by QUIC thread 0 (host()), until it ends. */
interface HostedRun {
  readonly request: HostRequest;
  readonly transferList: MessagePort[];
  readonly resolve: () => void;
  readonly reject: (err: Error) => void;
  /** Posted to the current task (its ports moved with it). */
  posted: boolean;
}

/** The Piscina pool of every QUIC thread (quic-egress and quic-link): `threads` threads, one long-lived task each. */
export function createQuicPiscina(file: URL, threads: number, log: Logger): Piscina {
  const piscina = new Piscina({ filename: file.href, minThreads: threads, maxThreads: threads, idleTimeout: Infinity, atomics: 'disabled', concurrentTasksPerWorker: 1 });
  piscina.on('error', (err: unknown) => log.error({ role: 'quic-egress', err: err instanceof Error ? err.message : String(err) }, 'QUIC threads: Piscina error'));
  return piscina;
}

export class QuicEgressHost {
  private readonly supervisor: Supervisor;
  private run: ConsumerRun | null = null;
  /** Probe requests to the current task (null while none runs). */
  private probes: ProbeClient | null = null;
  /** The current task's host port (main's end), null while none runs. */
  private hostPort: MessagePort | null = null;
  private readonly hosted = new Map<number, HostedRun>();
  private nextHostId = 1;
  private stopping = false;

  constructor(ctx: PoolContext, piscina: Piscina, index: number) {
    const o = ctx.options;
    this.supervisor = new Supervisor({
      role: 'quic-egress',
      log: o.log,
      policy: o.restartBackoffMs === undefined ? undefined : { firstBackoffMs: o.restartBackoffMs },
      fields: () => ctx.restartFields(index),
      message: 'quic-egress thread (QUIC thread 0) ended unexpectedly; restarting its consumer on the same ring',
      launch: (launch) => {
        const extras = this.openPorts();
        this.run = launchConsumer(ctx, piscina, index, 'quic', launch, { ...extras, quicLinks: ctx.quicLinks.length > 0 ? ctx.quicLinks : undefined });
        this.postHosted();
        return this.run;
      },
      onEnded: ({ stopping }) => this.failHosted(stopping ? 'QUIC thread stopped' : 'QUIC thread task ended'),
    });
  }

  /** The probe's and the hosted jobs' channels to a new task (a restart gets new ones). */
  private openPorts(): { probePort: MessagePort; hostPort: MessagePort } {
    // Probe requests to this task; answers come back on the same channel.
    const probe = new MessageChannel();
    this.probes?.close();
    const client = new ProbeClient((m) => probe.port1.postMessage(m));
    probe.port1.on('message', (m: unknown) => {
      if (isProbeAnswer(m)) client.accept(m);
    });
    probe.port1.unref();
    this.probes = client;
    // Hosted jobs (the QUIC ingress) start in this task; answers come back on the same channel.
    const host = new MessageChannel();
    host.port1.on('message', (m: unknown) => {
      if (!isHostAnswer(m)) return;
      const run = this.hosted.get(m.id);
      if (run === undefined) return;
      this.hosted.delete(m.id);
      if (m.error === null) run.resolve();
      else run.reject(new Error(m.error));
    });
    host.port1.unref();
    this.hostPort = host.port1;
    return { probePort: probe.port2, hostPort: host.port2 };
  }

  /** One probe round's handshakes (src/telemetry/probe-relay.ts); every target unmeasured while no task runs. */
  readonly probe: Prober = (targets, timeoutMs) => (this.probes === null ? Promise.resolve(unmeasured(targets)) : this.probes.probe(targets, timeoutMs));

  /**
   * Runs a job in QUIC thread 0, like Piscina.run: resolves when the job returns, rejects when it throws or the task
   * ended under it (its owner restarts it; it then goes to the replacement task).
   */
  host(job: HostedJob, task: unknown, transferList: MessagePort[]): Promise<void> {
    if (this.stopping) return Promise.reject(new Error('egress pool stopping'));
    const id = this.nextHostId++;
    return new Promise<void>((resolve, reject) => {
      this.hosted.set(id, { request: { type: 'host', id, job, task }, transferList, resolve, reject, posted: false });
      this.postHosted();
    });
  }

  /** Posts the jobs not yet posted to the current task. */
  private postHosted(): void {
    const port = this.hostPort;
    if (port === null) return;
    for (const run of this.hosted.values()) {
      if (run.posted) continue;
      run.posted = true;
      port.postMessage(run.request, run.transferList);
    }
  }

  /** The task ended: the jobs it ran ended with it (their owners restart them). */
  private failHosted(reason: string): void {
    this.hostPort?.close();
    this.hostPort = null;
    for (const [id, run] of this.hosted) {
      if (!run.posted) continue;
      this.hosted.delete(id);
      run.reject(new Error(reason));
    }
  }

  start(): void {
    this.supervisor.start();
  }

  get restarts(): number {
    return this.supervisor.restarts;
  }

  controls(): MessagePort[] {
    return this.run === null ? [] : [this.run.control];
  }

  finals(): Promise<void>[] {
    return this.run === null ? [] : [this.run.final];
  }

  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    await this.supervisor.stop(graceMs);
    this.probes?.close();
  }
}
