// One QUIC client connection to a Solana TPU (egress thread; HOT: tryWrite and the datagram handler run per
// transaction). Transport only: it never queues a transaction. Owns a CONNECTED UDP socket (sends skip the kernel's
// route/address lookup), the quiche connection, the send loop and one deadline timer. One transaction per
// unidirectional stream, data + FIN in ONE streamSend: a FIN sent as a separate empty write can reach the server after
// the data and leave a stream unfinished. (One exception, at the congestion-window edge: the part that fits, then the
// rest WITH the FIN; see writeStream.)
// Flow: tryWrite -> stream write -> flush (conn.send() until null, each datagram straight to the kernel). tryWrite
// answers written / no-credit (no stream credit: the peer's concurrent-stream limit, or not established yet) /
// no-room (the congestion/flow window is full) / failed; onWritable says when a refused write may succeed again (the
// handshake done, a datagram from the peer: ACK, MAX_STREAMS; a timer), so an owner never spins; onClose says the
// connection ended. Whoever wants transactions to wait for credit keeps the one queue: the egress connection worker
// (src/egress/quic/connection-worker.ts; Agave tpu-client-next: the connection worker owns its bounded channel).
import dgram from 'node:dgram';
import { isIPv6 } from 'node:net';
import { randomFillSync } from 'node:crypto';
import { quiche, type QuicheConnection } from './quiche.js';
import { buildClientConfig, type CongestionControl } from './quiche-config.js';
import { DatagramSlab } from './datagram-slab.js';
import { DeadlineTimer } from './deadline-timer.js';
import { closeInfoOf, type QuicCloseInfo } from './close-info.js';
import type { IdentityCertificate } from './identity-certificate.js';
import {
  ALPN_SOLANA_TPU,
  KEEP_ALIVE_MS,
  LOCAL_CID_LEN,
  MAX_IDLE_TIMEOUT_MS,
  MAX_SEND_UDP_PAYLOAD,
  PACKET_DATA_SIZE,
} from './constants.js';

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
  /** Default 45 s (Agave), capped at half the negotiated idle timeout. */
  keepAliveMs?: number;
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

export type QuicClientState = 'connecting' | 'established' | 'closed';

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
 * transaction, about half ACK-only, at 40-70 us of sendmsg each; held, ~1.1. Far below the 25 ms max_ack_delay both
 * sides advertise (RFC 9000 13.2.1), so the peer's loss detection and RTT are not disturbed. Not applied before
 * the handshake completes.
 */
const ACK_DELAY_MS = 1;

export class QuicClientConnection {
  /** Resolves when the handshake completes; rejects (with `.closeInfo`) if the connection ends first. */
  readonly established: Promise<void>;
  /** Resolves once the connection has ended, with how. */
  readonly closed: Promise<QuicCloseInfo>;
  readonly remote: { readonly host: string; readonly port: number };

  private readonly sock: dgram.Socket;
  private conn!: QuicheConnection;
  private readonly slab = new DatagramSlab(MAX_SEND_UDP_PAYLOAD);
  private readonly timer: DeadlineTimer;
  private readonly o: Required<
    Omit<QuicClientOptions, 'onClose' | 'onSendLatency' | 'onWritable' | 'identity' | 'serverName'>
  >;
  private readonly onCloseCb: QuicClientOptions['onClose'];
  private readonly onLatency: QuicClientOptions['onSendLatency'];
  private readonly onWritableCb: QuicClientOptions['onWritable'];
  // Reused RecvInfo: the socket is connected, so every datagram comes from the same peer to the same local address.
  private recvInfo!: { from: { host: string; port: number }; to: { host: string; port: number } };

  private state: QuicClientState = 'connecting';
  private startMs = 0;
  private handshakeMs = NaN;
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
  private datagramsSent = 0;
  private datagramsReceived = 0;
  private errors = 0;
  /** performance.now() by which a held ACK-only reply must go out (Infinity: none held). */
  private ackDueMs = Infinity;
  private keepAliveEffMs: number;
  private keepAliveDueMs = Infinity;
  private sentAtKeepAliveCheck = 0;
  private connectTimer: NodeJS.Timeout | null = null;
  private closeInfo: QuicCloseInfo | null = null;
  private resolveEstablished!: () => void;
  private rejectEstablished!: (e: Error) => void;
  private resolveClosed!: (i: QuicCloseInfo) => void;

