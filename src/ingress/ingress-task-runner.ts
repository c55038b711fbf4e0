// Runs the QUIC ingress task (main thread side, cold): in the relay it is hosted by the quic-egress thread (QUIC
// thread 0, EgressPool.hostInQuicThread); a relay without one (routes.discard, the benches) gets a Piscina pool of one
// quic-ingress thread of its own (workers/quic-ingress-thread.ts). Piscina with atomics 'disabled' (its 'sync' mode parks idle threads in
// Atomics.wait, which would stop the thread's event loop). A task that ends before stop() (a crash) is started again
// on the same rings and port by the common supervisor (src/threads/supervisor.ts, the quic-ingress row of
// src/threads/policies.ts, hosted or not); the first task's failure to listen is start()'s rejection, not restarted.
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Logger } from '../log/logger.js';
import { Supervisor, type SupervisedRun } from '../threads/supervisor.js';
import { createIngressCounters } from '../shm/ingress-layout.js';
import { createMessageRing, requestMessageRingStop } from '../shm/message-ring.js';
import { createLocalSlab } from '../shm/local-slab-layout.js';
import { ingressPayloadBytes, type IngressListening, type QuicIngressChannels, type QuicIngressOptions } from './start-quic-ingress.js';

/** What the QUIC ingress task receives (in the quic-egress or the quic-ingress thread) (structured-cloned; the rings and counters are shared, not copied). */
export interface QuicThreadTask {
  readonly ingress: QuicIngressOptions;
  readonly channels: QuicIngressChannels;
  /** Carries an IngressListening (the bound address, the socket's buffers) once the socket is bound. */
  readonly port: import('node:worker_threads').MessagePort;
}

/** Runs the task in a thread that already exists: the relay's quic-egress thread (EgressPool.hostInQuicThread). */
export type QuicTaskHost = (task: QuicThreadTask, transferList: import('node:worker_threads').MessagePort[]) => Promise<void>;

export class IngressTaskRunner {
  readonly channels: QuicIngressChannels;
  /** Its own thread, only when no host runs the task (the relay hosts it in its quic-egress thread: src/main.ts). */
  private readonly piscina: Piscina | null;
  private stopping = false;
  private options: QuicIngressOptions;
  private readonly supervisor: Supervisor;
  /** start()'s promise: the first task's listening message, or its failure before it. */
  private first: { resolve: (l: IngressListening) => void; reject: (err: Error) => void } | null = null;

  constructor(
    options: QuicIngressOptions,
    queueSlots: number,
    private readonly log: Logger,
    workerFile: URL = new URL('../../workers/quic-ingress-thread.js', import.meta.url),
    private readonly host: QuicTaskHost | null = null,
    /** The per-key budgets (src/shm/budget-layout.ts), for local admission (options.localAdmission); null = none. */
    budgets: SharedArrayBuffer | null = null,
    /** Admission by delay's board and the QUIC ring consumer's row, for local admission; null = not read. */
    sojourn: { readonly sab: SharedArrayBuffer; readonly writer: number } | null = null,
  ) {
    this.options = options;
    const payload = ingressPayloadBytes(options.maxTransactionBytes);
    const local = options.localAdmission === true && budgets !== null && host !== null;
    this.channels = {
      requests: createMessageRing(queueSlots, payload),
      replies: createMessageRing(queueSlots, payload),
      counters: createIngressCounters(),
      // The slab lives here, not in the thread running the task, so a replacement thread replays what its predecessor accepted.
      ...(local ? { budgets: budgets, slab: createLocalSlab(queueSlots, options.maxTransactionBytes) } : {}),
      ...(local && sojourn !== null ? { sojourn: sojourn.sab, sojournWriter: sojourn.writer } : {}),
    };
    this.piscina = host !== null ? null : new Piscina({
      filename: workerFile.href,
      minThreads: 1,
      maxThreads: 1,
      idleTimeout: Infinity,
      atomics: 'disabled',
      concurrentTasksPerWorker: 1,
    });
    this.piscina?.on('error', (err: unknown) => this.log.error({ err: String(err), role: 'quic-ingress' }, 'QUIC ingress thread: Piscina error'));
    this.supervisor = new Supervisor({
      role: 'quic-ingress',
      log,
      unrefTimers: true,
      restartIfFirstNeverReady: false,
      message: host !== null ? 'QUIC ingress task ended unexpectedly (the quic-egress thread hosts it); restarting it' : 'QUIC ingress thread ended unexpectedly; restarting it',
      launch: ({ ready }) => this.launch(ready),
      onEnded: ({ attempt, err, wasReady }) => {
        if (attempt !== 0 || wasReady) return;
        this.first?.reject(err instanceof Error ? err : new Error(err === null ? 'the QUIC ingress task returned before it listened' : String(err)));
        this.first = null;
      },
    });
  }

  /** Starts the thread; resolves with the bound address, rejects when the listener cannot start (port in use...). */
  start(): Promise<IngressListening> {
    return new Promise((resolve, reject) => {
      this.first = { resolve, reject };
      this.supervisor.start();
    });
  }

  private launch(ready: () => void): SupervisedRun {
    const { port1, port2 } = new MessageChannel();
    port1.on('message', (m: IngressListening) => {
      if (m.event !== 'listening') return;
      // A restart keeps the port it got first, so clients reconnect to the same address.
      this.options = { ...this.options, port: m.port };
      ready();
      this.first?.resolve(m);
      this.first = null;
    });
    const task: QuicThreadTask = { ingress: this.options, channels: this.channels, port: port2 };
    const run = this.host !== null ? this.host(task, [port2]) : (this.piscina!.run(task, { transferList: [port2] }) as Promise<void>);
    const close = (): void => void port1.close();
    run.then(close, close);
    return { ended: run };
  }

  get restartCount(): number {
    return this.supervisor.restarts;
  }

  /** Closes every QUIC connection (code 4) and the thread. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    // The replies ring's STOP word: the ingress's loop returns and closes its connections.
    requestMessageRingStop(this.channels.replies);
    await this.supervisor.stop(); // the row's grace; a Piscina task is not killed here, destroy() ends its thread
    await this.piscina?.destroy();
  }
}
