// Token buckets for per-key rate limits (front thread, hot: one take() per request element). No timers: tokens are
// refilled lazily from the elapsed time on each take, so an idle key costs nothing.

export class TokenBucket {
  private tokens: number;
  private updatedMs: number;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    nowMs: number,
  ) {
    this.tokens = burst;
    this.updatedMs = nowMs;
  }

  /**
   * Take `n` tokens at once (a batch counts every element). Returns 0 when granted, otherwise the milliseconds until
   * `n` tokens will be available (nothing is taken). A request larger than the burst can never pass: it gets the
   * time to refill the whole bucket, so Retry-After stays meaningful.
   */
  take(n: number, nowMs: number): number {
    const elapsed = nowMs - this.updatedMs;
    if (elapsed > 0) {
      this.tokens = Math.min(this.burst, this.tokens + (elapsed * this.perSecond) / 1000);
      this.updatedMs = nowMs;
    }
    if (this.tokens >= n) {
      this.tokens -= n;
      return 0;
    }
    const missing = Math.min(n, this.burst) - this.tokens;
    return Math.max(1, Math.ceil((missing * 1000) / this.perSecond));
  }

  /** Give back tokens taken by take() for a request that was refused by another bucket. */
  refund(n: number): void {
    this.tokens = Math.min(this.burst, this.tokens + n);
  }
}
