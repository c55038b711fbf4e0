// getRecentPrioritizationFees on the JSON-RPC host (front thread). The network-wide call (no addresses) is HOT: a
// shape check without allocation, then the cache (fee-cache.ts), which on a hit hands back the cached result
// synchronously, as an EncodedResult (src/jsonrpc/encoded-result.ts: the answer's bytes up to the id, encoded once
// per slot, so the front writes bytes instead of converting the ~7 KB text per request). An address-scoped call is
// checked as Agave does (fee-params.ts), canonicalised (sorted, deduplicated) and served from the per-address-set LRU.
// Misses ask the upstream (upstream.rpcUrl, the embedded localnet by default) through UpstreamRpcClient within
// upstream.requestTimeoutMs; a failure is answered as upstreamFailure() maps it (-32005 with data.reason, or the
// upstream's own error) and never cached. The call is charged to the key's readLimit by the endpoint. docs/fees.md.
import { Errors, Failure, failureOf } from '../../errors/registry.js';
import type { MethodHandler } from '../../jsonrpc/dispatch.js';
import type { SnapshotReader } from '../../telemetry/snapshot.js';
import { upstreamFailure, type UpstreamRpcClient } from '../upstream-client.js';
import { snapshotEpochs, type EpochClock } from './cache-epoch.js';
import { FeeCache, type FeeFetcher } from './fee-cache.js';
import { canonicalAddresses, firstBadAddress, isNetworkWide, tryFeeAddressList } from './fee-params.js';
import { feeResultText } from './fee-result.js';

export const METHOD = 'getRecentPrioritizationFees';

export interface PrioritizationFeesDeps {
  /** null when no upstream is configured: every miss is answered -32005 upstream_unavailable. */
  readonly upstream: UpstreamRpcClient | null;
  /** upstream.requestTimeoutMs. */
  readonly timeoutMs: number;
  /** jsonRpc.feeCacheEntries: address sets kept. */
  readonly maxScopedEntries: number;
  /** Where the slot comes from: the telemetry snapshot (null when telemetry is off) and its freshness limit. */
  readonly snapshot: { readonly reader: SnapshotReader | null; readonly maxAgeMs: number };
  /** Tests and benches: another clock, another fetcher. */
  readonly epochs?: EpochClock;
  readonly fetcher?: FeeFetcher;
}

const UPSTREAM_UNAVAILABLE = failureOf(Errors.UPSTREAM_UNAVAILABLE);

/** Fetches from the upstream and writes the result text; any failure rejects with what the client is answered. */
export function upstreamFeeFetcher(upstream: UpstreamRpcClient | null, timeoutMs: number): FeeFetcher {
  if (upstream === null) return () => Promise.reject(UPSTREAM_UNAVAILABLE.toError());
  return (addresses) =>
    upstream.call<unknown>(METHOD, addresses.length === 0 ? [] : [addresses], timeoutMs).then(feeResultText).catch((err: unknown) => {
      throw upstreamFailure(err);
    });
}

/** The handler and its cache (the cache is exposed for tests). */
export function prioritizationFeesMethod<C>(deps: PrioritizationFeesDeps): { readonly handler: MethodHandler<C>; readonly cache: FeeCache } {
  const epochs = deps.epochs ?? snapshotEpochs({ reader: deps.snapshot.reader, maxAgeMs: deps.snapshot.maxAgeMs });
  const cache = new FeeCache(deps.fetcher ?? upstreamFeeFetcher(deps.upstream, deps.timeoutMs), epochs, deps.maxScopedEntries);
  const handler: MethodHandler<C> = (params) => {
    if (isNetworkWide(params)) return cache.networkWideEncoded();
    const list = tryFeeAddressList(params);
    if (list instanceof Failure) return list;
    if (list.length === 0) return cache.networkWideEncoded();
    const c = canonicalAddresses(list);
    // A set already cached was made of the very same strings, judged then: base58-decoding them again is the
    // largest cost of a scoped hit, so only a new set is judged (in the client's order, as Agave reports the first).
    if (!cache.hasScoped(c.key)) {
      const bad = firstBadAddress(list);
      if (bad !== null) return bad;
    }
    return cache.scoped(c.key, c.addresses);
  };
  return { handler, cache };
}
