// Per-key budgets across relays (main/front thread, cold: one timer tick per cluster.limits.leaseIntervalMs). Attaches
// a LeasedBudget to each key's submit, simulate and read bucket; every tick it settles the budgets that were used
// (charge the overdraft, return idle leases, lease the next slice) in ONE pipelined engine round trip, never on a
// request's path. A failed round trip marks the engine down: every budget goes inactive and the keys' local buckets
// (this relay's own plan, as without a cluster) decide until a round trip succeeds again (docs/multi-region.md).
// Keys from the engine (engine-key-sync.ts) come and go: replace() attaches budgets to a new entry and moves the
// account (balance, debt, a settle on its way) from the entry it supersedes, so a plan change loses no tokens.
import type { KeyEntry, KeyTable } from '../admission/key-table.js';
import type { TokenBucket } from '../admission/rate-limit.js';
import type { ClusterConfig } from '../config/schema.js';
import { budgetKey, type BudgetClass } from './engine-keys.js';
import type { EngineLink } from './engine-link.js';
import { LEASE_COMMAND } from './lease-script.js';
import { LeasedBudget } from './leased-budget.js';

type LeaseReply = [number, number];
interface LeasePipeline {
  exec(): Promise<[Error | null, unknown][] | null>;
}
type LeaseCall = (key: string, rate: number, burst: number, want: number, debt: number, ret: number, ttlMs: number) => unknown;

/** How often the engine is pinged when no budget needs settling (to notice it going away or coming back). */
const IDLE_PING_MS = 1_000;

export interface BudgetCounters {
  settles: number;
  failedRounds: number;
  leased: number;
  returned: number;
  charged: number;
}

export class BudgetAgent {
  private budgets: LeasedBudget[] = [];
  private readonly byEntry = new Map<KeyEntry, LeasedBudget[]>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  private lastPingMs = 0;
  /** Bumped when the engine goes down: replies of calls sent before are ignored. */
  private epoch = 0;
  readonly counters: BudgetCounters = { settles: 0, failedRounds: 0, leased: 0, returned: 0, charged: 0 };

  constructor(
    private readonly link: EngineLink,
    keys: KeyTable,
    private readonly cfg: ClusterConfig,
  ) {
    for (const e of keys.entries) this.attach(e);
  }

  private attach(e: KeyEntry): LeasedBudget[] {
    const l = this.cfg.limits;
    const one = (bucket: TokenBucket, cls: BudgetClass, plan: { perSecond: number; burst: number }): LeasedBudget => {
      const b = new LeasedBudget(budgetKey(this.cfg.namespace, e.hash, cls), cls, plan.perSecond, plan.burst, l.leaseIntervalMs, l.idleReturnMs);
      bucket.shared = b;
      this.budgets.push(b);
      return b;
    };
    const list = [one(e.submitBucket, 'submit', e.config.rateLimit), one(e.simulateBucket, 'simulate', e.config.simulateLimit), one(e.readBucket, 'read', e.config.readLimit)];
    this.byEntry.set(e, list);
    return list;
  }

  /**
   * A key's entry changed (cold, the key sync): `next` gets budgets (none when the key is gone), carrying the account
   * of `previous`'s, which go inactive (whoever still holds the old entry, e.g. an open PubSub socket, is on this
   * relay's own bucket with the old plan). A removed key's leases are not returned: at most `cap` tokens, once.
   */
  replace(previous: KeyEntry | undefined, next: KeyEntry | undefined): void {
    const old = previous === undefined ? undefined : this.byEntry.get(previous);
    if (previous !== undefined) this.byEntry.delete(previous);
    const fresh = next === undefined ? [] : this.attach(next);
    for (const n of fresh) n.active = !this.stopped && this.link.up;
    if (old === undefined) return;
    for (let i = 0; i < old.length; i++) {
      const o = old[i];
      const n = fresh[i];
      if (n !== undefined) n.takeAccount(o);
      o.active = false;
    }
    this.budgets = this.budgets.filter((b) => !old.includes(b));
  }

  start(): void {
    this.stopped = false;
    void this.tick();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    for (const b of this.budgets) b.deactivate();
  }

  /** True while the budgets are shared (the engine answered the last round). */
  get shared(): boolean {
    return this.budgets.length > 0 && this.link.up;
  }

