// The cluster on the main/front thread (cold): wires the engine connection, the per-key budget leases, the keys and
// plans from the engine and the shared key revocations to the relay, and reports the engine state in GET /health?detail, /metrics and one log line per
// change (docs/multi-region.md). Built only when cluster.url is set: without it nothing here runs and the relay is
// exactly the single process it always was. The telemetry thread shares route measurements over its own connection
// (telemetry-share.ts) and posts its status here.
import type { Config } from '../config/schema.js';
import type { ConfigKeyChanges, KeyTable } from '../admission/key-table.js';
import type { HealthReport } from '../health/health-monitor.js';
import type { Logger } from '../log/logger.js';
import type { TextBuilder } from '../metrics/prometheus.js';
import { BudgetAgent } from './budget-agent.js';
import { EngineKeySync, type KeySyncStatus } from './engine-key-sync.js';
import { EngineLink, engineUrlForLog } from './engine-link.js';
import { KeyRevocations } from './key-revocations.js';
import { LEASE_COMMAND, LEASE_SCRIPT } from './lease-script.js';
import type { TelemetryShareStatus } from './telemetry-share.js';

export interface ClusterHealth {
  readonly engine: string;
  readonly region: string;
  /** Budgets: `shared` while the engine answers, else every key on this relay's own plan. */
  readonly limits: { readonly state: string; readonly shared: boolean; readonly sinceChangeMs: number; readonly error: string | null };
  /** Shared route telemetry as the telemetry thread last reported it (null: off, or no report yet). */
  readonly telemetry: { readonly state: string; readonly error: string | null; readonly regions: TelemetryShareStatus['regions'] } | null;
  readonly revokedKeys: number;
  /** Keys and plans from the engine (`slotrelay keys add|set|remove`). */
  readonly keys: KeySyncStatus;
}

/** What the telemetry thread needs to share measurements (undefined: no cluster, or shared telemetry off). */
export function clusterTelemetryOptions(config: Readonly<Config>): (Config['cluster'] & { readonly url: string }) | undefined {
  const c = config.cluster;
  return c.url !== undefined && c.telemetry.enabled ? { ...c, url: c.url } : undefined;
}

function isTelemetryStatus(m: unknown): m is TelemetryShareStatus {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'cluster-telemetry';
}

export class ClusterService {
  private readonly link: EngineLink;
  private readonly agent: BudgetAgent | null;
  private readonly revocations: KeyRevocations;
  private readonly keySync: EngineKeySync;
  private telemetryStatus: TelemetryShareStatus | null = null;

  private constructor(
    private readonly config: Readonly<Config>,
    private readonly url: string,
    keys: KeyTable,
    log: Logger,
  ) {
    const c = config.cluster;
    this.link = new EngineLink({ url, commandTimeoutMs: c.commandTimeoutMs, part: 'limits', log, scripts: { [LEASE_COMMAND]: { numberOfKeys: 1, lua: LEASE_SCRIPT } } });
    this.agent = c.limits.enabled ? new BudgetAgent(this.link, keys, c) : null;
    this.revocations = new KeyRevocations(this.link, keys, c.namespace, c.keys.pollMs, log);
    this.keySync = new EngineKeySync(this.link, keys, c.namespace, c.keys.pollMs, log, {
      replaced: (previous, next) => this.agent?.replace(previous, next),
      changed: () => this.revocations.reapply(),
      revocationsNotice: () => this.revocations.pollNow(),
    });
  }

  /** null when cluster.url is not set (a relay alone). */
  static create(config: Readonly<Config>, keys: KeyTable, log: Logger): ClusterService | null {
    return config.cluster.url === undefined ? null : new ClusterService(config, config.cluster.url, keys, log);
  }


  /**
   * A reload changed the config's keys (src/reload/): the entries in force move their shared budgets like an engine
   * change does, and the engine's revocations are marked on the new entries. The engine's own keys are untouched.
   */
  onConfigKeysChanged(changes: ConfigKeyChanges): void {
    for (const c of changes.inForce) this.agent?.replace(c.previous, c.next);
    this.revocations.reapply();
  }

  /** A message from the telemetry thread (TelemetryThread onClusterStatus). */
  onTelemetryStatus(m: unknown): void {
    if (isTelemetryStatus(m)) this.telemetryStatus = m;
  }

  start(): void {
    this.link.start();
    this.agent?.start();
    this.revocations.start();
    this.keySync.start();
  }

  async stop(): Promise<void> {
    this.agent?.stop();
    this.revocations.stop();
    this.keySync.stop();
    await this.link.stop();
  }

  private clusterHealth(): ClusterHealth {
    const t = this.telemetryStatus;
    return {
      engine: engineUrlForLog(this.url),
      region: this.config.telemetry.region,
      limits: { state: this.link.state, shared: this.agent?.shared ?? false, sinceChangeMs: this.link.sinceChangeMs(), error: this.link.error },
      telemetry: t === null ? null : { state: t.engine, error: t.error, regions: t.regions },
      revokedKeys: this.revocations.revokedCount,
      keys: this.keySync.status(),
    };
  }

