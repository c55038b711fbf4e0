// The one quiche client loop (the caller's thread; HOT: onMessage and flush run per datagram). It owns a CONNECTED UDP
// socket (sends skip the kernel's route/address lookup), the quiche connection, the send loop, the ACK hold, one
// deadline timer, the handshake timeout, an optional keep-alive and how the connection ended. What a datagram means
// is the owner's: the egress connection to a TPU (src/quic/client-connection.ts) and the ingress client the library
// ships (src/client/quic/ingress-client.ts) sit on it, as the servers sit on src/quic/server-core.ts.
import dgram from 'node:dgram';
import { isIPv6 } from 'node:net';
import { randomFillSync } from 'node:crypto';
import { quiche, type QuicheConfig, type QuicheConnection } from './quiche.js';
import { DatagramSlab } from './datagram-slab.js';
import { DeadlineTimer } from './deadline-timer.js';
import { closeInfoOf, type QuicCloseInfo } from './close-info.js';
import { quicServerName } from './server-name.js';
import { LOCAL_CID_LEN, MAX_SEND_UDP_PAYLOAD } from './constants.js';
import { CLIENT_SOCKET_BUFFER_BYTES, socketBufferOptions } from './socket-buffers.js';

export type QuicClientState = 'connecting' | 'established' | 'closed';

/** What the owner does with the connection's events (all called on the driver's thread, never re-entrantly). */
export interface ClientDriverOwner {
  /**
   * A datagram was processed and the connection is established (the first call is the datagram that established
   * it): read what is readable, write what waits. Return true when nothing of the owner's went out and the reply
   * may wait for the next write (the ACK hold); false sends now.
   */
  onPeerData(): boolean;
  /** The timer fired on an established connection (quiche's timers, keep-alive, a held ACK): retry what waited. */
  onTick(): void;
  /** The connection ended (once): settle what is pending. `established` / `closed` settle right after. */
  onEnded(info: QuicCloseInfo): void;
}

export interface ClientDriverOptions {
  /** Server IP address (v4 or v6). */
  readonly host: string;
  readonly port: number;
  /** SNI; default quicServerName(host, port). */
  readonly serverName?: string;
  readonly config: QuicheConfig;
  /** The handshake must complete by then. */
  readonly connectTimeoutMs: number;
  /** PING when nothing went out for this long (capped at half the negotiated idle timeout); null: no keep-alive. */
  readonly keepAliveMs: number | null;
  /** Our idle timeout (the keep-alive cap uses the smaller of both peers'). */
  readonly maxIdleTimeoutMs: number;
  /**
   * Longest hold of a reply that would carry only ACKs (the owner's onPeerData said so), so it rides on the next
   * stream packet instead of costing a datagram of its own. Far below the 25 ms max_ack_delay quiche advertises
   * (RFC 9000 13.2.1), so the peer's loss detection and RTT are not disturbed.
   */
  readonly ackHoldMs: number;
}

export class QuicClientDriver {
  /** Resolves when the handshake completes; rejects (an Error with `.closeInfo`) if the connection ends first. */
  readonly established: Promise<void>;
  /** Resolves once the connection has ended, with how. */
  readonly closed: Promise<QuicCloseInfo>;
  conn!: QuicheConnection;
  state: QuicClientState = 'connecting';
  /** connect -> established, ms (NaN before). */
  handshakeMs = NaN;
  datagramsSent = 0;
  datagramsReceived = 0;
  /** send / recv / socket errors. */
  errors = 0;
  closeInfo: QuicCloseInfo | null = null;

  private readonly sock: dgram.Socket;
  private readonly slab = new DatagramSlab(MAX_SEND_UDP_PAYLOAD);
  private readonly timer: DeadlineTimer;
  // Reused RecvInfo: the socket is connected, so every datagram comes from the same peer to the same local address.
  private recvInfo!: { from: { host: string; port: number }; to: { host: string; port: number } };
  private startMs = 0;
  /** performance.now() by which a held ACK-only reply must go out (Infinity: none held). */
  private ackDueMs = Infinity;
  private keepAliveEffMs: number;
  private keepAliveDueMs = Infinity;
  private sentAtKeepAliveCheck = 0;
  private connectTimer: NodeJS.Timeout | null = null;
  private resolveEstablished!: () => void;
  private rejectEstablished!: (e: Error) => void;
  private resolveClosed!: (i: QuicCloseInfo) => void;

  constructor(
    private readonly o: ClientDriverOptions,
    private readonly owner: ClientDriverOwner,
  ) {
    this.keepAliveEffMs = o.keepAliveMs ?? Infinity;
    this.sock = dgram.createSocket({ type: isIPv6(o.host) ? 'udp6' : 'udp4', ...socketBufferOptions(CLIENT_SOCKET_BUFFER_BYTES) });
    this.timer = new DeadlineTimer(this.onTimer);
    this.established = new Promise<void>((res, rej) => {
      this.resolveEstablished = res;
      this.rejectEstablished = rej;
    });
    this.established.catch(() => undefined); // observed through `closed` when nobody awaits it
    this.closed = new Promise<QuicCloseInfo>((res) => (this.resolveClosed = res));
  }

