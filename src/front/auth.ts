// API keys: the frozen key table and the four carriers of the spec (front thread, hot: one lookup per request).
// Lookup is one Map.get on the lower-cased UUID. The key value itself never leaves this module: everything
// downstream (ring records, logs, metrics) sees the key's numeric id and its name.
import type { KeyConfig, RouteName } from '../config/schema.js';
import { ROUTE_IDS } from '../shm/layout.js';
import { TokenBucket } from './rate-limit.js';

export interface KeyEntry {
  /** Index in the config's key list; what ring records carry. */
  readonly id: number;
  readonly name: string;
  readonly config: Readonly<KeyConfig>;
  /** Bit mask of allowedRoutes (ROUTE_IDS bits). */
  readonly allowedMask: number;
  /** Bit mask of the routes used when a request names none. */
  readonly defaultMask: number;
  readonly submitBucket: TokenBucket;
  readonly simulateBucket: TokenBucket;
  /** Every JSON-RPC call that is not a submission (getLeaderSlots, ...). */
  readonly readBucket: TokenBucket;
  /** Revoked through the cluster engine (src/cluster/key-revocations.ts): lookup() no longer finds it. */
  revoked: boolean;
}

export function routeMask(routes: readonly RouteName[]): number {
  let m = 0;
  for (const r of routes) m |= 1 << ROUTE_IDS[r];
  return m;
}

export class KeyTable {
  private readonly byKey = new Map<string, KeyEntry>();
  readonly entries: readonly KeyEntry[];

  constructor(keys: readonly Readonly<KeyConfig>[], defaultRoutes: readonly RouteName[], nowMs: number) {
    this.entries = keys.map((k, id) => ({
      id,
      name: k.name,
      config: k,
      allowedMask: routeMask(k.allowedRoutes),
      defaultMask: routeMask(k.defaultRoutes ?? defaultRoutes.filter((r) => k.allowedRoutes.includes(r))),
      submitBucket: new TokenBucket(k.rateLimit.perSecond, k.rateLimit.burst, nowMs),
      simulateBucket: new TokenBucket(k.simulateLimit.perSecond, k.simulateLimit.burst, nowMs),
      readBucket: new TokenBucket(k.readLimit.perSecond, k.readLimit.burst, nowMs),
      revoked: false,
    }));
    for (const e of this.entries) this.byKey.set(e.config.key.toLowerCase(), e);
  }

  lookup(candidate: string): KeyEntry | undefined {
    // UUIDs are 36 chars; skip the lower-casing allocation when the client already sends lower case.
    if (candidate.length !== 36) return undefined;
    const e = this.byKey.get(candidate) ?? this.byKey.get(candidate.toLowerCase());
    return e === undefined || e.revoked ? undefined : e;
  }
}

/**
 * The key a request carries, from the first carrier present in the spec's order: x-token, x-api-key,
 * Authorization: Bearer, ?key=. An Authorization header with another scheme (Basic, a proxy's own token...) is not a
 * key carrier, so it does not hide a `?key=`. Must be called synchronously inside the uWS handler (headers die after
 * it returns).
 */
export function extractKey(xToken: string, xApiKey: string, authorization: string, queryKey: string): string {
  if (xToken !== '') return xToken.trim();
  if (xApiKey !== '') return xApiKey.trim();
  if (authorization !== '') {
    const a = authorization.trim();
    if (a.length > 7 && a.slice(0, 7).toLowerCase() === 'bearer ') return a.slice(7).trim();
  }
  return queryKey;
}
