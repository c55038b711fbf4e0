// One QUIC connection to one validator TPU (or static peer) as an explicit state machine (QUIC thread; HOT: send()
// runs per transaction and target). Modelled on Agave tpu-client-next connection_worker.rs:
//
//   connecting --established--> active --peer/idle close--> retrying --backoff--> connecting
//   connecting --failed (timeout, refused, TLS)--> retrying (backoff doubles: retryMinMs .. retryMaxMs)
//   any --close(grace) (evicted, idle, shutdown)--> closing --queue drained or grace over--> closed
//
// send() never waits for a handshake it could avoid (the scheduler pre-warms), never spins and never drops silently:
//   active + stream credit      -> 'sent' synchronously (the datagram is already with the kernel)
//   connecting or no credit     -> queued inside the QUIC connection (copied); the promise answers 'sent' when the
//                                  stream is written, 'dropped:stale' when it waited staleAfterMs without credit or
//                                  room (a parked or silent peer), or 'dropped:no_connection' if the connection ends
//   queue full                  -> 'dropped:queue_full'
//   empty / too large           -> 'failed' (the transaction is refused, never queued)
//   retrying / closing / closed -> 'dropped:no_connection' at once (other targets are not held up)
// Waiters: the connection's queue is FIFO and each queued transaction leaves it once, from the head (written, write
// failed, stale) or at close (unsent), so one waiter is pushed per queued transaction, in the same order, and answered
// positionally. Transactions given before the socket exists keep their own resolver until they reach the queue.
// Per connection it measures the handshake time and each transaction's send latency (streamSend -> datagram handed
// to the kernel), read by report().
import hdr from 'hdr-histogram-js';
import { PACKET_DATA_SIZE, QuicClientConnection, type CongestionControl, type IdentityCertificate, type QuicCloseInfo } from '../quic/index.js';
import type { Logger } from '../log/logger.js';

import { CONNECTION_STATES } from '../shm/layout.js';

export { CONNECTION_STATES };
export type ConnectionState = (typeof CONNECTION_STATES)[number];

/** What one target did with one transaction (a subset of EGRESS_OUTCOMES). */
export type TargetOutcome = 'sent' | 'failed' | 'dropped:no_connection' | 'dropped:queue_full' | 'dropped:stale';

/**
 * After a transaction went stale, the peer gets a PING; no datagram back within this long means it is gone (a peer
 * process killed without closing: QUIC would otherwise wait for the 60 s idle timeout, and every transaction for it
 * would go stale until then). 1 s is many RTTs even across regions, and a parked but live peer still ACKs.
 */
const LIVENESS_TIMEOUT_MS = 1_000;

/** At most one "transactions went stale" warning per connection per this interval (ms); the rest are counted. */
const STALE_LOG_INTERVAL_MS = 1_000;

export interface ConnectionWorkerOptions {
  readonly host: string;
  readonly port: number;
  /** Validator identity when known (logs/reports only). */
  readonly label?: string;
  readonly identity: IdentityCertificate;
  readonly maxIdleTimeoutMs: number;
  readonly keepAliveMs: number;
  readonly connectTimeoutMs: number;
  readonly retryMinMs: number;
  readonly retryMaxMs: number;
  readonly maxQueued: number;
  /** A queued transaction not written within this long ends as dropped:stale (routes.direct.staleAfterMs). */
  readonly staleAfterMs: number;
  /** Largest transaction written (transactions.maxTransactionBytes); larger ones answer `failed`. Default 1232. */
  readonly maxTransactionBytes?: number;
  /** quiche congestion control (routes.direct.congestionControl); default cubic. */
  readonly congestionControl?: CongestionControl;
  readonly log: Logger;
  /** Test/bench hook: every send latency sample, microseconds. */
  readonly onSendLatency?: (us: number) => void;
}

/** Per-connection measurements, published for telemetry (see ConnectionCache.report()). */
export interface ConnectionReport {
  readonly target: string;
  readonly label: string | null;
  readonly state: ConnectionState;
  /** Handshake time of the current/last connection (ms, NaN before the first). */
  readonly handshakeMs: number;
  readonly connects: number;
  readonly connectFailures: number;
  readonly sent: number;
  readonly queued: number;
  readonly droppedNoConnection: number;
  readonly droppedQueueFull: number;
  readonly droppedStale: number;
  readonly failed: number;
  readonly sendLatencyCount: number;
  readonly sendLatencyP50Us: number;
  readonly sendLatencyP99Us: number;
  readonly sendLatencyMaxUs: number;
  readonly lastUsedMs: number;
}

