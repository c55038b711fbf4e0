// Drop logging of the QUIC routes (egress worker, QUIC thread; warm: once per transaction a route did not deliver), an
// observer of the record handler (./send-record.ts) and of the retry scheduler's rebroadcasts. Each
// non-`sent` outcome is a key of the worker's bounded failure log (src/log/summarized-log.ts): the first drop of a
// reason is logged at once with its trace id, then at most one summary line per reason per 10 s with the count and
// one example trace id, and a last one when the route closes. The counters in /metrics count every one regardless.
// `dropped:shutdown` is not logged here: the consumer loop reports every record the stop left undelivered
// (src/egress/consumer/shutdown-report.ts).
import type { Logger } from '../../log/logger.js';
import { SummarizedLog } from '../../log/summarized-log.js';
import type { EgressOutcome } from './route.js';

export class DropLog {
  private readonly log: SummarizedLog;
  private readonly msgs = new Map<EgressOutcome, string>();

  constructor(
    log: Logger,
    private readonly route: string,
  ) {
    this.log = new SummarizedLog(log);
  }

  note(outcome: EgressOutcome, traceId: string): void {
    if (outcome === 'sent' || outcome === 'dropped:shutdown') return;
    let msg = this.msgs.get(outcome);
    if (msg === undefined) {
      msg = `egress ${this.route}: transaction not delivered (${outcome})`;
      this.msgs.set(outcome, msg);
    }
    this.log.note('warn', outcome, { route: this.route, outcome, traceId }, msg);
  }

  /** Writes the pending summaries; later drops are counted only (the route is closing). */
  close(): void {
    this.log.close();
  }
}
