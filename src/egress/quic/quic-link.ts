// Thread 0's end of one link to another QUIC thread (rings.quicThreads > 1; HOT: one message per transaction sent to a
// target that thread owns). send() copies the transaction, its target and label into the link's request ring (the one
// copy on this hop: the owner writes it to its connection from the ring slot) and returns a promise the owner's answer
// settles; the answers are read by a loop on this thread's event loop, parked in Atomics.waitAsync when idle. Layout:
// src/shm/quic-link-layout.ts. What can go wrong, and what the sender sees:
//   the request ring is full (the owner is behind)      dropped:queue_full at once, like a full connection queue
//   the owner thread died (the pool restarts it)         `failed` once the answer is overdue (staleAfterMs + grace);
//                                                        logged bounded, with the thread's number
//   this end closes (shutdown)                           `failed` for every open request (the routes count those as
//                                                        dropped:shutdown once closed)
import type { Logger } from '../../log/logger.js';
import { SummarizedLog } from '../../log/summarized-log.js';
import { MCTL_BYTES, MCTL_HEAD } from '../../shm/message-ring-layout.js';
import { MessageRingConsumer, MessageRingProducer } from '../../shm/message-ring.js';
import { QUIC_LINK_ANSWERS, QUIC_LINK_MAX_TEXT, linkHeaderOf, publishLinkPrewarm, publishLinkSend, type QuicLink } from '../../shm/quic-link-layout.js';
import type { TargetOutcome } from './connection-worker.js';
import type { TargetSender } from './connections.js';

const ANSWERS: readonly TargetOutcome[] = QUIC_LINK_ANSWERS satisfies readonly TargetOutcome[];
/** An answer later than the owner's own stale limit by this much means the owner is gone. */
const ANSWER_GRACE_MS = 5_000;
const SWEEP_MS = 1_000;
/** Longest park before re-checking the closed flag (close() also wakes it). */
const IDLE_WAIT_MS = 1_000;
const FIRST_ATTEMPT_DONE: Promise<boolean> = Promise.resolve(true);

interface Pending {
  readonly resolve: (o: TargetOutcome) => void;
  readonly atMs: number;
}

export interface QuicLinkOptions {
  /** The owning thread's index (logs). */
  readonly thread: number;
  /** The owner's connection queue limit (routes.direct.staleAfterMs, or from the slot time): its answers come within it. */
  readonly staleAfterMs: number | (() => number);
  readonly log: Logger;
  /** How much later than staleAfterMs an answer is overdue (default ANSWER_GRACE_MS; tests shorten it). */
  readonly answerGraceMs?: number;
  /** How often overdue answers are looked for (default SWEEP_MS; tests shorten it). */
  readonly sweepMs?: number;
}

/** A target another QUIC thread owns, as the fanout sees it: send() crosses the link. */
class RemoteTarget implements TargetSender {
  /** Resolved: the owner's own start-up covers its first connect (it pins its static peers before it reports ready). */
  readonly firstAttempt = FIRST_ATTEMPT_DONE;

  constructor(
    private readonly link: QuicLinkEnd,
    /** target + label, latin1, appended to every send (built once). */
    readonly text: Buffer,
    readonly targetBytes: number,
  ) {}

  send(tx: Uint8Array, background = false): TargetOutcome | Promise<TargetOutcome> {
    return this.link.send(this, tx, background);
  }
}

export class QuicLinkEnd {
  private readonly requests: MessageRingProducer;
  private readonly answers: MessageRingConsumer;
  /** The answers ring's control words, to wake this end's own loop at close. */
  private readonly answersWake: Int32Array;
  private readonly pending = new Map<number, Pending>();
  private readonly targets = new Map<string, RemoteTarget>();
  /**
   * Request numbers start at this end's start time in microseconds: a restarted thread 0 attaches to the same rings,
   * and an owner's late answer to the previous thread 0's request must not match one of this end's (a thread 0 would
   * have to hand over more than a request per microsecond to run into its successor's numbers).
   */
  private nextRequest = Math.floor((performance.timeOrigin + performance.now()) * 1000);
  private closed = false;
  private readonly sweepTimer: NodeJS.Timeout;
  private readonly failures: SummarizedLog;

  constructor(
    link: QuicLink,
    private readonly o: QuicLinkOptions,
  ) {
    this.requests = new MessageRingProducer(link.requests);
    this.answers = new MessageRingConsumer(link.answers);
    this.answersWake = new Int32Array(link.answers, 0, MCTL_BYTES >> 2);
    this.failures = new SummarizedLog(o.log);
    this.sweepTimer = setInterval(this.sweep, o.sweepMs ?? SWEEP_MS);
    this.sweepTimer.unref();
    void this.readAnswers();
  }

