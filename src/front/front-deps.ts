// Everything the front-thread handlers share, built once by main.ts (cold).
import type { Config } from '../config/schema.js';
import type { HealthReport } from '../health/health-monitor.js';
import type { Logger } from '../log/logger.js';
import type { Receipts } from '../receipts/receipts.js';
import type { LeaderCounters } from '../receipts/leader-counters.js';
import type { FrontMetrics } from '../metrics/front-metrics.js';
import type { KeyUsage } from '../admission/key-usage.js';
import type { UpstreamRpcClient } from '../rpc/upstream-client.js';
import type { KeyTable } from '../admission/key-table.js';
import type { HttpRuntimeInfo } from '../http/runtime-info.js';
import type { ResponseOptions } from '../http/response.js';
import type { Intake } from '../admission/intake.js';

export interface FrontDeps {
  readonly config: Readonly<Config>;
  readonly keys: KeyTable;
  readonly intake: Intake;
  readonly upstream: UpstreamRpcClient | null;
  readonly metrics: FrontMetrics;
  /** Per-key counts on /metrics by key name (src/admission/key-usage.ts); absent = not counted (tests' own deps). */
  readonly keyUsage?: KeyUsage;
  readonly log: Logger;
  /** Routes this relay can deliver by right now (ROUTE_IDS bits). */
  readonly availableRouteMask: number;
  /** Routes the relay adds on its own, by key id (static peers with everyTransaction): src/config/route-policy.ts. */
  readonly addedRouteMasks: Uint32Array;
  readonly responseOptions: ResponseOptions;
  /** Full Prometheus text for GET /metrics. */
  renderMetrics(): string;
  /** What the relay can deliver now (src/health/health-monitor.ts): GET /health and its JSON detail. */
  health(): HealthReport;
  /** Landing receipts (src/receipts/); null when receipts.enabled is false. */
  readonly receipts: Receipts | null;
  /** Per-leader counters (GET /v1/leaders, src/receipts/leader-counters.ts); absent or null without receipts or leader data. */
  readonly leaderCounters?: LeaderCounters | null;
  /** The uWS build serving HTTP (src/native/uws.ts), reported in GET /health?detail as `http`. */
  readonly httpRuntime?: HttpRuntimeInfo;
}
