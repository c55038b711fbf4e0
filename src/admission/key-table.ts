// API keys: the key table (front thread, hot: one lookup per request).
// Lookup is one Map.get on the lower-cased UUID. The key value itself never leaves this module: everything
// downstream (ring records, logs, metrics) sees the key's numeric id and its name. With a cluster, keys and plans
// also come from the engine (src/cluster/engine-key-sync.ts), which knows a key only by its hash: such a key is found
// by hashing the candidate once, then (once it is known to be valid) by its value like any other.
import type { KeyConfig, RouteName } from '../config/schema.js';
import { keyHash } from './key-hash.js';
import { ROUTE_IDS } from '../shm/layout.js';
import { TokenBucket } from './rate-limit.js';
import type { BudgetTable } from '../shm/budget-layout.js';

/** What a key may do: every field of a config key but the key itself (an engine entry knows only its hash). */
export type KeyPlan = Omit<KeyConfig, 'key'>;

export interface KeyEntry {
  /**
   * Index in entries; what ring records carry. Config keys are 0..n-1 at start; engine keys, and config keys a reload
   * adds (src/reload/), get ids after them. An id never serves two keys: a key removed and added again gets its old id.
   */
  readonly id: number;
  readonly name: string;
  readonly config: Readonly<KeyPlan>;
  /** The key's engine name (engine-keys.ts keyHash): 128 bits of the SHA-256 of the lower-cased key. */
  readonly hash: string;
  /** The config file, or the cluster engine (whose plan for the same hash overrides the config's). */
  readonly source: 'config' | 'engine';
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
  /** What the key did (the status page's per-key table; src/status/): kept across plan changes of the same key. */
  readonly usage: KeyRequestCounts;
}

/**
 * Per-key counts for the status page (front thread, HOT: one increment on an object already in hand). Read by name
 * only: the key value never reaches the page. `requests`: HTTP requests (and QUIC ingress streams) carrying the key;
 * `refused`: refusals answered to them, batch elements counted one each (as slotrelay_rejections_total);
 * `rateLimited`: of those, the 429s. Not the same figures as /metrics' per-key counters (src/admission/key-usage.ts:
 * transactions into the rings, and 429s summed by key name): two counts of one key's traffic, one place each; folding
 * them into one is left to the structure work (issue #25).
 */
export interface KeyRequestCounts {
  requests: number;
  refused: number;
  rateLimited: number;
}

export function newKeyRequestCounts(): KeyRequestCounts {
  return { requests: 0, refused: 0, rateLimited: 0 };
}

/** What a reload did to the config's keys (names only, never keys). */
export interface ConfigKeyChanges {
  readonly added: string[];
  readonly changed: string[];
  readonly removed: string[];
  unchanged: number;
  /** The entry in force for a key before and after (the engine's overrides excluded: they did not change). */
  readonly inForce: { readonly previous: KeyEntry | undefined; readonly next: KeyEntry | undefined }[];
}

/** Two plans as parsed from a config (plain data, field order the schema's), the key itself left out. */
function samePlan(a: Readonly<KeyPlan>, b: Readonly<KeyPlan>): boolean {
  const noKey = (k: string, v: unknown): unknown => (k === 'key' ? undefined : v);
  return JSON.stringify(a, noKey) === JSON.stringify(b, noKey);
}

export function routeMask(routes: readonly RouteName[]): number {
  let m = 0;
  for (const r of routes) m |= 1 << ROUTE_IDS[r];
  return m;
}

export class KeyTable {
  /** Lower-cased key -> entry: the config's keys, and engine keys once a request has shown them valid. */
  private readonly byKey = new Map<string, KeyEntry>();
  private readonly configByHash = new Map<string, KeyEntry>();
  /** Engine entries by hash (only the hash is known until a client sends the key). */
  private readonly engineByHash = new Map<string, KeyEntry>();
  /** Hash -> lower-cased key, for every key in byKey (so a change of the engine's plan reaches byKey). */
  private readonly clearOf = new Map<string, string>();
  /** Hash -> id of engine keys ever seen: a key removed and added again keeps its id; no id serves two keys. */
  private readonly engineIds = new Map<string, number>();
  /** Hash -> id of config keys ever seen (the same rule across reloads). */
  private readonly configIds = new Map<string, number>();
  private readonly all: KeyEntry[] = [];

