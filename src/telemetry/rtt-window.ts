// A path's recent round-trip samples -> the ping a row shows (telemetry thread; cold: one add per egress report or
// probe result, one read per leader per snapshot). The statistic is the minimum over the last RTT_WINDOW_MS before
// the newest sample: a round trip is only ever inflated (queues, a busy host delaying the handshake or the ACK),
// never shortened, so the window's minimum is the path's delay with load outliers discounted (BBR's min-RTT filter,
// quiche's min_rtt), and the window bounds how long a real change (a new route) takes to show.

/** How far back from the newest sample the minimum looks. Egress reports come every ~1 s: ~10 samples. */
export const RTT_WINDOW_MS = 10_000;
/** Samples kept per path at most (a misbehaving reporter cannot grow it). */
const MAX_SAMPLES = 64;

export class RttWindow {
  private readonly at: number[] = [];
  private readonly rtt: number[] = [];

  /** One sample taken at `now` (Unix ms); samples older than the window before it are dropped. */
  add(rttMs: number, now: number): void {
    this.at.push(now);
    this.rtt.push(rttMs);
    let drop = 0;
    while (drop < this.at.length - 1 && (now - this.at[drop] > RTT_WINDOW_MS || this.at.length - drop > MAX_SAMPLES)) drop++;
    if (drop > 0) {
      this.at.splice(0, drop);
      this.rtt.splice(0, drop);
    }
  }

  /** Unix ms of the newest sample (-Infinity: none). */
  get newestAt(): number {
    return this.at.length === 0 ? -Infinity : this.at[this.at.length - 1];
  }

  /** The minimum over the window ending at the newest sample (NaN: no sample). */
  get minRttMs(): number {
    if (this.at.length === 0) return NaN;
    const from = this.newestAt - RTT_WINDOW_MS;
    let m = Infinity;
    for (let i = 0; i < this.at.length; i++) if (this.at[i] >= from && this.rtt[i] < m) m = this.rtt[i];
    return m;
  }
}
