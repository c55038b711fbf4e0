// Shared-memory layout of the links between QUIC thread 0 and the other QUIC threads (rings.quicThreads > 1; cold
// constants, read as plain numbers on the hot path). Each thread k >= 1 has two SPSC message rings
// (./message-ring-layout.ts, checked on attach):
//   requests  thread 0 -> thread k: transactions to send to a target thread k owns, and its pre-warm set
//   answers   thread k -> thread 0: one answer per request: what that target's connection did with it
// The header's protocol words, as the link names them (LinkHeader, read by linkHeaderOf), by kind:
//   send     payload = wire transaction, then the target "ip:port", then its label (both latin1);
//            u0 txBytes, u2 targetBytes, u1 labelBytes, f0 requestId (unique across restarts of thread 0),
//            f1 timeMs (when thread 0 handed it over), i0 background = 1 for a rebroadcast (written after first sends)
//   prewarm  payload = "target label\n" lines (latin1); u2 lastPart = 1 on the last part of a set (a set longer than a
//            slot goes in several parts; the owner replaces its pre-warm set when the last part arrives); f1 timeMs
//   answer   no payload; f0 requestId = the request's number, u1 answer = index in QUIC_LINK_ANSWERS
import type { MessageHeader, MessageRingProducer } from './message-ring.js';

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

/** A message header in the link's words. */
export interface LinkHeader {
  readonly kind: number;
  readonly requestId: number;
  readonly timeMs: number;
  readonly txBytes: number;
  readonly targetBytes: number;
  readonly labelBytes: number;
  readonly lastPart: boolean;
  readonly answer: number;
  readonly background: boolean;
}

/** The link's view of a consumer's (reused) header: getters, so reading a message allocates nothing. */
export function linkHeaderOf(h: MessageHeader): LinkHeader {
  return {
    get kind() {
      return h.kind;
    },
    get requestId() {
      return h.f0;
    },
    get timeMs() {
      return h.f1;
    },
    get txBytes() {
      return h.u0;
    },
    get targetBytes() {
      return h.u2;
    },
    get labelBytes() {
      return h.u1;
    },
    get lastPart() {
      return h.u2 === 1;
    },
    get answer() {
      return h.u1;
    },
    get background() {
      return h.i0 === 1;
    },
  };
}

/** HOT: publishes the reserved slot (transaction, target, label already copied in) as a send. */
export function publishLinkSend(r: MessageRingProducer, txBytes: number, targetBytes: number, labelBytes: number, requestId: number, timeMs: number, background = false): void {
  r.publish(QUIC_LINK_KINDS.send, txBytes + targetBytes + labelBytes, background ? 1 : 0, txBytes, requestId, timeMs, labelBytes, targetBytes);
}

/** Cold: publishes the reserved slot (`length` bytes of "target label\n" lines) as a part of a pre-warm set. */
export function publishLinkPrewarm(r: MessageRingProducer, length: number, lastPart: boolean, timeMs: number): void {
  r.publish(QUIC_LINK_KINDS.prewarm, length, 0, 0, 0, timeMs, 0, lastPart ? 1 : 0);
}

/** HOT: publishes the reserved slot as the answer to request `requestId` (`answer` = index in QUIC_LINK_ANSWERS). */
export function publishLinkAnswer(r: MessageRingProducer, requestId: number, answer: number): void {
  r.publish(QUIC_LINK_KINDS.answer, 0, 0, 0, requestId, 0, answer, 0);
}
