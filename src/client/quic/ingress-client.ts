// A QUIC ingress client on quiche (the caller's thread; HOT for the bench: one stream per transaction). It speaks
// docs/quic-ingress.md: uni streams (one wire transaction + FIN, fire-and-forget) and, on ALPN slotrelay/1, bidi
// streams (one MessagePack request + FIN, one MessagePack answer + FIN). Streams wait for stream credit (MAX_STREAMS)
// and congestion room instead of failing; a refused stream resolves with the code of its STOP_SENDING / RESET_STREAM.
// Used by the tests and benchmarks, and a reference for a client in another language. Also has the knobs the tests
// need to misbehave: unfinished streams, not reading answers. The socket, send loop, ACK hold, timer and close are the
// shared client loop's (src/quic/client-driver.ts); this file is the protocol on top.
import { Packr, Unpackr } from 'msgpackr';
import { quiche, type QuicheConfig } from '../../quic/quiche.js';
import { QuicClientDriver } from '../../quic/client-driver.js';
import type { QuicCloseInfo } from '../../quic/close-info.js';
import type { IdentityCertificate } from '../../quic/identity-certificate.js';
import { MAX_RECV_UDP_PAYLOAD, MAX_SEND_UDP_PAYLOAD, TLS_SIGALGS } from '../../quic/constants.js';
import { ALPN_SLOTRELAY } from '../../ingress/codes.js';

export interface IngressClientOptions {
  readonly host: string;
  readonly port: number;
  /** The client certificate (CN = API key, or a Solana identity listed in quicIdentities); null = none. */
  readonly certificate: IdentityCertificate | null;
  /** Default slotrelay/1. */
  readonly alpn?: string;
  /** Per-stream receive window for answers (bytes); default 64 KiB. */
  readonly answerWindowBytes?: number;
  /** false: never read answers (tests of a client that stops reading). */
  readonly readAnswers?: boolean;
  readonly connectTimeoutMs?: number;
  readonly idleTimeoutMs?: number;
  /** PING when nothing went out for this long (capped at half the negotiated idle timeout); default none. */
  readonly keepAliveMs?: number;
}

/** How a stream ended for the client. */
export type StreamResult =
  | { readonly kind: 'written' }
  | { readonly kind: 'answer'; readonly answer: Record<string, unknown> }
  | { readonly kind: 'reset'; readonly code: number }
  | { readonly kind: 'stopped'; readonly code: number }
  | { readonly kind: 'closed' };

interface Outgoing {
  data: Uint8Array;
  off: number;
  fin: boolean;
  bidi: boolean;
  sid: number;
  /** Once the data is written, reset the stream (RESET_STREAM) with this code instead of ending it; null = no. */
  reset: number | null;
  resolve: ((r: StreamResult) => void) | null;
}

const packr = new Packr({ useRecords: false });
// copyBuffers: an answer is unpacked straight from the receive buffer (readStream), which the next read overwrites.
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: 'number', copyBuffers: true });
const encoder = new TextEncoder();
const EMPTY = new Uint8Array(0);
/**
 * Longest hold of the ACK of a datagram that brought answers: a caller usually sends its next request while the
 * answer's promise settles, and that request's packet carries the ACK (as src/quic/client-connection.ts does). Sent
 * at once, it costs a sendmsg before the answer reaches the caller, and a datagram for the relay to read. Far below
 * the 25 ms max_ack_delay quiche advertises.
 */
const ACK_HOLD_MS = 1;

/** The code of a quiche stream error ("StreamStopped(17)", "StreamReset(22)"), or -1. */
function codeOf(err: unknown, kind: 'StreamStopped' | 'StreamReset'): number {
  const m = new RegExp(`${kind}\\((\\d+)\\)`).exec(String((err as Error)?.message ?? err));
  return m === null ? -1 : Number(m[1]);
}

export class IngressClient {
  readonly established: Promise<void>;
  readonly closed: Promise<QuicCloseInfo>;
  private readonly d: QuicClientDriver;
  private nextUni = 2;
  private nextBidi = 0;
  /** Streams waiting for credit, in order. */
  private readonly waiting: Outgoing[] = [];
  /** Streams opened whose data (or FIN) is not all written yet (congestion / flow control). */
  private readonly partial = new Map<number, Outgoing>();
  /** Bidi streams waiting for their answer. */
  private readonly answers = new Map<number, { resolve: (r: StreamResult) => void; buf: Buffer[] }>();
  private readonly rx = Buffer.allocUnsafe(65_536);
  private readonly readAnswers: boolean;
  /** Uni streams written (with FIN). */
  uniWritten = 0;
  /** Answers settled, and stream writes made, while handling the current datagram (onPeerData). */
  private answeredNow = 0;
  private wroteNow = 0;

