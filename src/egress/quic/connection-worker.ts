// One QUIC connection to one validator TPU (or static peer) as an explicit state machine (QUIC thread; HOT: send()
// runs per transaction and target). Modelled on Agave tpu-client-next connection_worker.rs:
//
//   connecting --established--> active --peer/idle close--> retrying --backoff--> connecting
//   connecting --failed (timeout, refused, TLS)--> retrying (backoff doubles: retryMinMs .. retryMaxMs)
//   any --close(grace) (evicted, idle, shutdown)--> closing --queue drained or grace over--> closed
//   (option reconnect: false: a close or a failed connect goes straight to closed instead of retrying)
//
// send() never waits for a handshake it could avoid (the scheduler pre-warms), never spins and never drops silently:
//   active + stream credit      -> 'sent' synchronously (the datagram is already with the kernel)
//   connecting or no credit     -> queued in THIS worker's one bounded queue (copied); the promise answers 'sent' when
//                                  the stream is written, 'dropped:stale' when it waited staleAfterMs without credit
//                                  or room (a parked or silent peer), or 'dropped:no_connection' if the connection ends
//   queue full                  -> 'dropped:queue_full'
//   empty / too large           -> 'failed' (the transaction is refused, never queued)
//   retrying / closing / closed -> 'dropped:no_connection' at once (other targets are not held up)
// The worker owns the queue (Agave tpu-client-next: the connection worker owns its bounded channel); the QUIC
// connection is transport only: tryWrite() answers written / no-credit / no-room / failed and onWritable / onClose say
// when to try again or give up (src/quic/client-connection.ts). The queue is FIFO, one entry per waiting transaction
// with its deadline and its answer, from before the socket exists until it is written, stale or the connection ends.
// Per connection it measures the handshake time and each transaction's send latency (streamSend -> datagram handed
// to the kernel), read by report().
import hdr from 'hdr-histogram-js';
import {
  PACKET_DATA_SIZE,
  QuicClientConnection,
  type CongestionControl,
  type IdentityCertificate,
  type QuicClientStats,
  type QuicCloseInfo,
} from '../../quic/index.js';
import type { Logger } from '../../log/logger.js';

import { CONNECTION_STATES } from '../../shm/layout.js';
import { CAUSE } from '../../shm/receipts-layout.js';

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
  /**
   * Default true: a closed connection or failed connect is retried with backoff. false: it ends the worker (closed;
   * retryMinMs/retryMaxMs unused): for an owner that opens a new worker on its next send (the localnet's RPC
   * send-transaction-service) or a test whose one connection must not come back silently.
   */
  readonly reconnect?: boolean;
  readonly maxQueued: number;
  /**
   * A queued transaction not written within this long ends as dropped:stale (routes.direct.staleAfterMs, else a
   * function of the measured slot time: src/egress/contract/slot-timers.ts), read when the transaction is queued.
   */
  readonly staleAfterMs: number | (() => number);
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
  /** The open connection's current smoothed path RTT (ms, NaN while none is open): telemetry's live ping. */
  readonly pathRttMs: number;
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

export class ConnectionWorker {
  private st: ConnectionState = 'connecting';
  private conn: QuicClientConnection | null = null;
  // The one queue: FIFO arrays + head index, compacted when drained; deadlines never decrease along it (one wait limit).
  private qTx: Uint8Array[] = [];
  private qDeadline: number[] = [];
  private qResolve: Resolve[] = [];
  private qHead = 0;
  /** The stale deadline timer, armed for the queue head. */
  private staleTimer: NodeJS.Timeout | null = null;
  private staleTimerAt = Infinity;
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
  /**
   * Why this target's last answer other than `sent` was given (CAUSE of src/shm/receipts-layout.ts) and its number
   * (the peer's application close code for `refused`): the fanout reads it for the landing receipt when the
   * transaction was not sent anywhere. The cause of the last such answer, not of each: answers of one burst share it.
   */
  cause = 0;
  causeCode = 0;
  /** Why the last connection ended or connect failed (answers dropped:no_connection until the next one is up). */
  private endCause: number = CAUSE.closed;
  private endCode = 0;
  /** What stopped the last write: the peer's stream credit or the congestion window. */
  private blockedBy: 'no-credit' | 'no-room' = 'no-room';
  /**
   * Settles when the first connect attempt ended: true once the handshake completed, false when it failed or the
   * worker closed first (start-up readiness: StaticRoute.warm). Never rejects.
   */
  readonly firstAttempt: Promise<boolean>;
  private endFirstAttempt: ((established: boolean) => void) | null = null;
  readonly target: string;
  /** Validator identity when known (logs/reports). */
  get label(): string | undefined {
    return this.o.label;
  }

