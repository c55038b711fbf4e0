// Which keys the quic-egress thread may admit itself (front thread, cold: every POLICY_REFRESH_MS, and on each connection's
// authentication). Writes one policy word per key id into the budget buffer (src/shm/budget-layout.ts): a key whose
// effective default routes (the key's defaults ∩ what the relay runs, + the routes the relay adds) are QUIC-thread
// routes only (direct, static), at least one of them deliverable now, whose submit bucket is in shared memory and not
// decided by a cluster budget, gets POLICY_LOCAL; every other key (mixed route sets with rpc or jito, revoked,
// superseded, a cluster budget, undeliverable routes) keeps today's path through the front, which refuses or
// forwards exactly as before. While the intake does not accept (the relay stops) nothing is admitted locally.
import type { KeyTable } from '../admission/key-table.js';
import type { Intake } from '../admission/intake.js';
import { defaultRoutes, withAddedRoutes } from '../admission/send-options.js';
import { POLICY_LOCAL, POLICY_REFRESH_MS, POLICY_VERIFY, type BudgetTable } from '../shm/budget-layout.js';

export interface LocalPolicyDeps {
  readonly keys: KeyTable;
  readonly intake: Intake;
  readonly budgets: BudgetTable;
  readonly availableRouteMask: number;
  readonly addedRouteMasks: Uint32Array;
  /** Route bits the quic-egress thread sends by (RoutePlan.quicRing). */
  readonly quicMask: number;
}

export class LocalPolicy {
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly d: LocalPolicyDeps) {}

  start(): void {
    this.timer = setInterval(() => this.refresh(), POLICY_REFRESH_MS);
    this.timer.unref();
    this.refresh(); // open from the start, not one interval later
  }

  /** Nothing is admitted locally from now on (the relay stops). */
  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.d.budgets.setOpen(false);
  }

  /** The policy word key id `id` gets now (0 = the front decides). */
  policyOf(id: number): number {
    const { keys, intake, availableRouteMask, addedRouteMasks, quicMask } = this.d;
    const e = keys.entries[id];
    if (e === undefined || e.revoked || keys.current(e.hash) !== e) return 0;
    const bucket = e.submitBucket;
    if (bucket.slot < 0 || bucket.shared !== null) return 0;
    // The routes a request naming none gets (send-options decides them for every ingress); none: the front refuses.
    const routes = defaultRoutes(e, availableRouteMask);
    if (typeof routes !== 'number') return 0;
    const record = withAddedRoutes(routes, id, addedRouteMasks);
    if ((record & ~quicMask) !== 0 || (record & intake.deliverable) === 0) return 0;
    return POLICY_LOCAL | record | (e.config.verifySignatures ? POLICY_VERIFY : 0);
  }

  /** Rewrites every key's word (cold; bounded by the key table). */
  refresh(): void {
    const b = this.d.budgets;
    const entries = this.d.keys.entries;
    for (let id = 0; id < entries.length && id < b.keys; id++) {
      const e = entries[id];
      b.setPolicy(id, this.policyOf(id), e === undefined ? -1 : e.submitBucket.slot);
    }
    b.setOpen(this.timer !== null && this.d.intake.accepting);
  }
}
