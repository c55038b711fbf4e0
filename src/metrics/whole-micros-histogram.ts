// An hdr latency histogram fed on the front thread's hot path (once per answered request). hdr-histogram-js's
// recordValue finds the bucket with Math.log2 and Math.pow on every call (~1% of the front thread's samples under
// load, measured with perf); most latencies are a few microseconds. So values below DIRECT_LIMIT_US are counted by
// whole microsecond in a plain array and folded into the hdr histogram when it is read (scrape time, cold). The result
// is the same histogram: with 1 us resolution and 3 significant digits, hdr's bucket of x is the bucket of floor(x)
// (its sub-buckets below 2048 us are 1 us wide, then 2 us up to 4096 us, always powers of two).
import type { Histogram } from 'hdr-histogram-js';

const DIRECT_LIMIT_US = 4096;

export class WholeMicrosHistogram {
  private readonly counts = new Uint32Array(DIRECT_LIMIT_US);
  private pending = 0;

  /** `target` must have a lowest discernible value of 1 (us) and 3 significant digits. */
  constructor(private readonly target: Histogram) {}

  record(micros: number): void {
    if (micros < DIRECT_LIMIT_US) {
      this.counts[micros < 1 ? 1 : micros | 0]++;
      this.pending++;
    } else {
      this.target.recordValue(micros);
    }
  }

  /** The hdr histogram with every recorded value in it. */
  histogram(): Histogram {
    if (this.pending > 0) {
      const counts = this.counts;
      for (let us = 1; us < DIRECT_LIMIT_US; us++) {
        if (counts[us] !== 0) {
          this.target.recordValueWithCount(us, counts[us]);
          counts[us] = 0;
        }
      }
      this.pending = 0;
    }
    return this.target;
  }
}
