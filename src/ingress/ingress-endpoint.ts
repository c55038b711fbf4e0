// The QUIC ingress listener (QUIC thread; HOT: the datagram handler, stream reads and reply writes run per packet /
// per transaction; a hot-path file, hence its length). One unconnected UDP socket, many quiche connections, one
// deadline timer each. What it decides itself: TLS (a client certificate is required), ALPN slotrelay/1 or
// solana-tpu, the server and per-key connection limits, stream framing (one stream = one request, delivered on FIN),
// the stream size limits, the FIN timeout, the reply timeout, and back-pressure: while the front's queue is full a
// connection's streams are left unread in quiche (their MAX_STREAMS credit is not returned, so the client slows down by
// itself) for at most holdTimeoutMs, then refused `overloaded`. Everything about the transaction and the key's
// budget is decided by the front thread (src/ingress/front-ingress.ts): finished streams go out through onStream,
// authentication questions through onAuthenticate, and the answers come back through authResult / reply / verdict.
// Unlike the localnet's TPU listener (src/localnet/tpu-endpoint.ts) a bad stream never closes its connection: it is
// refused alone (STOP_SENDING / RESET_STREAM with a code of ./codes.ts). Codes: docs/quic-ingress.md. The socket,
// routing, accept, flush, timers and close are src/quic/server-core.ts's; this file is the ingress policy.
import type dgram from 'node:dgram';
import { quiche, type QuicheConfig, type QuicheConnection } from '../quic/quiche.js';
import { QuicServerCore, ServerCoreConn } from '../quic/server-core.js';
import { RetryTokens } from '../quic/retry-token.js';
import { MAX_RECV_UDP_PAYLOAD, MAX_SEND_UDP_PAYLOAD, SERVER_HANDSHAKE_TIMEOUT_MS, TLS_SIGALGS, TRANSPORT_CODE_NO_APPLICATION_PROTOCOL } from '../quic/constants.js';
import { INGRESS_COUNTER, MSG_KINDS, connectionCounterIndex, streamCounterIndex, type IngressConnectionOutcome, type IngressStreamOutcome } from '../shm/ingress-layout.js';
import { ALPN_INDEX, CONNECTION_CODE, INGRESS_ALPNS, STREAM_CODE } from './codes.js';
import { readClientCertificate } from './client-certificate.js';

export interface IngressEndpointOptions {
  readonly host: string;
  /** 0 = ephemeral. */
  readonly port: number;
  readonly keyPem: string;
  readonly certPem: string;
  readonly maxConnections: number;
  readonly maxConnectionsPerKey: number;
  /** Concurrent streams per connection, of each kind (MAX_STREAMS). */
  readonly maxConcurrentStreams: number;
  readonly maxUniBytes: number;
  readonly maxBidiBytes: number;
  readonly idleTimeoutMs: number;
  readonly streamTimeoutMs: number;
  readonly replyTimeoutMs: number;
  readonly handshakeTimeoutMs?: number;
  /** QUIC-thread counters (src/shm/ingress-layout.ts INGRESS_COUNTER); this endpoint is their one writer. */
  readonly counters: Float64Array;
  /** Ask who a certificate belongs to; answer with authResult(). false = cannot ask now (closed with code 3). */
  onAuthenticate(connId: number, commonName: string, identity: string | null, alpn: number): boolean;
  /**
   * A finished stream (kind MSG_KINDS.uniStream / bidiStream). `bytes` is valid only during the call. false = the
   * front's queue is full (the stream is refused as overloaded).
   */
  onStream(kind: number, keyId: number, connId: number, streamId: number, bytes: Uint8Array, finAtMs: number): boolean;
  /**
   * Local admission (src/ingress/local-admission.ts), tried before onStream: the answer when the stream was admitted
   * and sent in this thread (empty for a uni stream), null = onStream decides. `bytes` is valid only during the call.
   */
  readonly onLocal?: (bidi: boolean, keyId: number, connId: number, streamId: number, bytes: Uint8Array, finAtMs: number) => Uint8Array | null;
  /** Called right after onLocal admitted a stream and its answer left: the send to the leaders (local-admission.ts). */
  readonly afterLocal?: () => void;
  /** A precomputed MessagePack answer for a bidi stream refused as overloaded on this thread. */
  readonly overloadedReply: Uint8Array;
  /**
   * Back-pressure by stream credit: whether the front's queue has room for one more stream (HOT: called before each
   * stream is read; one Atomics.load). false = the connection is held: its streams stay unread in quiche, their credit
   * with them, until there is room again. Absent = always room (a full queue then refuses `overloaded` at once).
   */
  readonly frontHasRoom?: () => boolean;
  /**
   * Longest hold of a connection (relayHost.quic.holdTimeoutMs): past it, while the queue stays full, its finished
   * streams are read and refused `overloaded` (the answer a dead front still gives) until there is room again.
   */
  readonly holdTimeoutMs: number;
}

