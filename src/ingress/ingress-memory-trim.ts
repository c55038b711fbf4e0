// Gives the process's freed malloc pages back to the kernel once a burst on the QUIC ingress has passed (QUIC thread;
// cold: one look at a counter every CHECK_MS, a trim a few times an hour at most). Why: a burst of junk datagrams,
// abusive handshakes and random streams makes the QUIC thread allocate and free tens of MB of native memory (Node's
// 64 KB UDP receive buffers shrunk to each datagram, quiche connections and stream buffers, BoringSSL objects), and
// glibc keeps each thread's arena at its high-water mark: measured +52 to +91 MB a minute after each round of abuse,
// growing by ~20 MB a round (bench/results/quic-ingress-memory.md). glibc's malloc_trim(0) returns the free pages of
// every arena (../native/malloc-trim.ts). It is called only when the burst is over — the last CHECK_MS window took at
// most a quarter of the busiest window since the last trim — so steady traffic never pays for pages given back and
// faulted in again.
import { performance } from 'node:perf_hooks';
import type { MallocTrim } from '../native/malloc-trim.js';

/** How often the datagram counter is looked at. */
export const TRIM_CHECK_MS = 5_000;
/** Datagrams received since the last trim that make one worth it (a burst: ~10 s of a 2,000/s flood). */
export const TRIM_AFTER_DATAGRAMS = 20_000;
/** The burst is over when a window took at most this share of the busiest window since the last trim. */
const QUIET_SHARE = 0.25;

export interface TrimEvent {
  readonly datagrams: number;
  readonly rssBeforeBytes: number;
  readonly rssAfterBytes: number;
  readonly ms: number;
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

/** Starts the checks (an unref'd timer); returns the stop. `onTrim` hears each trim (for the log). */
export function startIngressMemoryTrim(trim: MallocTrim, datagramsReceived: () => number, onTrim: (e: TrimEvent) => void): () => void {
  const policy = new TrimPolicy();
  policy.observe(datagramsReceived());
  let datagrams = 0;
  const timer = setInterval(() => {
    const now = datagramsReceived();
    if (!policy.observe(now)) return;
    const before = process.memoryUsage.rss();
    const t0 = performance.now();
    trim();
    const ms = performance.now() - t0;
    onTrim({ datagrams: now - datagrams, rssBeforeBytes: before, rssAfterBytes: process.memoryUsage.rss(), ms });
    datagrams = now;
  }, TRIM_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
