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
//   connecting or no credit     -> queued in THIS worker's bounded queue of its class (copied); the promise answers
//                                  'sent' when the stream is written, 'dropped:stale' when it waited staleAfterMs
//                                  without credit or room (a parked or silent peer), or 'dropped:no_connection' if the
//                                  connection ends
//   queue full                  -> 'dropped:queue_full' (rebroadcasts; first sends only with a finite maxQueuedFirstSends)
//   empty / too large           -> 'failed' (the transaction is refused, never queued)
//   retrying / closing / closed -> 'dropped:no_connection' at once (other targets are not held up)
// The worker owns the queues (Agave tpu-client-next: the connection worker owns its bounded channel); the QUIC
// connection is transport only: tryWrite() answers written / no-credit / no-room / failed and onWritable / onClose say
// when to try again or give up (src/quic/client-connection.ts). Two classes, each a FIFO (./send-queue.ts), each
// bounded by maxQueued: first sends, and rebroadcasts (the retry scheduler's sends again, `background`). A rebroadcast
// is written only when no first send waits, and a first send never waits behind a rebroadcast: a full retry queue
// comes due once per interval (up to 10,000 transactions), which on a connection short of stream credit would
// otherwise put every fresh transaction behind a whole round of old ones (bench/egress/rebroadcast-tail.bench.ts).
// Per connection it measures the handshake time and each transaction's send latency (streamSend -> datagram handed
// to the kernel), read by report().
import hdr from 'hdr-histogram-js';
import type { LeaderKind } from '../../shm/layout.js';
import {
  PACKET_DATA_SIZE,
  QuicClientConnection,
  type CongestionControl,
  type IdentityCertificate,
  type QuicClientStats,
  type QuicCloseInfo,
} from '../../quic/index.js';
import type { Logger } from '../../log/logger.js';
import { SendQueue } from './send-queue.js';

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

/**
 * An idle connection PINGs its peer after this long without writing a transaction and times the ACK: the telemetry's
 * ping of an idle leader is then measured each report (every ~1 s, src/egress/quic/quic-egress.ts), not the
 * handshake's value kept. Costs two ~50-byte datagrams and their ACK per second per idle connection.
 */
const RTT_PROBE_MS = 1_000;

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
   * First sends' bound (default maxQueued). The relay's routes pass Infinity: each first send waiting here holds its
   * ring (or local slab) slot until it is answered, so the ring already bounds them, and a transaction the front
   * accepted is never dropped:queue_full (admission by delay keeps the wait short: docs/relay-api.md).
   */
  readonly maxQueuedFirstSends?: number;
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
  /**
   * The open connection's newest round-trip measurement (ms, NaN while none is open): telemetry's live ping. With
   * traffic, quiche's smoothed RTT as of the last ACK; idle, the RTT probe's own timing (client-driver.ts).
   */
  readonly rttMs: number;
  /** Unix ms at which rttMs was measured (NaN with it): an unmeasured value is never stamped as new. */
  readonly rttAtUnixMs: number;
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

/**
 * The worker's state with the data only that state has (Agave tpu-client-next ConnectionState: NotSetup, Active(conn),
 * Retry(n), Closing), so the type checker holds what a state may touch: only an active connection has a liveness
 * check, only a retrying worker a reconnect timer, only a closing one an eviction grace timer. The names are
 * CONNECTION_STATES (metric labels and reports).
 */
type WorkerState =
  /** A connect in flight; conn is null until the socket is open, then the connection whose handshake runs. */
  | { readonly kind: 'connecting'; conn: QuicClientConnection | null }
  /** Handshake done; `liveness`: the PING check after a stale drop (checkLiveness), null when none is in flight. */
  | { readonly kind: 'active'; readonly conn: QuicClientConnection; liveness: NodeJS.Timeout | null }
  /** The last connection ended or a connect failed: a new connect when `timer` fires (backoffMs). */
  | { readonly kind: 'retrying'; readonly timer: NodeJS.Timeout }
  /** close(): no new sends; what is queued is written until `grace` fires or the connection ends (conn null: none open). */
  | { readonly kind: 'closing'; conn: QuicClientConnection | null; grace: NodeJS.Timeout | null }
  | { readonly kind: 'closed' };

