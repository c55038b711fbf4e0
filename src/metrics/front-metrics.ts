// Front-thread metrics: plain numbers (single writer: the front thread) and hdr histograms of request latency.
// Hot: count() is a Map lookup on a precomputed label key; method labels are limited to the method table's names
// (anything else is "unknown") so clients cannot grow the label set. No key values or names appear in labels.
import { build, type Histogram } from 'hdr-histogram-js';
import { TextBuilder } from './prometheus.js';

export type HostLabel = 'rpc' | 'relay';

export function newLatencyHistogram(): Histogram {
  // Microseconds, 1 us .. 60 s, 3 significant digits.
  return build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });
}

export class FrontMetrics {
  private readonly requests = new Map<string, number>();
  private readonly rejections = new Map<string, number>();
  private readonly latency = new Map<string, Histogram>();
  private readonly knownMethods: ReadonlySet<string>;

  constructor(knownMethods: Iterable<string>) {
    this.knownMethods = new Set(knownMethods);
  }

  methodLabel(method: string | null): string {
    return method !== null && this.knownMethods.has(method) ? method : method === null ? 'none' : 'unknown';
  }

  /** One answered request element. `outcome` is "ok" or an error reason from the registry. */
  countRequest(host: HostLabel, method: string, outcome: string): void {
    const k = host + '\u0000' + method + '\u0000' + outcome;
    this.requests.set(k, (this.requests.get(k) ?? 0) + 1);
  }

  /** A request refused before any method ran (auth, rate, size, overload...), by registry reason. */
  countRejection(reason: string): void {
    this.rejections.set(reason, (this.rejections.get(reason) ?? 0) + 1);
  }

  recordLatency(path: string, micros: number): void {
    let h = this.latency.get(path);
    if (h === undefined) {
      h = newLatencyHistogram();
      this.latency.set(path, h);
    }
    h.recordValue(micros < 1 ? 1 : micros);
  }

  render(tb: TextBuilder): void {
    tb.declare('slotrelay_requests_total', 'counter', 'Answered requests (batch elements count one each) by host, method and outcome.');
    for (const [k, v] of this.requests) {
      const [host, method, outcome] = k.split('\u0000');
      tb.sample('slotrelay_requests_total', { host, method, outcome }, v);
    }
    tb.declare('slotrelay_rejections_total', 'counter', 'Requests or elements refused, by error reason.');
    for (const [reason, v] of this.rejections) tb.sample('slotrelay_rejections_total', { reason }, v);
    for (const [path, h] of this.latency) {
      tb.summary('slotrelay_request_duration_seconds', 'Front-thread time from request arrival to response, by path.', { path }, h, 1e-6);
    }
  }
}
