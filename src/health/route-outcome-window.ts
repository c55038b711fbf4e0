// Per-route outcome counts over a sliding window, from the egress workers' shared counters (main/front thread, cold:
// one sample per health tick). A route that had outcomes in the window and not one `sent` is "failing every send".
import { EGRESS_OUTCOMES, ROUTE_COUNT, egressCounterIndex } from '../shm/layout.js';

/** Outcomes that say the route did not deliver. discarded (bench) and shutdown say nothing about the route. */
const NOT_DELIVERED = EGRESS_OUTCOMES.map((o, i) => (o !== 'sent' && o !== 'dropped:discarded' && o !== 'dropped:shutdown' ? i : -1)).filter(
  (i) => i >= 0,
);
const SENT = EGRESS_OUTCOMES.indexOf('sent');

interface Sample {
  readonly atMs: number;
  readonly sent: Float64Array;
  readonly notDelivered: Float64Array;
}

export interface RouteWindow {
  readonly sent: number;
  readonly notDelivered: number;
}

export class RouteOutcomeWindow {
  private readonly samples: Sample[] = [];

  constructor(private readonly windowMs: number) {}

  /** Record the summed worker counters (WORKER_COUNTER layout) as of `nowMs`. */
  sample(counters: Float64Array, nowMs: number): void {
    const sent = new Float64Array(ROUTE_COUNT);
    const notDelivered = new Float64Array(ROUTE_COUNT);
    for (let r = 0; r < ROUTE_COUNT; r++) {
      sent[r] = counters[egressCounterIndex(r, SENT)];
      let n = 0;
      for (const o of NOT_DELIVERED) n += counters[egressCounterIndex(r, o)];
      notDelivered[r] = n;
    }
    this.samples.push({ atMs: nowMs, sent, notDelivered });
    // Keep one sample at or before the window's start so the delta always spans the whole window.
    while (this.samples.length > 2 && this.samples[1].atMs <= nowMs - this.windowMs) this.samples.shift();
  }

  /** Outcomes of route `routeId` between the oldest kept sample and the latest. */
  delta(routeId: number): RouteWindow {
    const n = this.samples.length;
    if (n < 2) return { sent: 0, notDelivered: 0 };
    const a = this.samples[0];
    const b = this.samples[n - 1];
    return { sent: b.sent[routeId] - a.sent[routeId], notDelivered: b.notDelivered[routeId] - a.notDelivered[routeId] };
  }
}
