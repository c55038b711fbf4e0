// Routes the relay adds to a transaction on its own, by key: shared by the egress consumer (which adds them to every
// record) and the front (which reports them in the relay paths' `routes` answer), so both always agree.
import { ROUTE_IDS } from '../shm/layout.js';
import type { Config } from './schema.js';

/**
 * Routes added to every record by key id (index = the record's key id): the static route when routes.static.peers
 * is non-empty, routes.static.everyTransaction is set and the key's allowedRoutes include `static`. Cold: once.
 */
export function addedRouteMasks(config: Readonly<Config>): Uint32Array {
  const masks = new Uint32Array(config.keys.length);
  const s = config.routes.static;
  if (config.routes.discard || !s.everyTransaction || s.peers.length === 0) return masks;
  for (let i = 0; i < config.keys.length; i++) {
    if (config.keys[i].allowedRoutes.includes('static')) masks[i] = 1 << ROUTE_IDS.static;
  }
  return masks;
}
