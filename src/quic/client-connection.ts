// One QUIC client connection to a Solana TPU (egress thread; HOT: tryWrite and the datagram handler run per
// transaction). Transport only: it never queues a transaction. The socket, send loop, ACK hold, timer, keep-alive and
// close are the shared client loop's (src/quic/client-driver.ts); this file is what the egress writes on it: one
// transaction per unidirectional stream, data + FIN in ONE streamSend (a FIN sent as a separate empty write can reach
// the server after the data and leave a stream unfinished; one exception, at the congestion-window edge: the part
// that fits, then the rest WITH the FIN; see writeStream).
// Flow: tryWrite -> stream write -> flush (conn.send() until null, each datagram straight to the kernel). tryWrite
// answers written / no-credit (no stream credit: the peer's concurrent-stream limit, or not established yet) /
// no-room (the congestion/flow window is full) / failed; onWritable says when a refused write may succeed again (the
// handshake done, a datagram from the peer: ACK, MAX_STREAMS; a timer), so an owner never spins; onClose says the
// connection ended. Whoever wants transactions to wait for credit keeps the one queue: the egress connection worker
// (src/egress/quic/connection-worker.ts; Agave tpu-client-next: the connection worker owns its bounded channel).
import type { QuicheConnection } from './quiche.js';
import { buildClientConfig, type CongestionControl } from './quiche-config.js';
import { QuicClientDriver, type ClientDriverOwner, type QuicClientState, type RttSample } from './client-driver.js';
import type { QuicCloseInfo } from './close-info.js';
import type { IdentityCertificate } from './identity-certificate.js';
import { ALPN_SOLANA_TPU, KEEP_ALIVE_MS, MAX_IDLE_TIMEOUT_MS, PACKET_DATA_SIZE } from './constants.js';

export type { QuicClientState, RttSample } from './client-driver.js';

export interface QuicClientOptions {
  /** Server IP address (v4 or v6). */
  host: string;
  port: number;
  /** Client certificate (its key is our identity); null connects without one (tests of refusals only). */
  identity: IdentityCertificate | null;
  /** SNI; default quicServerName(host, port): "{ip}.{port}.sol" like Agave (a bare IP is rejected by rustls). */
  serverName?: string;
  /** ALPN list; default ['solana-tpu']. */
  alpn?: readonly string[];
  /** Default 60 s (Agave); the effective idle timeout is the smaller of both peers'. */
  maxIdleTimeoutMs?: number;
  /** Default 45 s (Agave), capped at half the negotiated idle timeout; null = none (the peer's idle timeout then closes an idle connection). */
  keepAliveMs?: number | null;
  /**
   * Idle RTT probe (ms): when no transaction was written for this long, PING the peer and time its ACK (rttSample());
   * default none. The egress sets it so an idle connection's ping is measured, not the handshake's kept (client-driver.ts).
   */
  rttProbeMs?: number;
  /** connect() fails if not established by then; default 5 s. */
  connectTimeoutMs?: number;
  /** Largest transaction tryWrite accepts; default 1232 (PACKET_DATA_SIZE). */
  maxTransactionBytes?: number;
  congestionControl?: CongestionControl;
  /** The connection ended (once; `closed` resolves with the same info). */
  onClose?: (info: QuicCloseInfo) => void;
  /** Per transaction: microseconds from streamSend to the end of the send loop that handed its datagram(s) to the kernel. */
  onSendLatency?: (micros: number) => void;
  /** A tryWrite() that answered no-credit / no-room may succeed now (established, the peer spoke, a timer). */
  onWritable?: () => void;
}

/** What tryWrite() did with one transaction. */
export type WriteOutcome = 'written' | 'no-credit' | 'no-room' | 'failed';

