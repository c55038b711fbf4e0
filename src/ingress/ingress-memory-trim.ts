// Gives the quic-egress thread's freed native memory back to the kernel once a burst on the QUIC ingress has passed (QUIC
// thread; cold: one look at a counter every TRIM_CHECK_MS, one collection and trim per burst). Why: a burst of junk
// datagrams, abusive handshakes and random streams makes the quic-egress thread allocate tens of MB of native memory that only
// V8's garbage collector frees: quiche connections and their BoringSSL objects are freed when their JS wrappers are
// collected, and each datagram's buffer (Node's UDP receive allocates 64 KB and shrinks it) when its Buffer is. V8 does
// not see that memory (a few hundred bytes per wrapper), so after the burst the wrappers wait in the old generation,
// and glibc keeps the thread's arena at its high-water mark even once they are freed (free() returns only the top of
// an arena). Measured without this: +52 to +91 MB a minute after each round of abuse, ~20 MB more each round
// (bench/results/quic-ingress-memory.md). So, once the burst is over (the last window took at most a quarter of the
// busiest one since the last trim, so steady traffic never pays for pages given back and faulted in again): a full
// collection of this thread's heap, then glibc's malloc_trim(0), which returns the free pages of every arena (run on
// libuv's thread pool: ../native/malloc-trim.ts).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { performance } from 'node:perf_hooks';
import type { MallocTrim } from '../native/malloc-trim.js';

/** How often the datagram counter is looked at. */
export const TRIM_CHECK_MS = 5_000;
/** Datagrams received since the last trim that make one worth it (a burst: ~3 s of a 3,000/s flood). */
export const TRIM_AFTER_DATAGRAMS = 10_000;
/** The burst is over when a window took at most this share of the busiest window since the last trim. */
const QUIET_SHARE = 0.25;

export interface TrimEvent {
  readonly datagrams: number;
  readonly rssBeforeBytes: number;
  readonly rssAfterBytes: number;
  /** The full collection's time (on this thread) and the trim's (on libuv's pool). */
  readonly gcMs: number;
  readonly trimMs: number;
}

/** The decision, apart from timers (unit-testable): feed it the datagram counter once per window. */
export class TrimPolicy {
  private last = -1;
  private sinceTrim = 0;
  private busiest = 0;

  /** The counter's value now; true = trim now (the burst is over). */
  observe(datagramsReceived: number): boolean {
    if (this.last < 0) {
      this.last = datagramsReceived;
      return false;
    }
    const window = datagramsReceived - this.last;
    this.last = datagramsReceived;
    this.sinceTrim += window;
    if (window > this.busiest) this.busiest = window;
    if (this.sinceTrim < TRIM_AFTER_DATAGRAMS || window > this.busiest * QUIET_SHARE) return false;
    this.sinceTrim = 0;
    this.busiest = 0;
    return true;
  }
}

/**
 * A full collection of this thread's heap, without running the process with --expose-gc (which would also make
 * src/metrics/thread-memory.ts collect every thread every 5 s): the flag is set just long enough for a new context to
 * hand out its gc(), then cleared — what jest's leak detector does (jest-leak-detector). Taken once per thread, at start.
 */
function takeFullGc(): () => void {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (typeof existing === 'function') return existing;
  setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc') as () => void;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

/**
 * What is freed by the collection is freed a little after it: Node-API finalizers (the quiche wrappers') run from an
 * immediate, ArrayBuffer backing stores are swept on a V8 background thread. The trim waits this long for both.
 */
const TRIM_AFTER_GC_MS = 200;

/** Starts the checks (an unref'd timer); returns the stop. `onTrim` hears each trim (for the log). */
export function startIngressMemoryTrim(trim: MallocTrim, datagramsReceived: () => number, onTrim: (e: TrimEvent) => void): () => void {
  const fullGc = takeFullGc();
  const policy = new TrimPolicy();
  let atLastTrim = datagramsReceived();
  policy.observe(atLastTrim);
  let pending: NodeJS.Timeout | null = null;
  const timer = setInterval(() => {
    const now = datagramsReceived();
    if (!policy.observe(now) || pending !== null) return;
    const before = process.memoryUsage.rss();
    const t0 = performance.now();
    fullGc();
    const gcMs = performance.now() - t0;
    pending = setTimeout(() => {
      const t1 = performance.now();
      // Off this thread (the addon runs it on libuv's pool): it walks every arena, 0.2-0.8 s measured on a loaded box.
      void trim().then(
        () => {
          pending = null;
          onTrim({ datagrams: now - atLastTrim, rssBeforeBytes: before, rssAfterBytes: process.memoryUsage.rss(), gcMs, trimMs: performance.now() - t1 });
          atLastTrim = now;
        },
        () => (pending = null),
      );
    }, TRIM_AFTER_GC_MS);
    pending.unref();
  }, TRIM_CHECK_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    if (pending !== null) clearTimeout(pending);
  };
}