  private constructor(o: IngressClientOptions) {
    this.readAnswers = o.readAnswers ?? true;
    const idle = o.idleTimeoutMs ?? 30_000;
    this.d = new QuicClientDriver(
      {
        host: o.host,
        port: o.port,
        config: ingressClientConfig(o, idle, this.readAnswers),
        connectTimeoutMs: o.connectTimeoutMs ?? 5_000,
        keepAliveMs: o.keepAliveMs ?? null,
        maxIdleTimeoutMs: idle,
        ackHoldMs: ACK_HOLD_MS,
      },
      {
        onPeerData: this.onPeerData,
        onTick: () => this.pump(),
        onEnded: () => this.settleAll(),
      },
    );
    this.established = this.d.established;
    this.closed = this.d.closed;
  }

  /** Connects and waits for the handshake; rejects with an Error carrying `closeInfo` if it fails. */
  static async connect(o: IngressClientOptions): Promise<IngressClient> {
    const c = new IngressClient(o);
    await c.d.start();
    await c.established;
    return c;
  }

  /** The handshake's outcome without throwing: the client, or how the connection ended. */
  static async tryConnect(o: IngressClientOptions): Promise<IngressClient | QuicCloseInfo> {
    const c = new IngressClient(o);
    await c.d.start();
    try {
      await c.established;
      return c;
    } catch {
      return c.closed;
    }
  }

  /** One wire transaction on a uni stream (+ FIN). Resolves once written (after credit and room). */
  sendUni(tx: Uint8Array, fin = true): Promise<StreamResult> {
    return this.enqueue(tx, fin, false);
  }

  /** One request map on a bidi stream (+ FIN); resolves with the answer, or the stream's refusal code. */
  request(req: { transaction: Uint8Array; routes?: readonly string[] | 'default'; maxRetries?: number }): Promise<StreamResult> {
    return this.enqueue(packr.pack(req), true, true);
  }

  /** Raw bytes on a bidi stream (tests: garbage, no FIN). */
  requestRaw(bytes: Uint8Array, fin = true): Promise<StreamResult> {
    return this.enqueue(bytes, fin, true);
  }

  /**
   * Tests of a client that abandons a stream: writes `bytes` without FIN on a new uni (or bidi) stream, then resets
   * it with `code` (RESET_STREAM). Resolves 'written' once the reset is queued.
   */
  abandon(bytes: Uint8Array, code: number, bidi = false): Promise<StreamResult> {
    return this.enqueue(bytes, false, bidi, code);
  }

  /** Tests of a late FIN: `head` without FIN on a new uni stream, then `tail` + FIN `delayMs` after `head` was written. */
  async sendUniLate(head: Uint8Array, tail: Uint8Array, delayMs: number): Promise<StreamResult> {
    const h = await this.headThenWait(head, delayMs);
    return typeof h === 'number' ? this.enqueueOn(h, tail) : h;
  }

  /**
   * Tests of a late reset: `head` without FIN on a new uni stream, then RESET_STREAM with `code` `delayMs` after `head`
   * was written. Resolves with the head's result ('written': the reset was sent too).
   */
  async abandonLate(head: Uint8Array, code: number, delayMs: number): Promise<StreamResult> {
    const h = await this.headThenWait(head, delayMs);
    if (typeof h !== 'number') return h;
    if (this.d.closeInfo !== null) return { kind: 'closed' };
    try {
      this.d.conn.streamShutdown(h, quiche.Shutdown.Write, code);
    } catch (err) {
      return { kind: 'stopped', code: codeOf(err, 'StreamStopped') };
    }
    this.d.flush();
    this.d.afterIo();
    return { kind: 'written' };
  }

