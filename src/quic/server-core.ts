// The machinery shared by the two QUIC server endpoints: the relay's QUIC ingress listener (QUIC thread;
// src/ingress/ingress-endpoint.ts) and the localnet validators' TPU listener (localnet thread; ../localnet/tpu-endpoint.ts).
// HOT: routing, recv, the end-of-turn flush and the send loop run per datagram. One unconnected UDP socket, many
// quiche connections, one deadline timer each: bind, routing a datagram to its connection by our connection-id layout,
// accept (version negotiation, optional stateless retry, connection ids), recv, flush, timers, the handshake timeout,
// finalize and close. The endpoint subclass keeps the policy (ALPN, certificate, streams, close codes, counters) and
// plugs in through a few hooks (newConn, onEstablished, afterRecv, beforeRearm, onFinalize, countSent,
// onAcceptEvent, sendDatagram). Hooks are methods, not callbacks: one receiver class per thread keeps every call site
// monomorphic, and nothing is allocated per datagram.
import dgram from 'node:dgram';
import { isIPv6 } from 'node:net';
import { randomFillSync, randomInt } from 'node:crypto';
import { quiche, type QuicheConfig, type QuicheConnection } from './quiche.js';
import { DatagramSlab } from './datagram-slab.js';
import { DeadlineTimer } from './deadline-timer.js';
import type { RetryTokens } from './retry-token.js';
import { LONG_TYPE_INITIAL, newLongHeader, readLongHeader } from './long-header.js';
import { LOCAL_CID_LEN, MAX_SEND_UDP_PAYLOAD, MIN_INITIAL_DATAGRAM } from './constants.js';
import { literalAddressLookup } from './literal-address-lookup.js';
import { SERVER_SOCKET_BUFFER_BYTES, grantedBuffers, socketBufferOptions } from './socket-buffers.js';

/** One quiche connection as the core sees it; each endpoint extends it with its own per-connection state. */
export class ServerCoreConn {
  /** The handshake completed (the endpoint's onEstablished ran). */
  established = false;
  /** finalize() ran: no more I/O, gone from the tables. */
  closed = false;
  /** Queued for the end-of-turn flush (flushPending). */
  flushQueued = false;
  handshakeTimer: NodeJS.Timeout | null = null;
  /** The client's original destination id (hex) while the connection is in byOdcid (handshake, no retry). */
  odcidKey: string | null = null;
  timer!: DeadlineTimer;
  /** quiche's RecvInfo for datagrams from the connection's own address: built once, reused per datagram. */
  readonly recvInfo: { from: { host: string; port: number }; to: { host: string; port: number } };