  constructor(private readonly o: ConnectionWorkerOptions) {
    this.target = `${o.host}:${o.port}`;
    this.maxTxBytes = o.maxTransactionBytes ?? PACKET_DATA_SIZE;
    this.backoffMs = o.retryMinMs;
    this.firstAttempt = new Promise<boolean>((resolve) => (this.endFirstAttempt = resolve));
    this.connect();
  }

  private firstAttemptEnded(established: boolean): void {
    this.endFirstAttempt?.(established);
    this.endFirstAttempt = null;
  }

  get state(): ConnectionState {
    return this.st;
  }

  /** Transactions waiting in this worker's queue now (handshake, stream credit, congestion room). */
  get queued(): number {
    return this.qTx.length - this.qHead;
  }

  /** Hot: one transaction to this target. `tx` may be reused by the caller as soon as this returns. */
  send(tx: Uint8Array): TargetOutcome | Promise<TargetOutcome> {
    this.lastUsedMs = Date.now();
    const st = this.st;
    if (tx.length === 0 || tx.length > this.maxTxBytes) {
      this.failed++;
      return 'failed';
    }
    if (st !== 'active' && st !== 'connecting') {
      this.droppedNoConnection++;
      this.cause = this.endCause;
      this.causeCode = this.endCode;
      return 'dropped:no_connection';
    }
    const c = this.conn;
    if (c !== null && this.qHead === this.qTx.length) {
      // Nothing waits before it: write now if the transport can.
      const r = c.tryWrite(tx);
      if (r === 'written') {
        this.sent++;
        return 'sent';
      }
      if (r === 'failed') {
        this.failed++;
        return 'failed';
      }
      this.blockedBy = r;
      // A transaction partly on the wire (window edge) must be the one offered next: it heads the queue, whatever the bound.
      if (c.partial) return this.enqueue(tx);
    }
    if (this.queued >= this.o.maxQueued) {
      this.droppedQueueFull++;
      this.cause = CAUSE.relay_queue_full;
      this.causeCode = 0;
      return 'dropped:queue_full';
    }
    return this.enqueue(tx);
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
    if (this.queued === 0 || graceMs <= 0) c.close(0, 'closing');
    else this.graceTimer = setTimeout(() => c.close(0, 'eviction grace over'), graceMs);
    return c.closed.then(() => undefined);
  }

  /** The current connection's transport counters (null while none is open). Cold: tests and benches. */
  transportStats(): QuicClientStats | null {
    return this.conn === null ? null : this.conn.stats();
  }