export class ConnectionWorker {
  private s: WorkerState = { kind: 'connecting', conn: null };
  /** First sends waiting (handshake, stream credit, congestion room): written before any rebroadcast. */
  private readonly firstSends = new SendQueue<TargetOutcome>();
  /** Rebroadcasts waiting: written only when no first send waits. */
  private readonly rebroadcasts = new SendQueue<TargetOutcome>();
  /** The queue whose head is partly on the wire (client-connection.ts `partial`): it must be offered first. */
  private partialIn: SendQueue<TargetOutcome> | null = null;
  /** The stale deadline timer, armed for the earlier of the two heads. */
  private staleTimer: NodeJS.Timeout | null = null;
  private staleTimerAt = Infinity;
  private readonly maxTxBytes: number;
  private backoffMs: number;
  /** The leader's TPU kind as its handshakes showed it (a Retry: firedancer); unknown before the first one. */
  leaderKind: LeaderKind = 'unknown';
  private handshakeMs = NaN;
  private connects = 0;
  private connectFailures = 0;
  private sent = 0;
  private droppedNoConnection = 0;
  private droppedQueueFull = 0;
  private droppedStale = 0;
  private failed = 0;
  private staleLogAtMs = -Infinity;
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
  /** First sends' bound (options.maxQueuedFirstSends). */
  private readonly maxFirst: number;
  /** Validator identity when known (logs/reports). */
  get label(): string | undefined {
    return this.o.label;
  }

  constructor(private readonly o: ConnectionWorkerOptions) {
    this.target = `${o.host}:${o.port}`;
    this.maxTxBytes = o.maxTransactionBytes ?? PACKET_DATA_SIZE;
    this.maxFirst = o.maxQueuedFirstSends ?? o.maxQueued;
    this.backoffMs = o.retryMinMs;
    this.firstAttempt = new Promise<boolean>((resolve) => (this.endFirstAttempt = resolve));
    this.connect();
  }

  private firstAttemptEnded(established: boolean): void {
    this.endFirstAttempt?.(established);
    this.endFirstAttempt = null;
  }

  get state(): ConnectionState {
    return this.s.kind;
  }

  /** The connection of the current state, if it has one (connecting once the socket is open, active, closing). */
  private get conn(): QuicClientConnection | null {
    const s = this.s;
    return s.kind === 'connecting' || s.kind === 'active' || s.kind === 'closing' ? s.conn : null;
  }

  /** Transactions waiting in this worker's queue now (handshake, stream credit, congestion room). */
  get queued(): number {
    return this.firstSends.size + this.rebroadcasts.size;
  }

  /**
   * Hot: one transaction to this target. `tx` may be reused by the caller as soon as this returns. `background`: a
   * rebroadcast, written after every first send waiting here.
   */
  send(tx: Uint8Array, background = false): TargetOutcome | Promise<TargetOutcome> {
    this.lastUsedMs = Date.now();
    const st = this.s.kind;
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
    const q = background ? this.rebroadcasts : this.firstSends;
    // Nothing waits before it (a first send: no first send; a rebroadcast: nothing), nothing is half written: write now.
    if (c !== null && q.size === 0 && (!background || this.firstSends.size === 0) && this.partialIn === null) {
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
      // A transaction partly on the wire (window edge) must be the one offered next: it heads its queue, whatever the bound.
      if (c.partial) {
        this.partialIn = q;
        return this.enqueue(q, tx);
      }
    }
    if (q.size >= (background ? this.o.maxQueued : this.maxFirst)) {
      this.droppedQueueFull++;
      this.cause = CAUSE.relay_queue_full;
      this.causeCode = 0;
      return 'dropped:queue_full';
    }
    return this.enqueue(q, tx);
  }

  /** Pre-warm: make sure a connection is (being) opened; a retrying worker keeps its backoff. */
  touch(): void {
    if (this.s.kind === 'closed') return;
    this.lastUsedMs = Date.now();
  }