  constructor(
    keys: readonly Readonly<KeyConfig>[],
    private defaultRoutes: readonly RouteName[],
    nowMs: number,
    /** Where submit buckets keep their tokens when shared with the quic-egress thread (src/shm/budget-layout.ts); null = private. */
    readonly budgets: BudgetTable | null = null,
  ) {
    for (const k of keys) {
      const hash = keyHash(k.key);
      const e = this.makeEntry(this.all.length, k, hash, 'config', nowMs);
      this.configIds.set(hash, e.id);
      this.all.push(e);
      const lower = k.key.toLowerCase();
      this.byKey.set(lower, e);
      this.configByHash.set(hash, e);
      this.clearOf.set(hash, lower);
    }
  }

  /** The config's keys in force now (current or overridden by the engine), by id order of first appearance. */
  configEntries(): IterableIterator<KeyEntry> {
    return this.configByHash.values();
  }

  /**
   * A reload (cold, src/reload/): the config's keys become `keys`. A key whose plan (and default routes) did not change
   * keeps its entry, buckets and all; a changed one gets a new entry under the same id, its buckets carrying the
   * tokens left (capped at the new burst); a removed one is unknown (401) at once unless the engine supplies it; an
   * added one gets an id (its old one when it was here before). The engine's layer is untouched: its plan still
   * overrides the config's for the same key. Returns what changed, and every change of the entry in force per key
   * (previous -> next; next undefined when gone) for the cluster's budgets.
   */
  replaceConfigKeys(keys: readonly Readonly<KeyConfig>[], defaultRoutes: readonly RouteName[], nowMs: number): ConfigKeyChanges {
    this.defaultRoutes = defaultRoutes;
    const out: ConfigKeyChanges = { added: [], changed: [], removed: [], unchanged: 0, inForce: [] };
    const seen = new Set<string>();
    for (const k of keys) {
      const hash = keyHash(k.key);
      seen.add(hash);
      const old = this.configByHash.get(hash);
      if (old !== undefined && samePlan(old.config, k) && old.defaultMask === this.defaultMaskOf(k)) {
        out.unchanged++;
        continue;
      }
      const before = this.current(hash);
      let id = this.configIds.get(hash);
      if (id === undefined) {
        id = this.all.length;
        this.configIds.set(hash, id);
        this.all.push(undefined as unknown as KeyEntry); // set just below
      }
      // A changed key keeps its status-page counts, as its buckets keep their tokens.
      const e = this.makeEntry(id, k, hash, 'config', nowMs, old?.usage);
      if (old !== undefined) {
        e.submitBucket.carryFrom(old.submitBucket, nowMs);
        e.simulateBucket.carryFrom(old.simulateBucket, nowMs);
        e.readBucket.carryFrom(old.readBucket, nowMs);
      }
      e.revoked = before?.revoked ?? false; // a cluster revocation follows the key (KeyRevocations.reapply re-marks)
      this.all[id] = e;
      this.configByHash.set(hash, e);
      if (!this.engineByHash.has(hash)) {
        const lower = k.key.toLowerCase();
        this.byKey.set(lower, e);
        this.clearOf.set(hash, lower);
        out.inForce.push({ previous: before, next: e });
      }
      (old === undefined ? out.added : out.changed).push(e.name);
    }
    for (const [hash, old] of [...this.configByHash]) {
      if (seen.has(hash)) continue;
      this.configByHash.delete(hash);
      out.removed.push(old.name);
      if (this.engineByHash.has(hash)) continue; // the engine's plan stays in force
      const lower = this.clearOf.get(hash);
      if (lower !== undefined) this.byKey.delete(lower);
      this.clearOf.delete(hash);
      out.inForce.push({ previous: old, next: undefined });
    }
    return out;
  }

