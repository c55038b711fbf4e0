// Load, override, validate and freeze the configuration (cold: start-up only, main thread).
// Order of precedence: file < environment (ENV_OVERRIDES) < command-line flags.
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { formatOfFile, parseStructuredText } from './parse-failure.js';
import { issueText } from './issue-text.js';
import { configSchema, keySchema, type Config } from './schema.js';
import { applyEnvOverrides, setPath } from './env-overrides.js';
import { unavailableDefaultRoutes } from './default-routes.js';
import { deepFreeze } from './freeze.js';
import { finishTelemetryConfig } from './telemetry-checks.js';

export class ConfigError extends Error {}

/** A command-line override: dotted config path and value. */
export interface FlagOverride {
  readonly path: readonly string[];
  readonly value: unknown;
}

/** Why a config (or keys) file cannot be read, for an operator: no errno text, no stack (docs/configuration.md). */
const UNREADABLE: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EISDIR: 'a directory, not a file',
  EACCES: 'permission denied for this user',
  ENOTDIR: 'a part of the path is not a directory',
};

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new ConfigError(`cannot read ${file}: ${UNREADABLE[code] ?? code}`);
  }
}

/** A config or keys file's value; a parse failure names the line, column and cause, never the text (parse-failure.ts). */
function readStructured(file: string): unknown {
  const text = readText(file);
  try {
    return parseStructuredText(text, formatOfFile(file));
  } catch (err) {
    throw new ConfigError(`${file}: cannot parse: ${(err as Error).message}`);
  }
}

/** zod issues -> one readable message per problem, naming the path and, for unknown keys, the key (issue-text.ts). */
export function formatIssues(source: string, error: z.ZodError): string {
  return `invalid configuration in ${source}:\n  ${error.issues.map(issueText).join('\n  ')}`;
}

export interface LoadOptions {
  readonly file?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly flags?: readonly FlagOverride[];
}

export function loadConfig(opts: LoadOptions): Readonly<Config> {
  const source = opts.file ?? '(defaults)';
  const raw = (opts.file ? readStructured(opts.file) : {}) ?? {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(`${source}: the top level must be a mapping`);
  const obj = raw as Record<string, unknown>;
  applyEnvOverrides(obj, opts.env ?? {});
  for (const f of opts.flags ?? []) setPath(obj, f.path, f.value);

  const parsed = configSchema.safeParse(obj);
  if (!parsed.success) throw new ConfigError(formatIssues(source, parsed.error));
  const config = parsed.data;

  if (config.keysFile && opts.file) {
    const keysPath = isAbsolute(config.keysFile) ? config.keysFile : resolve(dirname(opts.file), config.keysFile);
    const keys = z.array(keySchema).safeParse(readStructured(keysPath));
    if (!keys.success) throw new ConfigError(formatIssues(keysPath, keys.error));
    config.keys.push(...keys.data);
  }
  // telemetry.locations.file (relative to the config file, like keysFile) and telemetry.paths vs the offered routes.
  const telemetryIssues = finishTelemetryConfig(config, opts.file ? dirname(opts.file) : process.cwd());
  if (telemetryIssues.length > 0) throw new ConfigError(`invalid configuration in ${source}:\n  ${telemetryIssues.join('\n  ')}`);
  const adminIssue = adminKeyIssue(config);
  if (adminIssue !== null) throw new ConfigError(`invalid configuration in ${source}: ${adminIssue}`);
  const portClash = listenerPortClash(config);
  if (portClash !== null) throw new ConfigError(`invalid configuration in ${source}: ${portClash}`);
  const seen = new Set<string>();
  for (const [i, k] of config.keys.entries()) {
    const norm = k.key.toLowerCase();
    // Name the index, never the key value: keys never appear in messages.
    if (seen.has(norm)) throw new ConfigError(`invalid configuration in ${source}: keys[${i}] ("${k.name}") repeats an earlier key`);
    seen.add(norm);
    for (const r of k.defaultRoutes ?? []) {
      if (!k.allowedRoutes.includes(r)) {
        throw new ConfigError(`invalid configuration in ${source}: keys[${i}] ("${k.name}"): default route "${r}" is not in allowedRoutes`);
      }
    }
  }
  // Default routes the config names that this relay cannot run (src/config/default-routes.ts).
  const routeIssues = unavailableDefaultRoutes(config, obj);
  if (routeIssues.length > 0) throw new ConfigError(`invalid configuration in ${source}:\n  ${routeIssues.join('\n  ')}`);
  return deepFreeze(config);
}

/**
 * Two listeners of the relay on one TCP port. uWS listens with SO_REUSEPORT, so a second listen on a taken port does
 * not fail: the kernel would share the connections between the two hosts. Most likely through the PubSub default
 * (rpcHost.port + 1) meeting relayHost.port. Ports 0 (chosen at start) never clash.
 */
export function listenerPortClash(c: Readonly<Config>): string | null {
  const used: { name: string; port: number }[] = [];
  if (c.rpcHost.enabled) {
    used.push({ name: 'rpcHost.port', port: c.rpcHost.port });
    if (c.jsonRpc.pubsub.enabled) {
      const port = c.jsonRpc.pubsub.port ?? (c.rpcHost.port === 0 ? 0 : c.rpcHost.port + 1);
      used.push({ name: c.jsonRpc.pubsub.port === undefined ? 'jsonRpc.pubsub.port (default rpcHost.port + 1)' : 'jsonRpc.pubsub.port', port });
    }
  }
  if (c.relayHost.enabled) used.push({ name: 'relayHost.port', port: c.relayHost.port });
  if (c.admin.enabled) used.push({ name: 'admin.port', port: c.admin.port });
  for (let i = 0; i < used.length; i++) {
    for (let j = i + 1; j < used.length; j++) {
      if (used[i].port !== 0 && used[i].port === used[j].port) {
        return `${used[i].name} and ${used[j].name} are both ${used[i].port}: each listener needs its own port`;
      }
    }
  }
  return null;
}

/** Whether `host` names a loopback interface only (what the admin listener may bind without a key). */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h === '::1' || h === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** The status page shows per-key usage and failures: off loopback it needs its own key (docs/status-page.md). */
export function adminKeyIssue(c: Readonly<Config>): string | null {
  if (!c.admin.enabled || isLoopbackHost(c.admin.host) || c.admin.key !== undefined) return null;
  return `admin.host is ${c.admin.host}, not a loopback address: set admin.key (sent as Authorization: Bearer) or bind admin.host to 127.0.0.1`;
}
