// Token buckets for per-key rate limits (front thread, hot: one take() per request element). No timers: tokens are
// refilled lazily from the elapsed time on each take, so an idle key costs nothing.

/**
 * A budget shared with the service's other relays (src/cluster/leased-budget.ts, docs/multi-region.md). While one is
 * attached and active it decides instead of the local bucket; while the engine is unreachable it is inactive and the
 * local bucket (this relay's own plan) decides, as with no cluster.
 */
export interface SharedBudget {
  readonly active: boolean;
  take(n: number, nowMs: number): number;
  refund(n: number): void;
}

export class TokenBucket {
  private tokens: number;
  private updatedMs: number;
  /** Set once at start by the cluster's budget agent (null: this relay alone). */
  shared: SharedBudget | null = null;

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
    const shared = this.shared;
    if (shared !== null && shared.active) return shared.take(n, nowMs);
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

  /** A reload changed the plan (cold): start from the tokens `prev` has left now, at most this bucket's burst. */
  carryFrom(prev: TokenBucket, nowMs: number): void {
    const elapsed = Math.max(0, nowMs - prev.updatedMs);
    this.tokens = Math.min(this.burst, prev.burst, prev.tokens + (elapsed * prev.perSecond) / 1000);
    this.updatedMs = nowMs;
  }

  /** Give back tokens taken by take() for a request that was refused by another bucket. */
  refund(n: number): void {
    const shared = this.shared;
    if (shared !== null && shared.active) return shared.refund(n);
    this.tokens = Math.min(this.burst, this.tokens + n);
  }
}
