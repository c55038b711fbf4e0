// Front-thread metrics: plain numbers (single writer: the front thread) and hdr histograms of request latency.
// Hot: countRequest() is three Map lookups on strings whose hashes V8 has cached (the table's own method names, the
// registry's reasons), with no label string built per request; method labels are limited to the method table's
// names (anything else is "unknown") so clients cannot grow the label set. No key values or names appear in labels.
import { build, type Histogram } from 'hdr-histogram-js';
import { TextBuilder } from './prometheus.js';
import { WholeMicrosHistogram } from './whole-micros-histogram.js';

export type HostLabel = 'rpc' | 'relay';

export function newLatencyHistogram(): Histogram {
  // Microseconds, 1 us .. 60 s, 3 significant digits.
  return build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });
}

export class FrontMetrics {
  /** host -> method label -> outcome -> count. */
  private readonly requests = new Map<HostLabel, Map<string, Map<string, number>>>();
  private readonly rejections = new Map<string, number>();
  private readonly latency = new Map<string, WholeMicrosHistogram>();
  /** Each known method name mapped to itself: the label handed out is always the same string object. */
  private readonly knownMethods: ReadonlyMap<string, string>;

  constructor(knownMethods: Iterable<string>) {
    this.knownMethods = new Map([...knownMethods].map((m) => [m, m]));
  }

  methodLabel(method: string | null): string {
    return method === null ? 'none' : (this.knownMethods.get(method) ?? 'unknown');
  }

  /** One answered request element. `outcome` is "ok" or an error reason from the registry. */
  countRequest(host: HostLabel, method: string, outcome: string): void {
    let byMethod = this.requests.get(host);
    if (byMethod === undefined) this.requests.set(host, (byMethod = new Map()));
    let byOutcome = byMethod.get(method);
    if (byOutcome === undefined) byMethod.set(method, (byOutcome = new Map()));
    byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1);
  }

  /** A request refused before any method ran (auth, rate, size, overload...), by registry reason. */
  countRejection(reason: string): void {
    this.rejections.set(reason, (this.rejections.get(reason) ?? 0) + 1);
  }

  recordLatency(path: string, micros: number): void {
    let h = this.latency.get(path);
    if (h === undefined) {
      h = new WholeMicrosHistogram(newLatencyHistogram());
      this.latency.set(path, h);
    }
    h.record(micros);
  }

  render(tb: TextBuilder): void {
    tb.declare('slotrelay_requests_total', 'counter', 'Answered requests (batch elements count one each) by host, method and outcome.');
    for (const [host, byMethod] of this.requests) {
      for (const [method, byOutcome] of byMethod) {
        for (const [outcome, v] of byOutcome) tb.sample('slotrelay_requests_total', { host, method, outcome }, v);
      }
    }
    tb.declare('slotrelay_rejections_total', 'counter', 'Requests or elements refused, by error reason.');
    for (const [reason, v] of this.rejections) tb.sample('slotrelay_rejections_total', { reason }, v);
    for (const [path, h] of this.latency) {
      tb.summary('slotrelay_request_duration_seconds', 'Front-thread time from request arrival to response, by path.', { path }, h.histogram(), 1e-6);
    }
  }
}
