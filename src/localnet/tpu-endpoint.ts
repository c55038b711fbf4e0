// A Solana-TPU-like QUIC server endpoint (localnet validator listeners, later the QUIC ingress; HOT: the datagram
// handler and stream reads run per packet / per transaction). One unconnected UDP socket, many quiche connections,
// one deadline timer per connection. Like an Agave TPU port: client certificate required (its Ed25519 key is the
// sender identity), ALPN solana-tpu only, unidirectional streams only (0 bidi), a concurrent-uni-stream limit, one
// transaction per stream delivered only on FIN, and an empty or oversized stream closes the WHOLE connection with
// application code 5. Stateless retry and version negotiation are handled as quiche's example server does. The
// socket, routing, accept, flush, timers and close are ../quic/server-core.ts's; this file is the TPU policy.
import type dgram from 'node:dgram';
import { quiche, type QuicheConnection } from '../quic/quiche.js';
import { buildServerConfig, type CongestionControl } from '../quic/quiche-config.js';
import { QuicServerCore, ServerCoreConn, type AcceptEvent } from '../quic/server-core.js';
import { closeInfoOf, type QuicCloseInfo } from '../quic/close-info.js';
import { identityFromCertificate, type IdentityCertificate } from '../quic/identity-certificate.js';
import { RetryTokens } from '../quic/retry-token.js';
import {
  ALPN_SOLANA_TPU,
  MAX_IDLE_TIMEOUT_MS,
  PACKET_DATA_SIZE,
  SERVER_HANDSHAKE_TIMEOUT_MS,
  STREAM_CHUNK_TIMEOUT_MS,
  TPU_CLOSE_CODE,
  TRANSPORT_CODE_NO_APPLICATION_PROTOCOL,
  UNSTAKED_MAX_CONCURRENT_UNI_STREAMS,
} from '../quic/constants.js';
import { DelayLine } from '../quic/delay-line.js';

/** A connected peer as the stream handler sees it. */
export interface QuicServerPeer {
  /** Endpoint-unique connection number. */
  readonly id: number;
  readonly remoteAddress: string;
  readonly remotePort: number;
  /** Base58 Ed25519 key of the client certificate; null if the certificate is not a single Ed25519 one. */
  readonly identity: string | null;
}

export interface QuicServerOptions {
  host: string;
  /** 0 = ephemeral. */
  port: number;
  /** The server certificate (any identity; clients do not verify it). */
  certificate: IdentityCertificate;
  /** Concurrent uni streams per connection; default 128 (Agave unstaked). */
  maxConcurrentUniStreams?: number;
  /** Longest stream accepted; default 1232 (PACKET_DATA_SIZE), 4096 after SIMD-0296. */
  maxTransactionBytes?: number;
  /** New connections beyond this are ignored (counted as rejected); default 1024. */
  maxConnections?: number;
  maxIdleTimeoutMs?: number;
  handshakeTimeoutMs?: number;
  streamChunkTimeoutMs?: number;
  /** Stateless retry (address validation, one extra round trip). Agave/quinn do not; default false. */
  statelessRetry?: boolean;
  congestionControl?: CongestionControl;
  /**
   * Localnet only: one-way path delay applied to every datagram in both directions (received datagrams are processed,
   * and sent datagrams handed to the kernel, this much later), so handshake RTTs and delivery times model distance.
   * 0 (default) keeps the zero-copy path.
   */
  pathDelayMs?: number;
  /** Localnet only: fraction (0..1) of received datagrams dropped at random before QUIC sees them; 1 = a dead host. */
  inboundLossRate?: number;
  /**
   * Localnet QoS: called once a connection is established with its identity known; a non-null answer closes it
   * with that application code (counted as rejected) instead of accepting it.
   */
  admitConnection?: (peer: QuicServerPeer) => { code: number; reason: string } | null;
  /**
   * Localnet QoS: called before a new stream of an accepted connection is read; 0 = read it, n > 0 = read none of
   * this connection's new streams for n ms (they wait in quiche, holding their stream credit).
   */
  admitStream?: (peer: QuicServerPeer) => number;
  /**
   * One finished stream = one transaction. `tx` is a view into a reused buffer, valid only during the call: copy it
   * to keep it.
   */
  onTransaction: (tx: Uint8Array, peer: QuicServerPeer) => void;
  onConnection?: (peer: QuicServerPeer) => void;
  onConnectionClosed?: (peer: QuicServerPeer, info: QuicCloseInfo) => void;
}

