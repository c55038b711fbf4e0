// The bundle service's tip accounts (front thread; cold): getTipAccounts answered from a cache refreshed every
// bundles.tipAccountsTtlMs, one upstream call for any number of concurrent askers (single flight). A failed refresh
// keeps serving the last good list while there is one (the service's tip accounts change rarely) and is retried on
// the next ask; with no list at all the error goes to the caller.
import type { BundleService } from './bundle-service.js';
import { Errors, RelayError } from '../errors/registry.js';

export interface TipAccountList {
  readonly set: ReadonlySet<string>;
  /** The JSON text answered to getTipAccounts. */
  readonly json: string;
}

const BASE58_PUBKEY = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

export class TipAccounts {
  private current: TipAccountList | null = null;
  private fetchedAtMs = 0;
  private inFlight: Promise<TipAccountList> | null = null;

  constructor(
    private readonly service: BundleService,
    private readonly ttlMs: number,
  ) {}

  /** The cached list when fresh (no await), else a Promise of it. */
  get(nowMs: number = Date.now()): TipAccountList | Promise<TipAccountList> {
    if (this.current !== null && nowMs - this.fetchedAtMs < this.ttlMs) return this.current;
    if (this.inFlight === null) {
      this.inFlight = this.fetch().finally(() => {
        this.inFlight = null;
      });
    }
    const stale = this.current;
    return stale === null ? this.inFlight : this.inFlight.catch(() => stale);
  }

  private async fetch(): Promise<TipAccountList> {
    const result = await this.service.call('getTipAccounts', []);
    if (!Array.isArray(result) || result.length === 0 || !result.every((a) => typeof a === 'string' && BASE58_PUBKEY.test(a))) {
      throw new RelayError(Errors.UPSTREAM_UNAVAILABLE, 'Node is unhealthy: the bundle service is unavailable', {
        reason: 'upstream_unavailable',
        service: 'bundles',
        detail: 'getTipAccounts answered no list of addresses',
      });
    }
    const list = result as string[];
    this.current = Object.freeze({ set: new Set(list), json: JSON.stringify(list) });
    this.fetchedAtMs = Date.now();
    return this.current;
  }
}
