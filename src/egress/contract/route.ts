// The egress route contract (runs in egress workers and QUIC threads, HOT). A dispatcher (the ring consumer loop, the
// QUIC ingress's local dispatch, the retry scheduler) hands a transaction to every route in its route mask as a TxView
// over the ring slot (zero-copy) and gets one RouteAnswer per route: the send's result as a value (outcome, targets,
// target slot, cause, code), as Yellowstone Jet's TpuSenderResponse comes back from its sender. The record is
// released back to the ring only when every route has answered (./send-record.ts). A route that can finish
// synchronously (a QUIC route whose stream write happened) returns its answer directly: no promise, no extra tick.
import type { RouteName } from '../../config/schema.js';
import { EGRESS_OUTCOMES, ROUTE_BY_ID, ROUTE_IDS, type EgressOutcome } from '../../shm/layout.js';

export type { EgressOutcome, RouteName };

/** One transaction as a route sees it. Valid only until the route's outcome: copy the bytes to keep them longer. */
export interface TxView {
  /** The wire transaction: a view over the ring's SharedArrayBuffer (no copy). */
  readonly bytes: Buffer;
  /** The ring buffer and the byte offset of `bytes` in it (Buffer.from(sab, off, len) without the view). */
  readonly sab: SharedArrayBuffer;
  readonly byteOffset: number;
  readonly length: number;
  /** Offset of the first signature inside `bytes` (after the compact-u16 signature count). */
  readonly signatureOffset: number;
  /** Index of the API key in the frozen key table (never the key). */
  readonly keyId: number;
  /** sendTransaction maxRetries, -1 when the client gave none. */
  readonly maxRetries: number;
  /** x-request-id or generated trace id (ASCII). */
  readonly traceId: string;
  /** Wall-clock ms (performance.timeOrigin + performance.now()) when the front thread received the request. */
  readonly receivedAtMs: number;
  /** The landing receipt's sequence number (src/shm/receipts-layout.ts); 0 or absent = none. */
  readonly receiptSeq?: number;
  /**
   * A rebroadcast (the retry scheduler's copy, src/egress/rebroadcast/): a QUIC connection writes it only when no first
   * send waits on it (src/egress/quic/connection-worker.ts). Absent on records from the ring.
   */
  readonly rebroadcast?: boolean;
}

/**
 * What one route's send did, beyond its outcome: how many leaders or peers it aimed at, the slot whose leader it aimed
 * at first (-1: not leader-based), and why it did not send (CAUSE index of src/shm/receipts-layout.ts and its number:
 * a QUIC close code, an HTTP status, -JSON-RPC code; 0: none). The landing receipt gets all of them.
 */
export interface SendResult {
  readonly outcome: EgressOutcome;
  readonly targets: number;
  readonly targetSlot: number;
  readonly cause: number;
  readonly code: number;
}

/** A SendResult a route fills in place (a QUIC route reuses one per route for its synchronous answers). */
export type MutableSendResult = { -readonly [K in keyof SendResult]: SendResult[K] };

/**
 * A route's answer: a bare outcome label when it has nothing more to say (no targets, no cause: no allocation on the
 * common `sent` of rpc and jito), else a SendResult. A SendResult returned synchronously may be one the route reuses:
 * the caller reads it before its next call into the route. One a promise resolves to is the caller's.
 */
export type RouteAnswer = EgressOutcome | SendResult;

/** The outcome of an answer. */
export function outcomeOf(a: RouteAnswer): EgressOutcome {
  return typeof a === 'string' ? a : a.outcome;
}

/** A fresh SendResult (cold: a route's failure with its cause, or an answer that must outlive the route's next send). */
export function sendResult(outcome: EgressOutcome, targets = 0, targetSlot = -1, cause = 0, code = 0): SendResult {
  return { outcome, targets, targetSlot, cause, code };
}

/** An answer the caller may keep across the route's next send (a reused SendResult is copied; a promise's is fresh). */
export function ownAnswer(a: RouteAnswer | Promise<RouteAnswer>): RouteAnswer | Promise<RouteAnswer> {
  if (typeof a === 'string' || a instanceof Promise) return a;
  return sendResult(a.outcome, a.targets, a.targetSlot, a.cause, a.code);
}

export interface EgressRoute {
  /** ROUTE_IDS value: the bit in REC_ROUTE_MASK and the counter row. */
  readonly id: number;
  readonly name: RouteName;
  /**
   * Send one transaction and answer what happened. Must not throw; a failure is the `failed` outcome (rpc and jito
   * log their endpoint's reason themselves; the record handler logs the QUIC routes' drops).
   */
  send(tx: TxView): Promise<RouteAnswer> | RouteAnswer;
  /** Abort in-flight sends (they answer `dropped:shutdown`) and free connections. */
  close(): Promise<void>;
  /**
   * Optional: settles once the route can deliver without a set-up delay (the QUIC routes: identity certificate and
   * connection cache built, static peers' first handshakes ended). The relay reports ready after it (bounded), so a
   * burst right after start does not wait on set-up in the ring. Never rejects; sends are taken before it settles too.
   */
  warm?(): Promise<void>;
}

/** Outcome label -> index in EGRESS_OUTCOMES (counter column). Built once. */
export const OUTCOME_INDEX: Readonly<Record<EgressOutcome, number>> = Object.freeze(
  Object.fromEntries(EGRESS_OUTCOMES.map((o, i) => [o, i])) as Record<EgressOutcome, number>,
);

export const SENT_INDEX = OUTCOME_INDEX.sent;

export function routeIdOf(name: RouteName): number {
  return ROUTE_IDS[name];
}

export function routeNameOf(id: number): RouteName {
  return ROUTE_BY_ID[id];
}

