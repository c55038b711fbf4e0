// `slotrelay keys add|set|remove|list` (cold, one-shot commands on any relay's host): keys and their plans kept in
// the cluster engine named by that relay's config (cluster.url), in force on every relay of the service within
// cluster.keys.pollMs (engine-key-sync.ts; at once when the change notice arrives). The engine stores only the key's
// hash (engine-keys.ts) and its plan (key-plan.ts): `add` prints a new key once, on stdout and nowhere else; `list`
// shows fingerprints (the hash's first 8 hex digits), never keys. A key is named on the command line by the key itself,
// its fingerprint (or a longer prefix of its hash) or its name. Exit codes: 0 done, 1 engine unreachable, 2 bad
// usage, config or plan, an unknown or ambiguous key, or a key that exists already.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { ConfigError, loadConfig } from '../config/load.js';
import { parseStructuredText } from '../config/parse-failure.js';
import { burstForRate, ROUTE_NAMES, type Config, type KeyConfig } from '../config/schema.js';
import type { KeyPlan } from '../admission/key-table.js';
import { fingerprint, keyHash, keysChannel, keysKey, keysLogKey, keysRevKey, revokedKey } from './engine-keys.js';
import { engineUrlForLog, errorLabel } from './engine-link.js';
import { decodeRecord, encodeRecord, parsePlan, type KeyRecord } from './key-plan.js';
import { KEY_WRITE_SCRIPT } from './key-registry-script.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LIMITS = { 'rate-limit': 'rateLimit', 'simulate-limit': 'simulateLimit', 'read-limit': 'readLimit' } as const;

const OPTIONS = {
  config: { type: 'string' },
  key: { type: 'string' },
  name: { type: 'string' },
  plan: { type: 'string' },
  routes: { type: 'string' },
  'default-routes': { type: 'string' },
  'rate-limit': { type: 'string' },
  'simulate-limit': { type: 'string' },
  'read-limit': { type: 'string' },
  bundles: { type: 'string' },
  preflight: { type: 'string' },
  'verify-signatures': { type: 'string' },
  'subscription-limit': { type: 'string' },
  json: { type: 'boolean' },
} as const;

type Values = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

function routeList(flag: string, v: string): string[] {
  const list = v.split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const r of list) if (!(ROUTE_NAMES as readonly string[]).includes(r)) throw new ConfigError(`--${flag}: unknown route "${r}" (routes: ${ROUTE_NAMES.join(', ')})`);
  return list;
}

function bool(flag: string, v: string): boolean {
  if (/^(true|on|yes)$/i.test(v)) return true;
  if (/^(false|off|no)$/i.test(v)) return false;
  throw new ConfigError(`--${flag} must be true or false`);
}

/** `R` or `R/B`: perSecond and burst; `R` alone means burst R (at least 1), as in a config file, in add and set alike. */
function limit(flag: string, v: string): { perSecond: number; burst: number } {
  const m = /^(\d+(?:\.\d+)?)(?:\/(\d+))?$/.exec(v.trim());
  if (m === null) throw new ConfigError(`--${flag} must be PER_SECOND or PER_SECOND/BURST (e.g. 100/200)`);
  const perSecond = Number(m[1]);
  if (!(perSecond > 0)) throw new ConfigError(`--${flag}: the rate must be above 0`);
  return { perSecond, burst: m[2] === undefined ? burstForRate(perSecond) : Number(m[2]) };
}

