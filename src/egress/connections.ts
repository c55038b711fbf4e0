// The QUIC routes' view of their connections (QUIC thread 0; get() is HOT, once per target per transaction). With one
// QUIC thread it is the thread's ConnectionCache itself. With rings.quicThreads = N > 1 it is a ShardedConnections:
// each target belongs to one thread (./shard-owner.ts); thread 0's own targets come from its cache, the others'
// through the link to their owner (./quic-link.ts), so the routes, the fanout and the accounting stay in one place
// and each leader still has exactly one connection in the process.
import type { TargetOutcome } from './connection-worker.js';
import type { ConnectionCache } from './connection-cache.js';
import type { QuicLinkEnd } from './quic-link.js';
import { quicThreadOf } from './shard-owner.js';

/** One target's connection as the fanout uses it (a ConnectionWorker, or a target another thread owns). */
export interface TargetSender {
  /** Hot: one transaction; `tx` may be reused by the caller once this returns. */
  send(tx: Uint8Array): TargetOutcome | Promise<TargetOutcome>;
  /** Settles when the first connect attempt ended (start-up readiness); true when established. */
  readonly firstAttempt: Promise<boolean>;
}

export interface Connections {
  /** Hot: the sender for "ip:port", or null when no connection can be had (the cache is full of busy ones). */
  get(target: string, label?: string): TargetSender | null;
  /** A target never evicted nor idle-closed (static peers). */
  pin(target: string, label?: string): TargetSender | null;
  /** Connections to open now and keep (the next leaders). */
  prewarm(targets: readonly { target: string; label?: string }[]): void;
}

export class ShardedConnections implements Connections {
  /** Owner per target, computed once per target (a leader set changes once per window). */
  private readonly owners = new Map<string, number>();

  constructor(
    private readonly local: ConnectionCache,
    /** Links to threads 1..N-1 (index k - 1 for thread k). */
    private readonly links: readonly QuicLinkEnd[],
  ) {}

  private ownerOf(target: string): number {
    let o = this.owners.get(target);
    if (o === undefined) {
      o = quicThreadOf(target, this.links.length + 1);
      this.owners.set(target, o);
    }
    return o;
  }

  get(target: string, label?: string): TargetSender | null {
    const o = this.ownerOf(target);
    return o === 0 ? this.local.get(target, label) : this.links[o - 1].target(target, label);
  }

  /** Thread 0 pins its own static peers; every other thread pins its own at its start (./quic-link-owner.ts). */
  pin(target: string, label?: string): TargetSender | null {
    const o = this.ownerOf(target);
    return o === 0 ? this.local.pin(target, label) : this.links[o - 1].target(target, label);
  }

  /** Each thread gets its part of the set (an empty part too: it lets go of the previous window's leaders). */
  prewarm(targets: readonly { target: string; label?: string }[]): void {
    const parts: { target: string; label?: string }[][] = [[], ...this.links.map(() => [])];
    for (const t of targets) parts[this.ownerOf(t.target)].push(t);
    this.local.prewarm(parts[0]);
    for (let k = 0; k < this.links.length; k++) this.links[k].prewarm(parts[k + 1]);
  }
}