export interface QuicServerCounters {
  /** Handshakes completed with a certificate and the right ALPN. */
  connectionsAccepted: number;
  connectionsActive: number;
  /** Connections that ended before being accepted: TLS/ALPN/certificate failure, handshake timeout, over the limit. */
  connectionsRejected: number;
  transactions: number;
  /** Empty or oversized streams (each closed its connection with code 5). */
  invalidStreams: number;
  /** Streams without FIN within the chunk timeout, or reset by the client. */
  unfinishedStreams: number;
  datagramsReceived: number;
  /** Dropped on arrival by inboundLossRate (localnet loss model). */
  datagramsDropped: number;
  datagramsSent: number;
  /** Not QUIC, or for no known connection and not an Initial. */
  packetsIgnored: number;
  retriesSent: number;
  versionNegotiationsSent: number;
}

/** Client-initiated unidirectional stream ids are 2, 6, 10, ... (RFC 9000 2.1), opened in order. */
const FIRST_CLIENT_UNI_SID = 2;
const UNI_SID_STEP = 4;

interface Partial {
  buf: Buffer;
  len: number;
  startedMs: number;
}

class ServerConn extends ServerCoreConn implements QuicServerPeer {
  identity: string | null = null;
  accepted = false;
  partials: Map<number, Partial> | null = null;
  /** Lowest client uni stream id (2, 6, 10, ...) not yet read to its end: where the in-order probe starts. */
  nextUniSid = FIRST_CLIENT_UNI_SID;
  /** Streams above nextUniSid already read to their end (they arrived out of order); null while none. */
  doneAhead: Set<number> | null = null;
  /** Set while admitStream paused this connection's stream reads. */
  streamPause: NodeJS.Timeout | null = null;
}

const SHUTDOWN_READ = quiche.Shutdown.Read;

export class QuicServerEndpoint extends QuicServerCore<ServerConn> {
  readonly counters: QuicServerCounters = {
    connectionsAccepted: 0,
    connectionsActive: 0,
    connectionsRejected: 0,
    transactions: 0,
    invalidStreams: 0,
    unfinishedStreams: 0,
    datagramsReceived: 0,
    datagramsDropped: 0,
    datagramsSent: 0,
    packetsIgnored: 0,
    retriesSent: 0,
    versionNegotiationsSent: 0,
  };

  /** Path-delay queues (localnet distance model); null without pathDelayMs. */
  private readonly inbound: DelayLine<{ msg: Buffer; rinfo: dgram.RemoteInfo }> | null;
  private readonly outbound: DelayLine<{ buf: Buffer; port: number; address: string }> | null;
  /** Stream reads land here: one byte more than the max so an oversized stream shows on its first read. */
  private readonly rx: Buffer;
  private readonly maxTx: number;
  private readonly chunkTimeoutMs: number;
  private readonly onTx: QuicServerOptions['onTransaction'];
  private readonly onConn: QuicServerOptions['onConnection'];
  private readonly onConnClosed: QuicServerOptions['onConnectionClosed'];
  private readonly lossRate: number;
  private readonly admitConn: QuicServerOptions['admitConnection'];
  private readonly admitStream: QuicServerOptions['admitStream'];
  private sweeper: NodeJS.Timeout | null = null;