interface PartialStream {
  buf: Buffer;
  len: number;
  startedMs: number;
}

interface PendingReply {
  buf: Uint8Array;
  off: number;
  deadlineMs: number;
}

const STATE_HANDSHAKE = 0;
const STATE_AUTH = 1;
const STATE_OPEN = 2;
const STATE_CLOSING = 3;

class IngressConn extends ServerCoreConn {
  state = STATE_HANDSHAKE;
  alpn = -1;
  keyId = -1;
  partials: Map<number, PartialStream> | null = null;
  /**
   * Uni streams refused as too large, or past streamTimeoutMs without their end, that are read and dropped to their
   * end (FIN or the client's reset), so that quiche collects them and gives their credit back: sid -> when they stall
   * (performance.now() ms; Infinity once stalled).
   */
  discards: Map<number, number> | null = null;
  /**
   * Bidi streams the client reset, already counted, that we reset back: quiche collects such a stream (and returns its
   * credit) only on a stream_recv after our RESET_STREAM was acknowledged, so they are read again until then.
   */
  resetBidi: Set<number> | null = null;
  /**
   * Uni streams past streamTimeoutMs that have not ended: never stopped (quiche 0.18 would not return a stopped
   * stream's credit), they hold their credit until the client ends them (docs/quic-ingress.md).
   */
  stalledUni = 0;
  replies: Map<number, PendingReply> | null = null;
  /** Back-pressure: when its reads were held because the front's queue was full (performance.now() ms); -1 = not held. */
  heldAtMs = -1;
  /** The hold outlasted holdTimeoutMs (counted once): its finished streams are refused `overloaded` while it lasts. */
  holdExpired = false;
  /** Next client bidi (index 0) and uni (index 1) stream id above every one read so far: readStreams probes there. */
  readonly probe = [0, 2];
}

const SHUTDOWN_READ = quiche.Shutdown.Read;
const SHUTDOWN_WRITE = quiche.Shutdown.Write;
const encoder = new TextEncoder();
const SWEEP_MS = 100;
/**
 * Longest hold of the ACK of a datagram that brought bidi requests: their answers, from the front microseconds later,
 * carry it instead of a datagram of its own. Far below the 25 ms max_ack_delay quiche advertises.
 */
const ACK_HOLD_MS = 1;
/**
 * Handshakes in progress above which a new client must first echo a stateless Retry token (one more round trip): a
 * flood of junk Initials then costs a Retry datagram each and no state (issue #30 item 8: each used to hold a quiche
 * connection, ~20 KB, for the 2 s handshake timeout). Below it clients connect in one round trip.
 */
const RETRY_ABOVE_HALF_OPEN = 32;
/**
 * New clients per second connecting without a Retry (one round trip); beyond, Retry. A junk Initial fails in quiche at
 * once, so a flood shows as a rate, not as handshakes in progress; and since the first junk one switches every
 * tokenless Initial to a Retry for JUNK_VALIDATE_MS (server-core.ts), a flood builds about one TLS connection per 10 s.
 */
const UNVALIDATED_PER_SECOND = 200;
/** Handshakes in progress at most (address-validated ones included): beyond, Initials are dropped (clients resend). */
const MAX_HALF_OPEN = 512;
/**
 * How often held connections are retried. The front does not wake this thread when it drains the queue (answers
 * come back on the reply ring, which retries them at once through resumeHeld(), but local-admission notes and
 * authentication questions get none), so a timer armed only while some connection is held: nothing is armed, and
 * nothing costs, otherwise. 1 ms: the front drains thousands of streams a millisecond.
 */
const HOLD_POLL_MS = 1;

function now(): number {
  return performance.timeOrigin + performance.now();
}

export class IngressEndpoint extends QuicServerCore<IngressConn> {
  /** Stream reads land here: one byte more than the larger limit, so an oversized stream shows on its first read. */
  private readonly rx: Buffer;
  private readonly k: Float64Array;
  private readonly byId = new Map<number, IngressConn>();
  /** Open (authenticated) connections per key id. */
  private readonly perKey = new Map<number, number>();
  private open = 0;
  private sweeper: NodeJS.Timeout | null = null;
  /** Set by deliver() when a bidi request went to the front during the current recv(). */
  private answerDue = false;
  /** Connections whose reads are held (back-pressure), oldest hold first: resumed in that order. */
  private readonly held = new Set<IngressConn>();
  private holdTimer: NodeJS.Timeout | null = null;
  /** Finished streams handed to deliver() (ever): the difference across a held connection's read = its held streams. */
  private delivered = 0;

