// Start-up readiness of the ring consumers (egress workers and the quic-egress thread -> main; cold, once per consumer task).
// A consumer posts CONSUMER_READY on its task's port once its routes are warm (EgressRoute.warm: the QUIC routes'
// connection layer loaded, static peers' first handshakes ended); the pool (pool.ts whenReady) lets main print
// relay_ready only after every ring's consumer did, bounded. Without it the relay said ready ~400 ms before the QUIC
// thread could send, and a burst in that window waited in (and could fill) the QUIC ring.
import type { MessagePort } from 'node:worker_threads';
import type { EgressRoute } from './route.js';

export const CONSUMER_READY = Object.freeze({ kind: 'consumer-ready' } as const);

export function isConsumerReady(msg: unknown): boolean {
  return msg !== null && typeof msg === 'object' && (msg as { kind?: unknown }).kind === 'consumer-ready';
}

/** Worker side: posts CONSUMER_READY once every route's warm() settled (at once when none has one). */
export function announceWhenWarm(routes: readonly (EgressRoute | null)[], port: MessagePort | undefined): void {
  if (port === undefined) return;
  const post = (): void => port.postMessage(CONSUMER_READY);
  // warm() never rejects; if one did, the relay is still as ready as it gets.
  void Promise.all(routes.map((r) => r?.warm?.())).then(post, post);
}
