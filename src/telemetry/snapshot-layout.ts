// The leader-slot snapshot's layout moved to src/shm/snapshot-layout.ts (every SharedArrayBuffer layout lives under
// src/shm/); this module keeps the old import path working for tests and benches.
export * from '../shm/snapshot-layout.js';