  report(): ConnectionReport {
    const h = this.latency;
    const n = h.totalCount;
    return {
      target: this.target,
      label: this.o.label ?? null,
      state: this.st,
      handshakeMs: this.handshakeMs,
      pathRttMs: this.st === 'active' && this.conn !== null ? this.conn.stats().rttMs : NaN,
      connects: this.connects,
      connectFailures: this.connectFailures,
      sent: this.sent,
      queued: this.queued,
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

  // ---- the queue (hot when a peer is slow) ----

  private staleMs(): number {
    const s = this.o.staleAfterMs;
    return typeof s === 'number' ? s : s();
  }

  private enqueue(tx: Uint8Array): Promise<TargetOutcome> {
    const deadline = performance.now() + this.staleMs();
    // new Uint8Array(x) always copies (the caller reuses its buffer).
    this.qTx.push(new Uint8Array(tx));
    this.qDeadline.push(deadline);
    const p = new Promise<TargetOutcome>((resolve) => this.qResolve.push(resolve));
    if (this.queued === 1) this.armStale();
    return p;
  }

  /** The transport may write again (established, an ACK or MAX_STREAMS arrived, a timer): write from the head. */
  private readonly onWritable = (): void => {
    this.drain();
  };

  private drain(): void {
    const c = this.conn;
    this.expireStale(performance.now());
    if (c === null) return;
    while (this.qHead < this.qTx.length) {
      const r = c.tryWrite(this.qTx[this.qHead]);
      if (r === 'no-credit' || r === 'no-room') {
        this.blockedBy = r;
        break;
      }
      // A write quiche refused outright (not a lack of room) must not block the queue: it is answered `failed`.
      this.shift(r === 'written' ? 'sent' : 'failed');
    }
    this.afterShift();
    if (this.st === 'closing' && this.queued === 0) c.close(0, 'closing');
  }

  /** Answers the head with `o` and removes it. */
  private shift(o: TargetOutcome): void {
    const i = this.qHead++;
    const r = this.qResolve[i];
    this.qTx[i] = EMPTY;
    this.answer(r, o);
  }

  /** Compacts the queue and re-arms the stale timer for the new head. */
  private afterShift(): void {
    if (this.qHead === this.qTx.length) {
      this.qTx = [];
      this.qDeadline = [];
      this.qResolve = [];
      this.qHead = 0;
    } else if (this.qHead > 1024) {
      this.qTx = this.qTx.slice(this.qHead);
      this.qDeadline = this.qDeadline.slice(this.qHead);
      this.qResolve = this.qResolve.slice(this.qHead);
      this.qHead = 0;
    }
    this.armStale();
  }

  private armStale(): void {
    const at = this.qHead < this.qTx.length ? this.qDeadline[this.qHead] : Infinity;
    if (at === this.staleTimerAt) return;
    if (this.staleTimer !== null) clearTimeout(this.staleTimer);
    this.staleTimer = null;
    this.staleTimerAt = at;
    if (at === Infinity) return;
    this.staleTimer = setTimeout(this.onStaleTimer, Math.max(0, at - performance.now()));
  }

  private readonly onStaleTimer = (): void => {
    this.staleTimer = null;
    this.staleTimerAt = Infinity;
    this.drain();
  };

  /** Every head past its deadline leaves as dropped:stale (a partly written head's stream is reset first). */
  private expireStale(now: number): void {
    if (this.qHead >= this.qTx.length || this.qDeadline[this.qHead] > now) return;
    const waitedMs = now - (this.qDeadline[this.qHead] - this.staleMs());
    if (this.conn?.partial === true) this.conn.abandonPartial();
    this.cause = this.st === 'connecting' ? CAUSE.connecting : this.blockedBy === 'no-credit' ? CAUSE.no_stream_credit : CAUSE.congestion;
    this.causeCode = 0;
    let n = 0;
    while (this.qHead < this.qTx.length && this.qDeadline[this.qHead] <= now) {
      this.shift('dropped:stale');
      n++;
    }
    this.afterShift();
    this.onStale(n, waitedMs);
  }

  /** Every queued transaction ends with `o` (the connection ended). Returns how many. */
  private answerAll(o: TargetOutcome): number {
    const n = this.queued;
    if (n > 0) {
      this.cause = this.endCause;
      this.causeCode = this.endCode;
    }
    while (this.qHead < this.qTx.length) this.shift(o);
    this.afterShift();
    return n;
  }

  private answer(r: Resolve, o: TargetOutcome): void {
    if (o === 'sent') this.sent++;
    else if (o === 'dropped:no_connection') this.droppedNoConnection++;
    else if (o === 'dropped:queue_full') this.droppedQueueFull++;
    else if (o === 'dropped:stale') this.droppedStale++;
    else this.failed++;
    r(o);
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
      maxTransactionBytes: this.maxTxBytes,
      congestionControl: this.o.congestionControl,
      onSendLatency: this.onLatency,
      onWritable: this.onWritable,
      onClose: this.onClose,
    }).then(
      (c) => {
        this.conn = c;
        if (this.st === 'closing' || this.st === 'closed') {
          // closed while the socket was opening: release it (onClose answers what was waiting)
          c.close(0, 'closing');
          return;
        }
        c.established.then(() => {
          if (this.conn !== c || this.st !== 'connecting') return;
          this.st = 'active';
          this.handshakeMs = c.stats().handshakeMs;
          this.backoffMs = this.o.retryMinMs;
          this.firstAttemptEnded(true);
          this.o.log.debug({ target: this.target, validator: this.o.label, handshakeMs: this.handshakeMs }, 'egress: connection active');
        }, () => undefined);
      },
      (err: unknown) => {
        // socket could not even be opened (bad address): treat as a failed connect
        this.o.log.warn({ target: this.target, err: err instanceof Error ? err.message : String(err) }, 'egress: connection open failed');
        this.endCause = CAUSE.closed;
        this.endCode = 0;
        this.failedConnect();
      },
    );
  }

