// Token buckets for per-key rate limits (front thread, hot: one take() per request element). No timers: tokens are
// refilled lazily from the elapsed time on each take, so an idle key costs nothing. A submit bucket made with a
// BudgetTable (src/shm/budget-layout.ts) keeps its tokens in shared memory instead, so the quic-egress thread, admitting a
// stream locally, draws from the same budget (same arithmetic, under the slot's lock); a cluster budget still decides
// first while attached and active.
import type { BudgetTable } from '../shm/budget-layout.js';

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

  /** The shared slot holding this bucket's tokens (-1: the private fields above). */
  readonly slot: number;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    nowMs: number,
    private readonly table: BudgetTable | null = null,
  ) {
    this.tokens = burst;
    this.updatedMs = nowMs;
    this.slot = table === null ? -1 : table.allocate(perSecond, burst, nowMs);
  }

  /**
   * Take `n` tokens at once (a batch counts every element). Returns 0 when granted, otherwise the milliseconds until
   * `n` tokens will be available (nothing is taken). A request larger than the burst can never pass: it gets the
   * time to refill the whole bucket, so Retry-After stays meaningful.
   */
  take(n: number, nowMs: number): number {
    const shared = this.shared;
    if (shared !== null && shared.active) return shared.take(n, nowMs);
    if (this.slot >= 0) return this.table!.take(this.slot, n, nowMs);
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
    const left = Math.min(this.burst, prev.leftAt(nowMs));
    if (this.slot >= 0) this.table!.setTokens(this.slot, left, nowMs);
    this.tokens = left;
    this.updatedMs = nowMs;
  }

  /** Tokens this bucket would have at `nowMs` (cold: carryFrom). */
  private leftAt(nowMs: number): number {
    if (this.slot >= 0) return this.table!.leftAt(this.slot, nowMs);
    return Math.min(this.burst, this.tokens + (Math.max(0, nowMs - this.updatedMs) * this.perSecond) / 1000);
  }

  /** Give back tokens taken by take() for a request that was refused by another bucket. */
  refund(n: number): void {
    const shared = this.shared;
    if (shared !== null && shared.active) return shared.refund(n);
    if (this.slot >= 0) return this.table!.refund(this.slot, n);
    this.tokens = Math.min(this.burst, this.tokens + n);
  }
}
