// A Solana-TPU-like QUIC server endpoint (localnet validator listeners, later the QUIC ingress; HOT: the datagram
// handler and stream reads run per packet / per transaction). One unconnected UDP socket, many quiche connections,
// one deadline timer per connection. Like an Agave TPU port: client certificate required (its Ed25519 key is the
// sender identity), ALPN solana-tpu only, unidirectional streams only (0 bidi), a concurrent-uni-stream limit, one
// transaction per stream delivered only on FIN, and an empty or oversized stream closes the WHOLE connection with
// application code 5. Stateless retry and version negotiation are handled as quiche's example server does.
import dgram from 'node:dgram';
import { isIPv6 } from 'node:net';
import { randomFillSync, randomInt } from 'node:crypto';
import { quiche, type QuicheConfig, type QuicheConnection } from './quiche.js';
import { buildServerConfig, type CongestionControl } from './quiche-config.js';
import { DatagramSlab } from './datagram-slab.js';
import { DeadlineTimer } from './deadline-timer.js';
import { closeInfoOf, type QuicCloseInfo } from './close-info.js';
import { identityFromCertificate, type IdentityCertificate } from './identity-certificate.js';
import { RetryTokens } from './retry-token.js';
import {
  ALPN_SOLANA_TPU,
  LOCAL_CID_LEN,
  MAX_IDLE_TIMEOUT_MS,
  MAX_SEND_UDP_PAYLOAD,
  PACKET_DATA_SIZE,
  SERVER_HANDSHAKE_TIMEOUT_MS,
  STREAM_CHUNK_TIMEOUT_MS,
  TPU_CLOSE_CODE,
  TRANSPORT_CODE_NO_APPLICATION_PROTOCOL,
  UNSTAKED_MAX_CONCURRENT_UNI_STREAMS,
} from './constants.js';
import { DelayLine } from './delay-line.js';

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

class ServerConn implements QuicServerPeer {
  identity: string | null = null;
  established = false;
  accepted = false;
  closed = false;
  partials: Map<number, Partial> | null = null;
  /** Lowest client uni stream id (2, 6, 10, ...) not yet read to its end: where the in-order probe starts. */
  nextUniSid = FIRST_CLIENT_UNI_SID;
  /** Streams above nextUniSid already read to their end (they arrived out of order); null while none. */
  doneAhead: Set<number> | null = null;
  handshakeTimer: NodeJS.Timeout | null = null;
  odcidKey: string | null = null;
  recvInfo: { from: { host: string; port: number }; to: { host: string; port: number } };
  timer!: DeadlineTimer;
  /** Queued for the end-of-turn flush (flushPending). */
  flushQueued = false;
  /** Set while admitStream paused this connection's stream reads. */
  streamPause: NodeJS.Timeout | null = null;

  constructor(
    readonly id: number,
    readonly scid: Buffer,
    readonly conn: QuicheConnection,
    readonly remoteAddress: string,
    readonly remotePort: number,
    local: { host: string; port: number },
  ) {
    this.recvInfo = { from: { host: remoteAddress, port: remotePort }, to: local };
  }
}

const TYPE_INITIAL = quiche.Type.Initial;
const SHUTDOWN_READ = quiche.Shutdown.Read;

export class QuicServerEndpoint {
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

  private readonly sock: dgram.Socket;
  /** Path-delay queues (localnet distance model); null without pathDelayMs. */
  private readonly inbound: DelayLine<{ msg: Buffer; rinfo: dgram.RemoteInfo }> | null;
  private readonly outbound: DelayLine<{ buf: Buffer; port: number; address: string }> | null;
  private readonly config: QuicheConfig;
  private readonly slab = new DatagramSlab(MAX_SEND_UDP_PAYLOAD);
  /** Connections with received datagrams whose replies go out at the end of this event-loop turn. */
  private readonly flushQueue: ServerConn[] = [];
  private flushScheduled = false;
  /** Stream reads land here: one byte more than the max so an oversized stream shows on its first read. */
  private readonly rx: Buffer;
  private readonly maxTx: number;
  private readonly maxConnections: number;
  private readonly handshakeTimeoutMs: number;
  private readonly chunkTimeoutMs: number;
  private readonly retry: RetryTokens | null;
  private readonly onTx: QuicServerOptions['onTransaction'];
  private readonly onConn: QuicServerOptions['onConnection'];
  private readonly onConnClosed: QuicServerOptions['onConnectionClosed'];
  private readonly lossRate: number;
  private readonly admitConn: QuicServerOptions['admitConnection'];
  private readonly admitStream: QuicServerOptions['admitStream'];
  /** Connections by the 32-bit slot number embedded in the first 4 bytes of our connection ids. */
  private readonly bySlot = new Map<number, ServerConn>();
  /** Connections in handshake by the client's original destination id (hex), for its early Initial packets. */
  private readonly byOdcid = new Map<string, ServerConn>();
  private nextSlot = randomInt(0, 0xffffffff);
  private nextId = 1;
  private local = { host: '0.0.0.0', port: 0 };
  private sweeper: NodeJS.Timeout | null = null;
  private stopped = false;

