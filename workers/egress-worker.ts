// Egress worker entry (Piscina task module, one long-lived task per ring): attach to the ring and consume it until
// the pool sets the ring's STOP word. The config arrives in the task payload (structured-cloned by Piscina, so the
// main thread's freeze is lost on the way) and is deep-frozen again here before anything reads it. Everything else
// lives in src/egress/consumer/consumer-loop.ts.
import { deepFreeze } from '../src/config/freeze.js';
import { runEgressConsumer, type EgressTask } from '../src/egress/consumer/consumer-loop.js';
import { publishThreadMemory } from '../src/metrics/thread-memory.js';

export default async function egressWorker(task: EgressTask): Promise<void> {
  deepFreeze(task.config);
  const stop = publishThreadMemory('egress');
  try {
    await runEgressConsumer(task);
  } finally {
    stop();
  }
}
