// The park/notify handshake of the shared-memory rings (./ring.ts, ./message-ring.ts), written once (HOT on both
// sides: ring() after every publish, park() when a consumer finds its ring empty). Three Int32 words of the ring's
// control block take part: HEAD (the producer's count, the word a consumer waits on), WAITING (1 while a consumer is
// parked or about to be) and STOP.
//
// - Dekker pairing: the consumer stores WAITING = 1, then re-reads HEAD; the producer stores HEAD, then reads WAITING.
//   One of the two sees the other, so a record published before the producer's check never sits behind a sleeping
//   consumer, however late the check runs.
// - Both ends are threads whose event loop also does I/O, so the consumer sleeps with Atomics.waitAsync, never
//   Atomics.wait.
// - The native wait never has a timeout: V8 11.3 (Node 20) can crash when an async waiter's timeout and a notify race
//   (both destroy the waiter's node: SIGSEGV in FutexEmulation::ResolveAsyncWaiterPromises, seen in egress workers
//   under load; docs/known-issues.md). The timeout is a JS timer raced against it, and the same native waiter is
//   awaited again by the next park() until a notify resolves it.
// - Atomics.notify on an async waiter is a cross-thread task post (a mutex and an eventfd write), measured as the
//   largest single cost of the front thread's sendTransaction handler when every request woke the worker: a producer
//   whose thread returns to its event loop may coalesce its wake-ups into one check at the end of its turn.

/** Atomics.waitAsync (Node >= 16; the project's lib is ES2023, which does not declare it). */
type WaitAsyncResult = { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };
const waitAsync = (
  Atomics as unknown as { waitAsync: (a: Int32Array, index: number, value: number, timeoutMs?: number) => WaitAsyncResult }
).waitAsync.bind(Atomics);

/** Where the three words live in a ring's control block (Int32 indexes). */
export interface DoorbellWords {
  readonly head: number;
  readonly waiting: number;
  readonly stop: number;
}

/**
 * When the producer checks for a sleeping consumer:
 * - `every`: after every publish (a producer pushing in a synchronous loop, which never returns to its event loop);
 * - `end-of-turn`: once at the end of the event-loop turn that published (uWS runs every ready socket in one poll
 *   phase, then setImmediate callbacks run: under load one notify covers the whole batch);
 * - `first-then-end-of-turn`: the first publish of a turn at once, the rest at its end (a lone QUIC submit is not
 *   held behind the rest of the producer's turn: 35-140 us per ring measured, docs/client.md "Where the time goes").
 * In the coalescing modes a burst of COALESCE_MAX publishes checks early.
 */
export type WakePolicy = 'every' | 'end-of-turn' | 'first-then-end-of-turn';

/** A burst this long wakes the consumer without waiting for the end of the producer's turn. */
export const COALESCE_MAX = 64;

/** The producer's side: call published() right after the seq-cst store of HEAD. */
export class ProducerDoorbell {
  private wakeScheduled = false;
  /** The check scheduled for this turn came from publishedLater() only: nothing was rung at once this turn. */
  private onlyLater = false;
  private unwoken = 0;

  constructor(
    private readonly ctl: Int32Array,
    private readonly words: DoorbellWords,
    private readonly policy: WakePolicy,
  ) {}

  published(): void {
    switch (this.policy) {
      case 'every':
        this.ring();
        return;
      case 'end-of-turn':
        if (++this.unwoken >= COALESCE_MAX) this.ring();
        else this.scheduleRing();
        return;
      case 'first-then-end-of-turn':
        if (this.wakeScheduled && !this.onlyLater) {
          if (++this.unwoken >= COALESCE_MAX) this.ring();
        } else {
          this.onlyLater = false;
          this.ring();
          this.scheduleRing();
        }
        return;
    }
  }

  /**
   * A record nobody waits on (a note for the consumer's books): whatever the policy, the consumer is woken at the end
   * of the producer's turn, so the wake-up's cross-thread post does not sit in front of the turn's own I/O.
   */
  publishedLater(): void {
    if (++this.unwoken >= COALESCE_MAX) {
      this.ring();
      return;
    }
    if (!this.wakeScheduled) this.onlyLater = true;
    this.scheduleRing();
  }

  /** Wake the consumer if it is parked (or about to park). */
  ring(): void {
    this.unwoken = 0;
    const ctl = this.ctl;
    const w = this.words;
    if (Atomics.load(ctl, w.waiting) !== 0 && Atomics.compareExchange(ctl, w.waiting, 1, 0) === 1) {
      // Every waiter: normally one, but a consumer replaced after a crash may have left its parked waiter behind.
      Atomics.notify(ctl, w.head);
    }
  }

  private scheduleRing(): void {
    if (this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(this.scheduledRing);
  }

  private readonly scheduledRing = (): void => {
    this.wakeScheduled = false;
    this.onlyLater = false;
    this.ring();
  };
}

/** The consumer's side: one outstanding native waiter, reused across park() calls until a notify resolves it. */
export class ConsumerDoorbell {
  private parked: Promise<void> | null = null;

  constructor(
    private readonly ctl: Int32Array,
    private readonly words: DoorbellWords,
  ) {}

  /**
   * Sleep until HEAD moves past `position` (the next record this consumer would take), stop is requested or
   * `timeoutMs` passes. Returns at once when a record is already there. Never blocks the event loop.
   */
  async park(position: number, timeoutMs: number): Promise<void> {
    const ctl = this.ctl;
    const w = this.words;
    Atomics.store(ctl, w.waiting, 1);
    const head = Atomics.load(ctl, w.head);
    if (head !== position || Atomics.load(ctl, w.stop) !== 0) {
      Atomics.store(ctl, w.waiting, 0);
      return;
    }
    if (this.parked === null) {
      const r = waitAsync(ctl, w.head, head);
      if (!r.async) {
        Atomics.store(ctl, w.waiting, 0);
        return;
      }
      this.parked = r.value.then(() => {
        this.parked = null;
      });
    }
    // A producer's check may have run between our WAITING store and the waiter's registration: it found WAITING = 1,
    // cleared it and notified nobody, though it published nothing (a coalesced check runs at the end of the
    // producer's turn, after we may already have taken its record), so the value check above passed. Sleeping now
    // would be with WAITING = 0, which no later publish notifies. Once the waiter is registered, WAITING still 1
    // means every later check will see it and notify a registered waiter.
    if (Atomics.load(ctl, w.waiting) === 0) return;
    // The timer is ref'd: a pending waitAsync is not a libuv handle, and without it a worker with nothing else to do
    // exits (code 0) in the middle of the wait. Measured: 5 of 6 two-thread runs lost their consumer so.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.parked, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
    Atomics.store(ctl, w.waiting, 0);
  }
}

/** Ask a ring's consumer to finish (or, stop = false, to go on) and wake it; from any thread (cold). */
export function requestStopOn(ctl: Int32Array, words: DoorbellWords, stop = true): void {
  Atomics.store(ctl, words.stop, stop ? 1 : 0);
  if (stop) Atomics.notify(ctl, words.head);
}