  constructor(
    /** Endpoint-unique connection number. */
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

/** What accept() did with a datagram it did not start a connection for (cold; the endpoint may count it). */
export type AcceptEvent = 'ignored' | 'version_negotiation' | 'retry' | 'over_limit';

export interface ServerCoreOptions {
  /** Bind address (its family picks udp4 / udp6). */
  readonly host: string;
  readonly config: QuicheConfig;
  /** A connection not established by then is closed (error 0, "handshake timeout") and finalized. */
  readonly handshakeTimeoutMs: number;
  /** accept() starts no connection while this many exist (handshakes included): onAcceptEvent('over_limit'). */
  readonly maxConnectionSlots: number;
  /** Stateless retry (address validation); null = none. */
  readonly retry: RetryTokens | null;
  /**
   * With `retry`: an Initial without a token gets a Retry only while this many connections are in handshake (0 =
   * always). Below it a client connects in one round trip; above it (a flood of Initials, each of which would hold a
   * quiche connection until the handshake timeout) no state is kept until the client proves its address.
   */
  readonly retryAboveHalfOpen?: number;
  /**
   * With `retry` and retryAboveHalfOpen: Initials accepted without a token at most this many per second (a bucket of
   * as many, refilled continuously); beyond, Retry. Junk Initials die in quiche within a turn (undecryptable), so the
   * half-open count alone does not see a flood, but each one still built and freed a TLS connection. Default: no bound.
   */
  readonly unvalidatedPerSecond?: number;
  /**
   * With `retry`: after a tokenless Initial that quiche closed at once (junk), every tokenless Initial gets a Retry for
   * this long (ms). Default JUNK_VALIDATE_MS.
   */
  readonly junkValidateMs?: number;
  /** Connections in handshake at most: beyond, Initials are dropped (onAcceptEvent 'over_limit'). Default: no bound. */
  readonly maxHalfOpen?: number;
}

/** close(): longest wait for the CONNECTION_CLOSE datagrams to leave before the socket closes. */
const CLOSE_FLUSH_MS = 500;
/**
 * After a junk tokenless Initial, every tokenless Initial is answered with a Retry for 10 s (the Retry token's own
 * life): a flood keeps it on (each junk accept that slips through re-arms it, at most one per 10 s), a quiet relay
 * is back to one-round-trip connects 10 s after the last junk.
 */
export const JUNK_VALIDATE_MS = 10_000;

export abstract class QuicServerCore<C extends ServerCoreConn> {
  protected readonly sock: dgram.Socket;
  protected readonly slab = new DatagramSlab(MAX_SEND_UDP_PAYLOAD);
  /** Connections by the 32-bit slot number embedded in the first 4 bytes of our connection ids. */
  protected readonly bySlot = new Map<number, C>();
  /** Connections in handshake by the client's original destination id (hex), for its early Initial packets. */
  private readonly byOdcid = new Map<string, C>();
  /** Connections with received datagrams whose replies go out at the end of this event-loop turn. */
  private readonly flushQueue: C[] = [];
  private flushScheduled = false;
  private nextSlot = randomInt(0, 0xffffffff);
  private nextId = 1;
  /** quiche keys paths by (local, peer): every recv and accept uses this same local address (set by bind). */
  protected local = { host: '0.0.0.0', port: 0 };
  /** close() began: no new connection is accepted. */
  protected stopped = false;
  private readonly host: string;
  private readonly config: QuicheConfig;
  private readonly handshakeTimeoutMs: number;
  private readonly maxConnectionSlots: number;
  private readonly retry: RetryTokens | null;
  private readonly retryAboveHalfOpen: number;
  private readonly maxHalfOpen: number;
  /** Connections accepted and not yet established nor finalized (each holds quiche state until its handshake timer). */
  private halfOpen = 0;
  /** accept()'s header, reused (accept is synchronous). */
  private readonly header = newLongHeader();
  private readonly unvalidatedPerSecond: number;
  /** Tokenless accepts left (bucket of unvalidatedPerSecond, refilled continuously) and when it was last refilled. */
  private unvalidatedLeft: number;
  private unvalidatedAt = performance.now();
  /** Until then (performance.now() ms) every tokenless Initial gets a Retry: a junk one was seen (0: none). */
  private validateUntil = 0;
  private readonly junkValidateMs: number;

  protected constructor(o: ServerCoreOptions) {
    this.host = o.host;
    this.config = o.config;
    this.handshakeTimeoutMs = o.handshakeTimeoutMs;
    this.maxConnectionSlots = o.maxConnectionSlots;
    this.retry = o.retry;
    this.retryAboveHalfOpen = o.retryAboveHalfOpen ?? 0;
    this.maxHalfOpen = o.maxHalfOpen ?? Infinity;
    this.unvalidatedPerSecond = o.unvalidatedPerSecond ?? Infinity;
    this.unvalidatedLeft = this.unvalidatedPerSecond;
    this.junkValidateMs = o.junkValidateMs ?? JUNK_VALIDATE_MS;
    this.sock = dgram.createSocket({
      type: isIPv6(o.host) ? 'udp6' : 'udp4',
      lookup: literalAddressLookup, // each send reaches the kernel in the call that made it (literal-address-lookup.ts)
      ...socketBufferOptions(SERVER_SOCKET_BUFFER_BYTES),
    });
  }

  // ---- policy hooks (implemented by the endpoint) ----

  /** A new connection object (cold: once per accepted Initial). */
  protected abstract newConn(id: number, scid: Buffer, conn: QuicheConnection, remoteAddress: string, remotePort: number, local: { host: string; port: number }): C;
  /** The handshake just completed (cold): ALPN, certificate, admission. The handshake timer is gone already. */
  protected abstract onEstablished(c: C): void;
  /** After each datagram quiche took (hot): read streams, then queueFlush(c) (or hold the flush on the timer). */
  protected abstract afterRecv(c: C): void;
  /** finalize() dropped the connection from the tables (cold): the endpoint's own cleanup and counts. */
  protected abstract onFinalize(c: C): void;
  /** One datagram of `bytes` went to the socket from a connection (hot). */
  protected abstract countSent(bytes: number): void;

  /** After a flush, the connection still open, before its timer is re-armed (hot). */
  protected beforeRearm(_c: C): void {}

  /** accept() did not start a connection for a datagram (cold). */
  protected onAcceptEvent(_event: AcceptEvent): void {}

  /** Hands one datagram to the kernel (hot). `buf` is a slab region (./datagram-slab.ts): it may be kept. */
  protected sendDatagram(buf: Buffer, port: number, address: string): void {
    this.sock.send(buf, port, address);
  }

  // ---- cold: lifecycle ----

  /** Binds the socket; every datagram then goes to `onMessage` (cold: once). */
  protected async bind(port: number, onMessage: (msg: Buffer, rinfo: dgram.RemoteInfo) => void): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.sock.once('error', reject);
      this.sock.bind(port, this.host, () => {
        this.sock.off('error', reject);
        resolve();
      });
    });
    const a = this.sock.address();
    this.local = { host: a.address, port: a.port };
    this.sock.on('message', onMessage);
    this.sock.on('error', () => undefined); // e.g. ICMP errors from gone clients: their connections time out
  }

  address(): { host: string; port: number } {
    return { host: this.local.host, port: this.local.port };
  }

  /** The socket's kernel buffers as granted (./socket-buffers.ts; cold: logged at start). */
  socketBuffers(): { recv: number; send: number } {
    return grantedBuffers(this.sock);
  }

  get connectionCount(): number {
    return this.bySlot.size;
  }

  /** Connections in handshake now (tests, metrics). */
  get halfOpenCount(): number {
    return this.halfOpen;
  }

  /**
   * Closes every connection with `code` / `reason` and finalizes it (cold: once, on stop). With `sent`, each close
   * datagram's send callback goes into it (resolved on success or error) for closeSocket to wait on; without, they are
   * sent as any other datagram. Each close is sent once (no draining period): a client whose copy is lost sees its
   * idle timeout.
   */
  protected closeConnections(code: number, reason: Uint8Array, sent: Promise<void>[] | null): void {
    for (const c of [...this.bySlot.values()]) {
      try {
        c.conn.close(true, code, reason);
      } catch {
        // already closing
      }
      if (sent !== null) this.flushClosing(c, sent);
      else this.flush(c);
      this.finalize(c);
    }
  }

  /**
   * Closes the socket (cold), first waiting (at most CLOSE_FLUSH_MS) for the datagrams in `sent`: dgram.send hands a
   * datagram to the socket a tick later (after its address "lookup"), and a socket closed before then drops it
   * silently — the clients would only notice their idle timeout.
   */
  protected async closeSocket(sent: Promise<void>[] | null): Promise<void> {
    if (sent !== null) {
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(sent), new Promise<void>((resolve) => (bound = setTimeout(resolve, CLOSE_FLUSH_MS)))]);
      clearTimeout(bound);
    }
    await new Promise<void>((resolve) => this.sock.close(() => resolve()));
  }

  /** flush() for close(): each datagram's send callback goes into `sent` (resolved on success or error). */
  private flushClosing(c: C, sent: Promise<void>[]): void {
    const scratch = this.slab.scratch;
    for (;;) {
      let r: [number, unknown] | null;
      try {
        r = c.conn.send(scratch);
      } catch {
        return;
      }
      if (r === null) return;
      const datagram = this.slab.take(r[0]);
      sent.push(new Promise<void>((resolve) => this.sock.send(datagram, c.remotePort, c.remoteAddress, () => resolve())));
      this.countSent(r[0]);
    }
  }

  // ---- hot path ----

  /** One received datagram: to its connection, or to accept(). */
  protected handleDatagram(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    const c = this.route(msg);
    if (c !== null) this.recv(c, msg, rinfo);
    else this.accept(msg, rinfo);
  }

  /**
   * Finds the connection without parsing the header through the binding (which allocates a JS object and arrays
   * per packet): our connection ids are LOCAL_CID_LEN bytes whose first 4 are a slot number, so the DCID's offset is
   * fixed (short header: 1; long header: 6 after flags, version and length) and one Map lookup by number plus a
   * 16-byte compare identifies the connection. Zero allocations.
   */
  private route(msg: Buffer): C | null {
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

  private recv(c: C, msg: Buffer, rinfo: dgram.RemoteInfo): void {
    if (c.closed) return;
    const conn = c.conn;
    let info = c.recvInfo;
    if (rinfo.port !== info.from.port || rinfo.address !== info.from.host) {
      info = { from: { host: rinfo.address, port: rinfo.port }, to: this.local };
    }
    try {
      conn.recv(msg, info);
    } catch {
      // undecryptable / invalid packet: quiche discards it; a fatal one closes the connection (seen in afterIo)
    }
    if (!c.established && conn.isEstablished()) this.establish(c);
    this.afterRecv(c);
  }

  /** Sends what the answers just written left to send now, not at the end of this turn (the reply loop, per drain). */
  flushNow(): void {
    if (this.flushQueue.length > 0) this.flushPending();
  }

  /**
   * What quiche has to send after received datagrams (ACKs, stream credit, handshake flights) goes out once per
   * event-loop turn, after every datagram that turn's poll phase read: one ACK then covers a burst of packets instead
   * of one sendmsg per packet or two (measured: the ACK sends were the listener's largest cost under a fast sender).
   * The delay is the rest of the current I/O phase, microseconds.
   */
  protected queueFlush(c: C): void {
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

  protected flush(c: C): void {
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
      this.countSent(r[0]);
    }
  }

  /** After I/O on a connection: finalize it once quiche says closed, else re-arm its timer from quiche's deadline. */
  protected afterIo(c: C): void {
    if (c.conn.isClosed()) {
      this.finalize(c);
      return;
    }
    this.beforeRearm(c);
    c.timer.arm(c.conn.timeout(), performance.now());
  }

  // ---- cold path ----

  private accept(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    if (this.stopped) return;
    // Read in place (long-header.ts says why not quiche's Header.fromSlice); a short header here has an unknown id.
    const hdr = this.header;
    if (!readLongHeader(msg, hdr) || hdr.version === 0) {
      this.onAcceptEvent('ignored');
      return;
    }
    const early = this.byOdcid.get(hdr.dcid.toString('hex'));
    if (early !== undefined) {
      this.recv(early, msg, rinfo);
      return;
    }
    // RFC 9000 §14.1, §5.2.2: a short datagram cannot open a connection, and is not answered (quiche would drop the
    // Initial itself; Version Negotiation and Retry are ours to withhold).
    if (hdr.type !== LONG_TYPE_INITIAL || msg.length < MIN_INITIAL_DATAGRAM) {
      this.onAcceptEvent('ignored');
      return;
    }
    if (!quiche.versionIsSupported(hdr.version)) {
      const n = quiche.negotiateVersion(hdr.scid, hdr.dcid, this.slab.scratch);
      this.sendDatagram(this.slab.take(n), rinfo.port, rinfo.address);
      this.onAcceptEvent('version_negotiation');
      return;
    }
    if (this.bySlot.size >= this.maxConnectionSlots || this.halfOpen >= this.maxHalfOpen) {
      this.onAcceptEvent('over_limit');
      return;
    }
    let scid: Buffer;
    let odcid: Uint8Array | null = null;
    const token = hdr.token;
    // Tokens are checked whenever one comes (a client retried while the flood lasted); a Retry is sent per policy.
    if (this.retry !== null && ((token !== undefined && token.length > 0) || this.mustValidate())) {
      if (token === undefined || token.length === 0) {
        const newCid = this.newCid();
        const t = this.retry.mint(hdr.dcid, rinfo.address, rinfo.port);
        const n = quiche.retry(hdr.scid, hdr.dcid, newCid, t, hdr.version, this.slab.scratch);
        this.sendDatagram(this.slab.take(n), rinfo.port, rinfo.address);
        this.onAcceptEvent('retry');
        return;
      }
      odcid = this.retry.validate(token, rinfo.address, rinfo.port);
      if (odcid === null || hdr.dcid.length !== LOCAL_CID_LEN) {
        this.onAcceptEvent('ignored');
        return;
      }
      scid = Buffer.from(hdr.dcid);
      if (this.bySlot.has(scid.readUInt32BE(0))) {
        this.onAcceptEvent('ignored');
        return;
      }
    } else {
      scid = this.newCid();
    }
    let conn: QuicheConnection;
    try {
      conn = quiche.Connection.accept(scid, odcid, this.local, { host: rinfo.address, port: rinfo.port }, this.config);
    } catch {
      this.onAcceptEvent('ignored');
      return;
    }
    const c = this.newConn(this.nextId++, scid, conn, rinfo.address, rinfo.port, this.local);
    c.timer = new DeadlineTimer(() => this.onTimer(c));
    this.bySlot.set(scid.readUInt32BE(0), c);
    if (odcid === null) {
      c.odcidKey = hdr.dcid.toString('hex');
      this.byOdcid.set(c.odcidKey, c);
    }
    c.handshakeTimer = setTimeout(() => this.onHandshakeTimeout(c), this.handshakeTimeoutMs);
    this.halfOpen++;
    this.recv(c, msg, rinfo);
    // A tokenless Initial quiche could not even open (junk: undecryptable, or not an Initial a client would send)
    // says someone is sending junk: every tokenless Initial gets a stateless Retry for a while, so the flood builds no
    // more TLS connections only to free them (each ~tens of KB of native allocations: at 200/s they left the QUIC
    // thread's malloc arena +60 MB at its high-water mark, issue #30 item 8). A client pays one round trip meanwhile.
    if (odcid === null && conn.isClosed()) this.validateUntil = performance.now() + this.junkValidateMs;
  }

  /** Whether a tokenless Initial gets a Retry now (handshakes piling up, or tokenless accepts over their rate). */
  private mustValidate(): boolean {
    if (this.halfOpen >= this.retryAboveHalfOpen) return true;
    if (this.validateUntil > 0) {
      if (performance.now() < this.validateUntil) return true;
      this.validateUntil = 0;
    }
    if (this.unvalidatedPerSecond === Infinity) return false;
    const t = performance.now();
    this.unvalidatedLeft = Math.min(this.unvalidatedPerSecond, this.unvalidatedLeft + ((t - this.unvalidatedAt) * this.unvalidatedPerSecond) / 1000);
    this.unvalidatedAt = t;
    if (this.unvalidatedLeft < 1) return true;
    this.unvalidatedLeft--;
    return false;
  }

  /** LOCAL_CID_LEN bytes: a slot number no live connection uses (4 bytes), then random bytes. */
  private newCid(): Buffer {
    const cid = Buffer.allocUnsafe(LOCAL_CID_LEN);
    randomFillSync(cid, 4);
    let slot = this.nextSlot;
    while (this.bySlot.has(slot)) slot = (slot + 1) >>> 0;
    this.nextSlot = (slot + 1) >>> 0;
    cid.writeUInt32BE(slot, 0);
    return cid;
  }

  private establish(c: C): void {
    c.established = true;
    this.halfOpen--;
    if (c.handshakeTimer !== null) clearTimeout(c.handshakeTimer);
    c.handshakeTimer = null;
    if (c.odcidKey !== null) this.byOdcid.delete(c.odcidKey);
    c.odcidKey = null;
    this.onEstablished(c);
  }

  private onTimer(c: C): void {
    if (c.closed) return;
    c.conn.onTimeout();
    this.flush(c);
    this.afterIo(c);
  }

  private onHandshakeTimeout(c: C): void {
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

  /** Drops the connection from the tables and stops its timers; then the endpoint's onFinalize. Once per connection. */
  protected finalize(c: C): void {
    if (c.closed) return;
    c.closed = true;
    if (!c.established) this.halfOpen--;
    c.timer.cancel();
    if (c.handshakeTimer !== null) clearTimeout(c.handshakeTimer);
    c.handshakeTimer = null;
    this.bySlot.delete(c.scid.readUInt32BE(0));
    if (c.odcidKey !== null) this.byOdcid.delete(c.odcidKey);
    this.onFinalize(c);
  }
}
