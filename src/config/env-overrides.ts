// The one documented mapping from environment variables to config fields (cold: start-up only, main thread).
// Nothing else in slotrelay reads the environment; workers get their config from the main thread (docs/configuration.md).
// Documented in docs/configuration.md; test/unit/config/load.test.ts keeps the two in step.

export interface EnvOverride {
  readonly env: string;
  /** Dotted path into the config object. */
  readonly path: readonly string[];
  readonly type: 'string' | 'int' | 'bool';
}

export const ENV_OVERRIDES: readonly EnvOverride[] = Object.freeze([
  { env: 'SLOTRELAY_RPC_HOST', path: ['rpcHost', 'host'], type: 'string' },
  { env: 'SLOTRELAY_RPC_PORT', path: ['rpcHost', 'port'], type: 'int' },
  { env: 'SLOTRELAY_RPC_ENABLED', path: ['rpcHost', 'enabled'], type: 'bool' },
  { env: 'SLOTRELAY_RELAY_HOST', path: ['relayHost', 'host'], type: 'string' },
  { env: 'SLOTRELAY_RELAY_PORT', path: ['relayHost', 'port'], type: 'int' },
  { env: 'SLOTRELAY_RELAY_ENABLED', path: ['relayHost', 'enabled'], type: 'bool' },
  { env: 'SLOTRELAY_UPSTREAM_RPC_URL', path: ['upstream', 'rpcUrl'], type: 'string' },
  { env: 'SLOTRELAY_WORKERS', path: ['rings', 'workers'], type: 'int' },
  { env: 'SLOTRELAY_LOG_LEVEL', path: ['log', 'level'], type: 'string' },
] as const);

function convert(o: EnvOverride, raw: string): string | number | boolean {
  if (o.type === 'string') return raw;
  if (o.type === 'bool') {
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    throw new Error(`environment variable ${o.env} must be true/false/1/0`);
  }
  if (!/^\d+$/.test(raw)) throw new Error(`environment variable ${o.env} must be a non-negative integer`);
  return Number(raw);
}

/** Apply overrides present in `env` onto a raw (unvalidated) config object, in place. */
export function applyEnvOverrides(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): void {
  for (const o of ENV_OVERRIDES) {
    const value = env[o.env];
    if (value === undefined || value === '') continue;
    setPath(raw, o.path, convert(o, value));
  }
}

export function setPath(raw: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = raw;
  for (let i = 0; i < path.length - 1; i++) {
    const k = path[i];
    const next = node[k];
    if (next === undefined || next === null || typeof next !== 'object') node[k] = {};
    node = node[k] as Record<string, unknown>;
  }
  node[path[path.length - 1]] = value;
}