  private constructor(private readonly opts: QuicServerOptions) {
    this.maxTx = opts.maxTransactionBytes ?? PACKET_DATA_SIZE;
    const delay = Math.max(0, opts.pathDelayMs ?? 0);
    this.inbound = delay > 0 ? new DelayLine(delay, (d) => this.onDatagram(d.msg, d.rinfo)) : null;
    this.outbound = delay > 0 ? new DelayLine(delay, (d) => this.sock.send(d.buf, d.port, d.address)) : null;
    this.rx = Buffer.allocUnsafeSlow(this.maxTx + 1);
    this.maxConnections = opts.maxConnections ?? 1024;
    this.handshakeTimeoutMs = opts.handshakeTimeoutMs ?? SERVER_HANDSHAKE_TIMEOUT_MS;
    this.chunkTimeoutMs = opts.streamChunkTimeoutMs ?? STREAM_CHUNK_TIMEOUT_MS;
    this.retry = opts.statelessRetry === true ? new RetryTokens() : null;
    this.onTx = opts.onTransaction;
    this.onConn = opts.onConnection;
    this.onConnClosed = opts.onConnectionClosed;
    this.lossRate = Math.min(1, Math.max(0, opts.inboundLossRate ?? 0));
    this.admitConn = opts.admitConnection;
    this.admitStream = opts.admitStream;
    this.config = buildServerConfig({
      keyPem: opts.certificate.keyPem,
      certPem: opts.certificate.certPem,
      maxIdleTimeoutMs: opts.maxIdleTimeoutMs ?? MAX_IDLE_TIMEOUT_MS,
      maxConcurrentUniStreams: opts.maxConcurrentUniStreams ?? UNSTAKED_MAX_CONCURRENT_UNI_STREAMS,
      maxTransactionBytes: this.maxTx,
      congestionControl: opts.congestionControl ?? 'cubic',
    });
    this.sock = dgram.createSocket({ type: isIPv6(opts.host) ? 'udp6' : 'udp4' });
  }

  static async listen(opts: QuicServerOptions): Promise<QuicServerEndpoint> {
    const s = new QuicServerEndpoint(opts);
    await new Promise<void>((resolve, reject) => {
      s.sock.once('error', reject);
      s.sock.bind(opts.port, opts.host, () => {
        s.sock.off('error', reject);
        resolve();
      });
    });
    const a = s.sock.address();
    // quiche keys paths by (local, peer): every recv and accept uses this same local address.
    s.local = { host: a.address, port: a.port };
    s.sock.on('message', s.onMessage);
    s.sock.on('error', () => undefined); // e.g. ICMP errors from gone clients; connections time out on their own
    s.sweeper = setInterval(s.sweepPartials, Math.max(100, s.chunkTimeoutMs / 4));
    s.sweeper.unref();
    return s;
  }

  address(): { host: string; port: number } {
    return { host: this.local.host, port: this.local.port };
  }

  get connectionCount(): number {
    return this.bySlot.size;
  }

  /** Closes every connection (application code 0) and the socket. */
  async close(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.sweeper !== null) clearInterval(this.sweeper);
    this.inbound?.clear();
    for (const c of [...this.bySlot.values()]) {
      try {
        c.conn.close(true, 0, Buffer.from('shutdown'));
      } catch {
        // already closing
      }
      this.flush(c);
      this.finalize(c);
    }
    // Delayed datagrams still queued (close frames included) would be sent on a closed socket: drop them.
    this.outbound?.clear();
    await new Promise<void>((resolve) => this.sock.close(() => resolve()));
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

