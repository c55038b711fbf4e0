// Resident memory of the relay (and its localnet child) over the soak, from /proc/<pid>/status VmRSS (driver
// process, cold: one small file read every few seconds). The verdict compares the end of the run with the first
// sample after warm-up: flat when end <= start x FLAT_RATIO + FLAT_SLACK_MB.
import { readFileSync } from 'node:fs';

/** Growth allowed between the first sample after warm-up and the last one (JIT, heap sizing, histograms, buffers). */
export const FLAT_RATIO = 1.25;
export const FLAT_SLACK_MB = 32;
/** Samples kept (one every few seconds; 10 minutes at 5 s is 120). */
const MAX_SAMPLES = 5_000;

export interface RssSample {
  /** Seconds since the load started (negative: before). */
  readonly t: number;
  readonly relayMb: number | null;
  readonly localnetMb: number | null;
}

export interface RssVerdict {
  readonly startMb: number;
  readonly endMb: number;
  readonly maxMb: number;
  readonly minMb: number;
  /** Least-squares slope of the relay's RSS after warm-up, MB per minute. */
  readonly slopeMbPerMin: number;
  readonly limitMb: number;
  readonly flat: boolean;
  readonly rule: string;
}

export function vmRssMb(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? null : Math.round((Number(m[1]) / 1024) * 10) / 10;
  } catch {
    return null;
  }
}

export class RssSampler {
  readonly samples: RssSample[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly relayPid: number,
    private readonly localnetPid: () => number | null,
    private readonly zeroMs: () => number,
  ) {}

  start(intervalMs: number): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  sample(): void {
    if (this.samples.length >= MAX_SAMPLES) return;
    const lp = this.localnetPid();
    this.samples.push({
      t: Math.round((Date.now() - this.zeroMs()) / 100) / 10,
      relayMb: vmRssMb(this.relayPid),
      localnetMb: lp === null ? null : vmRssMb(lp),
    });
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Verdict over samples from warmupS to endS (seconds since the load started); null when there are too few. */
  verdict(warmupS: number, endS: number): RssVerdict | null {
    const s = this.samples.filter((x): x is RssSample & { relayMb: number } => x.relayMb !== null && x.t >= warmupS && x.t <= endS);
    if (s.length < 2) return null;
    const startMb = s[0].relayMb;
    const endMb = s[s.length - 1].relayMb;
    const values = s.map((x) => x.relayMb);
    const limitMb = Math.round((startMb * FLAT_RATIO + FLAT_SLACK_MB) * 10) / 10;
    const n = s.length;
    const mt = s.reduce((a, x) => a + x.t, 0) / n;
    const mv = values.reduce((a, v) => a + v, 0) / n;
    let num = 0;
    let den = 0;
    for (const x of s) {
      num += (x.t - mt) * (x.relayMb - mv);
      den += (x.t - mt) ** 2;
    }
    return {
      startMb,
      endMb,
      maxMb: Math.max(...values),
      minMb: Math.min(...values),
      slopeMbPerMin: den === 0 ? 0 : Math.round((num / den) * 60 * 100) / 100,
      limitMb,
      flat: endMb <= limitMb,
      rule: `end <= start x ${FLAT_RATIO} + ${FLAT_SLACK_MB} MB`,
    };
  }
}
