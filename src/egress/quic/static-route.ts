// The static route (QUIC thread, HOT): every transaction goes over QUIC to each configured peer
// (routes.static.peers, "ip:port"), like Jet's extra fanout to fixed validators or relays. Peers are pinned in the
// worker's shared connection cache (never evicted nor idle-closed; reconnected with backoff when they drop).
// With routes.static.everyTransaction the consumer loop adds this route to every record whose key allows it.
// Outcome: `sent` when at least one peer's connection wrote it; otherwise the most telling failure
// (failed > dropped:queue_full > dropped:stale > dropped:no_connection); dropped:shutdown after close(). Per-peer
// counts and latencies are in the connection reports.
import type { Config } from '../../config/schema.js';
import { ROUTE_IDS } from '../../shm/layout.js';
import type { TargetSender } from './connections.js';
import { fanout, shutdownAware } from './fanout.js';
import type { QuicEgress } from './quic-egress.js';
import { ownAnswer, sendResult, type EgressRoute, type MutableSendResult, type RouteAnswer, type TxView } from '../contract/route.js';

export class StaticRoute implements EgressRoute {
  readonly id = ROUTE_IDS.static;
  readonly name = 'static' as const;
  private readonly workers: (TargetSender | null)[] = [];
  /** close() began: late failures count as dropped:shutdown. */
  closed = false;
  /** The cache's name for each peer's pinned connection, built once (send() is hot). */
  private readonly labels: readonly string[];

  /** The synchronous answer, reused (send() is hot; the caller reads it before the next send). Not leader-based. */
  private readonly result: MutableSendResult = { ...sendResult('sent') };

  constructor(
    private readonly quic: QuicEgress,
    private readonly peers: readonly string[],
  ) {
    this.labels = peers.map((p) => `static:${p}`);
    // Connect at once: the first transaction should not pay for the handshake.
    void quic.ready.then(() => {
      for (let i = 0; i < peers.length; i++) quic.connections?.pin(peers[i], this.labels[i]);
    }, () => undefined);
  }

  /** Ready once the connection cache exists and each peer's first connect attempt ended (established or failed). */
  async warm(): Promise<void> {
    await this.quic.ready.catch(() => null);
    const cache = this.quic.connections;
    if (cache === null) return;
    // A peer another QUIC thread owns answers at once here: that thread pins it at its start and reports ready then.
    await Promise.all(this.peers.map((p, i) => cache.pin(p, this.labels[i])?.firstAttempt));
  }

  /** Static peers from config: normalised "ip:port" strings (validated by the schema). */
  static peersOf(config: Readonly<Config>): readonly string[] {
    return config.routes.static.peers;
  }

  send(tx: TxView): RouteAnswer | Promise<RouteAnswer> {
    if (this.closed) return 'dropped:shutdown';
    const cache = this.quic.connections;
    if (cache === null) return this.quic.ready.then(() => ownAnswer(this.send(tx)), () => 'failed' as const);
    const out = this.result;
    out.targets = this.peers.length; // for the landing receipt
    const ws = this.workers;
    ws.length = this.peers.length;
    for (let i = 0; i < this.peers.length; i++) ws[i] = cache.pin(this.peers[i], this.labels[i]);
    return shutdownAware(fanout(ws, tx.bytes, out, tx.rebroadcast === true), this);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.quic.close();
  }
}
