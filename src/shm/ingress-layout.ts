// Shared-memory layout of the QUIC ingress (imported by both ends, checked on attach; cold constants, read on every
// push/pop as plain numbers). Two SPSC message rings (./message-ring-layout.ts) connect the quic-egress thread and the front:
//   requests  QUIC thread -> front: finished streams (uni / bidi) and authentication questions
//   replies   front -> QUIC thread: bidi answers, uni verdicts and authentication answers
// plus one Float64Array of QUIC-thread counters (single writer: the quic-egress thread; the front reads them for /metrics).
// Payload: the stream's bytes (uni / bidi), a MessagePack answer (bidiReply), "CN\nidentity" (authRequest).
// The header's protocol words, as the ingress names them (IngressHeader, read by ingressHeaderOf):
//   i0 keyId    API key id (-1: none / refused)
//   u0 connId   QUIC-thread connection number
//   f0 streamId QUIC stream id (< 2^53 in practice: 2^51 streams of a kind)
//   f1 timeMs   performance.timeOrigin + performance.now() when the stream's FIN was read
//   u1 code     application error code (replies/verdicts; 0 = accepted)
//   u2 aux      kind-specific (authRequest: the ALPN index)
import type { MessageHeader, MessageRingProducer } from './message-ring.js';

export const MSG_KINDS = Object.freeze({
  /** QUIC -> front: one unidirectional stream's bytes (a wire transaction). */
  uniStream: 1,
  /** QUIC -> front: one bidirectional stream's bytes (a MessagePack request). */
  bidiStream: 2,
  /** QUIC -> front: who is this certificate? payload = UTF-8 "CN\nbase58 identity" (either may be empty). */
  authRequest: 3,
  /** front -> QUIC: the answer to authRequest in MSG_KEY_ID (-1 = unknown: close with code 1). */
  authResult: 4,
  /** front -> QUIC: the MessagePack answer of a bidi stream (payload), to write with FIN. */
  bidiReply: 5,
  /** front -> QUIC: a uni stream's verdict (MSG_CODE, 0 = accepted); counted, STOP_SENDING if still open. */
  uniVerdict: 6,
  /**
   * QUIC -> front: a stream admitted and sent in the quic-egress thread (src/ingress/local-admission.ts): the front files its
   * receipt (MSG_CODE = the reserved sequence number, MSG_AUX = the record's route mask) and counts it. Payload:
   * signature (64 bytes), recent blockhash (32), dispatch time (f64 ms: when the send began).
   */
  localAccepted: 7,
} as const);

/** A message header in the ingress's words. */
export interface IngressHeader {
  readonly kind: number;
  readonly keyId: number;
  readonly connId: number;
  readonly streamId: number;
  readonly timeMs: number;
  readonly code: number;
  readonly aux: number;
}

/**
 * The ingress's view of a consumer's (reused) header: getters over the ring's words, so reading a message allocates
 * nothing (one view per consumer, made once).
 */
export function ingressHeaderOf(h: MessageHeader): IngressHeader {
  return {
    get kind() {
      return h.kind;
    },
    get keyId() {
      return h.i0;
    },
    get connId() {
      return h.u0;
    },
    get streamId() {
      return h.f0;
    },
    get timeMs() {
      return h.f1;
    },
    get code() {
      return h.u1;
    },
    get aux() {
      return h.u2;
    },
  };
}

/** Publishes the reserved slot as an ingress message (HOT: one per stream / answer). */
export function publishIngress(
  r: MessageRingProducer,
  kind: number,
  length: number,
  keyId: number,
  connId: number,
  streamId: number,
  timeMs: number,
  code: number,
  aux: number,
): void {
  r.publish(kind, length, keyId, connId, streamId, timeMs, code, aux);
}

/** Copies `payload` into a slot and publishes it as an ingress message; false when the ring is full or it does not fit. */
export function pushIngress(
  r: MessageRingProducer,
  kind: number,
  payload: Uint8Array,
  keyId: number,
  connId: number,
  streamId: number,
  timeMs: number,
  code: number,
  aux: number,
): boolean {
  return r.push(kind, payload, keyId, connId, streamId, timeMs, code, aux);
}

/**
 * pushIngress() for a note the front files for its books (the local admission's localAccepted): the front is woken at
 * the end of the quic-egress thread's turn, after the turn's sends, not in front of them.
 */