  private constructor(private readonly o: IngressEndpointOptions) {
    // Handshakes beyond twice the connection limit are not even started (state held per Initial packet is bounded);
    // below that a handshake completes and is closed with code 3, so the client learns why.
    super({
      host: o.host,
      config: buildIngressConfig(o),
      handshakeTimeoutMs: o.handshakeTimeoutMs ?? SERVER_HANDSHAKE_TIMEOUT_MS,
      maxConnectionSlots: 2 * o.maxConnections,
      retry: new RetryTokens(),
      retryAboveHalfOpen: RETRY_ABOVE_HALF_OPEN,
      maxHalfOpen: MAX_HALF_OPEN,
      unvalidatedPerSecond: UNVALIDATED_PER_SECOND,
    });
    this.k = o.counters;
    // A gauge this endpoint owns: a QUIC thread that died holding connections left its count (the buffer outlives it).
    this.k[INGRESS_COUNTER.connectionsHeld] = 0;
    this.rx = Buffer.allocUnsafeSlow(Math.max(o.maxUniBytes, o.maxBidiBytes) + 1);
  }

  static async listen(o: IngressEndpointOptions): Promise<IngressEndpoint> {
    const s = new IngressEndpoint(o);
    await s.bind(o.port, s.onMessage);
    s.sweeper = setInterval(s.sweep, SWEEP_MS);
    return s;
  }

