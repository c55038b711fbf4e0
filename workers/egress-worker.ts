// Egress worker entry (Piscina task module, one long-lived task per ring): attach to the ring and consume it until
// the pool sets the ring's STOP word. Everything lives in src/egress/consumer-loop.ts.
import { runEgressConsumer, type EgressTask } from '../src/egress/consumer-loop.js';

export default function egressWorker(task: EgressTask): Promise<void> {
  return runEgressConsumer(task);
}