/** --plan: a plan object as JSON or YAML text, or @FILE holding one. */
function planArg(v: string): Record<string, unknown> {
  let raw: unknown;
  try {
    // A plan's text is YAML (JSON is YAML too); its failure never quotes it: a pasted plan may hold a key.
    raw = parseStructuredText(v.startsWith('@') ? readFileSync(v.slice(1), 'utf8') : v, 'yaml');
  } catch (err) {
    throw new ConfigError(`--plan: ${(err as Error).message}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ConfigError('--plan must be a mapping (JSON or YAML) of plan fields');
  if (Object.hasOwn(raw, 'key')) throw new ConfigError('--plan must not carry the key (give it with --key, or let `keys add` make one)');
  return raw as Record<string, unknown>;
}

/** The plan fields given on the command line (--plan first, the single flags over it); undefined = remove the field. */
function changesOf(v: Values): Record<string, unknown> {
  const c: Record<string, unknown> = v.plan === undefined ? {} : planArg(v.plan);
  if (v.name !== undefined) c.name = v.name;
  if (v.routes !== undefined) c.allowedRoutes = routeList('routes', v.routes);
  if (v['default-routes'] !== undefined) c.defaultRoutes = v['default-routes'] === 'none' ? undefined : routeList('default-routes', v['default-routes']);
  for (const [flag, field] of Object.entries(LIMITS)) {
    const s = v[flag as keyof typeof LIMITS];
    if (s !== undefined) c[field] = limit(flag, s);
  }
  if (v.bundles !== undefined) c.bundles = bool('bundles', v.bundles);
  if (v.preflight !== undefined) c.preflight = v.preflight;
  if (v['verify-signatures'] !== undefined) c.verifySignatures = bool('verify-signatures', v['verify-signatures']);
  if (v['subscription-limit'] !== undefined) {
    if (!/^\d+$/.test(v['subscription-limit'])) throw new ConfigError('--subscription-limit must be a non-negative integer');
    c.subscriptionLimit = Number(v['subscription-limit']);
  }
  return c;
}

/** base with the changes; a limit naming its rate only gets the rate as its burst (not the base's burst). */
function merged(base: Readonly<KeyPlan> | Record<string, never>, changes: Record<string, unknown>): KeyPlan {
  const out: Record<string, unknown> = { ...base };
  for (const [k, val] of Object.entries(changes)) {
    if (val === undefined) delete out[k];
    else if (Object.values(LIMITS).includes(k as never) && typeof val === 'object' && val !== null) {
      // A rate without a burst (from --plan) gets the rate as its burst, as a flag or a config file would.
      const l = val as { perSecond?: unknown; burst?: unknown };
      const burst = typeof l.perSecond === 'number' && l.perSecond > 0 && l.burst === undefined ? { burst: burstForRate(l.perSecond) } : {};
      out[k] = { ...(out[k] as object | undefined), ...l, ...burst };
    }
    else out[k] = val;
  }
  const p = parsePlan(out);
  if ('error' in p) throw new ConfigError(`invalid plan: ${p.error}`);
  return p.plan;
}

function planOfConfigKey(k: Readonly<KeyConfig>): KeyPlan {
  const { key: _key, ...plan } = k;
  return plan;
}

function summary(p: Readonly<KeyPlan>): string {
  const l = (x: { perSecond: number; burst: number }) => `${x.perSecond}/${x.burst}`;
  return `submit ${l(p.rateLimit)} simulate ${l(p.simulateLimit)} read ${l(p.readLimit)} routes ${p.allowedRoutes.join(',')}${p.defaultRoutes ? ` (default ${p.defaultRoutes.join(',')})` : ''} bundles ${p.bundles ? 'on' : 'off'} subscriptions ${p.subscriptionLimit} preflight ${p.preflight}${p.verifySignatures ? ' verify-signatures' : ''}`;
}

/** The engine's registry, decoded (records a relay could not use are listed as such). */
async function registry(redis: Redis, ns: string): Promise<Map<string, { text: string; rec: KeyRecord | null }>> {
  const all = await redis.hgetall(keysKey(ns));
  const out = new Map<string, { text: string; rec: KeyRecord | null }>();
  for (const [hash, text] of Object.entries(all)) {
    const d = decodeRecord(text);
    out.set(hash, { text, rec: 'error' in d ? null : d });
  }
  return out;
}

/**
 * A key named on the command line: the key itself (a UUID), a prefix of its hash (8+ hex digits: the fingerprint), or
 * a name (of an engine key or a key of this config). Exactly one key must match.
 */
export function resolveTarget(target: string, config: Readonly<Config>, engine: ReadonlyMap<string, { rec: KeyRecord | null }>): { hash: string; label: string } {
  const names = new Map<string, string>(); // hash -> name
  for (const k of config.keys) names.set(keyHash(k.key), k.name);
  for (const [h, v] of engine) if (v.rec !== null) names.set(h, v.rec.plan.name);
  const label = (h: string) => `"${names.get(h) ?? '?'}" (${fingerprint(h)})`;
  if (UUID.test(target)) {
    const h = keyHash(target);
    return { hash: h, label: names.has(h) ? label(h) : `(${fingerprint(h)})` };
  }
  let hits: string[];
  if (/^[0-9a-f]{8,32}$/i.test(target)) hits = [...new Set([...names.keys(), ...engine.keys()])].filter((h) => h.startsWith(target.toLowerCase()));
  else hits = [...names].filter(([, n]) => n === target).map(([h]) => h);
  if (hits.length === 0) throw new ConfigError(`no key named or fingerprinted "${target}" in the engine or in this config`);
  if (hits.length > 1) throw new ConfigError(`"${target}" names ${hits.length} keys (${hits.map(fingerprint).join(', ')}): give the fingerprint`);
  return { hash: hits[0], label: label(hits[0]) };
}

export function engineClient(url: string, timeoutMs: number): Redis {
  const redis = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: timeoutMs, retryStrategy: () => null });
  redis.on('error', () => undefined); // reported by the caller, once
  return redis;
}

async function write(redis: Redis, ns: string, op: 'add' | 'set' | 'del', hash: string, value: string, expected: string): Promise<number> {
  return Number(await redis.eval(KEY_WRITE_SCRIPT, 3, keysKey(ns), keysRevKey(ns), keysLogKey(ns), op, hash, value, expected, keysChannel(ns)));
}

export async function runKeysPlan(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: [...rest], options: OPTIONS, strict: true, allowPositionals: true });
  const v = values as Values;
  if (v.config === undefined) throw new ConfigError(`keys ${action} needs --config FILE (the relay's config: cluster.url)`);
  const config = loadConfig({ file: v.config, env });
  const url = config.cluster.url;
  if (url === undefined) throw new ConfigError(`${v.config}: cluster.url is not set: keys live in the engine only in a cluster (put them in the config's keys otherwise)`);
  const ns = config.cluster.namespace;
  const within = `every relay of the service applies it within ${config.cluster.keys.pollMs} ms`;
  if ((action === 'set' || action === 'remove') && positionals.length !== 1) throw new ConfigError(`keys ${action} needs the key: its fingerprint, its name or the key itself`);
  if ((action === 'add' || action === 'list') && positionals.length > 0) throw new ConfigError(`keys ${action} takes no positional argument (got "${positionals[0]}")`);
  // Plan flags are checked before the engine is asked.
  const changes = action === 'add' || action === 'set' ? changesOf(v) : {};
  if (action === 'add' && v.key !== undefined && !UUID.test(v.key)) throw new ConfigError('--key must be a UUID');

  const redis = engineClient(url, config.cluster.commandTimeoutMs);
  try {
    await redis.connect();
    if (action === 'add') {
      const key = v.key ?? randomUUID();
      const hash = keyHash(key);
      const plan = merged({}, changes);
      const engine = await registry(redis, ns);
      if (engine.has(hash)) throw new ConfigError(`that key is in the engine already (${fingerprint(hash)}): change its plan with keys set`);
      const overrides = config.keys.find((k) => keyHash(k.key) === hash);
      const clash = [...config.keys.filter((k) => keyHash(k.key) !== hash).map((k) => k.name), ...[...engine.values()].map((e) => e.rec?.plan.name)].includes(plan.name);
      if (clash) throw new ConfigError(`another key is named "${plan.name}": names pick keys on the command line, choose another`);
      const rev = await write(redis, ns, 'add', hash, encodeRecord(plan, Date.now()), '');
      if (rev < 0) throw new ConfigError(`that key is in the engine already (${fingerprint(hash)}): change its plan with keys set`);
      // The key once, alone on stdout (for a script to capture); everything else on stderr.
      if (v.key === undefined) process.stdout.write(`${key}\n`);
      process.stderr.write(
        `added "${plan.name}" (${fingerprint(hash)}) at revision ${rev}${overrides ? `, overriding the plan of config key "${overrides.name}"` : ''}: ${within}\n  ${summary(plan)}\n` +
          (v.key === undefined ? '  the key is printed once, above: the engine keeps only its hash\n' : ''),
      );
    } else if (action === 'set' || action === 'remove') {
      // Read, change, write if nobody changed it meanwhile (the script compares); a few tries under contention.
      for (let attempt = 0; ; attempt++) {
        const engine = await registry(redis, ns);
        const { hash, label } = resolveTarget(positionals[0], config, engine);
        const cur = engine.get(hash);
        const cfgKey = config.keys.find((k) => keyHash(k.key) === hash);
        if (action === 'remove') {
          if (cur === undefined) throw new ConfigError(`${label} is not in the engine${cfgKey ? ' (a key of the config file: remove it there, or revoke it)' : ''}`);
          const rev = await write(redis, ns, 'del', hash, '', '');
          if (rev < 0) continue;
          process.stdout.write(`removed ${label} at revision ${rev}: ${cfgKey ? `its config plan is back in force (revoke it to stop it)` : 'refused (401) everywhere'}; ${within}\n`);
          break;
        }
        let base: KeyPlan;
        if (cur !== undefined) {
          if (cur.rec === null) throw new ConfigError(`${label}: the engine's record is unusable; remove it and add the key again`);
          base = cur.rec.plan;
        } else if (cfgKey !== undefined) base = planOfConfigKey(cfgKey);
        else throw new ConfigError(`${label} is neither in the engine nor in this config: add it with keys add --key`);
        const plan = merged(base, changes);
        if (cur !== undefined && JSON.stringify(plan) === JSON.stringify(base)) {
          process.stdout.write(`${label}: no change\n`);
          break;
        }
        const rev = await write(redis, ns, 'set', hash, encodeRecord(plan, Date.now()), cur?.text ?? '');
        if (rev < 0) {
          if (attempt < 4) continue;
          throw new ConfigError(`${label} keeps changing under this command; try again`);
        }
        process.stdout.write(`${cur === undefined ? 'engine plan now overrides the config plan of' : 'changed'} ${label} at revision ${rev}: ${within}\n  ${summary(plan)}\n`);
        break;
      }
    } else {
      await list(redis, ns, config, v.json === true);
    }
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    process.stderr.write(`slotrelay: cluster engine ${engineUrlForLog(url)}: ${errorLabel(err)}\n`);
    return 1;
  } finally {
    redis.disconnect();
  }
}

async function list(redis: Redis, ns: string, config: Readonly<Config>, json: boolean): Promise<void> {
  const engine = await registry(redis, ns);
  const revoked = await redis.hgetall(revokedKey(ns));
  const rev = await redis.get(keysRevKey(ns));
  const rows: { fingerprint: string; name: string; source: string; revoked: boolean; changedAt: string | null; plan: KeyPlan | null }[] = [];
  const cfgHashes = new Map(config.keys.map((k) => [keyHash(k.key), k]));
  for (const [h, e] of engine) {
    rows.push({
      fingerprint: fingerprint(h),
      name: e.rec?.plan.name ?? '(unusable record)',
      source: cfgHashes.has(h) ? 'engine (overrides config)' : 'engine',
      revoked: Object.hasOwn(revoked, h),
      changedAt: e.rec === null ? null : new Date(e.rec.at).toISOString(),
      plan: e.rec?.plan ?? null,
    });
  }
  for (const [h, k] of cfgHashes) {
    if (engine.has(h)) continue;
    rows.push({ fingerprint: fingerprint(h), name: k.name, source: 'config', revoked: Object.hasOwn(revoked, h), changedAt: null, plan: planOfConfigKey(k) });
  }
  if (json) {
    process.stdout.write(JSON.stringify({ revision: rev === null ? null : Number(rev), keys: rows }) + '\n');
    return;
  }
  process.stdout.write(`revision ${rev ?? '(none: no key was ever added to this engine)'}\n`);
  for (const r of rows) {
    process.stdout.write(`${r.fingerprint}  ${r.name}  ${r.source}${r.revoked ? '  REVOKED' : ''}${r.changedAt ? `  changed ${r.changedAt}` : ''}\n    ${r.plan === null ? '' : summary(r.plan)}\n`);
  }
}