export interface QuicClientStats {
  readonly state: QuicClientState;
  /** connect -> established, ms (NaN before). */
  readonly handshakeMs: number;
  /** Streams written with data + FIN (accepted by quiche). */
  readonly transactionsWritten: number;
  /** Streams the peer has read to FIN, as witnessed by the stream credit it returned (MAX_STREAMS). */
  readonly streamsFinishedByPeer: number;
  /** Send latency (streamSend -> kernel), microseconds. */
  readonly sendLatencyCount: number;
  readonly sendLatencyMeanUs: number;
  readonly sendLatencyMaxUs: number;
  readonly datagramsSent: number;
  readonly datagramsReceived: number;
  /** Retry packets received during the handshake (the server asked us to prove our address). */
  readonly retriesReceived: number;
  readonly packetsLost: number;
  readonly packetsRetransmitted: number;
  /** quiche's congestion window now, bytes (starts at 10 packets: 13,500 with our 1,350-byte datagrams). */
  readonly congestionWindowBytes: number;
  /**
   * quiche's smoothed RTT of the path now, whole ms (NaN before any sample): kept current by every ACK (of
   * transactions and keep-alive PINGs), unlike handshakeMs, which is fixed for the connection's life.
   */
  readonly rttMs: number;
  /** streamSend / recv / socket errors. */
  readonly errors: number;
  readonly closeInfo: QuicCloseInfo | null;
}

const WRITTEN = 0;
const NO_CREDIT = 1;
const NO_ROOM = 2;
const FAILED = 3;
type WriteResult = typeof WRITTEN | typeof NO_CREDIT | typeof NO_ROOM | typeof FAILED;

const EMPTY = new Uint8Array(0);
/** quiche's Shutdown.Write (a const enum in the binding's typings). */
const SHUTDOWN_WRITE = 1 as Parameters<QuicheConnection['streamShutdown']>[1];

/**
 * A reply that would carry only ACKs (the peer's packets ACK our streams and hand back stream credit, MAX_STREAMS,
 * which is ack-eliciting) is held this long so it rides on our next stream packet instead of costing a datagram of
 * its own. Measured on this project's 2-core VM against quinn-tpu-sink at 5,000 tx/s: 1.9 datagrams sent per
 * transaction, about half ACK-only, at 40-70 us of sendmsg each; held, ~1.1. Not applied before the handshake
 * completes.
 */
const ACK_DELAY_MS = 1;

export class QuicClientConnection {
  /** Resolves when the handshake completes; rejects (with `.closeInfo`) if the connection ends first. */
  readonly established: Promise<void>;
  /** Resolves once the connection has ended, with how. */
  readonly closed: Promise<QuicCloseInfo>;
  readonly remote: { readonly host: string; readonly port: number };

  private readonly d: QuicClientDriver;
  private readonly maxTransactionBytes: number;
  private readonly onCloseCb: QuicClientOptions['onClose'];
  private readonly onLatency: QuicClientOptions['onSendLatency'];
  private readonly onWritableCb: QuicClientOptions['onWritable'];

  /** Next client-initiated unidirectional stream id: 2, 6, 10, ... (4n + 2). */
  private nextStreamId = 2;
  /** A stream created (empty write) but not yet written because it had no room; reused for the next write. */
  private openStreamId = -1;
  /**
   * Bytes of the transaction being written already on openStreamId without FIN (0: none). Only at the
   * congestion-window edge: see writeStream. The owner offers it again first, or resets it (abandonPartial).
   */
  private openStreamWritten = 0;
  private written = 0;
  private latencyCount = 0;
  private latencySumUs = 0;
  private latencyMaxUs = 0;
  /** streamSend errors (the driver counts its own). */
  private writeErrors = 0;

  private constructor(opts: QuicClientOptions) {
    this.maxTransactionBytes = opts.maxTransactionBytes ?? PACKET_DATA_SIZE;
    this.onCloseCb = opts.onClose;
    this.onLatency = opts.onSendLatency;
    this.onWritableCb = opts.onWritable;
    this.remote = { host: opts.host, port: opts.port };
    const maxIdleTimeoutMs = opts.maxIdleTimeoutMs ?? MAX_IDLE_TIMEOUT_MS;
    const config = buildClientConfig({
      keyPem: opts.identity?.keyPem ?? null,
      certPem: opts.identity?.certPem ?? null,
      alpn: opts.alpn ?? [ALPN_SOLANA_TPU],
      maxIdleTimeoutMs,
      congestionControl: opts.congestionControl ?? 'cubic',
    });
    this.d = new QuicClientDriver(
      {
        host: opts.host,
        port: opts.port,
        serverName: opts.serverName,
        config,
        connectTimeoutMs: opts.connectTimeoutMs ?? 5_000,
        keepAliveMs: opts.keepAliveMs === undefined ? KEEP_ALIVE_MS : opts.keepAliveMs,
        maxIdleTimeoutMs,
        ackHoldMs: ACK_DELAY_MS,
        rttProbeMs: opts.rttProbeMs ?? null,
      },
      this.driverOwner(),
    );
    this.established = this.d.established;
    this.closed = this.d.closed;
  }

