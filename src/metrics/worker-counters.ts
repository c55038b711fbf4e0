// Per-worker counter regions (layout.ts WORKER_COUNTER): one SharedArrayBuffer, one Float64Array region per egress
// worker. Each region has exactly one writer (its ring's current consumer), so increments are plain stores; the
// front thread sums the regions per scrape (cold). A restarted consumer keeps counting in the same region.
import { EGRESS_OUTCOME_COUNT, ROUTE_COUNT, WORKER_COUNTER_SLOTS, egressCounterIndex } from '../shm/layout.js';

const F64 = Float64Array.BYTES_PER_ELEMENT;

export function createWorkerCounters(workers: number): SharedArrayBuffer {
  return new SharedArrayBuffer(workers * WORKER_COUNTER_SLOTS * F64);
}

/** The region of worker `index` (its writer's view). */
export function workerCounterRegion(sab: SharedArrayBuffer, index: number): Float64Array {
  const regions = sab.byteLength / (WORKER_COUNTER_SLOTS * F64);
  if (!Number.isInteger(index) || index < 0 || index >= regions) throw new RangeError(`no counter region ${index}`);
  return new Float64Array(sab, index * WORKER_COUNTER_SLOTS * F64, WORKER_COUNTER_SLOTS);
}

/** Sum of every region, indexed like one region (WORKER_COUNTER, egressCounterIndex). */
export function sumWorkerCounters(sab: SharedArrayBuffer): Float64Array {
  const all = new Float64Array(sab);
  const out = new Float64Array(WORKER_COUNTER_SLOTS);
  for (let i = 0; i < all.length; i++) out[i % WORKER_COUNTER_SLOTS] += all[i];
  return out;
}

/** Egress outcome count for (route, outcome) from a summed (or single) region. */
export function egressCount(region: Float64Array, routeId: number, outcomeIndex: number): number {
  if (routeId < 0 || routeId >= ROUTE_COUNT || outcomeIndex < 0 || outcomeIndex >= EGRESS_OUTCOME_COUNT) return 0;
  return region[egressCounterIndex(routeId, outcomeIndex)];
}
