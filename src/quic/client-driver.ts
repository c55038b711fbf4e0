// The one quiche client loop (the caller's thread; HOT: onMessage and flush run per datagram). It owns a CONNECTED UDP
// socket (sends skip the kernel's route/address lookup), the quiche connection, the send loop, the ACK hold, one
// deadline timer, the handshake timeout, an optional keep-alive, an optional idle RTT probe and how the connection
// ended. What a datagram means is the owner's: the egress connection to a TPU (src/quic/client-connection.ts) and the
// ingress client the library ships (src/client/quic/ingress-client.ts) sit on it, as the servers sit on
// src/quic/server-core.ts.
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
  /**
   * Idle RTT probe: when the owner wrote nothing for this long, two PINGs, timed to the datagram that acknowledges
   * them (rttSample()). quiche's smoothed RTT moves only when an ACK arrives, so without traffic it keeps the
   * handshake's value (a handshake slowed by a busy start) for the connection's life. null / absent: no probe.
   */
  readonly rttProbeMs?: number | null;
}

/** The newest round-trip measurement of the path: its value and when it was taken. */
export interface RttSample {
  /** ms, fractional. */
  readonly rttMs: number;
  /** Unix ms at which it was taken (the same number for as long as it is the newest). */
  readonly atUnixMs: number;
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
  /** Retry packets received during the handshake (a server validating our address: Firedancer by default). */
  retriesReceived = 0;
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
  /**
   * The owner wrote ack-eliciting data and no datagram came back since: the next one (its ACK, almost always)
   * feeds quiche's smoothed RTT, so that is when the smoothed RTT was last measured (srttAt).
   */
  private ackPending = false;
  /** The owner's ack-eliciting writes so far (the RTT probe's idleness test). */
  private ownerWrites = 0;
  /** Unix ms at which quiche's smoothed RTT last took a sample (-Infinity: never). */
  private srttAt = -Infinity;
  private rttProbeDueMs = Infinity;
  private writesAtRttCheck = 0;
  /** performance.now() of the outstanding probe's send (-1: none outstanding). */
  private probeSentAt = -1;
  /**
   * quiche's timeout() (ms) at or above which nothing ack-eliciting is in flight any more (its loss timer, at most a
   * PTO, is off; the idle timer, restarted by the datagram just read, is what remains): half the idle timeout.
   */
  private probeAckedTimeoutMs = Infinity;
  private probeRttMs = NaN;
  /** Unix ms at which the newest probe was answered (-Infinity: never). */
  private probeAt = -Infinity;
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

  /**
   * The newest round-trip measurement (null before establishment or after the close): the newer of the idle probe's
   * own timing and quiche's smoothed RTT as of its last sample. Cold: once per report.
   */
  rttSample(): RttSample | null {
    if (this.state !== 'established') return null;
    if (this.probeAt >= this.srttAt) return { rttMs: this.probeRttMs, atUnixMs: this.probeAt };
    const path = this.conn.pathStats()[0];
    if (path === undefined || !Number.isFinite(path.rtt) || path.rtt < 0) return null;
    // quiche gives whole ms, truncated: + 0.5 is the unbiased value (a 9.x ms path reads 9.5, not 9).
    return { rttMs: path.rtt + 0.5, atUnixMs: this.srttAt };
  }

  // ---- hot path ----

