// The egress route contract (runs in egress workers, HOT). The consumer loop hands each record to every route in
// its route mask as a TxView over the ring slot (zero-copy) and waits for one EgressOutcome per route; the record
// is released back to the ring only when every route has answered. A route that can finish synchronously (a QUIC
// route whose stream write happened) returns the outcome directly: no promise, no extra tick.
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
   * Written by a fanning-out route during send(), before it returns or awaits, for the receipt: how many leaders or
   * peers it wrote the transaction to, and the slot whose leader it aimed at first (-1: not leader-based). The loop
   * resets both before each route's send().
   */
  targets?: number;
  targetSlot?: number;
  /**
   * A rebroadcast (the retry scheduler's copy, src/egress/rebroadcast/): a QUIC connection writes it only when no first
   * send waits on it (src/egress/quic/connection-worker.ts). Absent on records from the ring.
   */
  readonly rebroadcast?: boolean;
}

export interface EgressRoute {
  /** ROUTE_IDS value: the bit in REC_ROUTE_MASK and the counter row. */
  readonly id: number;
  readonly name: RouteName;
  /** Send one transaction. Must not throw; a failure is the `failed` outcome (and is logged by the route). */
  send(tx: TxView): Promise<EgressOutcome> | EgressOutcome;
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