  private onDatagram(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    this.counters.datagramsReceived++;
    const c = this.route(msg);
    if (c !== null) this.recv(c, msg, rinfo);
    else this.accept(msg, rinfo);
  }

  /** Hand one datagram to the kernel, after the path delay when one is configured (then from a copy). */
  private sendDatagram(buf: Buffer, port: number, address: string): void {
    if (this.outbound === null) this.sock.send(buf, port, address);
    else this.outbound.push({ buf: Buffer.from(buf), port, address }); // a copy: the slab is reused on return
  }

  /**
   * Finds the connection without parsing the header through the binding (which allocates a JS object and arrays
   * per packet): our connection ids are LOCAL_CID_LEN bytes whose first 4 are a slot number, so the DCID's offset is
   * fixed (short header: 1; long header: 6 after flags, version and length) and one Map lookup by number plus a
   * 16-byte compare identifies the connection. Zero allocations.
   */
  private route(msg: Buffer): ServerConn | null {
    let off = 1;
    if (msg.length < 1 + LOCAL_CID_LEN) return null;
    if ((msg[0] & 0x80) !== 0) {
      if (msg.length < 6 + LOCAL_CID_LEN || msg[5] !== LOCAL_CID_LEN) return null;
      off = 6;
    }
    const c = this.bySlot.get(msg.readUInt32BE(off));
    if (c === undefined || msg.compare(c.scid, 0, LOCAL_CID_LEN, off, off + LOCAL_CID_LEN) !== 0) return null;
    return c;
  }

  private recv(c: ServerConn, msg: Buffer, rinfo: dgram.RemoteInfo): void {
    if (c.closed) return;
    const conn = c.conn;
    let info = c.recvInfo;
    if (rinfo.port !== info.from.port || rinfo.address !== info.from.host) {
      info = { from: { host: rinfo.address, port: rinfo.port }, to: this.local };
    }
    try {
      conn.recv(msg, info);
    } catch {
      // undecryptable / invalid packet: quiche discards it; a fatal one closes the connection (checked below)
    }
    if (!c.established && conn.isEstablished()) this.onEstablished(c);
    if (c.accepted && c.streamPause === null && conn.isReadable()) this.readStreams(c);
    this.queueFlush(c);
  }