  /** Connects the socket and sends the first flight (await `established` for the handshake). */
  async start(): Promise<void> {
    const o = this.o;
    const sock = this.sock;
    await new Promise<void>((resolve, reject) => {
      sock.once('error', reject);
      sock.connect(o.port, o.host, () => {
        sock.off('error', reject);
        resolve();
      });
    });
    sock.on('error', this.onSocketError);
    sock.on('message', this.onMessage);
    const local = sock.address();
    const localHp = { host: local.address, port: local.port };
    const remoteHp = { host: o.host, port: o.port };
    this.recvInfo = { from: remoteHp, to: localHp };
    const scid = new Uint8Array(LOCAL_CID_LEN);
    randomFillSync(scid);
    this.startMs = performance.now();
    this.conn = quiche.Connection.connect(o.serverName ?? quicServerName(o.host, o.port), scid, localHp, remoteHp, o.config);
    this.connectTimer = setTimeout(this.onConnectTimeout, o.connectTimeoutMs);
    this.flush();
    this.afterIo();
  }

  /** Closes with an application code (0 = no error), sends CONNECTION_CLOSE and releases the socket at once. */
  close(code: number, reason: string): void {
    if (this.state === 'closed') return;
    try {
      this.conn.close(true, code, Buffer.from(reason));
    } catch {
      // already closing
    }
    this.flush();
    this.finalize('local');
  }

  /** Sends an ack-eliciting packet (PING) now: a live peer answers within an RTT, even one that grants no streams. */
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

  // ---- hot path ----

  /** conn.send() until null; each datagram goes to the kernel at once (connected socket: no address argument). */
  flush(): void {
    this.ackDueMs = Infinity; // a held ACK goes out with whatever this sends
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

  /** After I/O: ends a closed connection, else arms the timer for quiche's, the keep-alive's or the ACK's deadline. */
  afterIo(): void {
    const conn = this.conn;
    // Draining = a CONNECTION_CLOSE was exchanged; quiche would wait 3 PTOs before isClosed(). A client has nothing
    // to absorb in that window: release now so the caller learns the close code at once.
    if (conn.isClosed() || conn.isDraining()) {
      this.finalize('local');
      return;
    }
    const now = performance.now();
    let delay = conn.timeout();
    if (this.state === 'established' && this.keepAliveDueMs !== Infinity) {
      const ka = this.keepAliveDueMs - now;
      if (delay === null || ka < delay) delay = ka < 0 ? 0 : ka;
    }
    if (this.ackDueMs !== Infinity) {
      const ad = this.ackDueMs - now;
      if (delay === null || ad < delay) delay = ad < 0 ? 0 : ad;
    }
    this.timer.arm(delay, now);
  }

  private readonly onMessage = (msg: Buffer): void => {
    if (this.state === 'closed') return;
    this.datagramsReceived++;
    try {
      this.conn.recv(msg, this.recvInfo);
    } catch {
      this.errors++; // discarded by quiche
    }
    if (this.state === 'connecting' && this.conn.isEstablished()) this.onEstablished();
    if (this.state === 'established') {
      const hold = this.owner.onPeerData();
      if (this.state !== 'established') return; // the owner closed the connection
      if (hold && !this.conn.isDraining() && !this.conn.isClosed()) {
        if (this.ackDueMs === Infinity) this.ackDueMs = performance.now() + this.o.ackHoldMs;
        this.afterIo();
        return;
      }
    }
    this.flush();
    this.afterIo();
  };

  private readonly onTimer = (): void => {
    if (this.state === 'closed') return;
    const conn = this.conn;
    conn.onTimeout();
    if (this.state === 'established') {
      const now = performance.now();
      if (now >= this.keepAliveDueMs) {
        // Keep-alive: PING only when nothing at all went out during the last interval.
        if (this.datagramsSent === this.sentAtKeepAliveCheck) conn.sendAckEliciting();
        this.sentAtKeepAliveCheck = this.datagramsSent;
        this.keepAliveDueMs = now + this.keepAliveEffMs;
      }
      this.owner.onTick();
      if ((this.state as QuicClientState) === 'closed') return; // the owner closed us
    }
    this.flush();
    this.afterIo();
  };

  // ---- cold path ----

  private onEstablished(): void {
    this.state = 'established';
    this.handshakeMs = performance.now() - this.startMs;
    if (this.connectTimer !== null) clearTimeout(this.connectTimer);
    this.connectTimer = null;
    if (this.o.keepAliveMs !== null) {
      // Keep-alive below half the NEGOTIATED idle timeout, whatever the configured value: a 10 s-idle peer
      // (Jet, quinn defaults) would otherwise drop us between keep-alives.
      const peerIdle = this.conn.stats().peerMaxIdleTimeout;
      const idle = Math.min(this.o.maxIdleTimeoutMs || Infinity, peerIdle > 0 ? peerIdle : Infinity);
      if (Number.isFinite(idle)) this.keepAliveEffMs = Math.min(this.keepAliveEffMs, Math.floor(idle / 2));
      this.keepAliveDueMs = performance.now() + this.keepAliveEffMs;
    }
    this.resolveEstablished();
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
    this.owner.onEnded(info);
    if (!wasEstablished) {
      const err = new Error(`QUIC connect to ${this.o.host}:${this.o.port} failed: ${info.by} code=${info.code} ${info.reason}`);
      (err as Error & { closeInfo: QuicCloseInfo }).closeInfo = info;
      this.rejectEstablished(err);
    }
    this.resolveClosed(info);
  }
}