  private constructor(opts: QuicClientOptions) {
    this.o = {
      host: opts.host,
      port: opts.port,
      alpn: opts.alpn ?? [ALPN_SOLANA_TPU],
      maxIdleTimeoutMs: opts.maxIdleTimeoutMs ?? MAX_IDLE_TIMEOUT_MS,
      keepAliveMs: opts.keepAliveMs ?? KEEP_ALIVE_MS,
      connectTimeoutMs: opts.connectTimeoutMs ?? 5_000,
      maxTransactionBytes: opts.maxTransactionBytes ?? PACKET_DATA_SIZE,
      congestionControl: opts.congestionControl ?? 'cubic',
    };
    this.onCloseCb = opts.onClose;
    this.onLatency = opts.onSendLatency;
    this.onWritableCb = opts.onWritable;
    this.keepAliveEffMs = this.o.keepAliveMs;
    this.remote = { host: opts.host, port: opts.port };
    this.sock = dgram.createSocket({ type: isIPv6(opts.host) ? 'udp6' : 'udp4' });
    this.timer = new DeadlineTimer(this.onTimer);
    this.established = new Promise<void>((res, rej) => {
      this.resolveEstablished = res;
      this.rejectEstablished = rej;
    });
    this.established.catch(() => undefined); // observed through `closed`/onClose when nobody awaits it
    this.closed = new Promise<QuicCloseInfo>((res) => (this.resolveClosed = res));
  }

  /**
   * Opens the socket and starts the handshake; resolves as soon as the first flight is sent (await `established`
   * for the handshake). tryWrite answers no-credit until then; onWritable fires once established.
   */
  static async open(opts: QuicClientOptions): Promise<QuicClientConnection> {
    const c = new QuicClientConnection(opts);
    await c.start(opts);
    return c;
  }

  /** open() and wait for the handshake; rejects with an Error carrying `closeInfo` on failure. */
  static async connect(opts: QuicClientOptions): Promise<QuicClientConnection> {
    const c = await QuicClientConnection.open(opts);
    await c.established;
    return c;
  }

  private async start(opts: QuicClientOptions): Promise<void> {
    const sock = this.sock;
    await new Promise<void>((resolve, reject) => {
      sock.once('error', reject);
      sock.connect(opts.port, opts.host, () => {
        sock.off('error', reject);
        resolve();
      });
    });
    sock.on('error', this.onSocketError);
    sock.on('message', this.onMessage);
    const local = sock.address();
    const localHp = { host: local.address, port: local.port };
    const remoteHp = { host: opts.host, port: opts.port };
    this.recvInfo = { from: remoteHp, to: localHp };
    const config = buildClientConfig({
      keyPem: opts.identity?.keyPem ?? null,
      certPem: opts.identity?.certPem ?? null,
      alpn: this.o.alpn,
      maxIdleTimeoutMs: this.o.maxIdleTimeoutMs,
      congestionControl: this.o.congestionControl,
    });
    const scid = new Uint8Array(LOCAL_CID_LEN);
    randomFillSync(scid);
    const serverName = opts.serverName ?? quicServerName(opts.host, opts.port);
    this.startMs = performance.now();
    this.conn = quiche.Connection.connect(serverName, scid, localHp, remoteHp, config);
    this.connectTimer = setTimeout(this.onConnectTimeout, this.o.connectTimeoutMs);
    this.flush();
    this.afterIo();
  }

  get currentState(): QuicClientState {
    return this.state;
  }