  /** `head` without FIN on a new uni stream, then `delayMs`: the stream's id, or how the write ended otherwise. */
  private async headThenWait(head: Uint8Array, delayMs: number): Promise<number | StreamResult> {
    if (this.d.state === 'closed') return { kind: 'closed' };
    let w!: Outgoing;
    const r = await new Promise<StreamResult>((resolve) => {
      w = { data: head, off: 0, fin: false, bidi: false, sid: -1, reset: null, resolve };
      this.waiting.push(w);
      if (this.d.state === 'established') this.enqueued();
    });
    if (r.kind !== 'written') return r;
    await new Promise((res) => setTimeout(res, delayMs));
    return w.sid;
  }

  /** Uni streams the relay lets us open now (its MAX_STREAMS credit left); 0 unless established. */
  get uniCreditLeft(): number {
    return this.d.state === 'established' ? this.d.conn.peerStreamsLeftUni() : 0;
  }

  /** More bytes + FIN on an open uni stream (sendUniLate). */
  private enqueueOn(sid: number, data: Uint8Array): Promise<StreamResult> {
    if (this.d.state === 'closed') return Promise.resolve({ kind: 'closed' });
    return new Promise<StreamResult>((resolve) => {
      const w: Outgoing = { data, off: 0, fin: true, bidi: false, sid, reset: null, resolve };
      if (!this.write(w)) this.partial.set(sid, w);
      this.enqueued();
    });
  }

  private enqueued(): void {
    this.pump();
    this.d.flush();
    this.d.afterIo();
  }

  private enqueue(data: Uint8Array, fin: boolean, bidi: boolean, reset: number | null = null): Promise<StreamResult> {
    if (this.d.state === 'closed') return Promise.resolve({ kind: 'closed' });
    return new Promise<StreamResult>((resolve) => {
      this.waiting.push({ data, off: 0, fin, bidi, sid: -1, reset, resolve });
      if (this.d.state === 'established') {
        this.pump();
        this.d.flush();
        this.d.afterIo();
      }
    });
  }

  /** Streams waiting for credit or room. */
  get backlog(): number {
    return this.waiting.length + this.partial.size;
  }

  close(code = 0, reason = ''): void {
    this.d.close(code, reason);
  }

  /** Opens streams while credit lasts and writes what fits. */
  private pump(): void {
    const conn = this.d.conn;
    for (const [sid, w] of this.partial) {
      if (!this.write(w)) return;
      this.partial.delete(sid);
    }
    let i = 0;
    for (; i < this.waiting.length; i++) {
      const w = this.waiting[i];
      const left = w.bidi ? conn.peerStreamsLeftBidi() : conn.peerStreamsLeftUni();
      if (left === 0) break;
      if (w.bidi) {
        w.sid = this.nextBidi;
        this.nextBidi += 4;
        this.answers.set(w.sid, { resolve: w.resolve!, buf: [] });
      } else {
        w.sid = this.nextUni;
        this.nextUni += 4;
      }
      if (!this.write(w)) {
        this.partial.set(w.sid, w);
        i++;
        break;
      }
    }
    if (i > 0) this.waiting.splice(0, i);
  }

  /** true once the stream's data and FIN (if asked) are written. */
  private write(w: Outgoing): boolean {
    const rest = w.off === 0 ? w.data : w.data.subarray(w.off);
    let n: number | null;
    try {
      n = this.d.conn.streamSend(w.sid, rest.length === 0 ? EMPTY : rest, w.fin);
    } catch (err) {
      this.settle(w, { kind: 'stopped', code: codeOf(err, 'StreamStopped') });
      return true;
    }
    w.off += n ?? 0;
    this.wroteNow++;
    if (w.off < w.data.length || (n === null && w.data.length === 0 && w.fin)) return false;
    if (w.reset !== null) {
      try {
        this.d.conn.streamShutdown(w.sid, quiche.Shutdown.Write, w.reset);
      } catch {
        // stopped by the relay already
      }
      this.settle(w, { kind: 'written' });
      return true;
    }
    if (!w.bidi) {
      this.uniWritten++;
      this.settle(w, { kind: 'written' });
    }
    return true;
  }

  private settle(w: Outgoing, r: StreamResult): void {
    const resolve = w.resolve;
    w.resolve = null;
    if (w.bidi) this.answers.delete(w.sid);
    if (resolve !== null) resolve(r);
  }

