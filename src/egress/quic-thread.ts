// The QUIC thread's body (its own Piscina pool of size 1, one long-lived task; HOT: the ring consumer and every QUIC
// socket of the process). It consumes the QUIC ring with the QUIC routes only (direct, static: src/config/route-plan.ts)
// and answers the telemetry probe's handshake requests (src/telemetry/probe-relay.ts), so the quiche binding is loaded
// by this thread alone: one connection per leader per process, and no private copy of the native library
// (src/quic/quiche.ts). Returns when the pool sets the ring's STOP word, like every egress consumer.
import { serveProbes } from '../telemetry/probe-relay.js';
import { runEgressConsumer, type EgressTask } from './consumer-loop.js';

export function runQuicThread(task: EgressTask): Promise<void> {
  if (task.probePort !== undefined) serveProbes(task.probePort);
  return runEgressConsumer(task);
}