  /**
   * Opens the socket and starts the handshake; resolves as soon as the first flight is sent (await `established`
   * for the handshake). tryWrite answers no-credit until then; onWritable fires once established.
   */
  static async open(opts: QuicClientOptions): Promise<QuicClientConnection> {
    const c = new QuicClientConnection(opts);
    await c.d.start();
    return c;
  }

  /** open() and wait for the handshake; rejects with an Error carrying `closeInfo` on failure. */
  static async connect(opts: QuicClientOptions): Promise<QuicClientConnection> {
    const c = await QuicClientConnection.open(opts);
    await c.established;
    return c;
  }

  get currentState(): QuicClientState {
    return this.d.state;
  }

  /** Streams the peer lets us open now (its MAX_STREAMS credit left); 0 before establishment. Cold: diagnostics. */
  peerStreamsLeft(): number {
    return this.d.state === 'established' ? this.d.conn.peerStreamsLeftUni() : 0;
  }

  /**
   * HOT: writes one transaction on its own unidirectional stream (data + FIN in one call), never queues it.
   * `written`: its datagram is with the kernel. `no-credit`: no stream credit, or not established yet. `no-room`: the
   * congestion/flow window is full; when `partial` is then true the transaction's first bytes are on the wire
   * already, so the caller must offer THE SAME transaction again first (or abandonPartial()). `failed`: closed, empty,
   * too large, or quiche refused it. After no-credit / no-room, wait for onWritable (never spin). The caller may
   * reuse `tx` as soon as this returns.
   */
  tryWrite(tx: Uint8Array): WriteOutcome {
    const state = this.d.state;
    if (state === 'closed' || tx.length === 0 || tx.length > this.maxTransactionBytes) return 'failed';
    if (state !== 'established') return 'no-credit';
    const r = this.writeAndFlush(tx);
    this.d.afterIo();
    return r === WRITTEN ? 'written' : r === NO_CREDIT ? 'no-credit' : r === NO_ROOM ? 'no-room' : 'failed';
  }

  /** A transaction is partly on the wire (tryWrite answered no-room at the window edge): offer it again first. */
  get partial(): boolean {
    return this.openStreamWritten !== 0;
  }

  /** Gives up the partly written transaction: its stream is reset (the receiver discards what it got). */
  abandonPartial(): void {
    if (this.openStreamWritten === 0) return;
    try {
      this.d.conn.streamShutdown(this.openStreamId, SHUTDOWN_WRITE, 0);
    } catch {
      // already reset or closing
    }
    this.releaseOpenStream();
    this.d.flush();
    this.d.afterIo();
  }

  /** Closes with an application code (0 = no error), sends CONNECTION_CLOSE and releases the socket at once. */
  close(code = 0, reason = ''): void {
    this.d.close(code, reason);
  }

  /** Datagrams received from the peer so far (a liveness check compares two readings). */
  /** Retry packets this connection's handshake met (0 or 1): the server validates addresses (Firedancer's default). */
  get retried(): boolean {
    return this.d.retriesReceived > 0;
  }

  get received(): number {
    return this.d.datagramsReceived;
  }

  /** Send an ack-eliciting packet (PING) now: a live peer answers it within an RTT, even one that grants no streams. */
  ping(): void {
    this.d.ping();
  }

  /** The newest round-trip measurement and when it was taken (null unless established). Cold: once per report. */
  rttSample(): RttSample | null {
    return this.d.rttSample();
  }

  stats(): QuicClientStats {
    const d = this.d;
    let lost = 0;
    let retrans = 0;
    let finished = 0;
    let cwnd = 0;
    let rtt = NaN;
    if (d.conn !== undefined) {
      const s = d.conn.stats();
      lost = s.lost;
      retrans = s.retrans;
      const path = d.conn.pathStats()[0];
      if (path !== undefined) {
        cwnd = path.cwnd;
        if (d.state !== 'connecting') rtt = path.rtt;
      }
      if (d.state !== 'connecting') {
        // The peer's current stream limit = streams we opened + streams left; it grew by one per stream it finished.
        const opened = (this.nextStreamId - 2) / 4;
        const peerMax = opened + (d.state === 'established' ? d.conn.peerStreamsLeftUni() : 0);
        finished = Math.max(0, peerMax - s.peerInitialMaxStreamsUni);
      }
    }
    return {
      state: d.state,
      handshakeMs: d.handshakeMs,
      transactionsWritten: this.written,
      streamsFinishedByPeer: finished,
      sendLatencyCount: this.latencyCount,
      sendLatencyMeanUs: this.latencyCount === 0 ? 0 : this.latencySumUs / this.latencyCount,
      sendLatencyMaxUs: this.latencyMaxUs,
      datagramsSent: d.datagramsSent,
      datagramsReceived: d.datagramsReceived,
      retriesReceived: d.retriesReceived,
      packetsLost: lost,
      packetsRetransmitted: retrans,
      congestionWindowBytes: cwnd,
      rttMs: rtt,
      errors: d.errors + this.writeErrors,
      closeInfo: d.closeInfo,
    };
  }

