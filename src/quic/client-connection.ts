// One QUIC client connection to a Solana TPU (egress thread; HOT: trySendTransaction and the datagram handler run per
// transaction). Owns a CONNECTED UDP socket (sends skip the kernel's route/address lookup), the quiche connection,
// the send loop and one deadline timer. One transaction per unidirectional stream, data + FIN in ONE streamSend:
// a FIN sent as a separate empty write can reach the server after the data and leave a stream unfinished. (One
// exception, at the congestion-window edge: the part that fits, then the rest WITH the FIN; see writeStream.)
// Flow: trySendTransaction -> stream write -> flush (conn.send() until null, each datagram straight to the kernel).
// When there is no stream credit (peerStreamsLeftUni) or no send capacity (congestion/flow window), the transaction
// is queued and the queue resumes on the next incoming datagram (an ACK or MAX_STREAMS) or timer: never spin. A queued
// transaction waits at most maxQueueWaitMs (the same timer fires for the queue head): then it leaves the queue through
// onStale, so a peer that grants no credit or never ACKs cannot hold anything forever. Every queued transaction
// leaves the queue exactly once, in FIFO order, through onQueuedSent, onWriteFailed, onStale or onClose's `unsent`:
// an owner that keeps one waiter per queued transaction can answer them positionally.
// Transport-only use (the egress connection worker, src/egress/connection-worker.ts, which owns its one queue):
// tryWrite() never queues — it answers written / no-credit / no-room / failed — and onWritable() says when a write may
// succeed again (a datagram from the peer: ACK, MAX_STREAMS; the handshake done; a timer). Use one style per connection.
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
  /** Largest transaction accepted by trySendTransaction; default 1232 (PACKET_DATA_SIZE). */
  maxTransactionBytes?: number;
  /** Bound of the wait queue (references, not bytes); trySendTransaction returns false beyond it. Default 4096. */
  maxQueuedTransactions?: number;
  /** Copy a transaction when it must be queued (default true) so callers may reuse their buffer at once. */
  copyQueued?: boolean;
  /**
   * Longest time a transaction may wait in the queue (for credit, room or the handshake), ms; then it is handed to
   * onStale instead of being written. Default Infinity (no limit: the owner must then bound the wait itself).
   */
  maxQueueWaitMs?: number;
  congestionControl?: CongestionControl;
  /** The connection ended; `unsent` are queued transactions never written (hand them to another route). */
  onClose?: (info: QuicCloseInfo, unsent: Uint8Array[]) => void;
  /** A queued transaction quiche refused to write (unexpected stream error): it is handed back, not retried. */
  onWriteFailed?: (tx: Uint8Array) => void;
  /** A queued transaction was written (the queue head; its latency sample was reported just before). */
  onQueuedSent?: () => void;
  /** The queue head waited maxQueueWaitMs without being written: it left the queue unsent. */
  onStale?: (tx: Uint8Array, waitedMs: number) => void;
  /** The wait queue became empty again (credit/room came back). */
  onDrain?: () => void;
  /** Per transaction: microseconds from streamSend to the end of the send loop that handed its datagram(s) to the kernel. */
  onSendLatency?: (micros: number) => void;
  /** Transport-only use: a tryWrite() that answered no-credit / no-room may succeed now (established, peer spoke). */
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
  /** Currently waiting for credit/room. */
  readonly transactionsQueued: number;
  /** How many were ever queued. */
  readonly transactionsQueuedTotal: number;
  /** Queued ones that waited maxQueueWaitMs and left unsent (onStale). */
  readonly transactionsStale: number;
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
    Omit<QuicClientOptions, 'onClose' | 'onDrain' | 'onSendLatency' | 'onWriteFailed' | 'onQueuedSent' | 'onStale' | 'onWritable' | 'identity' | 'serverName'>
  >;
  private readonly onCloseCb: QuicClientOptions['onClose'];
  private readonly onDrainCb: QuicClientOptions['onDrain'];
  private readonly onLatency: QuicClientOptions['onSendLatency'];
  private readonly onWriteFailedCb: QuicClientOptions['onWriteFailed'];
  private readonly onQueuedSentCb: QuicClientOptions['onQueuedSent'];
  private readonly onStaleCb: QuicClientOptions['onStale'];
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
   * Bytes of the queue head already written to openStreamId without FIN (0: none). Only at the congestion-window
   * edge: see writeStream. If the head expires so, its stream is reset (expireStale).
   */
  private openStreamWritten = 0;
  // FIFO wait queue: array + head index, compacted when drained (no per-item allocation beyond the array slot), and
  // each entry's deadline (performance.now() ms) at the same index. One wait limit for all: deadlines never decrease
  // along the queue, so only the head is ever checked.
  private queue: Uint8Array[] = [];
  private queueDeadline: number[] = [];
  private queueHead = 0;
  private queuedTotal = 0;
  private staleTotal = 0;
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
      maxQueuedTransactions: opts.maxQueuedTransactions ?? 4096,
      copyQueued: opts.copyQueued ?? true,
      maxQueueWaitMs: opts.maxQueueWaitMs ?? Infinity,
      congestionControl: opts.congestionControl ?? 'cubic',
    };
    this.onCloseCb = opts.onClose;
    this.onDrainCb = opts.onDrain;
    this.onLatency = opts.onSendLatency;
    this.onWriteFailedCb = opts.onWriteFailed;
    this.onQueuedSentCb = opts.onQueuedSent;
    this.onStaleCb = opts.onStale;
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
   * for the handshake). Transactions given before establishment are queued.
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

  /** Transactions waiting for credit or room. */
  get queued(): number {
    return this.queue.length - this.queueHead;
  }

  /** Streams the peer lets us open now (its MAX_STREAMS credit left); 0 before establishment. Cold: diagnostics. */
  peerStreamsLeft(): number {
    return this.state === 'established' ? this.conn.peerStreamsLeftUni() : 0;
  }

  /**
   * Writes one transaction on its own unidirectional stream (data + FIN in one call).
   * - true: written now (its datagram is already with the kernel).
   * - 'no-credit': accepted but queued: no stream credit (the peer's concurrent-stream limit, or not yet
   *   established) or no room in the congestion/flow window. It is written when the peer's next datagram opens room.
   * - false: NOT accepted (closed, queue full, empty or larger than maxTransactionBytes): the caller still owns it.
   * Without copyQueued=false the bytes are copied only when queued, so the caller may reuse `tx` right away.
   */
  trySendTransaction(tx: Uint8Array): boolean | 'no-credit' {
    if (this.state === 'closed' || tx.length === 0 || tx.length > this.o.maxTransactionBytes) return false;
    if (this.state === 'established' && this.queueHead === this.queue.length) {
      const r = this.writeAndFlush(tx);
      if (r === WRITTEN) {
        this.afterIo();
        return true;
      }
      if (r === FAILED) return false;
    }
    // (A transaction partly written at the window edge is queued whatever the bound: it is already on the wire.)
    if (this.queue.length - this.queueHead >= this.o.maxQueuedTransactions && this.openStreamWritten === 0) return false;
    // new Uint8Array(x) always copies; Buffer#slice would not.
    this.queue.push(this.o.copyQueued ? new Uint8Array(tx) : tx);
    const now = performance.now();
    const deadline = now + this.o.maxQueueWaitMs;
    this.queueDeadline.push(deadline);
    this.queuedTotal++;
    // The head's deadline shares the connection timer (arm() only ever moves it earlier).
    if (this.queue.length - this.queueHead === 1 && deadline !== Infinity) this.timer.arm(deadline - now, now);
    return 'no-credit';
  }

  /**
   * Transport only (HOT): writes one transaction on its own unidirectional stream (data + FIN in one call), never
   * queues it. `written`: its datagram is with the kernel. `no-credit`: no stream credit, or not established yet.
   * `no-room`: the congestion/flow window is full; when `partial` is then true the transaction's first bytes are on the
   * wire already, so the caller must offer THE SAME transaction again first (or abandonPartial()). `failed`: closed,
   * empty, too large, or quiche refused it. The caller may reuse `tx` as soon as this returns.
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
    if (this.conn !== undefined) {
      const s = this.conn.stats();
      lost = s.lost;
      retrans = s.retrans;
      const path = this.conn.pathStats()[0];
      if (path !== undefined) cwnd = path.cwnd;
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
      transactionsQueued: this.queued,
      transactionsQueuedTotal: this.queuedTotal,
      transactionsStale: this.staleTotal,
      streamsFinishedByPeer: finished,
      sendLatencyCount: this.latencyCount,
      sendLatencyMeanUs: this.latencyCount === 0 ? 0 : this.latencySumUs / this.latencyCount,
      sendLatencyMaxUs: this.latencyMaxUs,
      datagramsSent: this.datagramsSent,
      datagramsReceived: this.datagramsReceived,
      packetsLost: lost,
      packetsRetransmitted: retrans,
      congestionWindowBytes: cwnd,
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

  private drainQueue(): void {
    const q = this.queue;
    let head = this.expireStale(performance.now());
    while (head < q.length) {
      const r = this.writeAndFlush(q[head]);
      if (r === NO_CREDIT || r === NO_ROOM) break;
      // A write quiche refused outright (not a lack of room) must not block the queue: hand it back, never drop it.
      if (r === FAILED) {
        if (this.onWriteFailedCb !== undefined) this.onWriteFailedCb(q[head]);
      } else if (this.onQueuedSentCb !== undefined) {
        this.onQueuedSentCb();
      }
      head++;
    }
    this.setQueueHead(head);
  }

  /** Hands every queue entry past its deadline to onStale (head first); returns the new head index (not yet stored). */
  private expireStale(now: number): number {
    const q = this.queue;
    const d = this.queueDeadline;
    let head = this.queueHead;
    if (this.openStreamWritten !== 0 && head < q.length && d[head] <= now) {
      // The head is partly on the wire and no ACK made room for its rest in time (a silent peer): reset the stream
      // (RESET_STREAM: the receiver discards the part it has) and let the head expire like any other.
      try {
        this.conn.streamShutdown(this.openStreamId, SHUTDOWN_WRITE, 0);
      } catch {
        // already reset or the connection is closing: nothing more to discard
      }
      this.releaseOpenStream();
    }
    while (head < q.length && d[head] <= now) {
      this.staleTotal++;
      const tx = q[head];
      head++;
      this.queueHead = head; // a re-entrant send from the callback sees a consistent queue
      if (this.onStaleCb !== undefined) this.onStaleCb(tx, now - (d[head - 1] - this.o.maxQueueWaitMs));
    }
    return head;
  }

  /** Stores the queue head after entries left the queue; compacts, and reports a drained queue. */
  private setQueueHead(head: number): void {
    const q = this.queue;
    if (head === q.length) {
      const had = head > 0;
      this.queue = [];
      this.queueDeadline = [];
      this.queueHead = 0;
      if (had && this.onDrainCb !== undefined) this.onDrainCb();
    } else if (head > 1024) {
      this.queue = q.slice(head);
      this.queueDeadline = this.queueDeadline.slice(head);
      this.queueHead = 0;
    } else {
      this.queueHead = head;
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
      if (this.queueHead < this.queue.length) this.drainQueue();
      else if (this.onWritableCb !== undefined) this.onWritableCb();
      // Nothing of ours went out (no queued stream could be written): hold the ACK for our next stream packet.
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
    if (this.queueHead < this.queue.length) {
      const st = this.queueDeadline[this.queueHead] - now;
      if (st !== Infinity && (delay === null || st < delay)) delay = st < 0 ? 0 : st;
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
    if (this.queueHead < this.queue.length) {
      // Established: write what fits (expiring stale heads first). Still connecting: only expire.
      if (this.state === 'established') this.drainQueue();
      else this.setQueueHead(this.expireStale(now));
    } else if (this.state === 'established' && this.onWritableCb !== undefined) {
      this.onWritableCb();
    }
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
    // (onMessage, the one caller, then tells a transport-only owner it may write: onWritable.)
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
    const unsent = this.queue.slice(this.queueHead);
    this.queue = [];
    this.queueDeadline = [];
    this.queueHead = 0;
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
    if (this.onCloseCb !== undefined) this.onCloseCb(info, unsent);
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