  /** Streams the peer lets us open now (its MAX_STREAMS credit left); 0 before establishment. Cold: diagnostics. */
  peerStreamsLeft(): number {
    return this.state === 'established' ? this.conn.peerStreamsLeftUni() : 0;
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
    if (this.state === 'closed' || tx.length === 0 || tx.length > this.o.maxTransactionBytes) return 'failed';
    if (this.state !== 'established') return 'no-credit';
    const r = this.writeAndFlush(tx);
    this.afterIo();
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
      this.conn.streamShutdown(this.openStreamId, SHUTDOWN_WRITE, 0);
    } catch {
      // already reset or closing
    }
    this.releaseOpenStream();
    this.flush();
    this.afterIo();
  }

  /** Closes with an application code (0 = no error), sends CONNECTION_CLOSE and releases the socket at once. */
  close(code = 0, reason = ''): void {
    if (this.state === 'closed') return;
    try {
      this.conn.close(true, code, Buffer.from(reason));
    } catch {
      // already closing
    }
    this.flush();
    this.finalize('local');
  }

  stats(): QuicClientStats {
    let lost = 0;
    let retrans = 0;
    let finished = 0;
    let cwnd = 0;
    let rtt = NaN;
    if (this.conn !== undefined) {
      const s = this.conn.stats();
      lost = s.lost;
      retrans = s.retrans;
      const path = this.conn.pathStats()[0];
      if (path !== undefined) {
        cwnd = path.cwnd;
        if (this.state !== 'connecting') rtt = path.rtt;
      }
      if (this.state !== 'connecting') {
        // The peer's current stream limit = streams we opened + streams left; it grew by one per stream it finished.
        const opened = (this.nextStreamId - 2) / 4;
        const peerMax = opened + (this.state === 'established' ? this.conn.peerStreamsLeftUni() : 0);
        finished = Math.max(0, peerMax - s.peerInitialMaxStreamsUni);
      }
    }
    return {
      state: this.state,
      handshakeMs: this.handshakeMs,
      transactionsWritten: this.written,
      streamsFinishedByPeer: finished,
      sendLatencyCount: this.latencyCount,
      sendLatencyMeanUs: this.latencyCount === 0 ? 0 : this.latencySumUs / this.latencyCount,
      sendLatencyMaxUs: this.latencyMaxUs,
      datagramsSent: this.datagramsSent,
      datagramsReceived: this.datagramsReceived,
      packetsLost: lost,
      packetsRetransmitted: retrans,
      congestionWindowBytes: cwnd,
      rttMs: rtt,
      errors: this.errors,
      closeInfo: this.closeInfo,
    };
  }

  // ---- hot path ----

  private writeAndFlush(tx: Uint8Array): WriteResult {
    const t0 = performance.now();
    const r = this.writeStream(tx);
    if (r !== WRITTEN) {
      if (r === NO_ROOM && this.openStreamWritten !== 0) this.flush(); // the part that fit goes out now
      return r;
    }
    this.flush();
    const us = (performance.now() - t0) * 1000;
    this.latencyCount++;
    this.latencySumUs += us;
    if (us > this.latencyMaxUs) this.latencyMaxUs = us;
    if (this.onLatency !== undefined) this.onLatency(us);
    return WRITTEN;
  }

  private writeStream(tx: Uint8Array): WriteResult {
    const conn = this.conn;
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
        this.errors++;
        return FAILED;
      }
    } catch {
      this.releaseOpenStream();
      this.errors++;
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

  /** conn.send() until null; each packet goes to the kernel at once (connected socket: no address argument). */
  /** Datagrams received from the peer so far (a liveness check compares two readings). */
  get received(): number {
    return this.datagramsReceived;
  }

  /** Send an ack-eliciting packet (PING) now: a live peer answers it within an RTT, even one that grants no streams. */
  ping(): void {
    if (this.state !== 'established') return;
    try {
      this.conn.sendAckEliciting();
    } catch {
      this.errors++;
      return;
    }
    this.flush();
  }

  private flush(): void {
    this.ackDueMs = Infinity; // whatever ACKs are pending go out now
    const conn = this.conn;
    const slab = this.slab;
    const scratch = slab.scratch;
    for (;;) {
      let r: [number, unknown] | null;
      try {
        r = conn.send(scratch);
      } catch {
        this.errors++;
        return;
      }
      if (r === null) return;
      this.sock.send(slab.take(r[0]));
      this.datagramsSent++;
    }
  }

  private readonly onMessage = (msg: Buffer): void => {
    if (this.state === 'closed') return;
    this.datagramsReceived++;
    try {
      this.conn.recv(msg, this.recvInfo);
    } catch {
      this.errors++;
    }
    if (this.state === 'connecting' && this.conn.isEstablished()) this.onEstablished();
    if (this.state === 'established') {
      const before = this.written;
      if (this.onWritableCb !== undefined) this.onWritableCb();
      // Nothing of ours went out (the owner wrote no stream): hold the ACK for our next stream packet.
      if (this.written === before && (this.state as QuicClientState) === 'established') {
        if (this.ackDueMs === Infinity) this.ackDueMs = performance.now() + ACK_DELAY_MS;
        this.afterIo();
        return;
      }
    }
    this.flush();
    this.afterIo();
  };

  private afterIo(): void {
    const conn = this.conn;
    // Draining = a CONNECTION_CLOSE was exchanged; quiche would wait 3 PTOs before isClosed(). A client has nothing
    // to absorb in that window: release now so the caller learns the close code at once.
    if (conn.isClosed() || conn.isDraining()) {
      this.finalize('local');
      return;
    }
    const now = performance.now();
    let delay = conn.timeout();
    if (this.state === 'established') {
      const ka = this.keepAliveDueMs - now;
      if (delay === null || ka < delay) delay = ka < 0 ? 0 : ka;
    }
    if (this.ackDueMs !== Infinity) {
      const ad = this.ackDueMs - now;
      if (delay === null || ad < delay) delay = ad < 0 ? 0 : ad;
    }
    this.timer.arm(delay, now);
  }

  private readonly onTimer = (): void => {
    if (this.state === 'closed') return;
    const conn = this.conn;
    conn.onTimeout();
    const now = performance.now();
    if (this.state === 'established' && now >= this.keepAliveDueMs) {
      // Keep-alive: PING only when nothing at all went out during the last interval.
      if (this.datagramsSent === this.sentAtKeepAliveCheck) conn.sendAckEliciting();
      this.sentAtKeepAliveCheck = this.datagramsSent;
      this.keepAliveDueMs = now + this.keepAliveEffMs;
    }
    if (this.state === 'established' && this.onWritableCb !== undefined) this.onWritableCb();
    if ((this.state as QuicClientState) === 'closed') return; // a callback closed us
    this.flush();
    this.afterIo();
  };

  // ---- cold path ----

  private onEstablished(): void {
    this.state = 'established';
    this.handshakeMs = performance.now() - this.startMs;
    if (this.connectTimer !== null) clearTimeout(this.connectTimer);
    this.connectTimer = null;
    // Keep-alive below half the NEGOTIATED idle timeout, whatever the configured value: a 10 s-idle peer
    // (Jet, quinn defaults) would otherwise drop us between 45 s keep-alives.
    const peerIdle = this.conn.stats().peerMaxIdleTimeout;
    const idle = Math.min(this.o.maxIdleTimeoutMs || Infinity, peerIdle > 0 ? peerIdle : Infinity);
    if (Number.isFinite(idle)) this.keepAliveEffMs = Math.min(this.keepAliveEffMs, Math.floor(idle / 2));
    this.keepAliveDueMs = performance.now() + this.keepAliveEffMs;
    this.resolveEstablished();
    // (onMessage, the one caller, then tells the owner it may write: onWritable.)
  }

  private readonly onConnectTimeout = (): void => {
    this.connectTimer = null;
    if (this.state !== 'connecting') return;
    try {
      this.conn.close(false, 0, Buffer.from('handshake timeout'));
    } catch {
      // nothing to close
    }
    this.flush();
    this.finalize('handshake-timeout');
  };

  private readonly onSocketError = (e: NodeJS.ErrnoException): void => {
    this.errors++;
    // ICMP port unreachable on a connected socket: nobody listens there; fail now rather than at the timeout.
    if (this.state === 'connecting' && e.code === 'ECONNREFUSED') this.finalize('unreachable');
  };

  private finalize(by: QuicCloseInfo['by']): void {
    if (this.state === 'closed') return;
    const wasEstablished = this.state === 'established';
    this.state = 'closed';
    this.timer.cancel();
    if (this.connectTimer !== null) clearTimeout(this.connectTimer);
    this.connectTimer = null;
    const info =
      by === 'handshake-timeout' || by === 'unreachable' || by === 'socket'
        ? { by, isApp: false, code: 0, reason: by, wasEstablished }
        : closeInfoOf(this.conn, wasEstablished, by);
    this.closeInfo = info;
    try {
      this.sock.close();
    } catch {
      // already closed
    }
    if (!wasEstablished) {
      const err = new Error(`QUIC connect to ${this.o.host}:${this.o.port} failed: ${info.by} code=${info.code} ${info.reason}`);
      (err as Error & { closeInfo: QuicCloseInfo }).closeInfo = info;
      this.rejectEstablished(err);
    }
    this.resolveClosed(info);
    if (this.onCloseCb !== undefined) this.onCloseCb(info);
  }
}

