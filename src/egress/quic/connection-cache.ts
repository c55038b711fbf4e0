// The connection cache (QUIC thread; get() is HOT, maintenance is a cold timer): one ConnectionWorker per TPU
// address ("ip:port"), shared by the direct and static routes of the process (Agave tpu-client-next workers_cache.rs).
// - get(target) returns the worker, creating (connecting) it on a miss. The scheduler pre-warms the next leaders
//   through the same call, so a transaction's path normally finds an active connection.
// - At most maxConnections workers. A new one evicts the least recently used worker that is neither pinned (static
//   peers) nor used within evictionGraceMs; the evicted worker gets evictionGraceMs to write what it has queued
//   (state `closing`). When every worker is busy, get() answers null (the route counts dropped:no_connection).
// - Every MAINTENANCE_MS, workers unused for idleCloseMs (a Firedancer leader's: 3x that) that are neither pinned nor
//   pre-warmed are closed.
// - report() returns every connection's measurements (handshake ms, send latency p50/p99/max, counts): the function
//   telemetry reads (see docs/configuration.md "Egress connection reports").
// - setIdentity() switches the client certificate: every open connection is retired (closing, evictionGraceMs to
//   write what it queued) and pinned / pre-warmed targets are reopened at once with the new identity.
import type { Logger } from '../../log/logger.js';
import type { CongestionControl, IdentityCertificate } from '../../quic/index.js';
import { ConnectionWorker, type ConnectionReport } from './connection-worker.js';
import { CACHE_EVENTS, CONNECTION_STATES, LEADER_KINDS, QUIC_COUNTER, type LeaderKind } from '../../shm/layout.js';

const STATE_INDEX: Readonly<Record<string, number>> = Object.freeze(Object.fromEntries(CONNECTION_STATES.map((s, i) => [s, i])));

/** Idle close waits this many times idleCloseMs for a connection to a Firedancer leader (see maintain). */
export const FIREDANCER_IDLE_FACTOR = 3;
const KIND_INDEX: Readonly<Record<LeaderKind, number>> = Object.freeze(
  Object.fromEntries(LEADER_KINDS.map((k, i) => [k, i])) as Record<LeaderKind, number>,
);

/** How often idle connections are looked for (ms). */
const MAINTENANCE_MS = 1_000;

export interface ConnectionCacheOptions {
  readonly identity: IdentityCertificate;
  readonly maxConnections: number;
  readonly evictionGraceMs: number;
  readonly idleCloseMs: number;
  readonly maxIdleTimeoutMs: number;
  readonly keepAliveMs: number;
  readonly connectTimeoutMs: number;
  readonly retryMinMs: number;
  readonly retryMaxMs: number;
  readonly maxQueuedPerConnection: number;
  /** First sends' bound per connection (./connection-worker.ts maxQueuedFirstSends); default maxQueuedPerConnection. */
  readonly maxQueuedFirstSends?: number;
  /** A transaction queued on a connection longer than this ends as dropped:stale. */
  /** routes.direct.staleAfterMs, or a function of the measured slot time (./connection-worker.ts). */
  readonly staleAfterMs: number | (() => number);
  /** Largest transaction a connection writes (transactions.maxTransactionBytes). */
  readonly maxTransactionBytes?: number;
  readonly congestionControl?: CongestionControl;
  readonly log: Logger;
  /** Bench hook: every send latency sample (us) of every connection. */
  readonly onSendLatency?: (us: number) => void;
}

export interface CacheCounters {
  created: number;
  evicted: number;
  idleClosed: number;
  refusedFull: number;
  /** Connections closed because the relay identity changed. */
  identityCycled: number;
}

export class ConnectionCache {
  private readonly workers = new Map<string, ConnectionWorker>();
  private readonly closing = new Set<Promise<void>>();
  private readonly pinned = new Set<string>();
  /** Targets the scheduler wants warm right now (replaced on every leader-window change). */
  private warm = new Set<string>();
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  private identity: IdentityCertificate;
  /** Labels of pinned targets (reopened with the same label after an identity change). */
  private readonly labels = new Map<string, string | undefined>();
  readonly counters: CacheCounters = { created: 0, evicted: 0, idleClosed: 0, refusedFull: 0, identityCycled: 0 };

  constructor(private readonly o: ConnectionCacheOptions) {
    this.identity = o.identity;
    this.timer = setInterval(this.maintain, MAINTENANCE_MS);
    this.timer.unref();
  }

  get size(): number {
    return this.workers.size;
  }

  /** Hot: the worker for "ip:port" (created on a miss), or null when the cache is full of busy connections. */
  get(target: string, label?: string): ConnectionWorker | null {
    const w = this.workers.get(target);
    if (w !== undefined && w.state !== 'closed' && w.state !== 'closing') return w;
    if (this.closed) return null;
    return this.create(target, label);
  }

  /** A target that is never evicted nor idle-closed (static peers). */
  pin(target: string, label?: string): ConnectionWorker | null {
    if (!this.pinned.has(target)) {
      this.pinned.add(target);
      this.labels.set(target, label);
    }
    return this.get(target, label);
  }