  /** A datagram on the established connection: read answers, notice refusals, write what waits. */
  private readonly onPeerData = (): boolean => {
    this.answeredNow = 0;
    this.wroteNow = 0;
    if (this.readAnswers && this.d.conn.isReadable()) this.readStreams();
    this.checkStopped();
    this.pump();
    // Answers came and nothing of ours was written: hold the ACK (ACK_HOLD_MS) for the caller's next request.
    return this.answeredNow > 0 && this.wroteNow === 0;
  };

  private readStreams(): void {
    // conn.readable() builds a native iterator (~25 us a datagram, measured): answers come in the order the requests
    // went, so probe the oldest few pending streams (streamReadable, a boolean) and iterate only if more is readable.
    let n = 0;
    for (const sid of this.answers.keys()) {
      if (n++ === 4) break;
      if (this.d.conn.streamReadable(sid)) this.readStream(sid);
    }
    if (!this.d.conn.isReadable()) return;
    for (const sid of this.d.conn.readable()) this.readStream(sid);
  }

  private readStream(sid: number): void {
    const a = this.answers.get(sid);
    for (;;) {
      let r: [number, boolean] | null;
      try {
        r = this.d.conn.streamRecv(sid, this.rx);
      } catch (err) {
        if (a !== undefined) {
          this.answers.delete(sid);
          a.resolve({ kind: 'reset', code: codeOf(err, 'StreamReset') });
        }
        return;
      }
      if (r === null) return;
      if (r[1]) {
        if (a !== undefined) {
          this.answers.delete(sid);
          this.answeredNow++;
          // The usual case, the whole answer in this one read: unpacked from the receive buffer, no copy.
          const whole = a.buf.length === 0 ? this.rx.subarray(0, r[0]) : Buffer.concat([...a.buf, this.rx.subarray(0, r[0])]);
          try {
            a.resolve({ kind: 'answer', answer: unpackr.unpack(whole) as Record<string, unknown> });
          } catch {
            a.resolve({ kind: 'reset', code: -1 });
          }
        }
        return;
      }
      if (a !== undefined && r[0] > 0) a.buf.push(Buffer.from(this.rx.subarray(0, r[0])));
    }
  }

  /**
   * A STOP_SENDING for a stream we are still writing: the stream no longer takes data. This quiche build drops the
   * stream as soon as the frame is processed, so its code is usually gone (code -1); quinn clients read it.
   */
  private checkStopped(): void {
    for (const [sid, w] of this.partial) {
      try {
        this.d.conn.streamCapacity(sid);
      } catch (err) {
        this.partial.delete(sid);
        this.settle(w, { kind: 'stopped', code: codeOf(err, 'StreamStopped') });
      }
    }
  }

  /** The connection ended: every stream still waiting, being written or awaiting its answer settles as closed. */
  private settleAll(): void {
    for (const w of this.waiting) this.settle(w, { kind: 'closed' });
    this.waiting.length = 0;
    for (const w of this.partial.values()) this.settle(w, { kind: 'closed' });
    this.partial.clear();
    for (const a of this.answers.values()) a.resolve({ kind: 'closed' });
    this.answers.clear();
  }
}

/** The client's quiche Config: ALPN, certificate, an answer window per bidi stream, no streams from the relay. */
function ingressClientConfig(o: IngressClientOptions, idleTimeoutMs: number, readAnswers: boolean): QuicheConfig {
  const window = o.answerWindowBytes ?? 65_536;
  const config = quiche.Config.withBoringSslCtx(
    false,
    false,
    null,
    o.certificate === null ? null : [encoder.encode(o.certificate.keyPem)],
    o.certificate === null ? null : [encoder.encode(o.certificate.certPem)],
    TLS_SIGALGS,
  );
  config.setApplicationProtos([o.alpn ?? ALPN_SLOTRELAY]);
  config.setMaxIdleTimeout(idleTimeoutMs);
  config.setMaxSendUdpPayloadSize(MAX_SEND_UDP_PAYLOAD);
  config.setMaxRecvUdpPayloadSize(MAX_RECV_UDP_PAYLOAD);
  config.setInitialMaxStreamDataBidiLocal(window);
  config.setInitialMaxStreamDataBidiRemote(0);
  config.setInitialMaxStreamDataUni(0);
  config.setInitialMaxData(readAnswers ? window * 1024 : window);
  config.setInitialMaxStreamsBidi(0);
  config.setInitialMaxStreamsUni(0);
  config.setDisableActiveMigration(true);
  config.enablePacing(false);
  return config;
}