  /** Every entry by id, current or superseded (a changed plan leaves its old entry here until replaced). Grows. */
  get entries(): readonly KeyEntry[] {
    return this.all;
  }

  lookup(candidate: string): KeyEntry | undefined {
    // UUIDs are 36 chars; skip the lower-casing allocation when the client already sends lower case.
    if (candidate.length !== 36) return undefined;
    let e = this.byKey.get(candidate);
    if (e === undefined) {
      const lower = candidate.toLowerCase();
      e = this.byKey.get(lower) ?? this.learn(lower);
    }
    return e === undefined || e.revoked ? undefined : e;
  }

  /** An engine key sent for the first time: one SHA-256 (~1 us), then remembered by value (bounded by the engine's keys). */
  private learn(lower: string): KeyEntry | undefined {
    if (this.engineByHash.size === 0) return undefined;
    const hash = keyHash(lower);
    const e = this.engineByHash.get(hash);
    if (e === undefined) return undefined;
    this.byKey.set(lower, e);
    this.clearOf.set(hash, lower);
    return e;
  }

  /** The entry requests of this hash get now (engine before config), revoked or not. */
  current(hash: string): KeyEntry | undefined {
    return this.engineByHash.get(hash) ?? this.configByHash.get(hash);
  }

  /** Hashes of the keys the engine supplies now. */
  engineHashes(): IterableIterator<string> {
    return this.engineByHash.keys();
  }

  get engineKeyCount(): number {
    return this.engineByHash.size;
  }

  /**
   * Put the engine's plan for a key (cold, cluster key sync): a new key, a changed plan, or an override of the config
   * key with this hash. Returns the entry now in force and the one it replaces (whose budgets move to it).
   */
  setEngineKey(hash: string, plan: Readonly<KeyPlan>, nowMs: number): { entry: KeyEntry; previous: KeyEntry | undefined } {
    const previous = this.current(hash);
    let id = this.engineIds.get(hash);
    if (id === undefined) {
      id = this.all.length;
      this.engineIds.set(hash, id);
    }
    const e = this.makeEntry(id, plan, hash, 'engine', nowMs, previous?.usage);
    e.revoked = previous?.revoked ?? false;
    this.all[id] = e;
    this.engineByHash.set(hash, e);
    const lower = this.clearOf.get(hash);
    if (lower !== undefined) this.byKey.set(lower, e);
    return { entry: e, previous };
  }

  /** The engine no longer has the key: the config's entry is back in force, or the key is unknown (401) again. */
  removeEngineKey(hash: string): { removed: KeyEntry; fallback: KeyEntry | undefined } | undefined {
    const removed = this.engineByHash.get(hash);
    if (removed === undefined) return undefined;
    this.engineByHash.delete(hash);
    const fallback = this.configByHash.get(hash);
    const lower = this.clearOf.get(hash);
    if (lower !== undefined) {
      if (fallback !== undefined) this.byKey.set(lower, fallback);
      else {
        this.byKey.delete(lower);
        this.clearOf.delete(hash);
      }
    }
    return { removed, fallback };
  }

  private defaultMaskOf(k: Readonly<KeyPlan>): number {
    return routeMask(k.defaultRoutes ?? this.defaultRoutes.filter((r) => k.allowedRoutes.includes(r)));
  }

  private makeEntry(id: number, k: Readonly<KeyPlan>, hash: string, source: KeyEntry['source'], nowMs: number, usage: KeyRequestCounts = newKeyRequestCounts()): KeyEntry {
    return {
      id,
      name: k.name,
      config: k,
      hash,
      source,
      allowedMask: routeMask(k.allowedRoutes),
      defaultMask: this.defaultMaskOf(k),
      submitBucket: new TokenBucket(k.rateLimit.perSecond, k.rateLimit.burst, nowMs, this.budgets),
      simulateBucket: new TokenBucket(k.simulateLimit.perSecond, k.simulateLimit.burst, nowMs),
      readBucket: new TokenBucket(k.readLimit.perSecond, k.readLimit.burst, nowMs),
      revoked: false,
      usage,
    };
  }
}