  private constructor(opts: QuicServerOptions) {
    const maxTx = opts.maxTransactionBytes ?? PACKET_DATA_SIZE;
    super({
      host: opts.host,
      config: buildServerConfig({
        keyPem: opts.certificate.keyPem,
        certPem: opts.certificate.certPem,
        maxIdleTimeoutMs: opts.maxIdleTimeoutMs ?? MAX_IDLE_TIMEOUT_MS,
        maxConcurrentUniStreams: opts.maxConcurrentUniStreams ?? UNSTAKED_MAX_CONCURRENT_UNI_STREAMS,
        maxTransactionBytes: maxTx,
        congestionControl: opts.congestionControl ?? 'cubic',
      }),
      handshakeTimeoutMs: opts.handshakeTimeoutMs ?? SERVER_HANDSHAKE_TIMEOUT_MS,
      // New connections beyond this are ignored (counted as rejected).
      maxConnectionSlots: opts.maxConnections ?? 1024,
      retry: opts.statelessRetry === true ? new RetryTokens() : null,
    });
    this.maxTx = maxTx;
    const delay = Math.max(0, opts.pathDelayMs ?? 0);
    this.inbound = delay > 0 ? new DelayLine(delay, (d) => this.onDatagram(d.msg, d.rinfo)) : null;
    this.outbound = delay > 0 ? new DelayLine(delay, (d) => this.sock.send(d.buf, d.port, d.address)) : null;
    this.rx = Buffer.allocUnsafeSlow(this.maxTx + 1);
    this.chunkTimeoutMs = opts.streamChunkTimeoutMs ?? STREAM_CHUNK_TIMEOUT_MS;
    this.onTx = opts.onTransaction;
    this.onConn = opts.onConnection;
    this.onConnClosed = opts.onConnectionClosed;
    this.lossRate = Math.min(1, Math.max(0, opts.inboundLossRate ?? 0));
    this.admitConn = opts.admitConnection;
    this.admitStream = opts.admitStream;
  }

  static async listen(opts: QuicServerOptions): Promise<QuicServerEndpoint> {
    const s = new QuicServerEndpoint(opts);
    await s.bind(opts.port, s.onMessage);
    s.sweeper = setInterval(s.sweepPartials, Math.max(100, s.chunkTimeoutMs / 4));
    s.sweeper.unref();
    return s;
  }