  /**
   * Cold: new client certificate. Open connections are retired (evictionGraceMs to write their queue) and the
   * pinned and pre-warmed targets reconnect at once with the new identity. Returns how many were retired.
   */
  setIdentity(identity: IdentityCertificate): number {
    this.identity = identity;
    if (this.closed) return 0;
    const old = [...this.workers.values()];
    for (const w of old) this.retire(w, this.o.evictionGraceMs);
    this.counters.identityCycled += old.length;
    const labelOf = new Map(old.map((w) => [w.target, w.label] as const));
    for (const t of new Set([...this.pinned, ...this.warm])) this.get(t, this.labels.get(t) ?? labelOf.get(t));
    return old.length;
  }

  /** Pre-warm: open (or keep) connections to these targets; they are exempt from idle close until replaced. */
  prewarm(targets: readonly { target: string; label?: string }[]): void {
    const next = new Set<string>();
    for (const t of targets) {
      next.add(t.target);
      const w = this.get(t.target, t.label);
      w?.touch();
    }
    this.warm = next;
  }

  /**
   * Writes connections per state, queued transactions and the cache's events into the quic-egress thread's counter region
   * (src/shm/layout.ts QUIC_COUNTER; the front renders them as slotrelay_quic_*). Cold: once a second.
   */
  writeGauges(region: Float64Array): void {
    for (let i = 0; i < CONNECTION_STATES.length; i++) region[QUIC_COUNTER.stateBase + i] = 0;
    let queued = 0;
    for (const w of this.workers.values()) {
      region[QUIC_COUNTER.stateBase + STATE_INDEX[w.state]]++;
      queued += w.queued;
    }
    region[QUIC_COUNTER.stateBase + STATE_INDEX.closing] += this.closing.size;
    region[QUIC_COUNTER.queued] = queued;
    const c = this.counters;
    const events = [c.created, c.evicted, c.idleClosed, c.refusedFull, c.identityCycled];
    for (let i = 0; i < CACHE_EVENTS.length; i++) region[QUIC_COUNTER.eventBase + i] = events[i];
    for (let i = 0; i < LEADER_KINDS.length; i++) region[QUIC_COUNTER.kindBase + i] = 0;
    for (const w of this.workers.values()) if (w.state !== 'closed') region[QUIC_COUNTER.kindBase + KIND_INDEX[w.leaderKind]]++;
  }

  report(): ConnectionReport[] {
    return [...this.workers.values()].map((w) => w.report());
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    const all = [...this.workers.values()].map((w) => w.close(0));
    this.workers.clear();
    await Promise.all([...all, ...this.closing]);
  }

  // ---- cold ----

  private create(target: string, label?: string): ConnectionWorker | null {
    if (this.workers.size >= this.o.maxConnections && !this.evictOne()) {
      this.counters.refusedFull++;
      return null;
    }
    const colon = target.lastIndexOf(':');
    let host = target.slice(0, colon);
    if (host.startsWith('[')) host = host.slice(1, -1);
    const w = new ConnectionWorker({
      host,
      port: Number(target.slice(colon + 1)),
      label,
      identity: this.identity,
      maxIdleTimeoutMs: this.o.maxIdleTimeoutMs,
      keepAliveMs: this.o.keepAliveMs,
      connectTimeoutMs: this.o.connectTimeoutMs,
      retryMinMs: this.o.retryMinMs,
      retryMaxMs: this.o.retryMaxMs,
      maxQueued: this.o.maxQueuedPerConnection,
      maxQueuedFirstSends: this.o.maxQueuedFirstSends,
      staleAfterMs: this.o.staleAfterMs,
      maxTransactionBytes: this.o.maxTransactionBytes,
      congestionControl: this.o.congestionControl,
      log: this.o.log,
      onSendLatency: this.o.onSendLatency,
    });
    this.workers.set(target, w);
    this.counters.created++;
    return w;
  }

  /** Evict the least recently used worker outside its grace period; false when there is none. */
  private evictOne(): boolean {
    const now = Date.now();
    let victim: ConnectionWorker | null = null;
    for (const w of this.workers.values()) {
      if (this.pinned.has(w.target) || this.warm.has(w.target)) continue;
      if (now - w.lastUsedMs < this.o.evictionGraceMs) continue;
      if (victim === null || w.lastUsedMs < victim.lastUsedMs) victim = w;
    }
    if (victim === null) return false;
    this.retire(victim, this.o.evictionGraceMs);
    this.counters.evicted++;
    return true;
  }

  private retire(w: ConnectionWorker, graceMs: number): void {
    this.workers.delete(w.target);
    const p = w.close(graceMs);
    this.closing.add(p);
    void p.then(() => this.closing.delete(p));
  }

  private readonly maintain = (): void => {
    const now = Date.now();
    for (const w of [...this.workers.values()]) {
      if (w.state === 'closed') {
        this.workers.delete(w.target);
        continue;
      }
      if (this.pinned.has(w.target) || this.warm.has(w.target)) continue;
      // A Firedancer leader charges a Retry round trip (and takes no 0-RTT) for every new connection: keep its
      // connection FIREDANCER_IDLE_FACTOR times longer (the client's keep-alive, half the 10 s idle, holds it open).
      const idleMs = w.leaderKind === 'firedancer' ? this.o.idleCloseMs * FIREDANCER_IDLE_FACTOR : this.o.idleCloseMs;
      if (now - w.lastUsedMs >= idleMs) {
        this.retire(w, this.o.evictionGraceMs);
        this.counters.idleClosed++;
      }
    }
  };
}
