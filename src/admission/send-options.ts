// What a submission asks of the relay beyond its bytes (front thread, HOT: once per submission, allocation-free on
// success): the routes it goes by (asked ∩ the key's policy ∩ what this relay runs, or the refusal saying which of
// those is empty) and maxRetries. Shared by JSON-RPC, the REST paths and the QUIC ingress so the three refuse alike.
import { ROUTE_NAMES, type RouteName } from '../config/schema.js';
import { Errors, Failure, failureOf } from '../errors/registry.js';
import { serdeType } from '../errors/serde-type.js';
import { ROUTE_IDS } from '../shm/layout.js';
import type { KeyEntry } from './key-table.js';

const ROUTE_NOT_ALLOWED = failureOf(Errors.ROUTE_NOT_ALLOWED);
/** route_not_configured by the relay's available mask (one per relay in practice): data names what it runs. */
const notConfigured = new Map<number, Failure>();

/**
 * Nothing to send by: the key's policy when it allows none of the routes asked for (route_not_allowed, 403), else this
 * relay, which runs none of those it allows (route_not_configured, 400). `permitted`: the routes asked ∩ the key's.
 */
export function noRouteRefusal(permitted: number, available: number): Failure {
  if (permitted === 0) return ROUTE_NOT_ALLOWED;
  let f = notConfigured.get(available);
  if (f === undefined) {
    const configured = ROUTE_NAMES.filter((r) => (available & (1 << ROUTE_IDS[r])) !== 0);
    f = Object.freeze(new Failure(Errors.ROUTE_NOT_CONFIGURED, Errors.ROUTE_NOT_CONFIGURED.message, { reason: Errors.ROUTE_NOT_CONFIGURED.reason, configured }));
    notConfigured.set(available, f);
  }
  return f;
}

const ROUTES_SHAPE = Object.freeze(
  new Failure(Errors.UNKNOWN_ROUTE, 'Invalid params: `routes` must be "default" or a non-empty array of route names'),
);

/** Requested route names -> effective mask (request ∩ key policy ∩ available), or the refusal. */
export function resolveRoutes(requested: unknown, key: KeyEntry, available: number): number | Failure {
  if (requested === undefined || requested === null || requested === 'default') {
    const m = key.defaultMask & available;
    if (m === 0) return noRouteRefusal(key.defaultMask, available);
    return m;
  }
  if (!Array.isArray(requested) || requested.length === 0) return ROUTES_SHAPE;
  let mask = 0;
  for (const r of requested) {
    if (typeof r !== 'string') {
      // serdeType describes without walking into the value (it may be nested thousands deep).
      return new Failure(Errors.UNKNOWN_ROUTE, `Invalid params: \`routes\` must hold route names (strings), got ${serdeType(r)}; known routes: ${KNOWN_ROUTES}`);
    }
    if (!(ROUTE_NAMES as readonly string[]).includes(r)) {
      return new Failure(Errors.UNKNOWN_ROUTE, `Invalid params: unknown route ${JSON.stringify(r)} in \`routes\`; known routes: ${KNOWN_ROUTES}`);
    }
    mask |= 1 << ROUTE_IDS[r as RouteName];
  }
  const effective = mask & key.allowedMask & available;
  if (effective === 0) return noRouteRefusal(mask & key.allowedMask, available);
  return effective;
}

const KNOWN_ROUTES = ROUTE_NAMES.join(', ');

export const BAD_MAX_RETRIES = Object.freeze(new Failure(Errors.INVALID_PARAMS, 'Invalid params: `maxRetries` must be a non-negative integer'));

/** `maxRetries` of a JSON body (or a QUIC ingress request): absent/null -> -1 (none given). */
export function maxRetriesFrom(v: unknown): number | Failure {
  if (v === undefined || v === null) return -1;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) return BAD_MAX_RETRIES;
  return v;
}