  /**
   * Closes every connection with code 4 (shutting_down) and the socket (cold: once, on stop). It waits until the
   * CONNECTION_CLOSE datagrams have left through the socket before closing it (server-core.ts closeSocket), so the
   * clients see code 4 rather than their idle timeout.
   */
  async close(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.sweeper !== null) clearInterval(this.sweeper);
    if (this.holdTimer !== null) clearTimeout(this.holdTimer);
    this.holdTimer = null;
    this.sock.off('message', this.onMessage); // no new connection, nothing more read, while the closes go out
    const sent: Promise<void>[] = [];
    this.closeConnections(CONNECTION_CODE.shuttingDown, encoder.encode('shutting_down'), sent);
    await this.closeSocket(sent);
  }

  // ---- answers from the front thread ----

  authResult(connId: number, keyId: number): void {
    const c = this.byId.get(connId);
    if (c === undefined || c.closed || c.state !== STATE_AUTH) return;
    if (keyId < 0) return this.refuseConnection(c, CONNECTION_CODE.unauthorized, 'unauthorized', 'unauthorized');
    const n = this.perKey.get(keyId) ?? 0;
    if (n >= this.o.maxConnectionsPerKey) return this.refuseConnection(c, CONNECTION_CODE.keyConnectionLimit, 'key_connection_limit', 'key_connection_limit');
    this.perKey.set(keyId, n + 1);
    c.keyId = keyId;
    c.state = STATE_OPEN;
    this.open++;
    this.k[INGRESS_COUNTER.connectionsActive] = this.open;
    this.k[connectionCounterIndex('accepted')]++;
    // Streams that arrived while the key was looked up waited in quiche (not read): read them now.
    if (c.conn.isReadable()) this.readStreams(c);
    this.queueFlush(c);
  }

  /** The front's MessagePack answer of a bidi stream: written with FIN (the rest waits for flow-control credit). */
  reply(connId: number, streamId: number, payload: Uint8Array, code: number): void {
    this.k[INGRESS_COUNTER.streamsPending]--;
    this.k[streamCounterIndex(code === 0 ? 'accepted' : 'refused')]++;
    const c = this.byId.get(connId);
    if (c === undefined || c.closed) return;
    this.writeReply(c, streamId, payload);
    this.queueFlush(c);
  }

  /** The front's verdict on a uni stream (0 = accepted). A refusal sends STOP_SENDING if the stream is still open. */
  verdict(connId: number, streamId: number, code: number): void {
    this.k[INGRESS_COUNTER.streamsPending]--;
    if (code === 0) {
      this.k[streamCounterIndex('accepted')]++;
      return;
    }
    this.k[streamCounterIndex('refused')]++;
    const c = this.byId.get(connId);
    if (c === undefined || c.closed) return;
    // A stream read to its FIN is complete: QUIC has no frame for it any more (RFC 9000 3.5), quiche ignores this.
    this.shutdown(c, streamId, SHUTDOWN_READ, code);
  }

  // ---- hot path ----

  /** Routing by our connection-id layout (one Map lookup, no header parse), recv, accept: server-core.ts. */
  private readonly onMessage = (msg: Buffer, rinfo: dgram.RemoteInfo): void => {
    this.k[INGRESS_COUNTER.datagramsReceived]++;
    this.k[INGRESS_COUNTER.bytesReceived] += msg.length;
    this.handleDatagram(msg, rinfo);
  };

  /** After each datagram quiche took (the core's recv; the handshake step ran already). */
  protected afterRecv(c: IngressConn): void {
    const conn = c.conn;
    this.answerDue = false;
    if (c.state === STATE_OPEN && conn.isReadable()) this.readStreams(c);
    if (c.replies !== null) this.retryReplies(c);
    if (c.resetBidi !== null) this.collectResetBidi(c);
    // The answer will carry this datagram's ACK (ACK_HOLD_MS): sent alone now it would cost a sendmsg here and a
    // datagram for the client to read, on the path of the request it acknowledges. The connection's timer bounds it.
    if (this.answerDue && c.replies === null && !c.flushQueued && !conn.isDraining() && !conn.isClosed()) {
      c.timer.arm(ACK_HOLD_MS, performance.now());
      return;
    }
    // Replies (ACKs, credit, answers) go out once per event-loop turn: one ACK covers a burst (server-core.ts).
    this.queueFlush(c);
  }

  private readStreams(c: IngressConn): void {
    if (c.heldAtMs < 0) return this.readReadable(c);
    // A held connection (cold): what it reads now waited unread (released, or past its hold: refused).
    const n0 = this.delivered;
    this.readReadable(c);
    this.k[INGRESS_COUNTER.streamsHeld] += this.delivered - n0;
  }

  private readReadable(c: IngressConn): void {
    const conn = c.conn;
    // conn.readable() builds a native iterator (a napi object, one result object per step): ~25 us a datagram,
    // measured, on the path of every request. Clients open streams in order, so what became readable is almost always
    // the next new stream of its kind: probe those with streamReadable (a boolean) first, and take the iterator only
    // when something is still readable (a stream in several packets, or one that overtook a lost one).
    // Each stream is read only if the front's queue has room (isHeld(): else the connection is held and the stream,
    // unread, keeps its credit); the probe moves past read streams only, so a held one is probed again on resume.
    const probe = c.probe;
    for (let k = 0; k < 2; k++) {
      for (let sid = probe[k]; conn.streamReadable(sid); sid += 4) {
        if (this.isHeld(c)) return;
        probe[k] = sid + 4;
        if (this.readStream(c, sid) && c.partials !== null) c.partials.delete(sid);
        if (conn.isClosed() || conn.isDraining()) return;
      }
    }
    if (!conn.isReadable()) return;
    for (const sid of conn.readable()) {
      if (this.isHeld(c)) return;
      const k = (sid & 2) >> 1;
      if (sid >= probe[k]) probe[k] = sid + 4;
      if (this.readStream(c, sid) && c.partials !== null) c.partials.delete(sid);
      if (conn.isClosed() || conn.isDraining()) return;
    }
  }

  /** Reads what stream `sid` has; true once it is over (delivered or refused), false while more is due. */
  private readStream(c: IngressConn, sid: number): boolean {
    const conn = c.conn;
    const bidi = (sid & 2) === 0;
    if (c.discards !== null && c.discards.has(sid)) return this.discard(c, sid);
    if (bidi && c.alpn === ALPN_INDEX.tpu) {
      this.refuseStream(c, sid, true, STREAM_CODE.bidiNotAllowed, 'bidi_not_allowed');
      return true;
    }
    const max = bidi ? this.o.maxBidiBytes : this.o.maxUniBytes;
    const rx = this.rx;
    let p = c.partials === null ? undefined : c.partials.get(sid);
    for (;;) {
      let r: [number, boolean] | null;
      try {
        r = conn.streamRecv(sid, rx);
      } catch {
        // StreamReset: the client abandoned it (a uni stream is collected by this very read).
        if (bidi) return this.clientResetBidi(c, sid);
        this.k[streamCounterIndex('unfinished')]++;
        return true;
      }
      if (r === null) return false;
      const n = r[0];
      const fin = r[1];
      if (p === undefined) {
        if (fin) {
          // The usual case: the whole request in one read.
          if (n > max) return this.tooLarge(c, sid, bidi);
          if (n === 0 && !bidi) {
            this.k[streamCounterIndex('empty')]++;
            return true;
          }
          this.deliver(c, sid, bidi, rx.subarray(0, n));
          return true;
        }
        if (n > max) return this.tooLarge(c, sid, bidi);
        if (n === 0) continue;
        p = { buf: Buffer.allocUnsafe(max), len: 0, startedMs: performance.now() };
        (c.partials ??= new Map()).set(sid, p);
      } else if (p.len + n > max) {
        return this.tooLarge(c, sid, bidi);
      }
      rx.copy(p.buf, p.len, 0, n);
      p.len += n;
      if (fin) {
        if (p.len === 0 && !bidi) {
          this.k[streamCounterIndex('empty')]++;
          return true;
        }
        this.deliver(c, sid, bidi, p.buf.subarray(0, p.len));
        return true;
      }
    }
  }

  /**
   * Back-pressure, before each stream is read (HOT: one Atomics.load through frontHasRoom): true = leave the
   * connection's streams unread for now. A held connection holds every stream, even one local admission could take
   * (its note needs a slot of the same queue) or one to be refused: one rule, and the probe order kept.
   */
  private isHeld(c: IngressConn): boolean {
    const room = this.o.frontHasRoom;
    if (room === undefined) return false;
    if (room()) {
      if (c.heldAtMs >= 0) this.release(c);
      return false;
    }
    return this.hold(c);
  }

  private deliver(c: IngressConn, sid: number, bidi: boolean, bytes: Uint8Array): void {
    this.delivered++;
    // Read while held: the hold outlasted holdTimeoutMs (isHeld), and the front's queue is still full.
    if (c.heldAtMs >= 0) return this.overloaded(c, sid, bidi);
    const finAtMs = now();
    if (this.o.onLocal !== undefined) {
      const answer = this.o.onLocal(bidi, c.keyId, c.id, sid, bytes, finAtMs);
      if (answer !== null) {
        this.k[streamCounterIndex('accepted')]++;
        this.k[INGRESS_COUNTER.localAdmitted]++;
        if (bidi) {
          // The acknowledgement leaves now, before the send it acknowledges (accepted = in the slab, replayable): the
          // client does not wait for the egress's sendmsg, as it does not over HTTP.
          this.writeReply(c, sid, answer);
          this.flush(c);
        }
        this.o.afterLocal!();
        return;
      }
    }
    const kind = bidi ? MSG_KINDS.bidiStream : MSG_KINDS.uniStream;
    if (this.o.onStream(kind, c.keyId, c.id, sid, bytes, finAtMs)) {
      this.k[INGRESS_COUNTER.streamsPending]++;
      if (bidi) this.answerDue = true;
      return;
    }
    this.overloaded(c, sid, bidi);
  }

  /** Refused as overloaded: the precomputed answer on a bidi stream, STOP_SENDING 21 on a uni one (if still open). */
  private overloaded(c: IngressConn, sid: number, bidi: boolean): void {
    this.k[streamCounterIndex('overloaded')]++;
    if (bidi) this.writeReply(c, sid, this.o.overloadedReply);
    else this.shutdown(c, sid, SHUTDOWN_READ, STREAM_CODE.overloaded);
  }

  /** Data + FIN in one streamSend; what does not fit (client flow control) waits in c.replies until credit comes. */
  private writeReply(c: IngressConn, sid: number, payload: Uint8Array): void {
    let written: number | null;
    try {
      written = c.conn.streamSend(sid, payload, true);
    } catch {
      return; // the client reset / stopped the stream, or the connection is closing: nobody to answer
    }
    const w = written ?? 0;
    if (w >= payload.length) return;
    // A copy: the payload is a view into the reply ring, valid only during this call.
    (c.replies ??= new Map()).set(sid, { buf: Uint8Array.from(payload.subarray(w)), off: 0, deadlineMs: performance.now() + this.o.replyTimeoutMs });
  }

  private retryReplies(c: IngressConn): void {
    const replies = c.replies!;
    for (const [sid, r] of replies) {
      let written: number | null;
      try {
        written = c.conn.streamSend(sid, r.buf.subarray(r.off), true);
      } catch {
        replies.delete(sid);
        continue;
      }
      r.off += written ?? 0;
      if (r.off >= r.buf.length) replies.delete(sid);
    }
    if (replies.size === 0) c.replies = null;
  }

  /** Every datagram the core sends from a connection (flush, close). */
  protected countSent(bytes: number): void {
    this.k[INGRESS_COUNTER.datagramsSent]++;
    this.k[INGRESS_COUNTER.bytesSent] += bytes;
  }

  /** The core's afterIo, the connection still open, before its timer is re-armed. */
  protected override beforeRearm(c: IngressConn): void {
    // A CONNECTION_CLOSE was exchanged: quiche keeps the connection 3 PTOs to absorb late packets, but its key's slot
    // is free now (a client that closes and reconnects at once is not refused with code 2).
    if (c.keyId >= 0 && c.conn.isDraining()) this.releaseKey(c);
  }

  // ---- cold path ----

  /**
   * The front's queue is full as a stream of `c` is about to be read: hold the connection (true), or, once the hold
   * outlasted holdTimeoutMs, let it read so that deliver() refuses its streams `overloaded` (false).
   */
  private hold(c: IngressConn): boolean {
    const t = performance.now();
    if (c.heldAtMs < 0) {
      c.heldAtMs = t;
      this.held.add(c);
      this.k[INGRESS_COUNTER.holds]++;
      this.k[INGRESS_COUNTER.connectionsHeld] = this.held.size;
      this.holdTimer ??= setTimeout(this.holdTick, HOLD_POLL_MS);
      return true;
    }
    if (t - c.heldAtMs < this.o.holdTimeoutMs) return true;
    if (!c.holdExpired) {
      c.holdExpired = true;
      this.k[INGRESS_COUNTER.holdTimeouts]++;
    }
    return false;
  }

  private release(c: IngressConn): void {
    c.heldAtMs = -1;
    c.holdExpired = false;
    this.held.delete(c);
    this.k[INGRESS_COUNTER.connectionsHeld] = this.held.size;
  }

  /**
   * Retries the held connections (the reply loop calls it after each drain of the front's answers: the front took
   * streams, so there may be room). Cheap when nothing is held.
   */
  resumeHeld(): void {
    if (this.held.size > 0) this.retryHeld();
  }

  private readonly holdTick = (): void => {
    this.holdTimer = null;
    this.retryHeld();
    if (this.held.size > 0 && !this.stopped) this.holdTimer = setTimeout(this.holdTick, HOLD_POLL_MS);
  };

  /**
   * Each held connection, oldest hold first, once (one re-held during its read goes to the back, for the next round):
   * with room again it is released and its waiting streams read (until the queue is full again); past its hold it
   * reads them and refuses them `overloaded` (the client waits for credit and sends nothing meanwhile, so nothing else
   * would read them); else it stays held.
   */
  private retryHeld(): void {
    const room = this.o.frontHasRoom!;
    const t = performance.now();
    let n = this.held.size;
    for (const c of this.held) {
      if (n-- <= 0) break;
      if (c.closed) {
        this.release(c);
        continue;
      }
      if (room()) {
        this.release(c);
        const n0 = this.delivered;
        if (c.state === STATE_OPEN && c.conn.isReadable()) this.readReadable(c);
        this.k[INGRESS_COUNTER.streamsHeld] += this.delivered - n0;
      } else if (t - c.heldAtMs >= this.o.holdTimeoutMs && c.state === STATE_OPEN && c.conn.isReadable()) {
        this.readStreams(c);
      } else {
        continue; // held, or past its hold with nothing to read (it stays listed until there is room)
      }
      this.flush(c);
      this.afterIo(c);
    }
  }

  /**
   * An oversized stream. Bidi: STOP_SENDING + RESET_STREAM (the client's RESET_STREAM in reply completes it). Uni: read
   * and dropped to its end instead, because quiche 0.18 never collects a remote uni stream once stopped (shutdown
   * Read): its credit would be lost for the connection's life. The usual oversized stream (all sent with its FIN)
   * ends within a packet or two; one still sending at streamTimeoutMs is stopped then (sweep).
   */
  private tooLarge(c: IngressConn, sid: number, bidi: boolean): boolean {
    if (bidi) {
      this.refuseStream(c, sid, bidi, STREAM_CODE.tooLarge, 'too_large');
      return true;
    }
    this.k[streamCounterIndex('too_large')]++;
    const p = c.partials === null ? undefined : c.partials.get(sid);
    if (p !== undefined) c.partials!.delete(sid);
    (c.discards ??= new Map()).set(sid, (p === undefined ? performance.now() : p.startedMs) + this.o.streamTimeoutMs);
    return this.discard(c, sid);
  }

  /**
   * A bidi stream the client reset. quiche 0.18 collects it only once both sides are over: we reset our side
   * (RESET_STREAM 18, nobody to answer), and the stream stays readable (the reset's error) until a read after that
   * RESET_STREAM was acknowledged collects it. Counted once.
   */
  private clientResetBidi(c: IngressConn, sid: number): true {
    if (c.resetBidi !== null && c.resetBidi.has(sid)) return true;
    this.k[streamCounterIndex('unfinished')]++;
    this.shutdown(c, sid, SHUTDOWN_WRITE, STREAM_CODE.unfinished);
    (c.resetBidi ??= new Set()).add(sid);
    return true;
  }

  /**
   * Reads the client-reset bidi streams again (quiche no longer lists them as readable): the read after our
   * RESET_STREAM's acknowledgement collects the stream; a stream gone from quiche leaves the set.
   */
  private collectResetBidi(c: IngressConn): void {
    const set = c.resetBidi!;
    for (const sid of set) {
      try {
        c.conn.streamRecv(sid, this.rx);
      } catch {
        // StreamReset while it waits; InvalidStreamState once collected
      }
      if (!c.conn.streamReadable(sid)) set.delete(sid);
    }
    if (set.size === 0) c.resetBidi = null;
  }

  /** Reads and drops what a refused uni stream has; true once it ended (FIN or reset: quiche collected it). */
  private discard(c: IngressConn, sid: number): boolean {
    const conn = c.conn;
    for (;;) {
      let r: [number, boolean] | null;
      try {
        r = conn.streamRecv(sid, this.rx);
      } catch {
        r = [0, true]; // reset by the client: over too
      }
      if (r === null) return false;
      if (r[1]) {
        if (c.discards!.get(sid) === Infinity) c.stalledUni--; // its credit is back
        c.discards!.delete(sid);
        if (c.discards!.size === 0) c.discards = null;
        return true;
      }
    }
  }

  /**
   * A uni stream that did not end in time (sweep). It is not stopped: quiche 0.18 never collects a remote uni stream
   * once stopped (shutdown Read), even after the client's RESET_STREAM, so its credit would be lost for the
   * connection's life. It stays with the discards (read and dropped) and holds its credit until the client ends it
   * (FIN or reset); a connection with half its uni credit held that way is closed with code 5 so that the client
   * learns at once, rather than stalling on credit until its idle timeout.
   */
  private stallUni(c: IngressConn, sid: number): void {
    (c.discards ??= new Map()).set(sid, Infinity);
    if (++c.stalledUni * 2 >= this.o.maxConcurrentStreams && c.state !== STATE_CLOSING) {
      this.refuseConnection(c, CONNECTION_CODE.streamsAbandoned, 'streams_abandoned', null);
    }
  }

  /** STOP_SENDING (and RESET_STREAM on a bidi stream) with `code`; the connection stays open (uni: see stallUni). */
  private refuseStream(c: IngressConn, sid: number, bidi: boolean, code: number, outcome: IngressStreamOutcome): void {
    this.k[streamCounterIndex(outcome)]++;
    if (c.partials !== null) c.partials.delete(sid);
    if (!bidi) return this.stallUni(c, sid);
    this.shutdown(c, sid, SHUTDOWN_READ, code);
    this.shutdown(c, sid, SHUTDOWN_WRITE, code);
  }

  private shutdown(c: IngressConn, sid: number, direction: typeof SHUTDOWN_READ | typeof SHUTDOWN_WRITE, code: number): void {
    try {
      c.conn.streamShutdown(sid, direction, code);
    } catch {
      // the stream is complete or gone already
    }
  }

  private refuseConnection(c: IngressConn, code: number, reason: string, outcome: IngressConnectionOutcome | null): void {
    if (outcome !== null) this.k[connectionCounterIndex(outcome)]++;
    c.state = STATE_CLOSING;
    try {
      c.conn.close(true, code, encoder.encode(reason));
    } catch {
      // already closing
    }
    this.queueFlush(c);
  }

  /** A connection the core accepted (an Initial packet); answers from the front find it by id. */
  protected newConn(id: number, scid: Buffer, conn: QuicheConnection, address: string, port: number, local: { host: string; port: number }): IngressConn {
    const c = new IngressConn(id, scid, conn, address, port, local);
    this.byId.set(c.id, c);
    return c;
  }

  /** The handshake completed (the core cleared its handshake timer): ALPN, limits, then the front's authentication. */
  protected onEstablished(c: IngressConn): void {
    const conn = c.conn;
    const alpn = INGRESS_ALPNS.indexOf(Buffer.from(conn.applicationProto()).toString() as (typeof INGRESS_ALPNS)[number]);
    if (alpn < 0) {
      // BoringSSL fails the handshake without a common ALPN; a client offering none at all gets here.
      c.state = STATE_CLOSING;
      this.k[connectionCounterIndex('handshake_failed')]++;
      conn.close(false, TRANSPORT_CODE_NO_APPLICATION_PROTOCOL, encoder.encode('slotrelay/1 or solana-tpu required'));
      return;
    }
    c.alpn = alpn;
    if (this.open >= this.o.maxConnections) return this.refuseConnection(c, CONNECTION_CODE.serverBusy, 'server_connection_limit', 'server_connection_limit');
    const chain = conn.peerCertChain();
    // BoringSSL already refuses a handshake without a certificate (TLS alert certificate_required); keep the guard.
    if (chain === null || chain.length === 0) return this.refuseConnection(c, CONNECTION_CODE.unauthorized, 'unauthorized', 'unauthorized');
    const cert = readClientCertificate(chain);
    c.state = STATE_AUTH;
    if (!this.o.onAuthenticate(c.id, cert.commonName, cert.identity, alpn)) {
      this.refuseConnection(c, CONNECTION_CODE.serverBusy, 'server_busy', 'server_connection_limit');
    }
  }

  /** FIN timeouts of partial streams and reply timeouts of unanswered bidi streams (every SWEEP_MS). */
  private readonly sweep = (): void => {
    const t = performance.now();
    const limit = this.o.streamTimeoutMs;
    for (const c of this.bySlot.values()) {
      if (c.closed) continue;
      let any = false;
      // A held connection's streams are not read: a FIN may be waiting in quiche. Their timeouts wait for the release
      // (or the hold's end, after which it reads them every HOLD_POLL_MS).
      const reading = c.heldAtMs < 0 || t - c.heldAtMs >= this.o.holdTimeoutMs;
      if (reading && c.partials !== null && c.partials.size > 0) {
        for (const [sid, p] of c.partials) {
          if (t - p.startedMs < limit) continue;
          this.refuseStream(c, sid, (sid & 2) === 0, STREAM_CODE.unfinished, 'unfinished');
          any = true;
        }
      }
      if (reading && c.discards !== null) {
        for (const [sid, deadline] of c.discards) {
          if (t < deadline) continue;
          this.stallUni(c, sid);
          any = true;
        }
        if (c.discards !== null && c.discards.size === 0) c.discards = null;
      }
      if (c.replies !== null) {
        for (const [sid, r] of c.replies) {
          if (t < r.deadlineMs) continue;
          c.replies.delete(sid);
          this.k[streamCounterIndex('reply_timeout')]++;
          this.shutdown(c, sid, SHUTDOWN_WRITE, STREAM_CODE.replyTimeout);
          any = true;
        }
        if (c.replies.size === 0) c.replies = null;
      }
      if (any) {
        this.flush(c);
        this.afterIo(c);
      }
    }
  };

  /** The core dropped the connection (closed, timed out, shut down): its counts and its key's slot. */
  protected onFinalize(c: IngressConn): void {
    this.byId.delete(c.id);
    if (c.heldAtMs >= 0) this.release(c);
    if (c.partials !== null) this.k[streamCounterIndex('unfinished')] += c.partials.size;
    if (c.state === STATE_HANDSHAKE) this.k[connectionCounterIndex('handshake_failed')]++;
    this.releaseKey(c);
  }

  private releaseKey(c: IngressConn): void {
    if (c.keyId < 0) return;
    const n = (this.perKey.get(c.keyId) ?? 1) - 1;
    if (n === 0) this.perKey.delete(c.keyId);
    else this.perKey.set(c.keyId, n);
    c.keyId = -1;
    this.open--;
    this.k[INGRESS_COUNTER.connectionsActive] = this.open;
  }
}

