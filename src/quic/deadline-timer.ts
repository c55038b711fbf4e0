// The one timer per quiche connection, re-armed from conn.timeout() (hot: consulted after every I/O burst).
// Trick: we do not clear and re-create a Node timer after every packet (that allocates a Timeout each time). We only
// re-arm when the new deadline is EARLIER than the armed one; a timer that fires early (quiche pushed its deadline
// later, e.g. the idle timer after new traffic) just calls back, the owner asks quiche again and re-arms. Calling
// quiche's onTimeout() before a deadline is a harmless no-op: it checks each of its timers against the clock.
export class DeadlineTimer {
  private timer: NodeJS.Timeout | null = null;
  private armedAt = Infinity;
  private readonly fire: () => void;

  constructor(onFire: () => void) {
    this.fire = () => {
      this.timer = null;
      this.armedAt = Infinity;
      onFire();
    };
  }

  /** Ensures a callback no later than `delayMs` from `nowMs` (null = no deadline: leaves an armed timer alone). */
  arm(delayMs: number | null, nowMs: number): void {
    if (delayMs === null) return;
    const at = nowMs + delayMs;
    if (this.timer !== null && at >= this.armedAt - 0.5) return;
    if (this.timer !== null) clearTimeout(this.timer);
    // quiche reports whole milliseconds (truncated); 0 means "under 1 ms": wait 1 ms rather than spin on 0.
    this.timer = setTimeout(this.fire, delayMs < 1 ? 1 : delayMs);
    this.armedAt = at;
  }

  cancel(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.armedAt = Infinity;
  }
}
