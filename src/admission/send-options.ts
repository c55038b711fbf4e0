// What a submission asks of the relay beyond its bytes (HOT: once per submission, allocation-free on success; the
// front thread, and the quic-egress thread's local admission for route names): the one place that decides a request's
// routes — asked ∩ the key's policy ∩ what this relay runs, or the refusal saying which of those is empty; the routes
// the relay adds on its own; their names in an answer — and maxRetries. Used by every ingress (JSON-RPC
// sendTransaction, /v1/submit, /v1/transactions, the QUIC ingress and its local admission) so they refuse and answer
// alike. Bundles pick no routes (they go to the bundle service).
import type { RouteName } from '../config/schema.js';
import { Errors, Failure, failureOf } from '../errors/registry.js';
import { serdeType } from '../errors/serde-type.js';
// ROUTE_BY_ID is the config's ROUTE_NAMES (src/config/keys-schema.ts); read here so that the quic-egress thread's local
// admission, which names routes in its answers, does not load the config schema.
import { ROUTE_BY_ID, ROUTE_IDS } from '../shm/layout.js';
import type { KeyEntry } from './key-table.js';

/** Every route bit (the available mask of code driven without a route plan: unit tests). */
export const EVERY_ROUTE = (1 << ROUTE_BY_ID.length) - 1;

const ROUTE_NOT_ALLOWED = failureOf(Errors.ROUTE_NOT_ALLOWED);
/** route_not_configured by the relay's available mask (one per relay in practice): data names what it runs. */
const notConfigured = new Map<number, Failure>();

/**
 * Nothing to send by: the key's policy when it allows none of the routes asked for (route_not_allowed, 403), else this
 * relay, which runs none of those it allows (route_not_configured, 400). `permitted`: the routes asked ∩ the key's.
 */
function noRouteRefusal(permitted: number, available: number): Failure {
  if (permitted === 0) return ROUTE_NOT_ALLOWED;
  let f = notConfigured.get(available);
  if (f === undefined) {
    const configured = ROUTE_BY_ID.filter((r) => (available & (1 << ROUTE_IDS[r])) !== 0);
    f = Object.freeze(new Failure(Errors.ROUTE_NOT_CONFIGURED, Errors.ROUTE_NOT_CONFIGURED.message, { reason: Errors.ROUTE_NOT_CONFIGURED.reason, configured }));
    notConfigured.set(available, f);
  }
  return f;
}

const ROUTES_SHAPE = Object.freeze(
  new Failure(Errors.UNKNOWN_ROUTE, 'Invalid params: `routes` must be "default" or a non-empty array of route names'),
);

/** The key's default routes this relay runs (a request naming none), or the refusal when there are none. */
export function defaultRoutes(key: KeyEntry, available: number): number | Failure {
  const m = key.defaultMask & available;
  return m === 0 ? noRouteRefusal(key.defaultMask, available) : m;
}

/** Requested route names -> effective mask (request ∩ key policy ∩ available), or the refusal. */
export function resolveRoutes(requested: unknown, key: KeyEntry, available: number): number | Failure {
  if (requested === undefined || requested === null || requested === 'default') return defaultRoutes(key, available);
  if (!Array.isArray(requested) || requested.length === 0) return ROUTES_SHAPE;
  let mask = 0;
  for (const r of requested) {
    if (typeof r !== 'string') {
      // serdeType describes without walking into the value (it may be nested thousands deep).
      return new Failure(Errors.UNKNOWN_ROUTE, `Invalid params: \`routes\` must hold route names (strings), got ${serdeType(r)}; known routes: ${KNOWN_ROUTES}`);
    }
    if (!(ROUTE_BY_ID as readonly string[]).includes(r)) {
      return new Failure(Errors.UNKNOWN_ROUTE, `Invalid params: unknown route ${JSON.stringify(r)} in \`routes\`; known routes: ${KNOWN_ROUTES}`);
    }
    mask |= 1 << ROUTE_IDS[r as RouteName];
  }
  const effective = mask & key.allowedMask & available;
  if (effective === 0) return noRouteRefusal(mask & key.allowedMask, available);
  return effective;
}

const KNOWN_ROUTES = ROUTE_BY_ID.join(', ');

/**
 * Where an accepted transaction goes: its routes and those the relay adds on its own for key `keyId` (`added`, by key
 * id: src/config/route-policy.ts). The record carries this mask and the answer's `routes` names it, so they agree.
 */
export function withAddedRoutes(mask: number, keyId: number, added: Uint32Array): number {
  return mask | (added[keyId] ?? 0);
}

/** Route names per mask, built once: an answer's `routes` is a lookup. */
const NAMES_BY_MASK: readonly (readonly string[])[] = Object.freeze(
  Array.from({ length: 1 << ROUTE_BY_ID.length }, (_, mask) => Object.freeze(ROUTE_BY_ID.filter((_, i) => (mask & (1 << i)) !== 0))),
);

/** The names of the routes of `mask`, in route id order (one frozen array per mask, shared). */
export function routeNames(mask: number): readonly string[] {
  return NAMES_BY_MASK[mask];
}

export const BAD_MAX_RETRIES = Object.freeze(new Failure(Errors.INVALID_PARAMS, 'Invalid params: `maxRetries` must be a non-negative integer'));

/** `maxRetries` of a JSON body (or a QUIC ingress request): absent/null -> -1 (none given). */
export function maxRetriesFrom(v: unknown): number | Failure {
  if (v === undefined || v === null) return -1;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) return BAD_MAX_RETRIES;
  return v;
}
