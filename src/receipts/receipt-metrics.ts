// Landing metrics from the receipts (front thread, cold: updated by the landing tracker, rendered per scrape).
//   slotrelay_receipts_landed_total{route}     landed transactions by the route that sent first ("none": no route
//                                              reported a send, e.g. it landed through a client's own resend)
//   slotrelay_receipts_landed_failed_total      of those, processed with an on-chain error (fee charged)
//   slotrelay_receipts_not_executed_total       of those, included without execution (SIMD-0290: no fee, no effect)
//   slotrelay_receipts_not_landed_total         no status within receipts.trackForMs
//   slotrelay_receipts_untracked_total          not followed: receipts.maxTracked were already being followed
//   slotrelay_slots_to_land                     histogram of slots from acceptance to the landed slot
import { ROUTE_BY_ID } from '../shm/layout.js';
import type { TextBuilder } from '../metrics/prometheus.js';
import type { Execution } from './execution-outcome.js';

/** Upper bounds of the slots-to-land buckets (a leader window is 4 slots; 150 slots is a blockhash's lifetime). */
const SLOT_BUCKETS = [0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 150] as const;

/** Landing counts since start, for the status page (src/status/). */
export interface LandingCounts {
  readonly landedByRoute: Readonly<Record<string, number>>;
  /** Per first route: counts per SLOT_BUCKETS bucket, the last one beyond the largest bound. */
  readonly slotBucketsByRoute: Readonly<Record<string, readonly number[]>>;
  readonly notLanded: number;
}

export { SLOT_BUCKETS };

export class ReceiptMetrics {
  private readonly landedByRoute = new Map<string, number>([...ROUTE_BY_ID, 'none'].map((r) => [r, 0]));
  private landedFailed = 0;
  private notExecuted = 0;
  notLanded = 0;
  /** Not landed, by reason and whether it was sent ("reason|sent"). */
  private readonly reasons = new Map<string, number>();

  notLandedReason(code: string, sent: boolean): void {
    const k = `${code}|${sent ? 'true' : 'false'}`;
    this.reasons.set(k, (this.reasons.get(k) ?? 0) + 1);
  }
  untracked = 0;
  private readonly buckets = new Float64Array(SLOT_BUCKETS.length + 1);
  /** The same buckets per first route (the status page's slots-to-land per route; not rendered in /metrics). */
  private readonly bucketsByRoute = new Map<string, Float64Array>([...ROUTE_BY_ID, 'none'].map((r) => [r, new Float64Array(SLOT_BUCKETS.length + 1)]));
  private slotsSum = 0;
  private slotsCount = 0;

  landed(firstRoute: string | null, slotsToLand: number | null, execution: Execution): void {
    const r = firstRoute ?? 'none';
    this.landedByRoute.set(r, (this.landedByRoute.get(r) ?? 0) + 1);
    this.countExecution(execution, 1);
    if (slotsToLand === null) return;
    let b = SLOT_BUCKETS.findIndex((ub) => slotsToLand <= ub);
    if (b < 0) b = SLOT_BUCKETS.length;
    this.buckets[b]++;
    const byRoute = this.bucketsByRoute.get(r);
    if (byRoute !== undefined) byRoute[b]++;
    this.slotsSum += slotsToLand;
    this.slotsCount++;
  }

  /** Cold (the status page, once per tick while it is open): copies of the landing counts. */
  landingCounts(): LandingCounts {
    return {
      landedByRoute: Object.fromEntries(this.landedByRoute),
      slotBucketsByRoute: Object.fromEntries([...this.bucketsByRoute].map(([r, b]) => [r, Array.from(b)])),
      notLanded: this.notLanded,
    };
  }

  /** getTransaction settled a landing the status had judged otherwise: move it between the counters. */
  executionChanged(from: Execution, to: Execution): void {
    this.countExecution(from, -1);
    this.countExecution(to, 1);
  }

  private countExecution(e: Execution, n: number): void {
    if (e === 'failed') this.landedFailed += n;
    else if (e === 'not_executed') this.notExecuted += n;
  }

  render(tb: TextBuilder, tracked: number, kept: number): void {
    tb.declare('slotrelay_receipts_landed_total', 'counter', 'Accepted transactions seen landed, by the route that sent first');
    for (const [route, n] of this.landedByRoute) tb.sample('slotrelay_receipts_landed_total', { route }, n);
    tb.declare('slotrelay_receipts_landed_failed_total', 'counter', 'Landed transactions whose execution failed on chain');
    tb.sample('slotrelay_receipts_landed_failed_total', {}, this.landedFailed);
    tb.declare('slotrelay_receipts_not_executed_total', 'counter', 'Transactions included in a block without being executed (SIMD-0290: invalid fee payer, no fee)');
    tb.sample('slotrelay_receipts_not_executed_total', {}, this.notExecuted);
    tb.declare('slotrelay_receipts_not_landed_total', 'counter', 'Accepted transactions with no status within receipts.trackForMs');
    tb.sample('slotrelay_receipts_not_landed_total', {}, this.notLanded);
    tb.declare(
      'slotrelay_receipts_not_landed_reason_total',
      'counter',
      'Transactions that did not land, by reason (docs/receipts.md "Why it did not land") and whether any route sent them',
    );
    for (const [k, n] of this.reasons) {
      const [reason, sent] = k.split('|');
      tb.sample('slotrelay_receipts_not_landed_reason_total', { reason, sent }, n);
    }
    tb.declare('slotrelay_receipts_untracked_total', 'counter', 'Accepted transactions whose landing was not followed (receipts.maxTracked reached)');
    tb.sample('slotrelay_receipts_untracked_total', {}, this.untracked);
    tb.declare('slotrelay_receipts_tracked', 'gauge', 'Receipts whose landing is being followed now');
    tb.sample('slotrelay_receipts_tracked', {}, tracked);
    tb.declare('slotrelay_receipts_kept', 'gauge', 'Receipts held (bounded by receipts.capacity)');
    tb.sample('slotrelay_receipts_kept', {}, kept);
    tb.declare('slotrelay_slots_to_land', 'histogram', 'Slots from acceptance to the slot the transaction landed in');
    let cumulative = 0;
    SLOT_BUCKETS.forEach((ub, i) => {
      cumulative += this.buckets[i];
      tb.sample('slotrelay_slots_to_land_bucket', { le: ub }, cumulative);
    });
    cumulative += this.buckets[SLOT_BUCKETS.length];
    tb.sample('slotrelay_slots_to_land_bucket', { le: '+Inf' }, cumulative);
    tb.sample('slotrelay_slots_to_land_sum', {}, this.slotsSum);
    tb.sample('slotrelay_slots_to_land_count', {}, this.slotsCount);
  }
}
