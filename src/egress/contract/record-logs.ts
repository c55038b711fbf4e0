// The log observers of the record handler (egress worker, QUIC thread; warm: written only for a record some route did
// not take, or a route that misbehaved). Built once per consumer and shared by its dispatchers (./send-record.ts):
//   accounting  a record not taken by every route: bounded per combination of route outcomes (src/log/summarized-log.ts:
//               the first at once with its trace id and every route's outcome, then a count per 10 s with one
//               example), plus one line per such record at level debug; through the consumer's accounting log
//               (src/egress/consumer/accounting-log.ts: asynchronous and bounded, never blocks the thread);
//   drops       the QUIC routes' outcomes other than sent, bounded per route and reason (./drop-log.ts). rpc and jito
//               log their endpoint's refusal themselves, with the endpoint's label this handler does not know;
//   failures    a route that threw or answered an outcome outside the closed set.
import type { Logger } from '../../log/logger.js';
import { SummarizedLog } from '../../log/summarized-log.js';
import { ROUTE_COUNT, ROUTE_IDS, type EgressOutcome } from '../../shm/layout.js';
import { DropLog } from './drop-log.js';

/** One record's accounting line: its ids, every route's outcome, and what the retry queue did with it. */
export type NotTakenLine = {
  readonly traceId: string;
  readonly keyId: number;
  readonly outcomes: Readonly<Record<string, string>>;
  readonly retry: string;
};

export class RecordLogs {
  /** Accounting lines, bounded per combination of route outcomes. */
  private readonly accSummary: SummarizedLog;
  private readonly failures: SummarizedLog;
  /** Per route id; null = the route logs its own failures. */
  private readonly drops: (DropLog | null)[];
  /** Level debug on the accounting logger: every troubled record gets its own line (followed on reload). */
  private accDebug: boolean;

  constructor(
    /** The consumer's logger: failures and drops. */
    log: Logger,
    /** The accounting lines' logger (the asynchronous destination in the relay). */
    private readonly accLog: Logger = log,
  ) {
    this.accSummary = new SummarizedLog(accLog);
    this.failures = new SummarizedLog(log);
    this.accDebug = accLog.isLevelEnabled('debug');
    this.drops = new Array<DropLog | null>(ROUTE_COUNT).fill(null);
    this.drops[ROUTE_IDS.direct] = new DropLog(log, 'direct');
    this.drops[ROUTE_IDS.static] = new DropLog(log, 'static');
  }

  /** A reload changed log.level. */
  levelChanged(): void {
    this.accDebug = this.accLog.isLevelEnabled('debug');
  }

  /** Whether a not-taken line would be written (cheap: the caller builds the line only then). */
  wantsNotTaken(delivered: boolean): boolean {
    return this.accDebug || this.accSummary.enabled(delivered ? 'info' : 'warn');
  }

  /** A record some route did not take; `key` names its combination of route outcomes (the summary key). */
  notTaken(key: string, line: NotTakenLine, delivered: boolean): void {
    if (this.accDebug) this.accLog.debug(line, 'egress: record not taken by every route');
    if (delivered) this.accSummary.note('info', key, line, 'egress: delivered, but not by every requested route');
    else this.accSummary.note('warn', key, line, 'egress: transaction not delivered by any route');
  }

  /** A route's answer other than sent (its drop log notes it; dropped:shutdown is the shutdown report's). */
  drop(routeId: number, outcome: EgressOutcome, traceId: string): void {
    this.drops[routeId]?.note(outcome, traceId);
  }

  threw(routeId: number, traceId: string, err: unknown): void {
    this.failures.note('error', 'threw ' + routeId, { traceId, route: routeId, err: err instanceof Error ? err.message : String(err) }, 'egress: route threw');
  }

  unknownOutcome(routeId: number, outcome: unknown): void {
    this.failures.note('error', 'unknown_outcome', { route: routeId, outcome: String(outcome) }, 'egress: route returned an unknown outcome; counted as failed');
  }

  /** Writes the pending summaries; later notes are counted only. */
  close(): void {
    this.failures.close();
    this.accSummary.close();
    for (const d of this.drops) d?.close();
  }
}
