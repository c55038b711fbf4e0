// Which parts of the configuration a reload may change (main thread, cold: once per reload). Two parsed configs are
// compared by path; a path that differs and is not reloadable is named in the refusal. Values are never shown: a key,
// an auth UUID or a password in a URL must not reach a log line or /health (docs/configuration.md "Reload").
import type { Config } from '../config/schema.js';

/**
 * Paths applied at run time (a changed path equal to one of these, or under it). Everything else needs a restart:
 * listeners, rings and threads, the routes the egress threads were built with (static peers included: they live in
 * the QUIC threads' connection caches and route plan), upstreams, telemetry, the cluster engine, receipts, health.
 */
export const RELOADABLE_PATHS = Object.freeze([
  'keys',
  'keysFile',
  'log.level',
  'routes.defaultRoutes',
  'routes.static.everyTransaction',
] as const);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Dotted paths where `a` and `b` differ: leaves and whole arrays (an array is one value, like a list of peers). */
export function changedPaths(a: unknown, b: unknown, at = ''): string[] {
  if (isPlainObject(a) && isPlainObject(b)) {
    const out: string[] = [];
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      out.push(...changedPaths(a[k], b[k], at === '' ? k : `${at}.${k}`));
    }
    return out;
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [at === '' ? '(top level)' : at];
}

export function isReloadable(path: string): boolean {
  return RELOADABLE_PATHS.some((p) => path === p || path.startsWith(`${p}.`));
}

export interface ConfigDiff {
  /** Every changed path, reloadable or not (keys collapse into `keys`: a key's own fields are not listed). */
  readonly changed: readonly string[];
  /** The changed paths a reload cannot apply. */
  readonly fixed: readonly string[];
}

export function diffConfigs(running: Readonly<Config>, next: Readonly<Config>): ConfigDiff {
  const { keys: ka, ...ra } = running;
  const { keys: kb, ...rb } = next;
  const changed = changedPaths(ra, rb);
  if (JSON.stringify(ka) !== JSON.stringify(kb)) changed.unshift('keys');
  return { changed, fixed: changed.filter((p) => !isReloadable(p)) };
}
