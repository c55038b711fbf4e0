// Runs the QUIC ingress task (main thread side, cold): in the relay it is hosted by the QUIC thread
// (EgressPool.hostInQuicThread); a relay without one (routes.discard, the benches) gets a Piscina pool of one thread
// of its own (workers/quic-ingress-thread.ts). Piscina with atomics 'disabled' (its 'sync' mode parks idle threads in
// Atomics.wait, which would stop the thread's event loop). A task that ends before stop() (a crash) is started again
// after a short delay on the same rings and port.
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Logger } from '../log/logger.js';
import { createIngressCounters } from '../shm/ingress-layout.js';
import { createMessageRing, requestMessageRingStop } from '../shm/message-ring.js';
import { createLocalSlab } from '../shm/local-slab-layout.js';
import { ingressPayloadBytes, type IngressListening, type QuicIngressChannels, type QuicIngressOptions } from './start-quic-ingress.js';

/** What the QUIC thread's task receives (structured-cloned; the rings and counters are shared, not copied). */
export interface QuicThreadTask {
  readonly ingress: QuicIngressOptions;
  readonly channels: QuicIngressChannels;
  /** Carries an IngressListening (the bound address, the socket's buffers) once the socket is bound. */
  readonly port: import('node:worker_threads').MessagePort;
}

/** Runs the task in a thread that already exists: the relay's QUIC thread (EgressPool.hostInQuicThread). */
export type QuicTaskHost = (task: QuicThreadTask, transferList: import('node:worker_threads').MessagePort[]) => Promise<void>;

const RESTART_DELAY_MS = 500;
const STOP_GRACE_MS = 2_000;

export class IngressTaskRunner {
  readonly channels: QuicIngressChannels;
  /** Its own thread, only when no host runs the task (the relay hosts it in its one QUIC thread: src/main.ts). */
  private readonly piscina: Piscina | null;
  private task: Promise<void> | null = null;
  private stopping = false;
  private restarts = 0;
  private options: QuicIngressOptions;

  constructor(
    options: QuicIngressOptions,
    queueSlots: number,
    private readonly log: Logger,
    workerFile: URL = new URL('../../workers/quic-ingress-thread.js', import.meta.url),
    private readonly host: QuicTaskHost | null = null,
    /** The per-key budgets (src/shm/budget-layout.ts), for local admission (options.localAdmission); null = none. */
    budgets: SharedArrayBuffer | null = null,
  ) {
    this.options = options;
    const payload = ingressPayloadBytes(options.maxTransactionBytes);
    const local = options.localAdmission === true && budgets !== null && host !== null;
    this.channels = {
      requests: createMessageRing(queueSlots, payload),
      replies: createMessageRing(queueSlots, payload),
      counters: createIngressCounters(),
      // The slab lives here, not in the QUIC thread, so a replacement thread replays what its predecessor accepted.
      ...(local ? { budgets: budgets, slab: createLocalSlab(queueSlots, options.maxTransactionBytes) } : {}),
    };
    this.piscina = host !== null ? null : new Piscina({
      filename: workerFile.href,
      minThreads: 1,
      maxThreads: 1,
      idleTimeout: Infinity,
      atomics: 'disabled',
      concurrentTasksPerWorker: 1,
    });
    this.piscina?.on('error', (err: unknown) => this.log.error({ err: String(err) }, 'QUIC thread: worker error'));
  }

  /** Starts the thread; resolves with the bound address, rejects when the listener cannot start (port in use...). */
  start(): Promise<IngressListening> {
    return new Promise((resolve, reject) => {
      let listening = false;
      const { port1, port2 } = new MessageChannel();
      port1.on('message', (m: IngressListening) => {
        if (m.event !== 'listening') return;
        listening = true;
        // A restart keeps the port it got first, so clients reconnect to the same address.
        this.options = { ...this.options, port: m.port };
        resolve(m);
      });
      const task: QuicThreadTask = { ingress: this.options, channels: this.channels, port: port2 };
      const run = this.host !== null ? this.host(task, [port2]) : this.piscina!.run(task, { transferList: [port2] });
      this.task = run.then(
        () => this.ended(null, listening),
        (err: unknown) => {
          if (!listening) reject(err instanceof Error ? err : new Error(String(err)));
          this.ended(err, listening);
        },
      );
      void this.task.finally(() => port1.close());
    });
  }

  private ended(err: unknown, wasListening: boolean): void {
    if (this.stopping || !wasListening) return;
    this.restarts++;
    this.log.error({ event: 'quic_thread_restart', restarts: this.restarts, err: err === null ? 'returned' : String(err) }, 'QUIC thread ended unexpectedly; restarting it');
    setTimeout(() => {
      if (!this.stopping) this.start().catch((e: unknown) => this.log.error({ err: String(e) }, 'QUIC thread restart failed'));
    }, RESTART_DELAY_MS).unref();
  }

  get restartCount(): number {
    return this.restarts;
  }

  /** Closes every QUIC connection (code 4) and the thread. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    // The replies ring's STOP word: the QUIC thread's loop returns and closes its connections.
    requestMessageRingStop(this.channels.replies);
    await Promise.race([this.task, new Promise((r) => setTimeout(r, STOP_GRACE_MS).unref())]);
    await this.piscina?.destroy();
  }
}
