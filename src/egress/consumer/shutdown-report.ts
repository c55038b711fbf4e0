// What a stop left undelivered (egress worker, cold: runs once, when the pool stops this worker's consumer). After
// the stop, every ring record that some route did not take — its routes aborted by close() (dropped:shutdown),
// never answered, or never taken from the ring at all — is reported here, bounded: the first SHUTDOWN_LOG_RECORDS
// records one line each (`event: "shutdown_undelivered"`, with the request's trace id, key id and every route's
// outcome), then one summary line per worker (`event: "shutdown_undelivered_summary"`) with the number of records
// and the count per route and outcome of what was not sent. The counters (slotrelay_egress_outcomes_total, the
// `relay_stopped` line) count every one; documented in docs/configuration.md, "Delivery accounting".
import type { Logger } from '../../log/logger.js';

/** Records logged one line each per worker at a stop; the rest are in the summary's counts. */
export const SHUTDOWN_LOG_RECORDS = 100;

export class ShutdownReport {
  private records = 0;
  private undelivered = 0;
  /** route -> outcome -> records (outcomes other than `sent`). */
  private readonly byRoute: Record<string, Record<string, number>> = {};

  constructor(
    private readonly log: Logger,
    private readonly limit = SHUTDOWN_LOG_RECORDS,
  ) {}

  /** One record some route did not take; `outcomes` by route name; `delivered`: another route sent it. */
  note(traceId: string, keyId: number, outcomes: Readonly<Record<string, string>>, delivered: boolean): void {
    this.records++;
    if (!delivered) this.undelivered++;
    for (const route in outcomes) {
      const o = outcomes[route];
      if (o === 'sent') continue;
      const row = (this.byRoute[route] ??= {});
      row[o] = (row[o] ?? 0) + 1;
    }
    if (this.records > this.limit) return;
    this.log.warn(
      { event: 'shutdown_undelivered', traceId, keyId, outcomes, delivered },
      delivered ? 'egress: stopped before every route delivered the transaction' : 'egress: stopped before any route delivered the transaction',
    );
  }

  /** The summary line (nothing when no record was reported). */
  finish(): void {
    if (this.records === 0) return;
    this.log.warn(
      {
        event: 'shutdown_undelivered_summary',
        records: this.records,
        undelivered: this.undelivered,
        logged: Math.min(this.records, this.limit),
        byRoute: this.byRoute,
      },
      `egress: ${this.records} transactions were not delivered by every route when the relay stopped (${Math.min(this.records, this.limit)} logged one by one above)`,
    );
  }
}
