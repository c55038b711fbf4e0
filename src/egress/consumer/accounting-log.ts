// The delivery-accounting log's destination (egress worker; warm). consumer-loop.ts notes every ring record that some
// route did not take here, bounded per combination of route outcomes (src/log/summarized-log.ts: the first at once
// with its trace id, then a count per 10 s), plus one `debug` line per such record when the level is debug.
// What must not happen is those lines stalling the worker: the relay's normal loggers write synchronously to
// stdout, and a synchronous write to a pipe whose reader is slower than the flood blocks the thread (sonic-boom
// sleeps and retries on EAGAIN), which would stop the worker sending. So these lines get their own pino logger on an
// ASYNCHRONOUS destination with a bounded buffer (MAX_BUFFER_BYTES): the worker never waits for the log sink. Should
// the sink fall so far behind that the buffer is full, further lines are dropped, counted, and one summary line per
// second on the worker's normal logger says how many (`event: accounting_lines_dropped`); the counters behind the
// lines (slotrelay_egress_outcomes_total, slotrelay_egress_records_total{stage="undelivered"}) stay exact.
// Lines still buffered when the worker stops are flushed by close(); a crashing worker can lose them.
import { destination, pino, type Logger, type LevelWithSilent } from 'pino';

/** Buffered accounting output before lines are dropped, bytes (~10,000 lines of ~400 bytes). */
const MAX_BUFFER_BYTES = 4 * 1024 * 1024;
/** Summary cadence for dropped lines, ms. */
const SUMMARY_INTERVAL_MS = 1_000;
/** How long close() waits for buffered lines to reach stdout, ms. */
const CLOSE_FLUSH_MS = 1_000;

export interface AccountingLogOptions {
  readonly level: LevelWithSilent;
  /** Bound into every line, like the worker's own logger ({thread: 'egress', worker: n}). */
  readonly bindings: Record<string, unknown>;
  /** Where the dropped-lines summary goes (the worker's normal logger). */
  readonly summary: Logger;
  /** Test hook: another file descriptor or path than stdout. */
  readonly dest?: number | string;
  /** Test hook: the buffer bound. */
  readonly maxBufferBytes?: number;
}

export class AccountingLog {
  /** info / warn per troubled record (consumer-loop.ts). */
  readonly log: Logger;
  private readonly dest: ReturnType<typeof destination>;
  private readonly summary: Logger;
  private readonly timer: NodeJS.Timeout;
  private dropped = 0;
  private droppedTotal = 0;
  private closed = false;

  constructor(o: AccountingLogOptions) {
    this.summary = o.summary;
    this.dest = destination({ dest: o.dest ?? 1, sync: false, minLength: 0, maxLength: o.maxBufferBytes ?? MAX_BUFFER_BYTES });
    this.dest.on('drop', () => {
      this.dropped++;
      this.droppedTotal++;
    });
    this.dest.on('error', (err: Error) => this.summary.error({ err: err.message }, 'egress: accounting log destination failed'));
    this.log = pino({ level: o.level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime }, this.dest).child(o.bindings);
    this.timer = setInterval(this.report, SUMMARY_INTERVAL_MS);
    this.timer.unref();
  }

  /** Lines dropped because the buffer was full, since start. */
  get linesDropped(): number {
    return this.droppedTotal;
  }

  /** Reports what is left to report, flushes what is buffered (bounded wait). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.report();
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, CLOSE_FLUSH_MS);
      t.unref();
      this.dest.once('close', () => {
        clearTimeout(t);
        resolve();
      });
      this.dest.end(); // stdout itself is not closed by sonic-boom
    });
  }

  private readonly report = (): void => {
    if (this.dropped === 0) return;
    this.summary.warn(
      { event: 'accounting_lines_dropped', dropped: this.dropped, droppedTotal: this.droppedTotal },
      'egress: accounting log lines dropped: stdout is not keeping up (the outcome counters are exact)',
    );
    this.dropped = 0;
  };
}
