// Per-worker counter regions (layout.ts WORKER_COUNTER), every offset of this SharedArrayBuffer in one module. Cold
// setup; HOT writers (plain stores). One buffer per Piscina pool (the egress workers' pool, the quic-egress thread's pool),
// one Float64Array region per ring consumer. Each region has exactly one writer (its ring's current consumer), so
// increments are plain stores; the front thread sums the regions per scrape (cold). A restarted consumer keeps
// counting in the same region.
//
//   bytes 0..63    header (Int32 words): [0] MAGIC, [1] LAYOUT_VERSION, [2] region count, [3] slots per region
//   bytes 64..     region i at 64 + i * WORKER_COUNTER_SLOTS * 8 (f64 counters, index with WORKER_COUNTER / egressCounterIndex)
import { EGRESS_OUTCOME_COUNT, ROUTE_COUNT, WORKER_COUNTER_SLOTS, egressCounterIndex } from './layout.js';

export const COUNTERS_MAGIC = 0x534c5443; // 'SLTC'
export const COUNTERS_LAYOUT_VERSION = 1;
const HEADER_BYTES = 64;
const F64 = Float64Array.BYTES_PER_ELEMENT;
const REGION_BYTES = WORKER_COUNTER_SLOTS * F64;

export function createWorkerCounters(workers: number): SharedArrayBuffer {
  if (!Number.isInteger(workers) || workers < 1) throw new RangeError(`counter regions: ${workers}`);
  const sab = new SharedArrayBuffer(HEADER_BYTES + workers * REGION_BYTES);
  const h = new Int32Array(sab, 0, HEADER_BYTES >> 2);
  h[1] = COUNTERS_LAYOUT_VERSION;
  h[2] = workers;
  h[3] = WORKER_COUNTER_SLOTS;
  Atomics.store(h, 0, COUNTERS_MAGIC); // last: valid once the magic is visible
  return sab;
}

/** Checks magic, version and size; returns the region count. */
function attach(sab: SharedArrayBuffer): number {
  if (!(sab instanceof SharedArrayBuffer) || sab.byteLength < HEADER_BYTES) throw new TypeError('counters: expected a buffer made by createWorkerCounters()');
  const h = new Int32Array(sab, 0, HEADER_BYTES >> 2);
  if (Atomics.load(h, 0) !== COUNTERS_MAGIC) throw new Error('counters: bad magic');
  if (h[1] !== COUNTERS_LAYOUT_VERSION) throw new Error(`counters: layout version ${h[1]}, this build speaks ${COUNTERS_LAYOUT_VERSION}`);
  if (h[3] !== WORKER_COUNTER_SLOTS || sab.byteLength !== HEADER_BYTES + h[2] * REGION_BYTES) throw new Error('counters: size does not match its header');
  return h[2];
}

/** The region of worker `index` (its writer's view); checks the header (a consumer attaching). */
export function workerCounterRegion(sab: SharedArrayBuffer, index: number): Float64Array {
  const regions = attach(sab);
  if (!Number.isInteger(index) || index < 0 || index >= regions) throw new RangeError(`no counter region ${index}`);
  return new Float64Array(sab, HEADER_BYTES + index * REGION_BYTES, WORKER_COUNTER_SLOTS);
}

/** Sum of every region, indexed like one region (WORKER_COUNTER, egressCounterIndex). */
export function sumWorkerCounters(sab: SharedArrayBuffer, into: Float64Array = new Float64Array(WORKER_COUNTER_SLOTS)): Float64Array {
  const regions = attach(sab);
  const all = new Float64Array(sab, HEADER_BYTES, regions * WORKER_COUNTER_SLOTS);
  for (let i = 0; i < all.length; i++) into[i % WORKER_COUNTER_SLOTS] += all[i];
  return into;
}

/** Egress outcome count for (route, outcome) from a summed (or single) region. */
export function egressCount(region: Float64Array, routeId: number, outcomeIndex: number): number {
  if (routeId < 0 || routeId >= ROUTE_COUNT || outcomeIndex < 0 || outcomeIndex >= EGRESS_OUTCOME_COUNT) return 0;
  return region[egressCounterIndex(routeId, outcomeIndex)];
}
