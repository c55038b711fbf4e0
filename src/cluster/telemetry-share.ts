// Shared route telemetry (telemetry thread, cold: one engine round trip per cluster.telemetry.publishIntervalMs).
// Each relay writes what its own getLeaderSlots rows say about its own region — for every upcoming leader it has a
// MEASURED ping to: the ping (QUIC handshake RTT) and the region's tx latency (the selected txPath's one-way latency),
// plus its measured path hops — under {ns}:telemetry:{region} with a TTL of staleAfterMs, and reads the other
// configured regions' entries in the same round trip (SET + MGET in one pipeline). The snapshot builder asks
// figures(region, identity): a region's figures are used while the engine holds them (written within staleAfterMs)
// and this thread read them within staleAfterMs; after that the region's rows fall back to estimates. The front never
// sees any of this: it reads the snapshot as before.
import type { ClusterConfig } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import type { RegionFigures } from '../telemetry/route-model.js';
import type { RegionShare, TelemetryShareStatus } from '../telemetry/region-share.js';
import { telemetryKey } from './engine-keys.js';
import { EngineLink } from './engine-link.js';


/**
 * What one relay writes (JSON). `leaders`: identity -> [pingH, txH, atMs] (atMs: Unix ms of the ping's newest sample;
 * entries of relays before it have two elements, read with the entry's `at`); `paths`: provider -> one-way hop (h).
 */
export interface RegionEntry {
  readonly v: 1;
  readonly region: string;
  readonly at: number;
  readonly slot: number;
  readonly leaders: Record<string, [number, number] | [number, number, number]>;
  readonly paths: Record<string, number>;
}

interface Remote {
  readonly leaders: ReadonlyMap<string, RegionFigures>;
  readonly at: number;
  readonly fetchedAt: number;
}

const isHundredths = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x) && x >= 0 && x < 1e9;

/** Parse one region's entry; undefined when it is not a valid entry for that region. */
export function parseRegionEntry(text: string, region: string): RegionEntry | undefined {
  let e: Partial<RegionEntry>;
  try {
    e = JSON.parse(text) as Partial<RegionEntry>;
  } catch {
    return undefined;
  }
  if (e === null || typeof e !== 'object' || e.v !== 1 || e.region !== region || typeof e.at !== 'number' || typeof e.leaders !== 'object' || e.leaders === null) return undefined;
  return e as RegionEntry;
}

export type { TelemetryShareStatus };

export class TelemetryShare implements RegionShare {
  private readonly link: EngineLink;
  private readonly others: readonly string[];
  private readonly remotes = new Map<string, Remote>();
  private own: RegionEntry | null = null;
  private timer: NodeJS.Timeout | null = null;
  private busy = false;
  private lastStatus = '';
  publishes = 0;

  constructor(
    private readonly cfg: ClusterConfig & { readonly url: string },
    private readonly region: string,
    regions: readonly string[],
    private readonly log: Logger,
    /** Status changes and a heartbeat per round, to the main thread. */
    private readonly onStatus: (s: TelemetryShareStatus) => void,
  ) {
    this.others = regions.filter((r) => r !== region);
    this.link = new EngineLink({ url: cfg.url, commandTimeoutMs: cfg.commandTimeoutMs, part: 'telemetry', log });
  }

  start(): void {
    this.link.start();
    this.timer = setInterval(() => void this.round(), this.cfg.telemetry.publishIntervalMs);
  }

  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.link.stop();
  }

  /** The snapshot builder's latest own figures (replaced at every publish; written at the next round). */
  setOwn(slot: number, leaders: Record<string, [number, number, number]>, paths: Record<string, number>): void {
    this.own = { v: 1, region: this.region, at: Date.now(), slot, leaders, paths };
  }

  /** Another region's fresh figures for a leader (undefined: none, or stale: the row shows the estimate). */
  figures(region: string, identity: string, now: number): RegionFigures | undefined {
    const r = this.remotes.get(region);
    if (r === undefined) return undefined;
    if (now - r.fetchedAt > this.cfg.telemetry.staleAfterMs) {
      this.remotes.delete(region);
      return undefined;
    }
    return r.leaders.get(identity);
  }

  private async round(): Promise<void> {
    if (this.busy || this.link.state === 'connecting') return this.report();
    this.busy = true;
    const ns = this.cfg.namespace;
    try {
      const pipe = this.link.redis.pipeline();
      // The own entry is written only while this relay has something measured: no entry = estimates elsewhere.
      if (this.own !== null && Object.keys(this.own.leaders).length > 0) {
        pipe.set(telemetryKey(ns, this.region), JSON.stringify({ ...this.own, at: Date.now() }), 'PX', this.cfg.telemetry.staleAfterMs);
      }
      if (this.others.length > 0) pipe.mget(...this.others.map((r) => telemetryKey(ns, r)));
      const results = (await pipe.exec()) ?? [];
      for (const [err] of results) if (err !== null) throw err;
      this.link.markUp();
      this.publishes++;
      if (this.others.length > 0) this.merge(results[results.length - 1][1] as (string | null)[]);
    } catch (err) {
      this.link.markDown(err);
    } finally {
      this.busy = false;
    }
    this.report();
  }

  private merge(values: readonly (string | null)[]): void {
    const now = Date.now();
    this.others.forEach((region, i) => {
      const text = values[i];
      if (text === null || text === undefined) {
        this.remotes.delete(region); // expired in the engine: that region stopped writing
        return;
      }
      const e = parseRegionEntry(text, region);
      if (e === undefined) {
        this.remotes.delete(region);
        return;
      }
      const leaders = new Map<string, RegionFigures>();
      for (const [id, f] of Object.entries(e.leaders)) {
        if (!Array.isArray(f) || !isHundredths(f[0]) || !isHundredths(f[1])) continue;
        const at = f.length > 2 && typeof f[2] === 'number' && Number.isFinite(f[2]) ? f[2] : e.at;
        leaders.set(id, { pingH: f[0], txH: f[1], atMs: Math.round(at) });
      }
      this.remotes.set(region, { leaders, at: e.at, fetchedAt: now });
    });
  }

  private report(): void {
    const now = Date.now();
    const regions: Record<string, { ageMs: number; leaders: number } | null> = {};
    for (const r of this.others) {
      const x = this.remotes.get(r);
      regions[r] = x === undefined || now - x.fetchedAt > this.cfg.telemetry.staleAfterMs ? null : { ageMs: Math.max(0, now - x.at), leaders: x.leaders.size };
    }
    const s: TelemetryShareStatus = { type: 'cluster-telemetry', engine: this.link.state, error: this.link.error, regions, publishes: this.publishes };
    // Which regions are shared changed: one log line (the engine's own state changes are logged by EngineLink).
    const key = Object.entries(regions)
      .map(([r, v]) => `${r}:${v === null ? 0 : 1}`)
      .join(',');
    if (key !== this.lastStatus) {
      this.log.info({ event: 'cluster_regions_shared', regions: Object.fromEntries(Object.entries(regions).map(([r, v]) => [r, v !== null])) }, 'regions with shared measurements changed');
      this.lastStatus = key;
    }
    this.onStatus(s);
  }
}