  /**
   * Closing: stop taking transactions; let the queued ones be written for up to `graceMs`, then close.
   * Resolves when closed.
   */
  close(graceMs: number): Promise<void> {
    const s = this.s;
    if (s.kind === 'closed') return Promise.resolve();
    if (s.kind === 'retrying') clearTimeout(s.timer);
    const c = this.conn;
    const closing: WorkerState = { kind: 'closing', conn: c, grace: null };
    this.s = closing;
    if (c === null) {
      this.toClosed();
      return Promise.resolve();
    }
    if (this.queued === 0 || graceMs <= 0) c.close(0, 'closing');
    else closing.grace = setTimeout(() => c.close(0, 'eviction grace over'), graceMs);
    return c.closed.then(() => undefined);
  }

  /** The current connection's transport counters (null while none is open). Cold: tests and benches. */
  transportStats(): QuicClientStats | null {
    return this.conn === null ? null : this.conn.stats();
  }

  report(): ConnectionReport {
    const h = this.latency;
    const n = h.totalCount;
    const rtt = this.s.kind === 'active' ? this.s.conn.rttSample() : null;
    return {
      target: this.target,
      label: this.o.label ?? null,
      state: this.s.kind,
      handshakeMs: this.handshakeMs,
      rttMs: rtt === null ? NaN : rtt.rttMs,
      rttAtUnixMs: rtt === null ? NaN : rtt.atUnixMs,
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

  private enqueue(q: SendQueue<TargetOutcome>, tx: Uint8Array): Promise<TargetOutcome> {
    const p = q.push(tx, performance.now() + this.staleMs());
    if (q.size === 1) this.armStale();
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
    // A half-written rebroadcast goes first (the stream must be finished), then first sends, then rebroadcasts.
    if (this.partialIn !== this.rebroadcasts || this.write(c, this.rebroadcasts, 1)) {
      if (this.write(c, this.firstSends, Infinity)) this.write(c, this.rebroadcasts, Infinity);
    }
    this.armStale();
    if (this.s.kind === 'closing' && this.queued === 0) c.close(0, 'closing');
  }

  /** Writes up to `max` transactions from the head of `q`; false when the transport stopped taking them. */
  private write(c: QuicClientConnection, q: SendQueue<TargetOutcome>, max: number): boolean {
    for (let n = 0; n < max; n++) {
      const tx = q.headTx();
      if (tx === undefined) return true;
      const r = c.tryWrite(tx);
      if (r === 'no-credit' || r === 'no-room') {
        this.blockedBy = r;
        if (c.partial) this.partialIn = q;
        return false;
      }
      if (this.partialIn === q) this.partialIn = null;
      // A write quiche refused outright (not a lack of room) must not block the queue: it is answered `failed`.
      this.shift(q, r === 'written' ? 'sent' : 'failed');
    }
    return true;
  }

  /** Answers the head of `q` with `o` and removes it. */
  private shift(q: SendQueue<TargetOutcome>, o: TargetOutcome): void {
    this.answer(q.shift(), o);
  }

  private armStale(): void {
    const at = Math.min(this.firstSends.headDeadline(), this.rebroadcasts.headDeadline());
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
    const oldest = Math.min(this.firstSends.headDeadline(), this.rebroadcasts.headDeadline());
    if (oldest > now) return;
    const waitedMs = now - (oldest - this.staleMs());
    this.cause = this.s.kind === 'connecting' ? CAUSE.connecting : this.blockedBy === 'no-credit' ? CAUSE.no_stream_credit : CAUSE.congestion;
    this.causeCode = 0;
    const n = this.expire(this.firstSends, now) + this.expire(this.rebroadcasts, now);
    this.armStale();
    this.onStale(n, waitedMs);
  }

  /** The heads of `q` past their deadline leave as dropped:stale. Returns how many. */
  private expire(q: SendQueue<TargetOutcome>, now: number): number {
    if (q.headDeadline() > now) return 0;
    if (this.partialIn === q) {
      this.conn?.abandonPartial();
      this.partialIn = null;
    }
    let n = 0;
    while (q.headDeadline() <= now) {
      this.shift(q, 'dropped:stale');
      n++;
    }
    return n;
  }

  /** Every queued transaction ends with `o` (the connection ended). Returns how many. */
  private answerAll(o: TargetOutcome): number {
    const n = this.queued;
    if (n > 0) {
      this.cause = this.endCause;
      this.causeCode = this.endCode;
    }
    while (this.firstSends.size > 0) this.shift(this.firstSends, o);
    while (this.rebroadcasts.size > 0) this.shift(this.rebroadcasts, o);
    this.partialIn = null;
    this.armStale();
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
    const connecting: WorkerState = { kind: 'connecting', conn: null };
    this.s = connecting;
    this.connects++;
    QuicClientConnection.open({
      host: this.o.host,
      port: this.o.port,
      identity: this.o.identity,
      maxIdleTimeoutMs: this.o.maxIdleTimeoutMs,
      keepAliveMs: this.o.keepAliveMs,
      rttProbeMs: RTT_PROBE_MS,
      connectTimeoutMs: this.o.connectTimeoutMs,
      maxTransactionBytes: this.maxTxBytes,
      congestionControl: this.o.congestionControl,
      onSendLatency: this.onLatency,
      onWritable: this.onWritable,
      onClose: this.onClose,
    }).then(
      (c) => {
        const s = this.s;
        if (s.kind !== 'connecting') {
          // closed while the socket was opening: release it (onClose answers what was waiting)
          if (s.kind === 'closing') s.conn = c;
          c.close(0, 'closing');
          return;
        }
        connecting.conn = c;
        c.established.then(() => {
          if (this.s !== connecting || connecting.conn !== c) return;
          this.s = { kind: 'active', conn: c, liveness: null };
          this.handshakeMs = c.stats().handshakeMs;
          // Learned from behaviour: only Firedancer's TPU answers a new connection with a stateless Retry (its
          // default; Agave/quinn never does). Kept across reconnects: the same target is the same validator.
          this.leaderKind = c.retried ? 'firedancer' : 'agave';
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
    const s = this.s;
    if (s.kind === 'closing' && s.grace !== null) clearTimeout(s.grace);
    if (s.kind === 'active' && s.liveness !== null) clearTimeout(s.liveness);
    if (s.kind === 'closing' || s.kind === 'closed') {
      const left = this.answerAll('dropped:no_connection');
      if (left > 0) this.o.log.warn({ target: this.target, validator: this.o.label, unsent: left, by: info.by, code: info.code, reason: info.reason }, 'egress: connection ended with transactions unsent (dropped:no_connection)');
      this.toClosed();
      return;
    }
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
    if (this.s.kind === 'connecting') this.s.conn = null;
    this.answerAll('dropped:no_connection');
    if (this.s.kind === 'closing' || this.s.kind === 'closed' || this.o.reconnect === false) {
      this.toClosed();
      return;
    }
    this.toRetrying();
    this.backoffMs = Math.min(this.o.retryMaxMs, this.backoffMs * 2);
  }

  private toRetrying(): void {
    const retrying: WorkerState = {
      kind: 'retrying',
      timer: setTimeout(() => {
        if (this.s === retrying) this.connect();
      }, this.backoffMs),
    };
    this.s = retrying;
  }

  private toClosed(): void {
    this.firstAttemptEnded(false);
    this.s = { kind: 'closed' };
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
    const active = this.s;
    if (active.kind !== 'active' || active.liveness !== null) return;
    const c = active.conn;
    const before = c.received;
    c.ping();
    active.liveness = setTimeout(() => {
      active.liveness = null;
      if (this.s !== active || c.received !== before) return;
      this.o.log.warn({ target: this.target, validator: this.o.label, waitedMs: LIVENESS_TIMEOUT_MS }, 'egress: peer does not answer a PING: closing the connection to reconnect');
      c.close(0, 'peer unresponsive');
    }, LIVENESS_TIMEOUT_MS);
    active.liveness.unref();
  }
}