  // ---- the driver's events ----

  private driverOwner(): ClientDriverOwner {
    return {
      // The peer spoke (ACK, MAX_STREAMS) or the handshake completed: the owner may write now. Hold the ACK if it did not.
      onPeerData: () => {
        const before = this.written;
        if (this.onWritableCb !== undefined) this.onWritableCb();
        return this.written === before;
      },
      onTick: () => {
        if (this.onWritableCb !== undefined) this.onWritableCb();
      },
      onEnded: (info) => {
        if (this.onCloseCb !== undefined) this.onCloseCb(info);
      },
    };
  }

  // ---- hot path ----

  private writeAndFlush(tx: Uint8Array): WriteResult {
    const t0 = performance.now();
    const r = this.writeStream(tx);
    if (r !== WRITTEN) {
      if (r === NO_ROOM && this.openStreamWritten !== 0) {
        this.d.noteAckEliciting();
        this.d.flush(); // the part that fit goes out now
      }
      return r;
    }
    this.d.noteAckEliciting();
    this.d.flush();
    const us = (performance.now() - t0) * 1000;
    this.latencyCount++;
    this.latencySumUs += us;
    if (us > this.latencyMaxUs) this.latencyMaxUs = us;
    if (this.onLatency !== undefined) this.onLatency(us);
    return WRITTEN;
  }

  private writeStream(tx: Uint8Array): WriteResult {
    const conn = this.d.conn;
    let sid = this.openStreamId;
    try {
      if (sid < 0) {
        // Check credit first: a stream past the peer's limit throws StreamLimit (and poisons @matrixai's wrapper).
        if (conn.peerStreamsLeftUni() === 0) return NO_CREDIT;
        sid = this.nextStreamId;
        // An empty write creates the stream so streamCapacity() can be asked; it puts nothing on the wire.
        conn.streamSend(sid, EMPTY, false);
        this.nextStreamId += 4;
        this.openStreamId = sid;
      }
      // quiche caps a write by the stream/connection flow window AND the congestion window: the whole (rest of the)
      // transaction goes in one call with FIN when it fits.
      const off = this.openStreamWritten;
      const rest = tx.length - off;
      const cap = conn.streamCapacity(sid);
      if (cap < rest) {
        // Window edge: hand quiche the part that fits (no FIN; the rest and FIN follow on the next ACK). quiche grows
        // cwnd only for ACKs of packets sent while it was NOT app-limited, and it decides that from its own send
        // attempts: a sender that holds back whole transactions is app-limited forever and cubic stays at its
        // initial 10 packets (measured: cwnd 13,500 B for a whole 10,000 tx/s run; 2/3 of the transactions queued).
        // Filling the gap is quiche's "app wants more than cwnd" signal. Rare: once the window fits the rate, never.
        if (cap > 0) {
          const w = conn.streamSend(sid, tx.subarray(off, off + cap), false);
          if (w !== null) this.openStreamWritten = off + w;
        }
        return NO_ROOM;
      }
      const n = conn.streamSend(sid, off === 0 ? tx : tx.subarray(off), true);
      if (n !== rest) {
        // Cannot happen after the capacity check; if it does, the stream is unusable: abandon it.
        this.releaseOpenStream();
        this.writeErrors++;
        return FAILED;
      }
    } catch {
      this.releaseOpenStream();
      this.writeErrors++;
      return FAILED;
    }
    this.releaseOpenStream();
    this.written++;
    return WRITTEN;
  }

  /** The open stream is finished (FIN written) or abandoned: the next write opens a new one. */
  private releaseOpenStream(): void {
    this.openStreamId = -1;
    this.openStreamWritten = 0;
  }
}
