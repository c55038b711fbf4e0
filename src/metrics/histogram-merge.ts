// Ring -> route latency histograms across threads (cold except record()). Each egress worker records, per route,
// the microseconds from REC_RECEIVED_AT_MS to the route's outcome into a local hdr histogram; every
// LATENCY_FLUSH_MS it posts the interval's histogram (compressed base64, ~100 bytes) through a MessagePort the pool
// transferred in the task payload, then resets. The main thread adds each interval into one accumulator per route.
// A crashed worker loses at most one interval of samples; counts (worker-counters.ts) are never lost.
import type { MessagePort } from 'node:worker_threads';
import { build, decodeFromCompressedBase64, encodeIntoCompressedBase64, type Histogram } from 'hdr-histogram-js';
import { ROUTE_COUNT } from '../shm/layout.js';
import { WholeMicrosHistogram } from './whole-micros-histogram.js';

/** How often workers ship their latency histograms to the main thread. */
export const LATENCY_FLUSH_MS = 1_000;

export function newRouteLatencyHistogram(): Histogram {
  // Microseconds, 1 us .. 60 s, 3 significant digits (same shape as the front's request histograms).
  return build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });
}

export interface LatencyMessage {
  readonly kind: 'latency';
  readonly routeId: number;
  readonly encoded: string;
}

export const LATENCY_FINAL = Object.freeze({ kind: 'latency-final' } as const);

export function isLatencyFinal(msg: unknown): boolean {
  return msg !== null && typeof msg === 'object' && (msg as { kind?: unknown }).kind === 'latency-final';
}

/** Worker side: one histogram per route, flushed to `port`. */
export class LatencyRecorder {
  /** Per route; values under 4 ms are counted by microsecond and folded into hdr at flush (whole-micros-histogram.ts). */
  private readonly histograms: WholeMicrosHistogram[] = [];
  private readonly timer: NodeJS.Timeout | null;

  constructor(private readonly port: MessagePort | null) {
    for (let i = 0; i < ROUTE_COUNT; i++) this.histograms.push(new WholeMicrosHistogram(newRouteLatencyHistogram()));
    this.timer = port === null ? null : setInterval(() => this.flush(), LATENCY_FLUSH_MS);
    this.timer?.unref();
  }

  record(routeId: number, micros: number): void {
    this.histograms[routeId].record(micros > 60_000_000 ? 60_000_000 : micros);
  }

  flush(): void {
    if (this.port === null) return;
    for (let routeId = 0; routeId < ROUTE_COUNT; routeId++) {
      const h = this.histograms[routeId].histogram();
      if (h.totalCount === 0) continue;
      const msg: LatencyMessage = { kind: 'latency', routeId, encoded: encodeIntoCompressedBase64(h) };
      this.port.postMessage(msg);
      h.reset();
    }
  }

  /** Last flush, then LATENCY_FINAL so the main thread knows nothing more comes on this port. */
  close(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.flush();
    this.port?.postMessage(LATENCY_FINAL);
  }
}

/** Main side: cumulative histogram per route. */
export class LatencyAggregator {
  readonly byRoute: Histogram[] = [];

  constructor() {
    for (let i = 0; i < ROUTE_COUNT; i++) this.byRoute.push(newRouteLatencyHistogram());
  }

  accept(msg: unknown): void {
    const m = msg as Partial<LatencyMessage> | null;
    if (m === null || typeof m !== 'object' || m.kind !== 'latency' || typeof m.encoded !== 'string') return;
    const routeId = m.routeId;
    if (typeof routeId !== 'number' || routeId < 0 || routeId >= ROUTE_COUNT) return;
    this.byRoute[routeId].add(decodeFromCompressedBase64(m.encoded));
  }
}
