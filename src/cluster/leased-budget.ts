// One key's budget class (submit, simulate or read) as this relay's share of the service-wide bucket (front thread,
// HOT: take() runs per request element; the settle fields are touched by the budget agent's timer, same thread).
//
// The relay spends tokens it leased from the engine (balance). When the balance is gone it may run into an overdraft
// of one lease interval's worth of the plan, so the first request of a key after a quiet period never waits for the
// engine; the overdraft is charged to the shared bucket at the next settle (debt) and is refused while the engine's
// last answer said the shared bucket is empty. Refusals answer the time the plan needs to refill what is missing.
import type { SharedBudget } from '../admission/rate-limit.js';
import type { BudgetClass } from './engine-keys.js';

export class LeasedBudget implements SharedBudget {
  /** False while the engine is unreachable: the key's local bucket decides (TokenBucket). */
  active = false;
  /** Leased tokens not yet spent; negative = overdraft spent, to be charged at the next settle. */
  balance = 0;
  /** The engine's last answer left tokens in the shared bucket (else: no overdraft until a quiet period). */
  overdraftOk = true;
  /** Demand since the last settle: granted and refused tokens, and the largest refused request. */
  spent = 0;
  refused = 0;
  largestRefused = 0;
  lastUseMs = 0;
  /** A settle call is on its way (one per budget at a time). */
  inFlight = false;
  /** The budget that took over this one's account after a plan change (its settle's reply goes there). */
  movedTo: LeasedBudget | null = null;
  /** Most tokens one settle leases: two lease intervals of the plan (at least 1, at most the burst). */
  readonly cap: number;
  /** One lease interval of the plan (at least 1, at most the burst). */
  readonly overdraft: number;

  constructor(
    /** The engine key of the shared bucket (engine-keys.ts budgetKey). */
    readonly engineKey: string,
    readonly cls: BudgetClass,
    readonly perSecond: number,
    readonly burst: number,
    leaseIntervalMs: number,
    private readonly idleResetMs: number,
  ) {
    const slice = (perSecond * leaseIntervalMs) / 1000;
    this.overdraft = Math.max(1, Math.min(burst, Math.ceil(slice)));
    this.cap = Math.max(1, Math.min(burst, Math.ceil(2 * slice)));
  }

  take(n: number, nowMs: number): number {
    // After a quiet period the shared bucket has refilled as far as this relay can tell: overdraft allowed again.
    if (!this.overdraftOk && nowMs - this.lastUseMs > this.idleResetMs) this.overdraftOk = true;
    this.lastUseMs = nowMs;
    const floor = this.overdraftOk ? -this.overdraft : 0;
    if (this.balance - n >= floor) {
      this.balance -= n;
      this.spent += n;
      return 0;
    }
    this.refused += n;
    if (n > this.largestRefused) this.largestRefused = n;
    const missing = Math.min(n, this.burst) - (this.balance - floor);
    return Math.max(1, Math.ceil((missing * 1000) / this.perSecond));
  }

  refund(n: number): void {
    this.balance += n;
    this.spent -= n;
  }

  /** A plan change: this budget continues `o`'s account (same engine bucket, the key's new plan). */
  takeAccount(o: LeasedBudget): void {
    this.active = o.active;
    // Leases beyond the new plan's cap are dropped (the engine's bucket is capped at the new burst anyway): a lowered
    // plan applies at once, not after the old plan's leases are spent.
    this.balance = Math.min(o.balance, this.cap);
    // "The shared bucket is empty" was said of the old plan: a raised plan must not wait for a quiet period.
    this.overdraftOk = true;
    this.spent = o.spent;
    this.refused = o.refused;
    this.largestRefused = o.largestRefused;
    this.lastUseMs = o.lastUseMs;
    // One settle at a time per engine bucket: the new budget waits for the old one's reply.
    this.inFlight = o.inFlight;
    if (o.inFlight) o.movedTo = this;
  }

  /** Engine down: forget leases (they are lost to the shared bucket, bounded by `cap`) and any debt. */
  deactivate(): void {
    this.active = false;
    this.balance = 0;
    this.spent = 0;
    this.refused = 0;
    this.largestRefused = 0;
    this.overdraftOk = true;
    this.inFlight = false;
  }
}
