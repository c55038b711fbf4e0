// The per-worker counter regions moved to src/shm/counters.ts (every SharedArrayBuffer layout lives under src/shm/);
// this module keeps the old import path working for tests and benches.
export { createWorkerCounters, egressCount, sumWorkerCounters, workerCounterRegion } from '../shm/counters.js';
