// Bundle counters for /metrics (front thread; cold): sendBundle outcomes (accepted, or the refusal's reason:
// bundles_not_enabled, bundle_invalid, bundle_tip_too_low, rate_limited, upstream_*, ...) and the transactions in
// accepted bundles. Labels are registry reasons only: never a key, a bundle id or a URL.
import type { TextBuilder } from '../metrics/prometheus.js';

export class BundleMetrics {
  private readonly byOutcome = new Map<string, number>();
  private transactions = 0;

  count(outcome: string, transactions = 0): void {
    this.byOutcome.set(outcome, (this.byOutcome.get(outcome) ?? 0) + 1);
    this.transactions += transactions;
  }

  render(tb: TextBuilder): void {
    tb.declare('slotrelay_bundles_total', 'counter', 'sendBundle calls by outcome (accepted, or the refusal reason)');
    for (const [outcome, n] of this.byOutcome) tb.sample('slotrelay_bundles_total', { outcome }, n);
    tb.declare('slotrelay_bundle_transactions_total', 'counter', 'Transactions in bundles the bundle service accepted');
    tb.sample('slotrelay_bundle_transactions_total', {}, this.transactions);
  }
}
