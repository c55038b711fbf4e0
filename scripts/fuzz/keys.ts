// API keys of the fuzz relay and the carriers a case puts them on (harness process; generation, hot). Each key has
// a profile the oracle needs: its rate limits, preflight policy, signature verification and whether it can use
// the one route this relay offers (rpc, via routes.discard). Which key a request carries follows the front's rule
// (src/admission/key-table.ts extractKey): the first non-empty carrier of x-token, x-api-key, Authorization: Bearer, ?key=.
import type { Rng } from './rng.js';

export type KeyName = 'fuzz' | 'tight' | 'verify' | 'reject' | 'noroute';

export interface KeyProfile {
  readonly name: KeyName;
  readonly key: string;
  /** 1/s, burst 3 (submissions and reads), simulations 1/s burst 1: most of its requests get 429. */
  readonly tight: boolean;
  readonly verify: boolean;
  readonly preflight: 'simulate' | 'skip' | 'reject';
  /** Its default route set includes rpc (the only route a discarding relay offers). */
  readonly rpcRoute: boolean;
}

export const KEYS: Readonly<Record<KeyName, KeyProfile>> = {
  fuzz: { name: 'fuzz', key: '7a1d6c2e-4b3f-4e8a-9c5d-0f1e2a3b4c5d', tight: false, verify: false, preflight: 'simulate', rpcRoute: true },
  tight: { name: 'tight', key: 'b2c3d4e5-f6a7-4b8c-9d0e-1f2a3b4c5d6e', tight: true, verify: false, preflight: 'simulate', rpcRoute: true },
  verify: { name: 'verify', key: 'c3d4e5f6-a7b8-4c9d-8e0f-2a3b4c5d6e7f', tight: false, verify: true, preflight: 'skip', rpcRoute: true },
  reject: { name: 'reject', key: 'd4e5f6a7-b8c9-4d0e-9f1a-3b4c5d6e7f80', tight: false, verify: false, preflight: 'reject', rpcRoute: true },
  noroute: { name: 'noroute', key: 'e5f6a7b8-c9d0-4e1f-8a2b-4c5d6e7f8091', tight: false, verify: false, preflight: 'simulate', rpcRoute: false },
};

/** A UUID no key has. */
export const UNKNOWN_KEY = '0badc0de-0000-4000-8000-00000000f022';

const BIG = { perSecond: 1_000_000_000, burst: 1_000_000_000 };

/** The `keys` section of the relay config for these profiles. */
export function keysConfig(): Record<string, unknown>[] {
  return Object.values(KEYS).map((k) => ({
    key: k.key,
    name: `fuzz-${k.name}`,
    ...(k.rpcRoute ? {} : { allowedRoutes: ['direct', 'jito'] }),
    rateLimit: k.tight ? { perSecond: 1, burst: 3 } : BIG,
    readLimit: k.tight ? { perSecond: 1, burst: 3 } : BIG,
    simulateLimit: k.tight ? { perSecond: 1, burst: 1 } : BIG,
    preflight: k.preflight,
    verifySignatures: k.verify,
  }));
}

export interface Carriers {
  readonly headers: Record<string, string>;
  /** `key=...` query parameter value, or null for none. */
  readonly queryKey: string | null;
  /** The profile the relay should see, or null (401). */
  readonly profile: KeyProfile | null;
}

/** How a case carries its key. `profile` null: no key or an unknown one. */
export function carriers(rng: Rng, profile: KeyProfile | null): Carriers {
  const value = profile === null ? rng.pick(['', UNKNOWN_KEY, UNKNOWN_KEY.toUpperCase(), 'not-a-key', UNKNOWN_KEY.slice(0, 35)]) : profile.key;
  const variant = profile === null ? value : rng.weighted<string>([[8, value], [1, value.toUpperCase()], [1, ` ${value} `]]);
  const headers: Record<string, string> = {};
  let queryKey: string | null = null;
  const carrier = rng.weighted<string>([[3, 'x-api-key'], [2, 'x-token'], [2, 'bearer'], [2, 'query'], [1, 'shadowed'], [1, 'other-scheme']]);
  switch (carrier) {
    case 'x-api-key':
    case 'x-token':
      if (variant.trim() !== '') headers[carrier] = variant;
      break;
    case 'bearer':
      if (variant.trim() !== '') headers.authorization = `${rng.pick(['Bearer', 'bearer', 'BEARER'])} ${variant.trim()}`;
      break;
    case 'query':
      queryKey = variant.trim();
      break;
    case 'shadowed': {
      // The first carrier present wins: the right key behind a wrong x-token is not seen, and vice versa.
      const wrongFirst = rng.chance(0.5);
      if (wrongFirst) {
        headers['x-token'] = UNKNOWN_KEY;
        headers['x-api-key'] = KEYS.fuzz.key;
        return { headers, queryKey, profile: null };
      }
      if (value.trim() !== '') headers['x-token'] = value;
      headers['x-api-key'] = UNKNOWN_KEY;
      return { headers, queryKey, profile: value.trim() === '' ? null : profile };
    }
    case 'other-scheme':
      // Not a key carrier: Basic credentials do not hide a ?key=.
      headers.authorization = `Basic ${Buffer.from(`user:${UNKNOWN_KEY}`).toString('base64')}`;
      queryKey = variant.trim();
      break;
  }
  const hasKey = Object.keys(headers).length > 0 || (queryKey !== null && queryKey !== '');
  return { headers, queryKey, profile: hasKey ? profile : null };
}

/** The key mix of the run: mostly the high-limit key, each other profile and "no valid key" now and then. */
export function pickProfile(rng: Rng): KeyProfile | null {
  return rng.weighted<KeyProfile | null>([
    [70, KEYS.fuzz],
    [6, KEYS.verify],
    [4, KEYS.reject],
    [4, KEYS.noroute],
    [3, KEYS.tight],
    [13, null],
  ]);
}