/**
 * Server config: a client certificate is required (BoringSSL FAIL_IF_NO_PEER_CERT) but not verified (any self-signed
 * one; the key is read after the handshake, as Agave does); both ALPNs; uni and bidi streams. Per-stream windows are
 * twice the stream limit so an oversized stream's excess reaches us (refused with code 17) instead of quiche
 * closing the connection for a flow-control error.
 */
function buildIngressConfig(o: IngressEndpointOptions): QuicheConfig {
  const c = quiche.Config.withBoringSslCtx(true, true, null, [encoder.encode(o.keyPem)], [encoder.encode(o.certPem)], TLS_SIGALGS);
  c.setApplicationProtos([...INGRESS_ALPNS]);
  c.setMaxIdleTimeout(o.idleTimeoutMs);
  c.setMaxSendUdpPayloadSize(MAX_SEND_UDP_PAYLOAD);
  c.setMaxRecvUdpPayloadSize(MAX_RECV_UDP_PAYLOAD);
  const uniWindow = o.maxUniBytes * 2;
  const bidiWindow = o.maxBidiBytes * 2;
  c.setInitialMaxStreamDataUni(uniWindow);
  c.setInitialMaxStreamDataBidiRemote(bidiWindow);
  c.setInitialMaxStreamDataBidiLocal(0);
  c.setInitialMaxData((uniWindow + bidiWindow) * o.maxConcurrentStreams);
  c.setInitialMaxStreamsBidi(o.maxConcurrentStreams);
  c.setInitialMaxStreamsUni(o.maxConcurrentStreams);
  c.setDisableActiveMigration(true);
  c.setCcAlgorithmName('cubic');
  c.enablePacing(false);
  return c;
}
