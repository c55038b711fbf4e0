// Reload without restart (main thread, cold: once per SIGHUP or `slotrelay reload`). Re-reads the config file (and its
// keysFile) with the start's flags and environment, validates it as a start would, and compares it with the running
// one (./config-diff.ts): a change to a part that cannot change at run time refuses the whole file, naming those
// parts; otherwise the keys, the route policy and the log level are applied in place. Connections, rings and accepted
// transactions are not touched. The outcome is logged, counted (/metrics), shown on /health?detail (`config`) and
// written next to the config for the CLI (./reload-files.ts). Decisions: docs/configuration.md "Reload".
import { ConfigError, loadConfig, type FlagOverride } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { updateAddedRouteMasks } from '../config/route-policy.js';
import type { ConfigKeyChanges, KeyTable } from '../admission/key-table.js';
import type { Logger } from '../log/logger.js';
import type { TextBuilder } from '../metrics/prometheus.js';
import { diffConfigs } from './config-diff.js';
import { outcomeFileOf, pidFileOf, removeQuietly, writeAtomically, type ReloadOutcome } from './reload-files.js';

export interface ReloadDeps {
  readonly configFile: string;
  readonly flags: readonly FlagOverride[];
  readonly env: NodeJS.ProcessEnv;
  /** The config as loaded at start (before the embedded localnet's URLs were filled in). */
  readonly running: Readonly<Config>;
  readonly keys: KeyTable;
  /** The front's added-route masks by key id (src/config/route-policy.ts), rewritten in place. */
  readonly addedRouteMasks: Uint32Array;
  /** The main thread's logger: its level is set by log.level. */
  readonly log: Logger;
  /** The entries in force changed (the cluster's budgets and revocations follow them). */
  readonly onKeysChanged?: (changes: ConfigKeyChanges) => void;
  /** log.level changed: the other threads are told (EgressPool, telemetry thread). */
  readonly onLogLevel?: (level: Config['log']['level']) => void;
}

export interface ConfigHealth {
  readonly reloads: number;
  readonly lastReload: ReloadOutcome | null;
}

const OUTCOMES = ['applied', 'unchanged', 'refused'] as const;

export class ReloadService {
  private running: Readonly<Config>;
  private last: ReloadOutcome | null = null;
  private readonly counts = { applied: 0, unchanged: 0, refused: 0 };
  private filesWritten = true;

  constructor(private readonly d: ReloadDeps) {
    this.running = d.running;
  }

  /** The ready relay announces itself (FILE.pid); a read-only directory is logged once, not fatal. */
  writePidFile(): void {
    this.write(pidFileOf(this.d.configFile), `${process.pid}\n`);
  }

  removeFiles(): void {
    removeQuietly(pidFileOf(this.d.configFile));
    removeQuietly(outcomeFileOf(this.d.configFile));
  }

  reload(trigger: string): ReloadOutcome {
    const seq = this.counts.applied + this.counts.unchanged + this.counts.refused + 1;
    const at = new Date().toISOString();
    let next: Readonly<Config>;
    try {
      next = loadConfig({ file: this.d.configFile, env: this.d.env, flags: this.d.flags });
    } catch (err) {
      const error = err instanceof ConfigError ? err.message : `${this.d.configFile}: ${(err as Error).message}`;
      return this.finish({ seq, outcome: 'refused', at, trigger, changed: [], keys: null, error });
    }
    const diff = diffConfigs(this.running, next);
    if (diff.fixed.length > 0) {
      const error = `${this.d.configFile}: cannot change without a restart: ${diff.fixed.join(', ')} (nothing of this file was applied; the running configuration stays)`;
      return this.finish({ seq, outcome: 'refused', at, trigger, changed: diff.changed, keys: null, error });
    }
    if (diff.changed.length === 0) return this.finish({ seq, outcome: 'unchanged', at, trigger, changed: [], keys: null, error: null });

    const changes = this.d.keys.replaceConfigKeys(next.keys, next.routes.defaultRoutes, Date.now());
    updateAddedRouteMasks(this.d.addedRouteMasks, next, [...this.d.keys.configEntries()].map((e) => ({ id: e.id, allowedRoutes: e.config.allowedRoutes })));
    if (changes.inForce.length > 0) this.d.onKeysChanged?.(changes);
    if (next.log.level !== this.running.log.level) {
      this.d.log.level = next.log.level;
      this.d.onLogLevel?.(next.log.level);
    }
    this.running = next;
    const keys = { added: changes.added, changed: changes.changed, removed: changes.removed };
    return this.finish({ seq, outcome: 'applied', at, trigger, changed: diff.changed, keys, error: null });
  }

  private finish(o: ReloadOutcome): ReloadOutcome {
    this.counts[o.outcome]++;
    this.last = o;
    const fields = { event: 'config_reload', outcome: o.outcome, trigger: o.trigger, changed: o.changed, ...(o.keys === null ? {} : { keyNames: o.keys }) };
    if (o.outcome === 'refused') this.d.log.error({ ...fields, error: o.error }, `configuration reload refused: ${o.error}`);
    else if (o.outcome === 'unchanged') this.d.log.info(fields, 'configuration reloaded: nothing changed');
    else {
      const k = o.keys!;
      this.d.log.info(fields, `configuration reloaded: ${o.changed.join(', ')} (keys: ${k.added.length} added, ${k.changed.length} changed, ${k.removed.length} removed)`);
    }
    this.write(outcomeFileOf(this.d.configFile), JSON.stringify(o) + '\n');
    return o;
  }

  private write(file: string, text: string): void {
    try {
      writeAtomically(file, text);
    } catch (err) {
      if (!this.filesWritten) return;
      this.filesWritten = false;
      this.d.log.warn({ event: 'reload_files_unwritable', file, error: (err as Error).message }, `cannot write ${file}: \`slotrelay reload --config\` cannot find this relay (SIGHUP and \`slotrelay reload --pid\` still work)`);
    }
  }

  health(): ConfigHealth {
    return { reloads: this.counts.applied + this.counts.unchanged + this.counts.refused, lastReload: this.last };
  }

  render(tb: TextBuilder): void {
    tb.declare('slotrelay_config_reloads_total', 'counter', 'Configuration reloads (SIGHUP, slotrelay reload) by outcome: applied, unchanged, refused (the running configuration stays).');
    for (const o of OUTCOMES) tb.sample('slotrelay_config_reloads_total', { outcome: o }, this.counts[o]);
    tb.declare('slotrelay_config_last_reload_timestamp_seconds', 'gauge', 'Unix time of the last reload, whatever its outcome (0: none since start).');
    tb.sample('slotrelay_config_last_reload_timestamp_seconds', {}, this.last === null ? 0 : Date.parse(this.last.at) / 1000);
    tb.declare('slotrelay_config_last_reload_successful', 'gauge', '0 when the last reload was refused (the file on disk is not what runs), else 1.');
    tb.sample('slotrelay_config_last_reload_successful', {}, this.last?.outcome === 'refused' ? 0 : 1);
  }
}
