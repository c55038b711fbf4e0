// Bundles as one part of the relay (front thread; cold set-up): the bundle service's client, its cached tip
// accounts, the counters and the method table, built once by main.ts when a bundle service is configured
// (bundles.url, or the embedded localnet's block engine). The JSON-RPC host serves the table's methods next to its
// own, and the relay host serves the same table on POST /v1/bundles (docs/bundles.md).
import type { Config } from '../config/schema.js';
import type { Intake } from '../admission/intake.js';
import type { CallContext } from '../admission/call-context.js';
import type { MethodTable } from '../jsonrpc/dispatch.js';
import type { TextBuilder } from '../metrics/prometheus.js';
import type { Receipts } from '../receipts/receipts.js';
import { BundleMetrics } from './bundle-metrics.js';
import { bundleMethods } from './bundle-methods.js';
import { BundleService } from './bundle-service.js';
import { TipAccounts } from './tip-accounts.js';

export class Bundles {
  readonly table: MethodTable<CallContext>;
  private readonly service: BundleService;
  private readonly metrics = new BundleMetrics();

  constructor(options: Config['bundles'] & { readonly url: string }, intake: Intake, receipts: Receipts | null) {
    this.service = new BundleService(options);
    this.table = bundleMethods({
      intake,
      service: this.service,
      tips: new TipAccounts(this.service, options.tipAccountsTtlMs),
      minTipLamports: BigInt(options.minTipLamports),
      metrics: this.metrics,
      receipts,
    });
  }

  /** origin + path of the bundle service: safe to log and print. */
  get serviceLabel(): string {
    return this.service.label;
  }

  render(tb: TextBuilder): void {
    this.metrics.render(tb);
  }

  close(): void {
    this.service.close();
  }
}

/** The bundle part when a bundle service is configured, else null (the bundle methods then answer -32601). */
export function createBundles(config: Readonly<Config>, intake: Intake, receipts: Receipts | null): Bundles | null {
  const url = config.bundles.url;
  return url === undefined ? null : new Bundles({ ...config.bundles, url }, intake, receipts);
}
