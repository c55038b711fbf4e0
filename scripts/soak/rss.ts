// Resident memory of the relay (and its localnet child) over the soak, from /proc/<pid>/status VmRSS (driver
// process, cold: one small file read every few seconds). The verdict: THIRDS_SLACK_MB below.
import { readFileSync } from 'node:fs';

/**
 * What the memory verdict calls growth. A relay's RSS climbs for minutes to a high-water mark (each thread's V8 heap
 * sizing itself, glibc's per-thread arenas, bounded tables filling) and then holds or falls back; a leak keeps
 * climbing. So the window after warm-up is cut in thirds and the last third's peak must not exceed the middle
 * third's by more than THIRDS_SLACK_MB: a plateau passes wherever it sits, growth that is still going in the last
 * third fails (a leak of 12 MB/min over a 10-minute run adds ~38 MB between the two).
 */
export const THIRDS_SLACK_MB = 24;
/** Runs shorter than this after warm-up are still on their way to the high-water mark: RSS is reported, not judged. */
export const MIN_JUDGED_S = 240;
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
  /** Peaks of the middle and last thirds of the window after warm-up. */
  readonly middlePeakMb: number;
  readonly lastPeakMb: number;
  readonly limitMb: number;
  /** null: the run was too short to judge (MIN_JUDGED_S). */
  readonly flat: boolean | null;
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
    const span = s[s.length - 1].t - s[0].t;
    const third = (k: number): number[] => s.filter((x) => x.t >= s[0].t + (k * span) / 3 && x.t <= s[0].t + ((k + 1) * span) / 3).map((x) => x.relayMb);
    const middlePeakMb = Math.max(...third(1));
    const lastPeakMb = Math.max(...third(2));
    const limitMb = Math.round((middlePeakMb + THIRDS_SLACK_MB) * 10) / 10;
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
      middlePeakMb,
      lastPeakMb,
      limitMb,
      flat: span < MIN_JUDGED_S ? null : lastPeakMb <= limitMb,
      rule: `peak of the last third <= peak of the middle third + ${THIRDS_SLACK_MB} MB (judged when >= ${MIN_JUDGED_S} s after warm-up)`,
    };
  }
}