  /**
   * Closes every connection (application code 0) and the socket. Unlike the ingress it does not wait for the close
   * datagrams to leave: a client may see its idle timeout rather than code 0.
   */
  async close(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.sweeper !== null) clearInterval(this.sweeper);
    this.inbound?.clear();
    this.closeConnections(0, Buffer.from('shutdown'), null);
    // Delayed datagrams still queued (close frames included) would be sent on a closed socket: drop them.
    this.outbound?.clear();
    await this.closeSocket(null);
  }

  // ---- hot path ----

  private readonly onMessage = (msg: Buffer, rinfo: dgram.RemoteInfo): void => {
    if (this.lossRate > 0 && (this.lossRate >= 1 || Math.random() < this.lossRate)) {
      this.counters.datagramsDropped++;
      return;
    }
    // dgram hands each message its own Buffer, so it can be kept until the delayed processing.
    if (this.inbound !== null) this.inbound.push({ msg, rinfo });
    else this.onDatagram(msg, rinfo);
  };

  /** Routing by our connection-id layout (one Map lookup, no header parse), recv, accept: server-core.ts. */
  private onDatagram(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    this.counters.datagramsReceived++;
    this.handleDatagram(msg, rinfo);
  }

  /** Hand one datagram to the kernel, after the path delay when one is configured (then from a copy). */
  protected override sendDatagram(buf: Buffer, port: number, address: string): void {
    if (this.outbound === null) this.sock.send(buf, port, address);
    else this.outbound.push({ buf: Buffer.from(buf), port, address }); // a copy: the slab is reused on return
  }

  /** After each datagram quiche took (the core's recv; the handshake step ran already). */
  protected afterRecv(c: ServerConn): void {
    const conn = c.conn;
    if (c.accepted && c.streamPause === null && conn.isReadable()) this.readStreams(c);
    this.queueFlush(c);
  }

  /**
   * Reads every readable stream. conn.readable() builds a native iterator object per call (a napi class with a
   * finalizer, plus one result object per step): the listener's largest per-datagram cost after the syscalls. Clients
   * open uni streams in order, so the streams that became readable are almost always nextUniSid, nextUniSid + 4, ...:
   * probe those with streamReadable (a boolean) first, and take the iterator only if something is still readable
   * (a stream that overtook a lost one).
   */
  private readStreams(c: ServerConn): void {
    const conn = c.conn;
    const gate = this.admitStream;
    for (let sid = c.nextUniSid; conn.streamReadable(sid); sid += UNI_SID_STEP) {
      if (gate !== undefined && !this.streamAdmitted(c, sid, gate)) return;
      if (this.readStream(c, sid)) this.streamDone(c, sid);
      if (conn.isClosed() || conn.isDraining()) return;
    }
    if (!conn.isReadable()) return;
    for (const sid of conn.readable()) {
      if (gate !== undefined && !this.streamAdmitted(c, sid, gate)) return;
      if (this.readStream(c, sid)) this.streamDone(c, sid);
      if (conn.isClosed() || conn.isDraining()) return;
    }
  }

  /**
   * QoS (localnet): a stream not started yet is read only if admitStream says so; otherwise the connection's reads
   * pause until it allows more (Agave's throttle sleeps the same way: the streams wait, nothing is dropped).
   */
  private streamAdmitted(c: ServerConn, sid: number, gate: (peer: QuicServerPeer) => number): boolean {
    if (c.partials !== null && c.partials.has(sid)) return true; // started: its stream was admitted already
    if (c.doneAhead !== null && c.doneAhead.has(sid)) return true;
    const waitMs = gate(c);
    if (waitMs <= 0) return true;
    c.streamPause = setTimeout(() => {
      c.streamPause = null;
      if (c.closed) return;
      if (c.conn.isReadable()) this.readStreams(c);
      this.flush(c);
      this.afterIo(c);
    }, waitMs);
    return false;
  }

  /** A stream was read to its end (or abandoned): move nextUniSid past every finished stream. */
  private streamDone(c: ServerConn, sid: number): void {
    if (sid !== c.nextUniSid) {
      if (sid > c.nextUniSid) (c.doneAhead ??= new Set()).add(sid);
      return;
    }
    let next = sid + UNI_SID_STEP;
    const ahead = c.doneAhead;
    if (ahead !== null) {
      while (ahead.delete(next)) next += UNI_SID_STEP;
      if (ahead.size === 0) c.doneAhead = null;
    }
    c.nextUniSid = next;
  }

  /** Reads what stream `sid` has; true once the stream is over (delivered, invalid or reset), false if more is due. */
  private readStream(c: ServerConn, sid: number): boolean {
    const conn = c.conn;
    const rx = this.rx;
    const maxTx = this.maxTx;
    let p = c.partials === null ? undefined : c.partials.get(sid);
    for (;;) {
      let r: [number, boolean] | null;
      try {
        r = conn.streamRecv(sid, rx);
      } catch {
        // StreamReset and friends: the client abandoned this stream.
        if (p !== undefined) c.partials!.delete(sid);
        this.counters.unfinishedStreams++;
        return true;
      }
      if (r === null) return false;
      const n = r[0];
      const fin = r[1];
      if (p === undefined) {
        // Fast path: the whole transaction in one read (the usual case: one packet carries data + FIN).
        if (fin) {
          if (n === 0 || n > maxTx) return this.invalidStream(c);
          this.deliver(c, rx.subarray(0, n));
          return true;
        }
        if (n > maxTx) return this.invalidStream(c);
        if (n === 0) continue;
        p = { buf: Buffer.allocUnsafe(maxTx), len: 0, startedMs: performance.now() };
        (c.partials ??= new Map()).set(sid, p);
      } else if (p.len + n > maxTx) {
        return this.invalidStream(c);
      }
      rx.copy(p.buf, p.len, 0, n);
      p.len += n;
      if (fin) {
        c.partials!.delete(sid);
        if (p.len === 0) return this.invalidStream(c);
        this.deliver(c, p.buf.subarray(0, p.len));
        return true;
      }
    }
  }

  private deliver(c: ServerConn, tx: Uint8Array): void {
    this.counters.transactions++;
    this.onTx(tx, c);
  }

  /** Every datagram the core sends from a connection (flush, close). */
  protected countSent(_bytes: number): void {
    this.counters.datagramsSent++;
  }

  // ---- cold path ----

  /** Closes the connection (code 5); returns true: the stream is over. */
  private invalidStream(c: ServerConn): true {
    this.counters.invalidStreams++;
    try {
      c.conn.close(true, TPU_CLOSE_CODE.invalidStream, Buffer.from('invalid_stream'));
    } catch {
      // already closing
    }
    return true;
  }

  /** Localnet QoS (cold: an eviction): close connection `id` with an application code; false if it is gone. */
  closePeer(id: number, code: number, reason: string): boolean {
    for (const c of this.bySlot.values()) {
      if (c.id !== id || c.closed) continue;
      try {
        c.conn.close(true, code, Buffer.from(reason));
      } catch {
        return false; // already closing
      }
      this.flush(c);
      this.afterIo(c);
      return true;
    }
    return false;
  }

  /** What the core's accept() did not start a connection for. */
  protected override onAcceptEvent(event: AcceptEvent): void {
    if (event === 'ignored') this.counters.packetsIgnored++;
    else if (event === 'version_negotiation') this.counters.versionNegotiationsSent++;
    else if (event === 'retry') this.counters.retriesSent++;
    else this.counters.connectionsRejected++; // over_limit
  }

  protected newConn(id: number, scid: Buffer, conn: QuicheConnection, address: string, port: number, local: { host: string; port: number }): ServerConn {
    return new ServerConn(id, scid, conn, address, port, local);
  }

  /** The handshake completed (the core cleared its handshake timer): ALPN, certificate, admitConnection. */
  protected onEstablished(c: ServerConn): void {
    const conn = c.conn;
    // BoringSSL already fails the handshake without a common ALPN; a client offering none at all would get here.
    if (Buffer.from(conn.applicationProto()).toString() !== ALPN_SOLANA_TPU) {
      conn.close(false, TRANSPORT_CODE_NO_APPLICATION_PROTOCOL, Buffer.from('solana-tpu required'));
      return;
    }
    const chain = conn.peerCertChain();
    if (chain === null || chain.length === 0) {
      // FAIL_IF_NO_PEER_CERT makes this unreachable; keep the guard, the identity is what the TPU is about.
      conn.close(true, TPU_CLOSE_CODE.disallowed, Buffer.from('client certificate required'));
      return;
    }
    // Agave reads the key only from a single self-signed certificate; anything else is an unknown (unstaked) peer.
    c.identity = chain.length === 1 ? identityFromCertificate(chain[0]) : null;
    const refusal = this.admitConn?.(c) ?? null;
    if (refusal !== null) {
      conn.close(true, refusal.code, Buffer.from(refusal.reason));
      return;
    }
    c.accepted = true;
    this.counters.connectionsAccepted++;
    this.counters.connectionsActive++;
    if (this.onConn !== undefined) this.onConn(c);
  }

  private readonly sweepPartials = (): void => {
    const now = performance.now();
    for (const c of this.bySlot.values()) {
      if (c.partials === null || c.partials.size === 0 || c.closed) continue;
      let any = false;
      for (const [sid, p] of c.partials) {
        if (now - p.startedMs < this.chunkTimeoutMs) continue;
        c.partials.delete(sid);
        this.counters.unfinishedStreams++;
        this.streamDone(c, sid);
        try {
          c.conn.streamShutdown(sid, SHUTDOWN_READ, 0);
        } catch {
          // stream already gone
        }
        any = true;
      }
      if (any) {
        this.flush(c);
        this.afterIo(c);
      }
    }
  };

  /** The core dropped the connection (closed, timed out, shut down): counts and onConnectionClosed. */
  protected onFinalize(c: ServerConn): void {
    if (c.streamPause !== null) clearTimeout(c.streamPause);
    c.streamPause = null;
    if (c.partials !== null) this.counters.unfinishedStreams += c.partials.size;
    if (c.accepted) this.counters.connectionsActive--;
    else this.counters.connectionsRejected++;
    if (this.onConnClosed !== undefined) this.onConnClosed(c, closeInfoOf(c.conn, c.established));
  }
}
