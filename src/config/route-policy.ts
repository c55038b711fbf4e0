// Routes the relay adds to a transaction on its own, by key id (front thread; built at start, rewritten by a reload).
// The front adds them to the record it publishes (src/admission/intake.ts) and reports them in the relay paths' `routes`
// answer, so the two always agree; the egress consumers take the record's mask as it is.
import { ROUTE_IDS } from '../shm/layout.js';
import type { Config, RouteName } from './schema.js';

/** Most key ids the masks can hold (4 MiB of reserved, not committed, memory): far above any key table. */
const MAX_KEY_IDS = 1 << 20;

/** ES2024 resizable ArrayBuffer (Node >= 20), which the project's TypeScript lib does not declare yet. */
interface ResizableBuffer extends ArrayBuffer {
  resize(byteLength: number): void;
}
const ResizableArrayBuffer = ArrayBuffer as unknown as new (byteLength: number, options: { maxByteLength: number }) => ResizableBuffer;

/** A config key as the masks need it: its id in the key table (src/admission/key-table.ts) and its route policy. */
export interface KeyRoutes {
  readonly id: number;
  readonly allowedRoutes: readonly RouteName[];
}

/**
 * Routes added to every record by key id: the static route when routes.static.peers is non-empty,
 * routes.static.everyTransaction is set and the key's allowedRoutes include `static` (config keys only, as before
 * reloads existed: an engine key's plan gets none). The array tracks a resizable buffer, so a reload rewrites it in
 * place and every holder (intake, relay paths, QUIC ingress) sees the new masks. Cold.
 */
export function addedRouteMasks(config: Readonly<Config>, keys: readonly KeyRoutes[] = config.keys.map((k, id) => ({ id, allowedRoutes: k.allowedRoutes }))): Uint32Array {
  const masks = new Uint32Array(new ResizableArrayBuffer(0, { maxByteLength: 4 * MAX_KEY_IDS }));
  updateAddedRouteMasks(masks, config, keys);
  return masks;
}

/** A reload: the masks of `config` (its routes.static) for `keys`; ids not among them get 0. */
export function updateAddedRouteMasks(masks: Uint32Array, config: Readonly<Config>, keys: readonly KeyRoutes[]): void {
  let length = masks.length;
  for (const k of keys) length = Math.max(length, k.id + 1);
  if (length > MAX_KEY_IDS) throw new Error(`more than ${MAX_KEY_IDS} key ids`);
  const buffer = masks.buffer as ResizableBuffer;
  if (length * 4 > buffer.byteLength) buffer.resize(length * 4);
  masks.fill(0);
  const s = config.routes.static;
  if (config.routes.discard || !s.everyTransaction || s.peers.length === 0) return;
  for (const k of keys) if (k.allowedRoutes.includes('static')) masks[k.id] = 1 << ROUTE_IDS.static;
}
