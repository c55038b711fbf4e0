// The getRecentPrioritizationFees cache (front thread). HOT on a hit: one epoch read (cache-epoch.ts), one compare,
// and the cached result TEXT returned as it is: no await, no allocation (the network-wide answer needs no key at
// all; an address-scoped one a Map lookup by its canonical key). Cold on a miss: one upstream call per key and
// epoch, shared by every caller that asks meanwhile (single-flight: at most one call in flight per key).
// Policy (docs/fees.md "Cache policy"):
// - An answer is fresh for the epoch (slot) it was fetched in. The network-wide answer has one entry; address-scoped
//   answers are kept per (sorted, deduplicated address set) in an LRU of `maxScopedEntries`.
// - Stale-while-revalidate, bounded by one epoch: when the epoch has just moved on and the entry holds the previous
//   epoch's answer, that answer is served at once and one refresh is started. Older answers are never served: the
//   caller waits for the refresh, which ends within the upstream timeout (a hang is impossible).
// - A failed fetch is never cached: its waiters get the failure (mapped by the fetcher), the entry keeps its last good
//   answer (still servable only under the one-epoch rule), and the next caller starts a new fetch.
import { EncodedResult } from '../../jsonrpc/encoded-result.js';
import { isPreviousEpoch, type EpochClock } from './cache-epoch.js';

/** Fetches one answer (result JSON text) from the upstream; rejects with the error the caller is to be answered. */
export type FeeFetcher = (addresses: readonly string[]) => Promise<string>;

const NO_ADDRESSES: readonly string[] = Object.freeze([]);

function ignore(): void {}

/** One cached answer and its refresh. */
class Entry {
  /** Epoch of `text`; NaN before the first answer (NaN equals nothing). */
  epoch = NaN;
  text: string | null = null;
  /** `text` as answer bytes (encoded-result.ts), made on its first network-wide hit; null again when text changes. */
  encoded: EncodedResult | null = null;
  /** The fetch in flight, if any. */
  pending: Promise<string> | null = null;

  constructor(readonly addresses: readonly string[]) {}
}

export interface FeeCacheStats {
  /** Upstream fetches started (network-wide, scoped). */
  readonly fetches: number;
  readonly scopedEntries: number;
}

export class FeeCache {
  private readonly network = new Entry(NO_ADDRESSES);
  private readonly scopedEntries = new Map<string, Entry>();
  private fetches = 0;

  constructor(
    private readonly fetcher: FeeFetcher,
    private readonly epochs: EpochClock,
    private readonly maxScopedEntries: number,
  ) {
    if (!(maxScopedEntries >= 1)) throw new RangeError('maxScopedEntries must be at least 1');
  }

  /** The network-wide answer: the text itself on a hit, else a Promise of it. */
  networkWide(): string | Promise<string> {
    const epoch = this.epochs.current();
    const e = this.network;
    if (e.epoch === epoch) return e.text!;
    return this.miss(e, epoch);
  }

  /**
   * networkWide() for the JSON-RPC handler: the same answer, a hit (fresh, or the one-epoch-stale answer) as an
   * EncodedResult, encoded once per answer: the front writes its bytes without converting the ~7 KB text per request.
   */
  networkWideEncoded(): EncodedResult | Promise<string> {
    const epoch = this.epochs.current();
    const e = this.network;
    const r = e.epoch === epoch ? e.text! : this.miss(e, epoch);
    if (typeof r !== 'string') return r;
    // Only `e.text` is ever returned as a string here: encode it once (cold: once per slot).
    return (e.encoded ??= new EncodedResult(r));
  }

  /**
   * The answer for a canonical address set (fee-params.ts canonicalAddresses: `key` names it, `addresses` is what the
   * upstream is asked about). Touching an entry makes it the most recently used.
   */
  scoped(key: string, addresses: readonly string[]): string | Promise<string> {
    const epoch = this.epochs.current();
    let e = this.scopedEntries.get(key);
    if (e === undefined) {
      e = new Entry(addresses);
      this.scopedEntries.set(key, e);
      if (this.scopedEntries.size > this.maxScopedEntries) this.evictOldest();
    } else {
      // Map order is insertion order: re-inserting marks it most recent.
      this.scopedEntries.delete(key);
      this.scopedEntries.set(key, e);
    }
    if (e.epoch === epoch) return e.text!;
    return this.miss(e, epoch);
  }

  /** True when the address set has an entry (answered, or being fetched). Does not touch its recency. */
  hasScoped(key: string): boolean {
    return this.scopedEntries.has(key);
  }

  stats(): FeeCacheStats {
    return { fetches: this.fetches, scopedEntries: this.scopedEntries.size };
  }

  private evictOldest(): void {
    // An evicted entry's fetch still settles for its waiters; its answer just is not kept.
    const oldest = this.scopedEntries.keys().next();
    if (!oldest.done) this.scopedEntries.delete(oldest.value);
  }

  private miss(e: Entry, epoch: number): string | Promise<string> {
    // Single-flight per key: join the fetch in flight (even one started in the previous epoch: its answer is at most
    // one slot old, like the stale one below) rather than start a second.
    const refresh = e.pending ?? this.refresh(e, epoch);
    if (e.text !== null && isPreviousEpoch(e.epoch, epoch)) return e.text;
    return refresh;
  }

  private refresh(e: Entry, epoch: number): Promise<string> {
    this.fetches++;
    const p: Promise<string> = this.fetcher(e.addresses).then(
      (text) => {
        if (e.pending === p) e.pending = null;
        e.text = text;
        e.encoded = null;
        e.epoch = epoch;
        return text;
      },
      (err: unknown) => {
        if (e.pending === p) e.pending = null;
        throw err;
      },
    );
    // A refresh started for a caller who was served the stale answer has nobody awaiting it: its failure must not be
    // an unhandled rejection (which would end the process).
    p.catch(ignore);
    e.pending = p;
    return p;
  }
}
