// Drop accounting shared by the QUIC routes (egress worker): each transaction a route did not deliver is logged with
// its trace id, at most one line per outcome per second (the rest counted into the next line), so a dead leader
// cannot flood the log. The counters in /metrics count every one regardless.
import type { Logger } from '../log/logger.js';
import type { EgressOutcome } from './route.js';

const DROP_LOG_INTERVAL_MS = 1_000;

export class DropLog {
  private readonly last = new Map<string, { atMs: number; suppressed: number }>();
  constructor(
    private readonly log: Logger,
    private readonly route: string,
  ) {}

  note(outcome: EgressOutcome, traceId: string): void {
    if (outcome === 'sent') return;
    const now = Date.now();
    const e = this.last.get(outcome);
    if (e !== undefined && now - e.atMs < DROP_LOG_INTERVAL_MS) {
      e.suppressed++;
      return;
    }
    this.log.warn({ route: this.route, outcome, traceId, suppressedSinceLast: e?.suppressed ?? 0 }, `egress ${this.route}: transaction not delivered (${outcome})`);
    this.last.set(outcome, { atMs: now, suppressed: 0 });
  }

  /**
   * A fanout's outcome, noted when it is not `sent`; one that fails after the route began closing is
   * `dropped:shutdown` (close() aborted it, whatever the connection reported).
   */
  settle(r: EgressOutcome | Promise<EgressOutcome>, traceId: string, route: { readonly closed: boolean }): EgressOutcome | Promise<EgressOutcome> {
    if (typeof r === 'string') {
      this.note(r, traceId);
      return r;
    }
    return r.then((o) => {
      const out: EgressOutcome = o === 'sent' || !route.closed ? o : 'dropped:shutdown';
      this.note(out, traceId);
      return out;
    });
  }
}