  /** The owner wrote ack-eliciting data (a stream): its ACK will give quiche's smoothed RTT a new sample. */
  noteAckEliciting(): void {
    this.ackPending = true;
    this.ownerWrites++;
    // An outstanding probe is dropped: its reply could not be told from this write's ACK, which measures instead.
    this.probeSentAt = -1;
  }

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
    if (this.state === 'established' && this.rttProbeDueMs !== Infinity) {
      const rp = this.rttProbeDueMs - now;
      if (delay === null || rp < delay) delay = rp < 0 ? 0 : rp;
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
    // A QUIC v1 Retry: long header, fixed bit, type 3 (RFC 9000 17.2.5). quiche handles it; we only count it.
    if (this.state === 'connecting' && msg.length > 0 && (msg[0] & 0xf0) === 0xf0) this.retriesReceived++;
    const probeArrival = this.probeSentAt >= 0 ? performance.now() : -1;
    if (this.ackPending) this.noteOwnerAck();
    try {
      this.conn.recv(msg, this.recvInfo);
    } catch {
      this.errors++; // discarded by quiche
    }
    if (probeArrival >= 0) this.noteProbeReply(probeArrival);
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
      if (now >= this.rttProbeDueMs) {
        // Idle only (the owner wrote nothing during the interval; our ACKs of the peer's packets do not count): with
        // traffic the ACKs keep quiche's smoothed RTT current, and a probe's reply could not be told from theirs.
        // One probe at a time: a lost PING is sent again by quiche (PTO) and its late ACK still times it (high: the
        // window's minimum discards it).
        if (this.ownerWrites === this.writesAtRttCheck && this.probeSentAt < 0) this.sendRttProbe(now);
        this.writesAtRttCheck = this.ownerWrites;
        this.rttProbeDueMs = now + (this.o.rttProbeMs ?? Infinity);
      }
      this.owner.onTick();
      if ((this.state as QuicClientState) === 'closed') return; // the owner closed us
    }
    this.flush();
    this.afterIo();
  };

  // ---- cold path ----

  /** A datagram arrived while an owner's write waited for its ACK: quiche's smoothed RTT takes its sample now. */
  private noteOwnerAck(): void {
    this.ackPending = false;
    this.srttAt = Date.now();
  }

  /**
   * A datagram arrived (at `arrival`, before quiche read it) while the probe waited. It is the reply only if it
   * acknowledged the PINGs: then quiche has nothing ack-eliciting in flight and its timer is the idle timer. Anything
   * else (a PING or data of the peer's, a datagram the network duplicated) would time the probe short: it waits.
   */
  private noteProbeReply(arrival: number): void {
    const t = this.conn.timeout();
    if (t !== null && t < this.probeAckedTimeoutMs) return;
    this.probeRttMs = arrival - this.probeSentAt;
    this.probeAt = Date.now();
    this.probeSentAt = -1;
  }

  /**
   * Two PINGs in two packets: a receiver SHOULD acknowledge every second ack-eliciting packet at once (RFC 9000
   * 13.2.2) but may hold a lone one for its max_ack_delay (quinn, Agave's QUIC: 25 ms), which would be timed as path.
   */
  private sendRttProbe(now: number): void {
    try {
      this.conn.sendAckEliciting();
      this.flush();
      this.conn.sendAckEliciting();
      this.flush();
    } catch {
      this.errors++;
      return;
    }
    this.probeSentAt = now;
  }

  private onEstablished(): void {
    this.state = 'established';
    this.handshakeMs = performance.now() - this.startMs;
    if (this.connectTimer !== null) clearTimeout(this.connectTimer);
    this.connectTimer = null;
    // The NEGOTIATED idle timeout (quiche's: the smaller of both sides', 0 = none; at least 3 PTOs).
    const peerIdle = this.conn.stats().peerMaxIdleTimeout;
    const idle = Math.min(this.o.maxIdleTimeoutMs || Infinity, peerIdle > 0 ? peerIdle : Infinity);
    if (this.o.keepAliveMs !== null) {
      // Keep-alive below half of it, whatever the configured value: a 10 s-idle peer (Jet, quinn defaults) would
      // otherwise drop us between keep-alives.
      if (Number.isFinite(idle)) this.keepAliveEffMs = Math.min(this.keepAliveEffMs, Math.floor(idle / 2));
      this.keepAliveDueMs = performance.now() + this.keepAliveEffMs;
    }
    // The handshake's packets gave quiche its first RTT samples.
    this.srttAt = Date.now();
    if (this.o.rttProbeMs != null) {
      this.rttProbeDueMs = performance.now() + this.o.rttProbeMs;
      this.probeAckedTimeoutMs = idle / 2; // a PTO is far below it, the idle timer above
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