  /**
   * What quiche has to send after received datagrams (ACKs, stream credit, handshake flights) goes out once per
   * event-loop turn, after every datagram that turn's poll phase read: one ACK then covers a burst of packets instead
   * of one sendmsg per packet or two (measured: the ACK sends were the listener's largest cost under a fast sender).
   * The delay is the rest of the current I/O phase, microseconds.
   */
  private queueFlush(c: ServerConn): void {
    if (c.flushQueued) return;
    c.flushQueued = true;
    this.flushQueue.push(c);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.flushPending);
    }
  }

  private readonly flushPending = (): void => {
    this.flushScheduled = false;
    const q = this.flushQueue;
    for (let i = 0; i < q.length; i++) {
      const c = q[i];
      c.flushQueued = false;
      if (c.closed) continue;
      this.flush(c);
      this.afterIo(c);
    }
    q.length = 0;
  };

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

  private flush(c: ServerConn): void {
    const conn = c.conn;
    const slab = this.slab;
    const scratch = slab.scratch;
    for (;;) {
      let r: [number, unknown] | null;
      try {
        r = conn.send(scratch);
      } catch {
        return;
      }
      if (r === null) return;
      // Migration is disabled: the peer address is the connection's own (SendInfo.to would be the same).
      this.sendDatagram(slab.take(r[0]), c.remotePort, c.remoteAddress);
      this.counters.datagramsSent++;
    }
  }

  private afterIo(c: ServerConn): void {
    if (c.conn.isClosed()) {
      this.finalize(c);
      return;
    }
    c.timer.arm(c.conn.timeout(), performance.now());
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

  private accept(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    if (this.stopped) return;
    let hdr;
    try {
      hdr = quiche.Header.fromSlice(msg, LOCAL_CID_LEN);
    } catch {
      this.counters.packetsIgnored++;
      return;
    }
    const early = this.byOdcid.get(Buffer.from(hdr.dcid).toString('hex'));
    if (early !== undefined) {
      this.recv(early, msg, rinfo);
      return;
    }
    if (hdr.ty !== TYPE_INITIAL) {
      this.counters.packetsIgnored++;
      return;
    }
    if (!quiche.versionIsSupported(hdr.version)) {
      const n = quiche.negotiateVersion(hdr.scid, hdr.dcid, this.slab.scratch);
      this.sendDatagram(this.slab.take(n), rinfo.port, rinfo.address);
      this.counters.versionNegotiationsSent++;
      return;
    }
    if (this.bySlot.size >= this.maxConnections) {
      this.counters.connectionsRejected++;
      return;
    }
    let scid: Buffer;
    let odcid: Uint8Array | null = null;
    if (this.retry !== null) {
      const token = hdr.token;
      if (token === undefined || token.length === 0) {
        const newCid = this.newCid();
        const t = this.retry.mint(hdr.dcid, rinfo.address, rinfo.port);
        const n = quiche.retry(hdr.scid, hdr.dcid, newCid, t, hdr.version, this.slab.scratch);
        this.sendDatagram(this.slab.take(n), rinfo.port, rinfo.address);
        this.counters.retriesSent++;
        return;
      }
      odcid = this.retry.validate(token, rinfo.address, rinfo.port);
      if (odcid === null || hdr.dcid.length !== LOCAL_CID_LEN) {
        this.counters.packetsIgnored++;
        return;
      }
      scid = Buffer.from(hdr.dcid);
      if (this.bySlot.has(scid.readUInt32BE(0))) {
        this.counters.packetsIgnored++;
        return;
      }
    } else {
      scid = this.newCid();
    }
    let conn: QuicheConnection;
    try {
      conn = quiche.Connection.accept(scid, odcid, this.local, { host: rinfo.address, port: rinfo.port }, this.config);
    } catch {
      this.counters.packetsIgnored++;
      return;
    }
    const c = new ServerConn(this.nextId++, scid, conn, rinfo.address, rinfo.port, this.local);
    c.timer = new DeadlineTimer(() => this.onTimer(c));
    this.bySlot.set(scid.readUInt32BE(0), c);
    if (odcid === null) {
      c.odcidKey = Buffer.from(hdr.dcid).toString('hex');
      this.byOdcid.set(c.odcidKey, c);
    }
    c.handshakeTimer = setTimeout(() => this.onHandshakeTimeout(c), this.handshakeTimeoutMs);
    this.recv(c, msg, rinfo);
  }

  private newCid(): Buffer {
    const cid = Buffer.allocUnsafe(LOCAL_CID_LEN);
    randomFillSync(cid, 4);
    let slot = this.nextSlot;
    while (this.bySlot.has(slot)) slot = (slot + 1) >>> 0;
    this.nextSlot = (slot + 1) >>> 0;
    cid.writeUInt32BE(slot, 0);
    return cid;
  }

  private onEstablished(c: ServerConn): void {
    c.established = true;
    if (c.handshakeTimer !== null) clearTimeout(c.handshakeTimer);
    c.handshakeTimer = null;
    if (c.odcidKey !== null) this.byOdcid.delete(c.odcidKey);
    c.odcidKey = null;
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

  private onTimer(c: ServerConn): void {
    if (c.closed) return;
    c.conn.onTimeout();
    this.flush(c);
    this.afterIo(c);
  }

  private onHandshakeTimeout(c: ServerConn): void {
    c.handshakeTimer = null;
    if (c.established || c.closed) return;
    try {
      c.conn.close(false, 0, Buffer.from('handshake timeout'));
    } catch {
      // already closing
    }
    this.flush(c);
    this.finalize(c);
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

  private finalize(c: ServerConn): void {
    if (c.closed) return;
    c.closed = true;
    c.timer.cancel();
    if (c.handshakeTimer !== null) clearTimeout(c.handshakeTimer);
    c.handshakeTimer = null;
    if (c.streamPause !== null) clearTimeout(c.streamPause);
    c.streamPause = null;
    this.bySlot.delete(c.scid.readUInt32BE(0));
    if (c.odcidKey !== null) this.byOdcid.delete(c.odcidKey);
    if (c.partials !== null) this.counters.unfinishedStreams += c.partials.size;
    if (c.accepted) this.counters.connectionsActive--;
    else this.counters.connectionsRejected++;
    if (this.onConnClosed !== undefined) this.onConnClosed(c, closeInfoOf(c.conn, c.established));
  }
}
