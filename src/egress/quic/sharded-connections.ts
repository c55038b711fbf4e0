// The QUIC routes' connections with rings.quicThreads = N > 1 (QUIC thread 0; get() is HOT, once per target per
// transaction): each target belongs to one thread (./shard-owner.ts); thread 0's own targets come from its cache, the
// others' through the link to their owner (./quic-link.ts), so the routes, the fanout and the accounting stay in one
// place and each leader still has exactly one connection in the process.
import type { ConnectionCache } from './connection-cache.js';
import type { Connections, TargetSender } from './connections.js';
import type { QuicLinkEnd } from './quic-link.js';
import { quicThreadOf } from './shard-owner.js';

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
