// The QUIC routes' view of their connections (types only; QUIC thread 0, HOT: once per target per transaction). With
// one QUIC thread it is the thread's ConnectionCache itself; with rings.quicThreads > 1 a ShardedConnections
// (./sharded-connections.ts). A target's sender is its ConnectionWorker, or the link to the thread that owns it.
import type { TargetOutcome } from './connection-worker.js';

/** One target's connection as the fanout uses it (a ConnectionWorker, or a target another thread owns). */
export interface TargetSender {
  /**
   * Hot: one transaction; `tx` may be reused by the caller once this returns. `background`: a rebroadcast, written
   * after the first sends waiting on the same connection.
   */
  send(tx: Uint8Array, background?: boolean): TargetOutcome | Promise<TargetOutcome>;
  /** Settles when the first connect attempt ended (start-up readiness); true when established. */
  readonly firstAttempt: Promise<boolean>;
  /**
   * Why its last answer other than `sent` was given (CAUSE, src/shm/receipts-layout.ts) and the number with it; a
   * target another QUIC thread owns does not say (absent: unknown). Read by the fanout right after the answer it goes
   * with (one connection's state, not a per-transaction value) and returned in the route's answer (./fanout.ts).
   */
  readonly cause?: number;
  readonly causeCode?: number;
}

export interface Connections {
  /** Hot: the sender for "ip:port", or null when no connection can be had (the cache is full of busy ones). */
  get(target: string, label?: string): TargetSender | null;
  /** A target never evicted nor idle-closed (static peers). */
  pin(target: string, label?: string): TargetSender | null;
  /** Connections to open now and keep (the next leaders). */
  prewarm(targets: readonly { target: string; label?: string }[]): void;
}
