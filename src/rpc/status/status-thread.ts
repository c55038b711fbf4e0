// A status thread, its owner's side (cold; owned by the thread whose getSignatureStatuses calls it takes: the front
// for the receipts' landing tracker, each egress consumer thread for its rebroadcast scheduler): a worker_thread that
// makes the calls (status-thread-main.ts), so that the requests' JSON, undici's HTTP and the answers' parse (8 calls of
// 256 signatures per landing poll, up to 40 per rebroadcast poll of a full retry queue) do not run on a thread that
// carries transactions (issue #28 item 2). The owner posts a poll's signatures in one message and gets their statuses
// back in one (a round trip per call would wake the owner once per call); what the statuses mean stays with the
// owner, which applies them.
// While the thread is down (it died, or has not posted `ready` yet) the asker given as `fallback` asks from the owner's
// thread, so following transactions never stops nor waits: a thread still loading its modules on a busy host (over a
// second seen on CI) would otherwise hold the first polls, and a rebroadcast scheduler whose first poll waits sends
// every queued transaction again, landed or not. The thread is started again after a backoff, and one not ready in time
// is ended and replaced, as its role's row of src/threads/policies.ts says (src/threads/supervisor.ts does it). A poll the thread cannot answer (it ended,
// was stopped, or missed its calls' upstream timeouts plus ANSWER_SLACK_MS, when it is wedged and is ended and
// replaced) is answered as a failed call, with no values: like every asker, ask() settles with answers and never
// rejects, and the owner asks again at its next poll.
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../log/logger.js';
import { Supervisor, workerRun, type SupervisedRun } from '../../threads/supervisor.js';
import { callsFor, type AskedBy, type SignatureStatusAsker, type StatusAnswers } from './signature-statuses.js';
import { isStatusAnswer, isStatusThreadReady, type StatusAsk, type StatusThreadData } from './status-thread-main.js';

/** How much longer than the upstream timeout an answer may take before the call counts as failed. */
const ANSWER_SLACK_MS = 1_000;

export interface StatusThreadOptions {
  /** The thread's name and its role in the per-thread memory metrics (receipt-status, retry-status). */
  readonly role: 'receipt-status' | 'retry-status';
  readonly url: string;
  readonly timeoutMs: number;
  readonly log: Logger;
  /** Asks while the thread is down (the same upstream, from the front). */
  readonly fallback: SignatureStatusAsker;
  /** Default: dist/workers/status-worker.js (from this module's dist/src/rpc/status/). */
  readonly workerFile?: URL;
  /** Tests only: the thread honours {type: 'crash'}. */
  readonly allowTestCrash?: boolean;
  /** Tests only (with allowTestCrash): the thread is ready this much later than it would be. */
  readonly testStartDelayMs?: number;
}

/** A poll the thread could not answer: nothing asked, as after a failed first call. */
function unanswered(failure: string): StatusAnswers {
  return { values: [], failure };
}

interface Pending {
  readonly resolve: (answers: StatusAnswers) => void;
  /** Fails the poll when the thread has not answered within its calls' timeouts plus ANSWER_SLACK_MS. */
  readonly timer: NodeJS.Timeout;
}

export class StatusThread implements SignatureStatusAsker {
  /** The current thread (null while none runs); it answers polls once its run is ready. */
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private stopped = false;
  /** Spawn, ready, restart with backoff, start-up timeout: the role's row of src/threads/policies.ts. */
  private readonly supervisor: Supervisor;
  /** Polls asked, by the thread whose calls answered them. */
  readonly polls: Record<AskedBy, number> = { status_thread: 0, caller: 0 };

  constructor(private readonly o: StatusThreadOptions) {
    this.supervisor = new Supervisor({
      role: o.role,
      log: o.log,
      level: 'warn',
      message: 'a status thread ended; its owner asks until it is back',
      unrefTimers: true,
      launch: ({ ready }) => this.launch(ready),
      onEnded: ({ stopping }) => {
        this.worker = null;
        this.failPending(stopping ? 'the status thread was stopped' : 'the status thread ended');
      },
    });
  }

  /** Times the thread ended without being asked to. */
  get restarts(): number {
    return this.supervisor.restarts;
  }

  /** Resolves true once a thread is ready (at once if one is), false after `ms` (cold: the relay's start). */
  async whenReady(ms: number): Promise<boolean> {
    const end = Date.now() + ms;
    while (!this.running) {
      if (Date.now() >= end || this.stopped) return false;
      await new Promise((r) => setTimeout(r, 10));
    }
    return true;
  }

  /** Whether a thread is up and ready to take the next poll (else the fallback takes it). */
  get running(): boolean {
    return this.worker !== null && this.supervisor.ready;
  }

  start(): void {
    this.supervisor.start();
  }

  private launch(ready: () => void): SupervisedRun {
    const file = this.o.workerFile ?? new URL('../../../workers/status-worker.js', import.meta.url);
    const data: StatusThreadData = { role: this.o.role, url: this.o.url, timeoutMs: this.o.timeoutMs, allowTestCrash: this.o.allowTestCrash === true, testStartDelayMs: this.o.testStartDelayMs };
    const w = new Worker(file, { workerData: data, name: this.o.role });
    w.unref(); // its owner's close stops it; nothing else must wait for it
    this.worker = w;
    w.on('message', (m: unknown) => {
      if (isStatusThreadReady(m)) {
        ready();
        return;
      }
      if (!isStatusAnswer(m)) return;
      const p = this.pending.get(m.id);
      if (p === undefined) return; // answered after its deadline: its owner has moved on
      this.pending.delete(m.id);
      clearTimeout(p.timer);
      p.resolve(m.answers);
    });
    w.on('error', (err) => this.o.log.warn({ event: 'status_thread_error', role: this.o.role, err: err.message }, 'a status thread failed'));
    return workerRun(w);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.worker = null; // the owner asks from now on
    this.failPending('the status thread was stopped');
    await this.supervisor.stop();
  }

  ask(signatures: readonly string[]): Promise<StatusAnswers> {
    const w = this.worker;
    if (w === null || !this.supervisor.ready) {
      this.polls.caller++;
      return this.o.fallback.ask(signatures);
    }
    this.polls.status_thread++;
    return new Promise((resolve) => {
      const id = this.nextId++;
      this.pending.set(id, { resolve, timer: this.deadline(id, callsFor(signatures.length) * this.o.timeoutMs + ANSWER_SLACK_MS, w) });
      w.postMessage({ type: 'ask', id, signatures } satisfies StatusAsk);
    });
  }

  /** Tests only (allowTestCrash): the thread throws. */
  crashForTest(): void {
    this.worker?.postMessage({ type: 'crash' });
  }

  /** Tests only (allowTestCrash): the thread stops answering, as a wedged one would. */
  hangForTest(): void {
    this.worker?.postMessage({ type: 'hang' });
  }

  /** The poll's timer: unanswered after `ms`, the poll fails and the thread, wedged, is ended. */
  private deadline(id: number, ms: number, w: Worker): NodeJS.Timeout {
    const timer = setTimeout(() => {
      const p = this.pending.get(id);
      if (p === undefined) return;
      this.pending.delete(id);
      p.resolve(unanswered('the status thread did not answer in time'));
      // Its calls time out on their own, so a thread this late is wedged: end it (its owner asks until the
      // replacement is up) rather than send it every later poll.
      if (this.worker === w) void w.terminate();
    }, ms);
    timer.unref();
    return timer;
  }

  private failPending(message: string): void {
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.resolve(unanswered(message));
    }
    this.pending.clear();
  }
}
