// Default routes a relay cannot deliver by (cold: once, when the config is loaded, main thread). A route named in
// routes.defaultRoutes or in a key's defaultRoutes that this relay does not run would silently drop out of every
// default submission (or refuse them all): a configuration error, exit 2, naming the field and what the route lacks
// (issue 30, item 3). Only routes the config *names* are checked: the schema's implicit [rpc] on a relay without the
// rpc route is legal (its requests get route_not_configured, src/front/relay-endpoints.ts). What runs is decided by
// buildRoutePlan, on the config as main will run it (with the embedded localnet when upstream.rpcUrl is unset).
import { ROUTE_IDS } from '../shm/layout.js';
import { buildRoutePlan } from './route-plan.js';
import type { Config, RouteName } from './schema.js';

/** Stand-in for the embedded localnet's URL (main.ts withLocalnet): only whether one is set matters here. */
const LOCALNET = 'http://127.0.0.1:1/embedded-localnet';

/** Route bits this relay will run: with no upstream.rpcUrl, as with the embedded localnet main starts. */
export function routesRunAtStart(config: Readonly<Config>): number {
  if (config.upstream.rpcUrl !== undefined) return buildRoutePlan(config).available;
  const rpc = config.routes.rpc;
  return buildRoutePlan({
    ...config,
    upstream: { ...config.upstream, rpcUrl: LOCALNET },
    routes: { ...config.routes, rpc: { ...rpc, endpoints: rpc.endpoints.length > 0 ? rpc.endpoints : [LOCALNET] } },
  }).available;
}

/** What a route lacks to run here (for the message). */
function whyNot(route: RouteName): string {
  if (route === 'rpc') return 'routes.rpc.endpoints is empty';
  if (route === 'direct') return 'routes.direct.enabled is false';
  if (route === 'jito') return 'routes.jito is not set';
  return 'routes.static.peers is empty';
}

/**
 * One message per default route named in the config that this relay does not run. `raw`: the config as written (after
 * environment and flags), to tell a routes.defaultRoutes the operator wrote from the schema's default. Names keys by
 * index and name, never by the key.
 */
export function unavailableDefaultRoutes(config: Readonly<Config>, raw: Readonly<Record<string, unknown>>): string[] {
  const available = routesRunAtStart(config);
  const runs = (r: RouteName): boolean => (available & (1 << ROUTE_IDS[r])) !== 0;
  const issues: string[] = [];
  const fix = (field: string, r: RouteName): string => `a route this relay does not run (${whyNot(r)}): configure it, or remove "${r}" from ${field}`;
  const rawRoutes = raw.routes;
  const named = typeof rawRoutes === 'object' && rawRoutes !== null && (rawRoutes as Record<string, unknown>).defaultRoutes !== undefined;
  if (named) for (const r of config.routes.defaultRoutes) if (!runs(r)) issues.push(`routes.defaultRoutes names "${r}", ${fix('routes.defaultRoutes', r)}`);
  for (const [i, k] of config.keys.entries()) {
    for (const r of k.defaultRoutes ?? []) if (!runs(r)) issues.push(`keys[${i}] ("${k.name}"): defaultRoutes names "${r}", ${fix(`keys[${i}].defaultRoutes`, r)}`);
  }
  return issues;
}
