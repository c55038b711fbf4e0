// The egress worker entry deep-freezes the config it receives: Piscina structured-clones the task payload, and a
// clone of a frozen object is not frozen.
import { describe, expect, it } from 'vitest';
import egressWorker from '../../../workers/egress-worker.js';
import { loadConfig } from '../../../src/config/load.js';
import type { EgressTask } from '../../../src/egress/consumer/consumer-loop.js';
import { createWorkerCounters } from '../../../src/metrics/worker-counters.js';
import { createRing, requestStop } from '../../../src/shm/ring.js';

/** Every object reachable from `o` that is not frozen, by path. */
function unfrozen(o: unknown, path = 'config'): string[] {
  if (o === null || typeof o !== 'object') return [];
  const own = Object.isFrozen(o) ? [] : [path];
  return own.concat(...Object.entries(o).map(([k, v]) => unfrozen(v, `${path}.${k}`)));
}

describe('workers/egress-worker.ts', () => {
  it('deep-freezes the structured-cloned config before the consumer runs', async () => {
    const frozen = loadConfig({ flags: [{ path: ['routes', 'discard'], value: true }, { path: ['log', 'level'], value: 'silent' }] });
    expect(unfrozen(frozen)).toEqual([]);
    const ring = createRing(16, frozen.transactions.maxTransactionBytes);
    requestStop(ring); // the consumer returns at once
    const task: EgressTask = structuredClone({ ringIndex: 0, ring, counters: createWorkerCounters(1), config: frozen, attempt: 0 });
    expect(unfrozen(task.config)).toContain('config.routes.rpc.endpoints'); // what crossing a thread does
    await egressWorker(task);
    expect(unfrozen(task.config)).toEqual([]);
  });
});
