// Shared-memory layout of the links between QUIC thread 0 and the other QUIC threads (rings.quicThreads > 1; cold
// constants, read as plain numbers on the hot path). Each thread k >= 1 has two SPSC message rings — the QUIC
// ingress's ring (./message-ring.ts, layout and magic in ./ingress-layout.ts, checked on attach):
//   requests  thread 0 -> thread k: transactions to send to a target thread k owns, and its pre-warm set
//   answers   thread k -> thread 0: one answer per request: what that target's connection did with it
// Message fields (ingress-layout.ts MSG_*), by kind:
//   send     payload = wire transaction, then the target "ip:port", then its label (both latin1);
//            KEY_ID = transaction bytes, AUX = target bytes, CODE = label bytes, CONN_ID = 0 (unused),
//            STREAM_ID = request number (unique across restarts of thread 0), TIME_MS = when thread 0 handed it over
//   prewarm  payload = "target label\n" lines (latin1); AUX = 1 on the last part of a set (a set longer than a slot
//            goes in several parts; the owner replaces its pre-warm set when the last part arrives)
//   answer   no payload; STREAM_ID = the request's number, CODE = index in QUIC_LINK_ANSWERS
export const QUIC_LINK_KINDS = Object.freeze({ send: 1, prewarm: 2, answer: 3 } as const);

/** What a target's connection did with a transaction (connection-worker.ts TargetOutcome), by CODE. */
export const QUIC_LINK_ANSWERS = Object.freeze(['sent', 'failed', 'dropped:no_connection', 'dropped:queue_full', 'dropped:stale'] as const);

/** Longest target or label text a send carries (an "ip:port" is <= 47 bytes, a base58 identity 44). */
export const QUIC_LINK_MAX_TEXT = 255;

/** Payload room of a link slot: a transaction plus its target and label. */
export function quicLinkPayloadBytes(maxTransactionBytes: number): number {
  return maxTransactionBytes + 2 * QUIC_LINK_MAX_TEXT;
}

/** One link's two rings, made by the egress pool and handed to both threads. */
export interface QuicLink {
  readonly requests: SharedArrayBuffer;
  readonly answers: SharedArrayBuffer;
}
