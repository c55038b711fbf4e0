// Which thread's memory grew over the soak (driver process, cold: one GET /metrics every few seconds). The relay's
// RSS is one figure for the process; slotrelay_thread_heap_used_bytes (src/metrics/thread-memory.ts) is each thread's
// V8 heap. Samples are summed per role (every egress worker together, ...), and each role gets the same start/end/
// slope treatment as the RSS (rss.ts), so a failed RSS verdict comes with the role to look at.
import type http from 'node:http';
import { scrapeMetrics } from './accounting.js';
import { NonOverlappingInterval } from './non-overlapping-interval.js';

const TIMEOUT_MS = 2_000;
const MAX_SAMPLES = 5_000;
const MB = 1024 * 1024;

export interface HeapSample {
  readonly t: number;
  /** Role -> heap used (MB), summed over the role's threads; also `heapTotal` (every thread's V8 heap reserved, summed)
   *  and `arrayBuffers` (ArrayBuffers and SharedArrayBuffers): RSS minus those two is native memory. */
  readonly mb: Readonly<Record<string, number>>;
}

export interface HeapGrowth {
  readonly role: string;
  readonly startMb: number;
  readonly endMb: number;
  readonly maxMb: number;
  readonly slopeMbPerMin: number;
}

const round1 = (x: number): number => Math.round(x * 10) / 10;

/**
 * The heap verdict: with live sizes (the relay runs with --expose-gc under the soak), a thread role whose heap keeps
 * growing after warm-up holds something no bound stops. It fails when both its slope exceeds HEAP_SLOPE_LIMIT and the
 * mean of the window's last quarter exceeds the first quarter's by HEAP_GROWTH_SLACK_MB (a slope alone is noisy on a
 * short run; a step alone can be a cache filling once). Roles `heapTotal` (reservations, not live data) are reported
 * only.
 */
export const HEAP_SLOPE_LIMIT_MB_PER_MIN = 2;
export const HEAP_GROWTH_SLACK_MB = 4;

export interface HeapVerdict {
  /** Roles judged (live sizes: relay-child.ts starts the relay with --expose-gc); empty when there were too few samples. */
  readonly judged: readonly string[];
  readonly growing: readonly { readonly role: string; readonly slopeMbPerMin: number; readonly quarterGrowthMb: number }[];
  readonly ok: boolean;
  readonly rule: string;
}

export class ThreadHeapWatch {
  readonly samples: HeapSample[] = [];
  scrapeFailures = 0;
  private readonly poller = new NonOverlappingInterval();

  constructor(
    private readonly agent: http.Agent,
    private readonly rpcUrl: string,
    private readonly now: () => number,
  ) {}

  async poll(): Promise<void> {
    const parsed = await scrapeMetrics(this.agent, this.rpcUrl, TIMEOUT_MS);
    if (parsed === null) {
      this.scrapeFailures++;
      return;
    }
    const mb: Record<string, number> = {};
    for (const s of parsed) {
      if (s.name === 'slotrelay_thread_heap_used_bytes') mb[s.labels.thread ?? '?'] = round1((mb[s.labels.thread ?? '?'] ?? 0) + s.value / MB);
      else if (s.name === 'slotrelay_thread_heap_total_bytes') mb['heapTotal'] = round1((mb['heapTotal'] ?? 0) + s.value / MB);
      else if (s.name === 'slotrelay_process_array_buffers_bytes') mb.arrayBuffers = round1(s.value / MB);
    }
    if (this.samples.length < MAX_SAMPLES) this.samples.push({ t: this.now(), mb });
  }

  start(intervalMs: number): void {
    this.poller.start(intervalMs, () => this.poll());
  }

  stop(): void {
    this.poller.stop();
  }

  /** Per role, between warmupS and endS: start, end, max and the least-squares slope; largest slope first. */
  growth(warmupS: number, endS: number): HeapGrowth[] {
    const s = this.samples.filter((x) => x.t >= warmupS && x.t <= endS);
    if (s.length < 2) return [];
    const roles = new Set(s.flatMap((x) => Object.keys(x.mb)));
    const out: HeapGrowth[] = [];
    for (const role of roles) {
      const pts = s.filter((x) => x.mb[role] !== undefined).map((x) => ({ t: x.t, v: x.mb[role] }));
      if (pts.length < 2) continue;
      const mt = pts.reduce((a, p) => a + p.t, 0) / pts.length;
      const mv = pts.reduce((a, p) => a + p.v, 0) / pts.length;
      let num = 0;
      let den = 0;
      for (const p of pts) {
        num += (p.t - mt) * (p.v - mv);
        den += (p.t - mt) ** 2;
      }
      out.push({
        role,
        startMb: pts[0].v,
        endMb: pts[pts.length - 1].v,
        maxMb: Math.max(...pts.map((p) => p.v)),
        slopeMbPerMin: den === 0 ? 0 : Math.round((num / den) * 60 * 100) / 100,
      });
    }
    return out.sort((a, b) => b.slopeMbPerMin - a.slopeMbPerMin);
  }

  /** The heap verdict over warmupS..endS (HEAP_SLOPE_LIMIT_MB_PER_MIN, HEAP_GROWTH_SLACK_MB). */
  verdict(warmupS: number, endS: number): HeapVerdict {
    const rule = `a thread role fails when its live heap grows > ${HEAP_SLOPE_LIMIT_MB_PER_MIN} MB/min and its last quarter's mean exceeds its first quarter's by > ${HEAP_GROWTH_SLACK_MB} MB`;
    const s = this.samples.filter((x) => x.t >= warmupS && x.t <= endS);
    if (s.length < 8) return { judged: [], growing: [], ok: true, rule };
    const span = s[s.length - 1].t - s[0].t;
    const mean = (role: string, from: number, to: number): number => {
      const v = s.filter((x) => x.t >= s[0].t + from * span && x.t <= s[0].t + to * span && x.mb[role] !== undefined).map((x) => x.mb[role]);
      return v.length === 0 ? NaN : v.reduce((a, b) => a + b, 0) / v.length;
    };
    const judged: string[] = [];
    const growing: { role: string; slopeMbPerMin: number; quarterGrowthMb: number }[] = [];
    for (const g of this.growth(warmupS, endS)) {
      if (g.role === 'heapTotal') continue;
      judged.push(g.role);
      const quarterGrowthMb = round1(mean(g.role, 0.75, 1) - mean(g.role, 0, 0.25));
      if (g.slopeMbPerMin > HEAP_SLOPE_LIMIT_MB_PER_MIN && quarterGrowthMb > HEAP_GROWTH_SLACK_MB) growing.push({ role: g.role, slopeMbPerMin: g.slopeMbPerMin, quarterGrowthMb });
    }
    return { judged, growing, ok: growing.length === 0, rule };
  }
}