  /** The sender for a target this link's thread owns (one object per target, kept). */
  target(target: string, label: string | undefined): TargetSender {
    let t = this.targets.get(target);
    if (t === undefined) {
      const lb = (label ?? '').slice(0, QUIC_LINK_MAX_TEXT);
      const text = Buffer.from(target.slice(0, QUIC_LINK_MAX_TEXT) + lb, 'latin1');
      t = new RemoteTarget(this, text, Math.min(target.length, QUIC_LINK_MAX_TEXT));
      this.targets.set(target, t);
    }
    return t;
  }

  /** Hot: hands one transaction to the owner. `tx` may be reused once this returns (it was copied). */
  send(t: RemoteTarget, tx: Uint8Array, background: boolean): TargetOutcome | Promise<TargetOutcome> {
    if (this.closed) return 'failed';
    const r = this.requests;
    if (tx.length + t.text.length > r.maxPayload) return 'failed';
    const off = r.reserve();
    if (off < 0) return 'dropped:queue_full';
    r.bytes.set(tx, off);
    r.bytes.set(t.text, off + tx.length);
    const id = this.nextRequest++;
    const now = Date.now();
    publishLinkSend(r, tx.length, t.targetBytes, t.text.length - t.targetBytes, id, now, background);
    // One promise and one map entry per hand-over, like a ConnectionWorker's queued send: the fanout awaits it only when
    // no target wrote the transaction synchronously (docs/quic-sharding.md has the measured cost of the whole hop).
    return new Promise<TargetOutcome>((resolve) => this.pending.set(id, { resolve, atMs: now }));
  }

  /** Cold (once per leader window): the owner's pre-warm set, in as many parts as it takes. */
  prewarm(targets: readonly { target: string; label?: string }[]): void {
    if (this.closed) return;
    const r = this.requests;
    const lines = targets.map((t) => `${t.target.slice(0, QUIC_LINK_MAX_TEXT)} ${(t.label ?? '').slice(0, QUIC_LINK_MAX_TEXT)}\n`);
    let i = 0;
    do {
      let part = '';
      while (i < lines.length && part.length + lines[i].length <= r.maxPayload) part += lines[i++];
      const off = r.reserve();
      if (off < 0) return; // the owner is behind; the next window sends the set again
      const n = r.bytes.write(part, off, 'latin1');
      publishLinkPrewarm(r, n, i >= lines.length, Date.now());
    } while (i < lines.length);
  }

  /** Requests waiting for an answer (tests, metrics). */
  get inFlight(): number {
    return this.pending.size;
  }

  /**
   * Every open request answers `failed`; the answer loop ends (woken now, or at its next idle check). The ring's STOP
   * word is left alone: a thread 0 restarted after a crash reads the same answers ring again.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweepTimer);
    Atomics.notify(this.answersWake, MCTL_HEAD);
    for (const p of this.pending.values()) p.resolve('failed');
    this.pending.clear();
    this.failures.close();
  }

  private async readAnswers(): Promise<void> {
    const a = this.answers;
    const h = linkHeaderOf(a.header);
    while (!this.closed) {
      while (a.take()) {
        const id = h.requestId;
        const code = h.answer;
        a.release();
        const p = this.pending.get(id);
        if (p === undefined) continue; // overdue and already answered `failed` by the sweep
        this.pending.delete(id);
        p.resolve(ANSWERS[code] ?? 'failed');
      }
      await a.waitForMessages(IDLE_WAIT_MS);
    }
  }

  /** Answers overdue past the owner's own stale limit: the owner is gone (crashed; the pool restarts it). */
  private readonly sweep = (): void => {
    const stale = this.o.staleAfterMs;
    const limit = Date.now() - (typeof stale === 'number' ? stale : stale()) - (this.o.answerGraceMs ?? ANSWER_GRACE_MS);
    let overdue = 0;
    for (const [id, p] of this.pending) {
      if (p.atMs > limit) break; // insertion order = request order
      this.pending.delete(id);
      p.resolve('failed');
      overdue++;
    }
    if (overdue > 0) {
      this.failures.note('error', 'overdue', { thread: this.o.thread, overdue }, 'QUIC link: the owning QUIC thread did not answer; counted as failed');
    }
  };
}
