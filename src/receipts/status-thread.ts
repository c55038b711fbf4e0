// The receipts' status thread, front side (front thread, cold): a worker_thread that makes the landing tracker's
// getSignatureStatuses calls (status-thread-main.ts), so that the request's JSON, undici's HTTP and the parse of the
// answer (up to 8 calls of 256 signatures every receipts.pollMs, ~8-15% of the front's busy time at 5,000 tx/s in the
// wire bench, issue #28) no longer run on the thread that carries the transactions. The front posts a poll's
// signatures in one message and gets their statuses back in one (a round trip per call cost the front ~0.2 ms each in
// bench/wire/status-poll.bench.ts); the table, its states and the metrics stay on the front, which applies them.
// While the thread is down (it died, or has not started) the asker given as `fallback` asks from the front, so
// landing detection never stops; the thread is started again after a backoff (doubling, up to RESTART_MAX_MS). A poll
// the thread does not answer within its calls' upstream timeouts plus ANSWER_SLACK_MS fails like a failed call: the
// tracker logs it and asks again at its next poll.
import { Worker } from 'node:worker_threads';
import type { Logger } from '../log/logger.js';
import { callsFor, type AskedBy, type SignatureStatusAsker, type StatusAnswers } from './status-asker.js';
import { isStatusAnswer, type StatusAsk, type StatusThreadData } from './status-thread-main.js';

const RESTART_MIN_MS = 500;
const RESTART_MAX_MS = 10_000;
/** A thread that ran this long before dying starts the backoff over. */
const STABLE_MS = 30_000;
/** How much longer than the upstream timeout an answer may take before the call counts as failed. */
const ANSWER_SLACK_MS = 1_000;

export interface StatusThreadOptions {
  readonly url: string;
  readonly timeoutMs: number;
  readonly log: Logger;
  /** Asks while the thread is down (the same upstream, from the front). */
  readonly fallback: SignatureStatusAsker;
  /** Default: dist/workers/receipt-status-worker.js (next to this module's dist/src/receipts/). */
  readonly workerFile?: URL;
  /** Tests only: the thread honours {type: 'crash'}. */
  readonly allowTestCrash?: boolean;
}

interface Pending {
  readonly resolve: (answers: StatusAnswers) => void;
  readonly reject: (err: Error) => void;
  readonly timer: NodeJS.Timeout;
}

export class StatusThread implements SignatureStatusAsker {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | null = null;
  private backoffMs = RESTART_MIN_MS;
  private startedAt = 0;
  /** Polls asked, by the thread whose calls answered them (slotrelay_receipts_status_polls_total). */
  readonly polls: Record<AskedBy, number> = { status_thread: 0, front: 0 };
  /** Times the thread ended without being asked to (slotrelay_receipts_status_thread_restarts_total). */
  restarts = 0;

  constructor(private readonly o: StatusThreadOptions) {}

  /** Whether a thread is up to take the next call. */
  get running(): boolean {
    return this.worker !== null;
  }

  start(): void {
    if (this.worker !== null || this.stopping) return;
    const file = this.o.workerFile ?? new URL('../../workers/receipt-status-worker.js', import.meta.url);
    const data: StatusThreadData = { url: this.o.url, timeoutMs: this.o.timeoutMs, allowTestCrash: this.o.allowTestCrash === true };
    const w = new Worker(file, { workerData: data, name: 'receipt-status' });
    w.unref(); // the relay's shutdown stops it; nothing else must wait for it
    this.worker = w;
    this.startedAt = Date.now();
    w.on('message', (m: unknown) => {
      if (!isStatusAnswer(m)) return;
      const p = this.pending.get(m.id);
      if (p === undefined) return; // answered after its deadline: the tracker has moved on
      this.pending.delete(m.id);
      clearTimeout(p.timer);
      p.resolve(m.answers);
    });
    w.on('error', (err) => this.o.log.warn({ event: 'receipt_status_thread_error', err: err.message }, 'receipts: the status thread failed'));
    w.on('exit', () => this.ended(w));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer !== null) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    const w = this.worker;
    this.worker = null;
    this.failPending('receipts: the status thread was stopped');
    if (w !== null) await w.terminate();
  }

  /** Rejects only when the thread could not answer (it ended, was stopped, or missed its deadline). */
  ask(signatures: readonly string[]): Promise<StatusAnswers> {
    const w = this.worker;
    if (w === null) {
      this.polls.front++;
      return this.o.fallback.ask(signatures);
    }
    this.polls.status_thread++;
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error('receipts: the status thread did not answer in time'));
      }, callsFor(signatures.length) * this.o.timeoutMs + ANSWER_SLACK_MS);
      timer.unref();
      this.pending.set(id, { resolve, reject, timer });
      w.postMessage({ type: 'ask', id, signatures } satisfies StatusAsk);
    });
  }

  /** Tests only (allowTestCrash): the thread throws. */
  crashForTest(): void {
    this.worker?.postMessage({ type: 'crash' });
  }

  private ended(w: Worker): void {
    if (this.worker !== w) return; // stopped on purpose
    this.worker = null;
    this.restarts++;
    this.failPending('receipts: the status thread ended');
    if (Date.now() - this.startedAt >= STABLE_MS) this.backoffMs = RESTART_MIN_MS;
    const wait = this.backoffMs;
    this.backoffMs = Math.min(RESTART_MAX_MS, this.backoffMs * 2);
    this.o.log.warn({ event: 'receipt_status_thread_exit', restartInMs: wait }, 'receipts: the status thread ended; the front asks until it is back');
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      this.start();
    }, wait);
    this.restartTimer.unref();
  }

  private failPending(message: string): void {
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new Error(message));
    }
    this.pending.clear();
  }
}
