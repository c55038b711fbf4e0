// What the telemetry thread needs from a measurement share with other regions' relays (telemetry thread, cold: once per
// publish). The share itself lives in the cluster layer (src/cluster/telemetry-share.ts) and is handed in by the
// thread's entry (workers/telemetry-worker.ts), so telemetry does not depend on the cluster.
import type { ClusterConfig } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import type { RegionFigures } from './route-model.js';

/** The status the telemetry thread posts to the main thread (/health detail, metrics). */
export interface TelemetryShareStatus {
  readonly type: 'cluster-telemetry';
  readonly engine: 'connecting' | 'up' | 'down';
  readonly error: string | null;
  /** Other regions: age of their figures (ms since their relay wrote them) and leaders covered; null = none fresh. */
  readonly regions: Record<string, { readonly ageMs: number; readonly leaders: number } | null>;
  readonly publishes: number;
}

export interface RegionShare {
  start(): void;
  stop(): Promise<void>;
  /** This region's figures for the slot: per leader [ping, tx, at] hundredths of ms, per path its measured hop. */
  setOwn(slot: number, leaders: Record<string, [number, number, number]>, paths: Record<string, number>): void;
  /** Another region's fresh figures for one leader, if any. */
  figures(region: string, identity: string, now: number): RegionFigures | undefined;
}

/** Builds the share for this relay's region among `regions`; status changes go to `onStatus`. */
export type RegionShareFactory = (
  cluster: ClusterConfig & { readonly url: string },
  region: string,
  regions: readonly string[],
  log: Logger,
  onStatus: (s: TelemetryShareStatus) => void,
) => RegionShare;