type Resolve = (o: TargetOutcome) => void;

/** A transaction given before the socket existed, with its own waiter. */
interface PreOpen {
  readonly tx: Uint8Array;
  readonly resolve: Resolve;
}

export class ConnectionWorker {
  private st: ConnectionState = 'connecting';
  private conn: QuicClientConnection | null = null;
  /** Transactions given while the socket is still being opened (copied), moved into the connection on open. */
  private preOpen: PreOpen[] = [];
  /** FIFO of callers waiting for a queued transaction, in the connection's queue order. */
  private waiters: Resolve[] = [];
  private waitHead = 0;
  private readonly maxTxBytes: number;
  private backoffMs: number;
  private retryTimer: NodeJS.Timeout | null = null;
  private graceTimer: NodeJS.Timeout | null = null;
  private handshakeMs = NaN;
  private connects = 0;
  private connectFailures = 0;
  private sent = 0;
  private droppedNoConnection = 0;
  private droppedQueueFull = 0;
  private droppedStale = 0;
  private failed = 0;
  private staleLogAtMs = -Infinity;
  /** A liveness check in flight (PING sent after a stale drop), or null. */
  private livenessTimer: NodeJS.Timeout | null = null;
  private staleUnlogged = 0;
  private readonly latency = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 2 });
  /** Date.now() of the last send() (LRU and idle decisions). */
  lastUsedMs = Date.now();
  readonly target: string;
  /** Validator identity when known (logs/reports). */
  get label(): string | undefined {
    return this.o.label;
  }

  constructor(private readonly o: ConnectionWorkerOptions) {
    this.target = `${o.host}:${o.port}`;
    this.maxTxBytes = o.maxTransactionBytes ?? PACKET_DATA_SIZE;
    this.backoffMs = o.retryMinMs;
    this.connect();
  }

  get state(): ConnectionState {
    return this.st;
  }

  /** Transactions waiting on this connection now (its queue, and those given before the socket existed). */
  get queued(): number {
    return (this.conn?.queued ?? 0) + this.preOpen.length;
  }

  /** Hot: one transaction to this target. `tx` may be reused by the caller as soon as this returns. */
  send(tx: Uint8Array): TargetOutcome | Promise<TargetOutcome> {
    this.lastUsedMs = Date.now();
    const st = this.st;
    if (tx.length === 0 || tx.length > this.maxTxBytes) {
      this.failed++;
      return 'failed';
    }
    if (st === 'active' || (st === 'connecting' && this.conn !== null)) {
      const c = this.conn!;
      const r = c.trySendTransaction(tx);
      if (r === true) {
        this.sent++;
        return 'sent';
      }
      if (r === 'no-credit') return this.waitFor();
      if (c.queued >= this.o.maxQueued) {
        this.droppedQueueFull++;
        return 'dropped:queue_full';
      }
      this.failed++;
      return 'failed';
    }
    if (st === 'connecting') {
      if (this.preOpen.length >= this.o.maxQueued) {
        this.droppedQueueFull++;
        return 'dropped:queue_full';
      }
      const copy = new Uint8Array(tx);
      return new Promise<TargetOutcome>((resolve) => this.preOpen.push({ tx: copy, resolve }));
    }
    this.droppedNoConnection++;
    return 'dropped:no_connection';
  }

  /** Pre-warm: make sure a connection is (being) opened; a retrying worker keeps its backoff. */
  touch(): void {
    if (this.st === 'closed') return;
    this.lastUsedMs = Date.now();
  }

  /**
   * Closing: stop taking transactions; let the queued ones be written for up to `graceMs`, then close.
   * Resolves when closed.
   */
  close(graceMs: number): Promise<void> {
    if (this.st === 'closed') return Promise.resolve();
    const c = this.conn;
    const wasRetrying = this.st === 'retrying';
    this.st = 'closing';
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (c === null || wasRetrying) {
      this.toClosed();
      return Promise.resolve();
    }
    if (c.queued === 0 || graceMs <= 0) c.close(0, 'closing');
    else this.graceTimer = setTimeout(() => c.close(0, 'eviction grace over'), graceMs);
    return c.closed.then(() => undefined);
  }

  report(): ConnectionReport {
    const h = this.latency;
    const n = h.totalCount;
    return {
      target: this.target,
      label: this.o.label ?? null,
      state: this.st,
      handshakeMs: this.handshakeMs,
      connects: this.connects,
      connectFailures: this.connectFailures,
      sent: this.sent,
      queued: (this.conn?.queued ?? 0) + this.preOpen.length,
      droppedNoConnection: this.droppedNoConnection,
      droppedQueueFull: this.droppedQueueFull,
      droppedStale: this.droppedStale,
      failed: this.failed,
      sendLatencyCount: n,
      sendLatencyP50Us: n === 0 ? 0 : h.getValueAtPercentile(50),
      sendLatencyP99Us: n === 0 ? 0 : h.getValueAtPercentile(99),
      sendLatencyMaxUs: n === 0 ? 0 : h.maxValue,
      lastUsedMs: this.lastUsedMs,
    };
  }

  // ---- transitions (cold) ----

  private connect(): void {
    this.st = 'connecting';
    this.connects++;
    QuicClientConnection.open({
      host: this.o.host,
      port: this.o.port,
      identity: this.o.identity,
      maxIdleTimeoutMs: this.o.maxIdleTimeoutMs,
      keepAliveMs: this.o.keepAliveMs,
      connectTimeoutMs: this.o.connectTimeoutMs,
      maxQueuedTransactions: this.o.maxQueued,
      maxTransactionBytes: this.maxTxBytes,
      maxQueueWaitMs: this.o.staleAfterMs,
      congestionControl: this.o.congestionControl,
      onSendLatency: this.onLatency,
      onQueuedSent: this.onQueuedSent,
      onWriteFailed: this.onWriteFailed,
      onStale: this.onStale,
      onDrain: this.onDrain,
      onClose: this.onClose,
    }).then(
      (c) => {
        if (this.st === 'closing' || this.st === 'closed') {
          // closed while the socket was opening: release it, answer what was waiting
          this.conn = c;
          c.close(0, 'closing');
          return;
        }
        this.conn = c;
        const pending = this.preOpen;
        this.preOpen = [];
        // Not established yet, so each one is queued (its waiter joins the FIFO in queue order) or refused (it is
        // answered itself: the only refusal left after send()'s size check is a full queue).
        for (const p of pending) {
          const r = c.trySendTransaction(p.tx);
          if (r === 'no-credit') this.waiters.push(p.resolve);
          else this.answer(p.resolve, r === true ? 'sent' : c.queued >= this.o.maxQueued ? 'dropped:queue_full' : 'failed');
        }
        c.established.then(() => {
          if (this.conn !== c || this.st !== 'connecting') return;
          this.st = 'active';
          this.handshakeMs = c.stats().handshakeMs;
          this.backoffMs = this.o.retryMinMs;
          this.o.log.debug({ target: this.target, validator: this.o.label, handshakeMs: this.handshakeMs }, 'egress: connection active');
        }, () => undefined);
      },
      (err: unknown) => {
        // socket could not even be opened (bad address): treat as a failed connect
        this.o.log.warn({ target: this.target, err: err instanceof Error ? err.message : String(err) }, 'egress: connection open failed');
        this.failedConnect();
      },
    );
  }

  private readonly onClose = (info: QuicCloseInfo, unsent: Uint8Array[]): void => {
    if (this.graceTimer !== null) clearTimeout(this.graceTimer);
    this.graceTimer = null;
    // Every queued transaction still has its waiter: none of them was written.
    const left = this.waiters.length - this.waitHead;
    for (let i = 0; i < left; i++) this.resolveNext('dropped:no_connection');
    if (unsent.length > 0 || left > 0) {
      this.o.log.warn({ target: this.target, validator: this.o.label, unsent: left, by: info.by, code: info.code, reason: info.reason }, 'egress: connection ended with transactions unsent (dropped:no_connection)');
    }
    if (this.st === 'closing' || this.st === 'closed') {
      this.toClosed();
      return;
    }
    this.conn = null;
    if (info.wasEstablished) {
      this.o.log.info({ target: this.target, validator: this.o.label, by: info.by, code: info.code, reason: info.reason }, 'egress: connection closed; reconnecting');
      this.backoffMs = this.o.retryMinMs;
      this.toRetrying();
    } else {
      this.o.log.warn({ target: this.target, validator: this.o.label, by: info.by, code: info.code, reason: info.reason, retryInMs: this.backoffMs }, 'egress: connect failed; retrying with backoff');
      this.failedConnect();
    }
  };

  private failedConnect(): void {
    this.connectFailures++;
    this.conn = null;
    this.answerPreOpen('dropped:no_connection');
    if (this.st === 'closing' || this.st === 'closed') {
      this.toClosed();
      return;
    }
    this.toRetrying();
    this.backoffMs = Math.min(this.o.retryMaxMs, this.backoffMs * 2);
  }

  private toRetrying(): void {
    this.st = 'retrying';
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.st === 'retrying') this.connect();
    }, this.backoffMs);
  }

  private toClosed(): void {
    this.st = 'closed';
    this.conn = null;
    this.answerPreOpen('dropped:no_connection');
  }

  private answerPreOpen(o: TargetOutcome): void {
    const pending = this.preOpen;
    this.preOpen = [];
    for (const p of pending) this.answer(p.resolve, o);
  }

  // ---- waiters (hot when queueing) ----

  private waitFor(): Promise<TargetOutcome> {
    return new Promise<TargetOutcome>((resolve) => this.waiters.push(resolve));
  }

  /** Answers the oldest waiter: the connection's queue head just left the queue with outcome `o`. */
  private resolveNext(o: TargetOutcome): void {
    if (this.waitHead >= this.waiters.length) return;
    const r = this.waiters[this.waitHead++];
    if (this.waitHead === this.waiters.length) {
      this.waiters = [];
      this.waitHead = 0;
    } else if (this.waitHead > 1024) {
      this.waiters = this.waiters.slice(this.waitHead);
      this.waitHead = 0;
    }
    this.answer(r, o);
  }

  private answer(r: Resolve, o: TargetOutcome): void {
    if (o === 'sent') this.sent++;
    else if (o === 'dropped:no_connection') this.droppedNoConnection++;
    else if (o === 'dropped:queue_full') this.droppedQueueFull++;
    else if (o === 'dropped:stale') this.droppedStale++;
    else this.failed++;
    r(o);
  }

  private readonly onLatency = (us: number): void => {
    this.latency.recordValue(us < 1 ? 1 : Math.round(us));
    if (this.o.onSendLatency !== undefined) this.o.onSendLatency(us);
  };

  /** A write from the queue (ACK/credit came back): it is the oldest waiter's transaction. */
  private readonly onQueuedSent = (): void => {
    this.resolveNext('sent');
  };

  private readonly onWriteFailed = (): void => {
    this.resolveNext('failed');
  };

  /** The queue head waited staleAfterMs without credit or room (a parked or silent peer). */
  private readonly onStale = (_tx: Uint8Array, waitedMs: number): void => {
    this.resolveNext('dropped:stale');
    this.checkLiveness();
    const now = Date.now();
    if (now - this.staleLogAtMs < STALE_LOG_INTERVAL_MS) {
      this.staleUnlogged++;
      return;
    }
    const c = this.conn;
    this.o.log.warn(
      {
        target: this.target,
        validator: this.o.label,
        outcome: 'dropped:stale',
        waitedMs: Math.round(waitedMs),
        staleSinceLast: this.staleUnlogged,
        staleTotal: this.droppedStale,
        queued: c?.queued ?? 0,
        peerStreamsLeft: c !== null && c.currentState === 'established' ? c.peerStreamsLeft() : null,
      },
      'egress: queued transactions waited too long for stream credit / congestion room (dropped:stale)',
    );
    this.staleLogAtMs = now;
    this.staleUnlogged = 0;
  };

  /** Is the peer still there? PING it; if nothing at all comes back in LIVENESS_TIMEOUT_MS, reconnect. */
  private checkLiveness(): void {
    const c = this.conn;
    if (c === null || this.st !== 'active' || this.livenessTimer !== null) return;
    const before = c.received;
    c.ping();
    this.livenessTimer = setTimeout(() => {
      this.livenessTimer = null;
      if (this.conn !== c || this.st !== 'active' || c.received !== before) return;
      this.o.log.warn({ target: this.target, validator: this.o.label, waitedMs: LIVENESS_TIMEOUT_MS }, 'egress: peer does not answer a PING: closing the connection to reconnect');
      c.close(0, 'peer unresponsive');
    }, LIVENESS_TIMEOUT_MS);
    this.livenessTimer.unref();
  }

  private readonly onDrain = (): void => {
    if (this.st === 'closing' && this.conn !== null && this.conn.queued === 0) this.conn.close(0, 'closing');
  };
}