  /**
   * The health report with the cluster's part: `cluster` detail, and reason `cluster_engine_unreachable` (status at
   * worst `degraded`: the relay still delivers, on local limits and local telemetry) while the engine is down.
   */
  health(r: HealthReport): HealthReport & { readonly cluster: ClusterHealth } {
    const down = this.link.state === 'down' || this.telemetryStatus?.engine === 'down';
    const reasons = down ? [...r.reasons, 'cluster_engine_unreachable'] : r.reasons;
    const status = down && r.status === 'ok' ? 'degraded' : r.status;
    return { ...r, status, reasons, cluster: this.clusterHealth() };
  }

  render(tb: TextBuilder): void {
    const limitsUp = this.link.up ? 1 : 0;
    const telemetryUp = this.telemetryStatus?.engine === 'up' ? 1 : 0;
    tb.declare('slotrelay_cluster_engine_up', 'gauge', 'Whether the cluster engine answers (part: limits on the front thread, telemetry on the telemetry thread).');
    tb.sample('slotrelay_cluster_engine_up', { part: 'limits' }, limitsUp);
    if (this.telemetryStatus !== null) tb.sample('slotrelay_cluster_engine_up', { part: 'telemetry' }, telemetryUp);
    tb.declare('slotrelay_cluster_engine_failures_total', 'counter', 'Failed engine commands and connection errors (front thread).');
    tb.sample('slotrelay_cluster_engine_failures_total', {}, this.link.failures);
    if (this.agent !== null) {
      const c = this.agent.counters;
      tb.declare('slotrelay_cluster_budget_shared', 'gauge', '1 while key budgets are shared through the engine, 0 while each key is on this relay\'s own plan.');
      tb.sample('slotrelay_cluster_budget_shared', {}, this.agent.shared ? 1 : 0);
      tb.declare('slotrelay_cluster_lease_settles_total', 'counter', 'Budget settles answered by the engine (one per key and class in use per lease interval).');
      tb.sample('slotrelay_cluster_lease_settles_total', {}, c.settles);
      tb.declare('slotrelay_cluster_lease_failed_rounds_total', 'counter', 'Lease round trips that failed (each switches the budgets to local limits).');
      tb.sample('slotrelay_cluster_lease_failed_rounds_total', {}, c.failedRounds);
      tb.declare('slotrelay_cluster_tokens_total', 'counter', 'Tokens leased from, returned to, and charged (overdraft) to the shared budgets.');
      tb.sample('slotrelay_cluster_tokens_total', { kind: 'leased' }, c.leased);
      tb.sample('slotrelay_cluster_tokens_total', { kind: 'returned' }, c.returned);
      tb.sample('slotrelay_cluster_tokens_total', { kind: 'charged' }, c.charged);
    }
    tb.declare('slotrelay_cluster_revoked_keys', 'gauge', 'Keys of this relay revoked through the engine.');
    tb.sample('slotrelay_cluster_revoked_keys', {}, this.revocations.revokedCount);
    tb.declare('slotrelay_cluster_revocations_rewritten_total', 'counter', 'Times this relay wrote key revocations back into an engine that had lost them (restarted without its data).');
    tb.sample('slotrelay_cluster_revocations_rewritten_total', {}, this.revocations.rewrites);
    const ks = this.keySync.status();
    tb.declare('slotrelay_cluster_engine_keys', 'gauge', 'Keys whose plan comes from the cluster engine (new keys and overrides of config keys).');
    tb.sample('slotrelay_cluster_engine_keys', {}, ks.engineKeys);
    tb.declare('slotrelay_cluster_keys_synced', 'gauge', '1 while the last read of the engine\'s keys succeeded, 0 while the last known ones are kept (or none read yet).');
    tb.sample('slotrelay_cluster_keys_synced', {}, ks.state === 'synced' ? 1 : 0);
    const kc = this.keySync.counters;
    tb.declare('slotrelay_cluster_key_changes_total', 'counter', 'Engine keys added, changed and removed on this relay, and records it could not use.');
    tb.sample('slotrelay_cluster_key_changes_total', { kind: 'added' }, kc.added);
    tb.sample('slotrelay_cluster_key_changes_total', { kind: 'changed' }, kc.changed);
    tb.sample('slotrelay_cluster_key_changes_total', { kind: 'removed' }, kc.removed);
    tb.sample('slotrelay_cluster_key_changes_total', { kind: 'invalid' }, kc.invalid);
    const regions = this.telemetryStatus?.regions;
    if (regions !== undefined) {
      tb.declare('slotrelay_cluster_region_shared', 'gauge', 'Whether another region\'s measurements are fresh here (1) or its rows show estimates (0).');
      for (const [region, v] of Object.entries(regions)) tb.sample('slotrelay_cluster_region_shared', { region }, v === null ? 0 : 1);
    }
  }
}