export function pushIngressNote(
  r: MessageRingProducer,
  kind: number,
  payload: Uint8Array,
  keyId: number,
  connId: number,
  streamId: number,
  timeMs: number,
  code: number,
  aux: number,
): boolean {
  return r.pushLater(kind, payload, keyId, connId, streamId, timeMs, code, aux);
}

// QUIC-thread counters: one Float64Array (plain stores by its one writer; f64 counts exactly up to 2^53). The first
// word is a magic so a stale or foreign buffer is refused.
export const INGRESS_COUNTERS_MAGIC = 0x51434e54; // 'QCNT'
/** Connection outcomes (metric label = log field). */
export const INGRESS_CONNECTION_OUTCOMES = Object.freeze([
  'accepted', // handshake done, key found, within limits
  'unauthorized', // closed with code 1: no usable certificate or unknown key
  'key_connection_limit', // closed with code 2
  'server_connection_limit', // closed with code 3
  'handshake_failed', // TLS / ALPN failure or handshake timeout (never established)
] as const);
/** Stream outcomes decided on the quic-egress thread; the front's verdicts are reported back and counted here too. */
export const INGRESS_STREAM_OUTCOMES = Object.freeze([
  'accepted', // in the egress ring (uni), or answered accepted: true (bidi)
  'refused', // the front refused it (rate limited, undecodable, route...): bidi answered accepted: false
  'empty', // uni stream with FIN and no byte
  'too_large', // longer than the limit: STOP_SENDING (and RESET_STREAM on bidi) code 17
  'unfinished', // no FIN within streamTimeoutMs, or reset by the client
  'overloaded', // the ingress ring was full and the connection's hold outlasted holdTimeoutMs (or no hold: onStream refused)
  'bidi_not_allowed', // a bidi stream on ALPN solana-tpu: code 23
  'reply_timeout', // the client did not take the answer in time: RESET_STREAM code 22
] as const);
export const INGRESS_COUNTER = Object.freeze({
  magic: 0,
  connectionsActive: 1,
  bytesReceived: 2,
  bytesSent: 3,
  datagramsReceived: 4,
  datagramsSent: 5,
  /** Streams whose bytes are in the ring, waiting for the front's answer. */
  streamsPending: 6,
  /** Streams admitted and sent in the quic-egress thread (relayHost.quic.localAdmission; also counted `accepted`). */
  localAdmitted: 7,
  /**
   * Back-pressure by stream credit (src/ingress/ingress-endpoint.ts, docs/quic-ingress.md "Back-pressure"): times a
   * connection's stream reads were held because the front's queue was full.
   */
  holds: 8,
  /** Streams read after waiting unread in a held connection (each once, whatever became of it). */
  streamsHeld: 9,
  /** Connections held now (a gauge). */
  connectionsHeld: 10,
  /** Holds that outlasted relayHost.quic.holdTimeoutMs: the connection's finished streams were refused `overloaded`. */
  holdTimeouts: 11,
  connectionBase: 12,
  streamBase: 12 + INGRESS_CONNECTION_OUTCOMES.length,
} as const);
export const INGRESS_COUNTER_SLOTS = INGRESS_COUNTER.streamBase + INGRESS_STREAM_OUTCOMES.length;

export type IngressConnectionOutcome = (typeof INGRESS_CONNECTION_OUTCOMES)[number];
export type IngressStreamOutcome = (typeof INGRESS_STREAM_OUTCOMES)[number];

export function createIngressCounters(): SharedArrayBuffer {
  const sab = new SharedArrayBuffer(INGRESS_COUNTER_SLOTS * 8);
  new Float64Array(sab)[INGRESS_COUNTER.magic] = INGRESS_COUNTERS_MAGIC;
  return sab;
}

export function attachIngressCounters(sab: SharedArrayBuffer): Float64Array {
  const f = new Float64Array(sab);
  if (f.length !== INGRESS_COUNTER_SLOTS || f[INGRESS_COUNTER.magic] !== INGRESS_COUNTERS_MAGIC) {
    throw new Error('ingress counters: bad magic or size (layout mismatch)');
  }
  return f;
}

export function connectionCounterIndex(o: IngressConnectionOutcome): number {
  return INGRESS_COUNTER.connectionBase + INGRESS_CONNECTION_OUTCOMES.indexOf(o);
}

export function streamCounterIndex(o: IngressStreamOutcome): number {
  return INGRESS_COUNTER.streamBase + INGRESS_STREAM_OUTCOMES.indexOf(o);
}