  /**
   * One round, then the next after leaseIntervalMs +- 25%: with a fixed phase the relay whose round comes first after
   * the others' would always find the refill; jitter spreads the shared bucket's refill over the relays with demand.
   */
  private async tick(): Promise<void> {
    await this.round(Date.now());
    if (this.stopped) return;
    const ms = this.cfg.limits.leaseIntervalMs * (0.75 + Math.random() * 0.5);
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private ttlMs(b: LeasedBudget): number {
    // After burst / rate seconds of quiet the bucket is full again, which an absent hash also means.
    return Math.ceil((b.burst / b.perSecond) * 1000) + 60_000;
  }

  private async round(now: number): Promise<void> {
    const l = this.cfg.limits;
    // The first connect has not answered yet: a ping now fails at once (no offline queue) and would report the engine
    // down before it is up. The link's own events decide (ready: up; a failed connect: down); the next tick leases.
    if (this.link.state === 'connecting') return;
    if (!this.link.up) {
      // Down (or not yet up): one probe; budgets switch on when it answers.
      await this.ping(now, true);
      return;
    }
    const pipe = this.link.redis.pipeline() as unknown as LeasePipeline & Record<string, LeaseCall>;
    const sent: { b: LeasedBudget; debt: number; ret: number }[] = [];
    for (const b of this.budgets) {
      if (!b.active) {
        // The engine is up (again): a fresh start, nothing leased.
        b.balance = 0;
        b.active = true;
      }
      if (b.inFlight) continue;
      const demand = b.spent + b.refused;
      const idle = now - b.lastUseMs > l.idleReturnMs;
      const debt = b.balance < 0 ? -b.balance : 0;
      const ret = b.balance > 0 && idle ? b.balance : 0;
      // Enough for the demand of the last interval (twice what was used, at least what was refused), up to cap.
      const target = idle ? 0 : Math.min(b.cap, Math.max(demand > 0 ? 2 * b.spent + b.refused : 0, b.largestRefused));
      const want = Math.max(0, Math.min(b.burst, target - Math.max(0, b.balance - ret)));
      if (want === 0 && debt === 0 && ret === 0) continue;
      b.balance += debt - ret;
      b.spent = 0;
      b.refused = 0;
      b.largestRefused = 0;
      b.inFlight = true;
      pipe[LEASE_COMMAND](b.engineKey, b.perSecond, b.burst, want, debt, ret, this.ttlMs(b));
      sent.push({ b, debt, ret });
    }
    if (sent.length === 0) {
      await this.ping(now, false);
      return;
    }
    const epoch = this.epoch;
    let results: [Error | null, unknown][] | null = null;
    let failure: unknown = null;
    try {
      results = await pipe.exec();
    } catch (err) {
      failure = err;
    }
    if (epoch !== this.epoch) return; // the engine went down meanwhile: these budgets were reset
    for (let i = 0; i < sent.length; i++) {
      const { debt, ret } = sent[i];
      sent[i].b.inFlight = false;
      // A plan changed while this settle was on its way: the account lives in the new entry's budget now.
      let b = sent[i].b;
      while (b.movedTo !== null) b = b.movedTo;
      b.inFlight = false;
      const r = results?.[i];
      if (r === undefined || r[0] !== null || !Array.isArray(r[1])) {
        failure ??= r?.[0] ?? new Error('no reply');
        // Not settled: the account stays as it was (an unanswered call may still have run: then the engine holds
        // a little less than it should, never more).
        b.balance += ret - debt;
        continue;
      }
      const [granted, left] = r[1] as LeaseReply;
      b.balance += granted;
      b.overdraftOk = left >= 1;
      this.counters.settles++;
      this.counters.leased += granted;
      this.counters.returned += ret;
      this.counters.charged += debt;
    }
    if (failure !== null) this.down(failure);
    else this.link.markUp();
  }

  private async ping(now: number, force: boolean): Promise<void> {
    if (!force && now - this.lastPingMs < IDLE_PING_MS) return;
    this.lastPingMs = now;
    try {
      await this.link.redis.ping();
      this.link.markUp();
    } catch (err) {
      this.down(err);
    }
  }

  private down(err: unknown): void {
    this.counters.failedRounds++;
    this.epoch++;
    for (const b of this.budgets) b.deactivate();
    this.link.markDown(err);
  }
}