/**
 * The SNI for a TPU at ip:port. IPv4: "{ip}.{port}.sol", exactly what Agave's clients send (tls-utils
 * socket_addr_to_quic_server_name, anza-xyz/agave#7260): a distinct name per server, never a bare IP (rustls
 * refuses an IP as SNI, "Illegal SNI hostname", transport code 306). IPv6: Agave formats the address the same way,
 * which gives "::1.8009.sol"; rustls cannot parse that as a DNS name (a colon is not a hostname character), so a
 * rustls server refuses it. We write the address as one DNS label instead: all eight groups, four hex digits each,
 * joined by "-" (no leading, trailing or doubled hyphen; 39 characters, under the 63 a label allows), zone id dropped:
 * "0000-0000-0000-0000-0000-0000-0000-0001.8009.sol". Servers read only the certificate, not the name.
 */
export function quicServerName(host: string, port: number): string {
  if (!isIPv6(host)) return `${host}.${port}.sol`;
  return `${expandIpv6(host).join('-')}.${port}.sol`;
}

/** The eight 16-bit groups of an IPv6 address as 4-digit lower-case hex (an embedded IPv4 tail is converted). */
function expandIpv6(host: string): string[] {
  let h = host.toLowerCase();
  const zone = h.indexOf('%');
  if (zone >= 0) h = h.slice(0, zone);
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(h);
  if (v4 !== null) {
    const [a, b, c, d] = v4.slice(1).map(Number);
    h = h.slice(0, v4.index) + ((a << 8) | b).toString(16) + ':' + ((c << 8) | d).toString(16);
  }
  const [left, right] = h.includes('::') ? h.split('::') : [h, null];
  const l = left === '' ? [] : left.split(':');
  const r = right === null || right === '' ? [] : right.split(':');
  const groups = right === null ? l : [...l, ...new Array<string>(8 - l.length - r.length).fill('0'), ...r];
  return groups.map((g) => g.padStart(4, '0'));
}
