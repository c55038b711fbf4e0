// Bounded logging for failure paths (any thread; warm: called once per failed transaction or request, so it only
// counts and compares). A failure that can repeat per transaction — a route's endpoint refusing, a record no route
// took, a retry queue shedding — is noted under a key naming what failed (route + reason, never a trace id), and
// per key the log gets:
//   - the first occurrence at once, with its own fields (the example: its trace id, the upstream's message);
//   - then at most one summary line per LOG_SUMMARY_INTERVAL_MS while it keeps happening: `event: "log_summary"`, the
//     fields of one occurrence of that interval (the example) and `count`, how many occurrences the line stands for;
//   - a last summary at flush()/close() (a stopping worker), so no occurrence is left uncounted.
// Every line carries `count` (1 for the first), so summing `count` over a key's lines gives how many happened; the
// metrics count them too (slotrelay_egress_outcomes_total ...). A key idle for a whole interval is forgotten: the next
// occurrence is logged at once again. At most MAX_KEYS keys are tracked; beyond that, occurrences share one overflow
// key. Log volume is therefore at most MAX_KEYS x (1 + run time / interval) lines per instance, whatever the rate.
import type { Logger } from 'pino';

/** One summary line per key per this interval at most (documented in docs/configuration.md, "Log volume"). */
export const LOG_SUMMARY_INTERVAL_MS = 10_000;
/** Keys tracked per instance; further keys are folded into OVERFLOW_KEY. */
const MAX_KEYS = 256;
const OVERFLOW_KEY = '(other)';
/** How often pending summaries are checked (a summary is at most this late). */
const CHECK_MS = 1_000;

export type SummaryLevel = 'debug' | 'info' | 'warn' | 'error';

interface KeyState {
  level: SummaryLevel;
  msg: string;
  /** Date.now() of the last line written for this key. */
  lastLineAtMs: number;
  /** Occurrences since that line (not written yet). */
  pending: number;
  /** Fields of one pending occurrence (the first of the interval). */
  example: Record<string, unknown> | null;
}

export interface SummarizedLogOptions {
  readonly intervalMs?: number;
  /** Test hook: the clock. */
  readonly now?: () => number;
}

export class SummarizedLog {
  private readonly keys = new Map<string, KeyState>();
  private readonly intervalMs: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly log: Logger,
    options: SummarizedLogOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? LOG_SUMMARY_INTERVAL_MS;
    this.now = options.now ?? Date.now;
  }

  /** Is a line at this level written at all (callers skip building fields otherwise). */
  enabled(level: SummaryLevel): boolean {
    return this.log.isLevelEnabled(level);
  }

  /**
   * One occurrence of `key`. `fields` and `msg` describe this occurrence; they are written at once when the key is
   * new (or was idle for an interval), else kept as the interval's example if it has none. Ignored after close().
   */
  note(level: SummaryLevel, key: string, fields: Record<string, unknown>, msg: string): void {
    if (this.closed || !this.log.isLevelEnabled(level)) return;
    let st = this.keys.get(key);
    if (st === undefined) {
      if (this.keys.size >= MAX_KEYS) {
        key = OVERFLOW_KEY;
        st = this.keys.get(key);
      }
      if (st === undefined) {
        this.keys.set(key, { level, msg, lastLineAtMs: this.now(), pending: 0, example: null });
        this.log[level]({ ...fields, count: 1 }, msg);
        this.arm();
        return;
      }
    }
    st.pending++;
    if (st.example === null) {
      st.example = fields;
      st.level = level;
      st.msg = msg;
    }
  }

  /** Writes every pending summary now (a stopping thread); keys stay tracked. */
  flush(): void {
    const now = this.now();
    for (const st of this.keys.values()) if (st.pending > 0) this.summary(st, now);
  }

  /** flush(), then stop: later notes are ignored (the counters still count them). */
  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.keys.clear();
  }

  /** Periodic check: summaries whose interval is over; keys idle for a whole interval are forgotten. */
  check(): void {
    const now = this.now();
    for (const [key, st] of this.keys) {
      if (now - st.lastLineAtMs < this.intervalMs) continue;
      if (st.pending > 0) this.summary(st, now);
      else this.keys.delete(key);
    }
    if (this.keys.size === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  private summary(st: KeyState, now: number): void {
    const sinceMs = now - st.lastLineAtMs;
    this.log[st.level]({ ...st.example, event: 'log_summary', count: st.pending, sinceMs }, `${st.msg} (${st.pending} in the last ${Math.round(sinceMs / 1000)} s; one example)`);
    st.pending = 0;
    st.example = null;
    st.lastLineAtMs = now;
  }

  private arm(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => this.check(), Math.min(CHECK_MS, this.intervalMs));
    this.timer.unref();
  }
}

/** One SummarizedLog per logger, for call sites that have a logger but no place to keep their own (the front). */
const shared = new WeakMap<Logger, SummarizedLog>();
export function summarizedLog(log: Logger): SummarizedLog {
  let s = shared.get(log);
  if (s === undefined) {
    s = new SummarizedLog(log);
    shared.set(log, s);
  }
  return s;
}