  private readonly onClose = (info: QuicCloseInfo): void => {
    // Why: the peer's application code (Agave's TPU refusals: 2 disallowed, 4 too_many, 1 dropped), a handshake that
    // timed out, or another end (idle, transport error, our own close).
    if (info.by === 'peer' && info.isApp) {
      this.endCause = CAUSE.refused;
      this.endCode = info.code;
    } else if (info.by === 'handshake-timeout' || (!info.wasEstablished && info.by === 'idle')) {
      this.endCause = CAUSE.timed_out;
      this.endCode = 0;
    } else {
      this.endCause = CAUSE.closed;
      this.endCode = 0;
    }
    if (this.graceTimer !== null) clearTimeout(this.graceTimer);
    this.graceTimer = null;
    if (this.livenessTimer !== null) clearTimeout(this.livenessTimer);
    this.livenessTimer = null;
    if (this.st === 'closing' || this.st === 'closed') {
      const left = this.answerAll('dropped:no_connection');
      if (left > 0) this.o.log.warn({ target: this.target, validator: this.o.label, unsent: left, by: info.by, code: info.code, reason: info.reason }, 'egress: connection ended with transactions unsent (dropped:no_connection)');
      this.toClosed();
      return;
    }
    this.conn = null;
    const reconnect = this.o.reconnect !== false;
    if (info.wasEstablished) {
      const left = this.answerAll('dropped:no_connection');
      if (left > 0) this.o.log.warn({ target: this.target, validator: this.o.label, unsent: left, by: info.by, code: info.code, reason: info.reason }, 'egress: connection ended with transactions unsent (dropped:no_connection)');
      this.o.log.info(
        { target: this.target, validator: this.o.label, by: info.by, code: info.code, reason: info.reason },
        reconnect ? 'egress: connection closed; reconnecting' : 'egress: connection closed (no reconnect)',
      );
      if (!reconnect) return this.toClosed();
      this.backoffMs = this.o.retryMinMs;
      this.toRetrying();
    } else {
      this.o.log.warn(
        { target: this.target, validator: this.o.label, by: info.by, code: info.code, reason: info.reason, retryInMs: reconnect ? this.backoffMs : undefined },
        reconnect ? 'egress: connect failed; retrying with backoff' : 'egress: connect failed (no reconnect)',
      );
      this.failedConnect();
    }
  };

  private failedConnect(): void {
    this.firstAttemptEnded(false);
    this.connectFailures++;
    this.conn = null;
    this.answerAll('dropped:no_connection');
    if (this.st === 'closing' || this.st === 'closed' || this.o.reconnect === false) {
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
    this.firstAttemptEnded(false);
    this.st = 'closed';
    this.conn = null;
    this.answerAll('dropped:no_connection');
    if (this.staleTimer !== null) clearTimeout(this.staleTimer);
    this.staleTimer = null;
    this.staleTimerAt = Infinity;
  }

  private readonly onLatency = (us: number): void => {
    this.latency.recordValue(us < 1 ? 1 : Math.round(us));
    if (this.o.onSendLatency !== undefined) this.o.onSendLatency(us);
  };

  /** `n` queued transactions waited staleAfterMs without credit or room (a parked or silent peer). */
  private onStale(n: number, waitedMs: number): void {
    this.checkLiveness();
    const now = Date.now();
    if (now - this.staleLogAtMs < STALE_LOG_INTERVAL_MS) {
      this.staleUnlogged += n;
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
        queued: this.queued,
        peerStreamsLeft: c !== null && c.currentState === 'established' ? c.peerStreamsLeft() : null,
      },
      'egress: queued transactions waited too long for stream credit / congestion room (dropped:stale)',
    );
    this.staleLogAtMs = now;
    this.staleUnlogged = 0;
  }

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
}

const EMPTY = new Uint8Array(0);
