// Submit over the relay's QUIC ingress (caller's thread, HOT for a trader: one stream per transaction). One connection,
// opened at construction and kept: when it closes (relay restart, idle timeout, network) a new one is dialled with
// backoff, and submits made meanwhile wait for it within their timeout. The client certificate's CN is the API key,
// on an ephemeral Ed25519 keypair (key-certificate.ts). Acknowledged submits use one bidi stream each (MessagePack
// {transaction, routes?, maxRetries?} -> the /v1/submit answer map); fire-and-forget submits one uni stream each.
// The QUIC work itself (quiche, stream credit, congestion room, answers) is src/client/quic/ingress-client.ts, the
// client the relay's own ingress tests use: this file adds the connection's life cycle and the library's errors.
import { IngressClient, type StreamResult } from './ingress-client.js';
import { CONNECTION_CODE, STREAM_CODE } from '../../ingress/codes.js';
import type { QuicCloseInfo } from '../../quic/close-info.js';
import type { IdentityCertificate } from '../../quic/identity-certificate.js';
import { RelaySubmitError } from '../errors.js';
import type { SubmitRequest, SubmitTransport, SubmitTransportFactory, TransportContext } from '../transport.js';
import type { RouteName, SubmitResult, UnacknowledgedSubmitResult } from '../types.js';
import { createKeyCertificate } from './key-certificate.js';

export interface QuicTransportOptions {
  /** `host:port` of the relay's QUIC ingress (relayHost.quicPort); default the relay URL's host, port 4433. */
  readonly address?: string;
  /** Handshake timeout per connection attempt, ms (default the client's timeoutMs, at most 5,000). */
  readonly connectTimeoutMs?: number;
  /** QUIC idle timeout, ms (default 30,000; the relay's own may be shorter). An idle close is followed by a redial. */
  readonly idleTimeoutMs?: number;
  /** Backoff between connection attempts: from minMs (default 50), doubling up to maxMs (default 2,000). */
  readonly reconnect?: { readonly minMs?: number; readonly maxMs?: number };
}

export const DEFAULT_QUIC_PORT = 4433;

/** Reasons per stream code (docs/quic-ingress.md): the same labels the relay answers over HTTP where there is one. */
const STREAM_REASONS: Readonly<Record<number, string>> = {
  [STREAM_CODE.empty]: 'tx_undecodable',
  [STREAM_CODE.tooLarge]: 'tx_too_large_decoded',
  [STREAM_CODE.unfinished]: 'timeout',
  [STREAM_CODE.refused]: 'tx_invalid',
  [STREAM_CODE.rateLimited]: 'rate_limited',
  [STREAM_CODE.overloaded]: 'overloaded',
  [STREAM_CODE.replyTimeout]: 'timeout',
  [STREAM_CODE.bidiNotAllowed]: 'invalid_request',
  [STREAM_CODE.unauthorized]: 'unauthorized',
};

/** Reasons per CONNECTION_CLOSE application code. */
const CONNECTION_REASONS: Readonly<Record<number, string>> = {
  [CONNECTION_CODE.unauthorized]: 'unauthorized',
  [CONNECTION_CODE.keyConnectionLimit]: 'key_connection_limit',
  [CONNECTION_CODE.serverBusy]: 'overloaded',
  [CONNECTION_CODE.shuttingDown]: 'shutting_down',
};

/** Connection codes after which dialling again cannot help until something changes on the relay. */
const TERMINAL_CODES = new Set<number>([CONNECTION_CODE.unauthorized]);

function parseAddress(address: string): { host: string; port: number } {
  const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(address);
  const port = m === null ? NaN : Number(m[2]);
  if (m === null || !(port > 0 && port < 65_536)) throw new TypeError(`QUIC address must be host:port, got ${JSON.stringify(address)}`);
  return { host: m[1], port };
}

/** The error a connection's end stands for, for the submits it took with it. */
function connectionError(info: QuicCloseInfo | null, what: string): RelaySubmitError {
  if (info !== null && info.isApp && CONNECTION_REASONS[info.code] !== undefined) {
    return new RelaySubmitError({
      reason: CONNECTION_REASONS[info.code],
      message: `${what}: the relay closed the QUIC connection (code ${info.code}${info.reason === '' ? '' : `: ${info.reason}`})`,
      quicConnectionCode: info.code,
    });
  }
  const how = info === null ? 'no QUIC connection to the relay yet' : `the QUIC connection closed (${info.by}, code ${info.code}${info.reason === '' ? '' : `: ${info.reason}`})`;
  return new RelaySubmitError({ reason: 'network_error', message: `${what}: ${how}`, quicConnectionCode: info?.isApp === true ? info.code : undefined });
}

function retryAfterOf(data: unknown): number | undefined {
  const v = data !== null && typeof data === 'object' ? (data as { retryAfterMs?: unknown }).retryAfterMs : undefined;
  return typeof v === 'number' && v >= 0 ? v : undefined;
}

export class QuicTransport implements SubmitTransport {
  readonly kind = 'quic' as const;
  readonly host: string;
  readonly port: number;
  private conn: IngressClient | null = null;
  /** Settles when the connection being dialled is up (or the attempt failed); null when none is under way. */
  private dialing: Promise<void> | null = null;
  /** Submits waiting for a connection. */
  private readonly waiters = new Set<() => void>();
  private lastClose: QuicCloseInfo | null = null;
  private backoffMs: number;
  private redialTimer: NodeJS.Timeout | null = null;
  private closing = false;
  /** Connections established so far (1 = the first; more = reconnects). */
  connections = 0;
  /** When a stream of the current connection last ended with something from the relay (or was written). */
  private lastProgressAt = 0;

  private readonly certificate: IdentityCertificate;
  private readonly minMs: number;
  private readonly maxMs: number;

  constructor(
    private readonly ctx: TransportContext,
    private readonly opts: QuicTransportOptions = {},
  ) {
    const addr = opts.address === undefined ? { host: ctx.submitUrl.hostname.replace(/^\[|\]$/g, ''), port: DEFAULT_QUIC_PORT } : parseAddress(opts.address);
    this.host = addr.host;
    this.port = addr.port;
    this.minMs = opts.reconnect?.minMs ?? 50;
    this.maxMs = opts.reconnect?.maxMs ?? 2_000;
    if (!(this.minMs > 0 && this.maxMs >= this.minMs)) throw new TypeError('reconnect: 0 < minMs <= maxMs');
    this.backoffMs = this.minMs;
    this.certificate = createKeyCertificate(ctx.apiKey);
    this.dial();
  }

  /** Resolves when a connection is up (the first one is dialled at construction); rejects as a submit would. */
  async ready(timeoutMs = this.ctx.timeoutMs): Promise<void> {
    await this.connection(performance.now() + timeoutMs, undefined, 'connect');
  }

  async submit(req: SubmitRequest): Promise<SubmitResult | UnacknowledgedSubmitResult> {
    const deadline = performance.now() + this.ctx.timeoutMs;
    const conn = await this.connection(deadline, req.signal, 'submit');
    const started = performance.now();
    if (req.fireAndForget) {
      const bytes = req.tx.bytes;
      const r = await this.bounded(conn.sendUni(bytes), deadline, req.signal, conn, started);
      if (r.kind === 'written') return { accepted: 'unacknowledged', signature: req.tx.signature };
      throw await this.streamError(conn, r);
    }
    const body: { transaction: Uint8Array; routes?: readonly string[]; maxRetries?: number } = { transaction: req.tx.bytes };
    if (req.routes !== 'default') body.routes = req.routes;
    if (req.maxRetries !== undefined) body.maxRetries = req.maxRetries;
    const r = await this.bounded(conn.request(body), deadline, req.signal, conn, started);
    if (r.kind !== 'answer') throw await this.streamError(conn, r);
    return readAnswer(r.answer);
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.redialTimer !== null) clearTimeout(this.redialTimer);
    for (const wake of this.waiters) wake();
    const c = this.conn;
    this.conn = null;
    if (c !== null) {
      c.close(0, 'client closed');
      await c.closed;
    }
    // A handshake under way is not awaited: it closes itself when it completes (or times out, connectTimeoutMs).
  }

  /** The open connection, waiting (until the deadline) for one being dialled. */
  private async connection(deadline: number, signal: AbortSignal | undefined, what: string): Promise<IngressClient> {
    for (;;) {
      if (this.closing) throw new RelaySubmitError({ reason: 'aborted', message: `${what}: the client is closed` });
      if (signal?.aborted === true) throw new RelaySubmitError({ reason: 'aborted', message: `${what}: aborted`, cause: signal.reason });
      if (this.conn !== null) return this.conn;
      // The relay refused this key: fail now rather than wait out the timeout (a redial keeps trying meanwhile).
      if (this.lastClose !== null && this.lastClose.isApp && TERMINAL_CODES.has(this.lastClose.code)) throw connectionError(this.lastClose, what);
      const left = deadline - performance.now();
      if (left <= 0) {
        const err = connectionError(this.lastClose, what);
        throw new RelaySubmitError({ reason: 'timeout', message: `${what}: no QUIC connection within the timeout (${err.message})`, quicConnectionCode: err.quicConnectionCode });
      }
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          this.waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, left);
        signal?.addEventListener('abort', done, { once: true });
        this.waiters.add(done);
      });
    }
  }

  /** The stream's result, or a timeout / abort error first (the stream is left to finish; its outcome is unknown). */
  private bounded(p: Promise<StreamResult>, deadline: number, signal: AbortSignal | undefined, conn: IngressClient, started: number): Promise<StreamResult> {
    if (signal?.aborted === true) return Promise.reject(new RelaySubmitError({ reason: 'aborted', message: 'submit: aborted', cause: signal.reason }));
    return new Promise<StreamResult>((resolve, reject) => {
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(new RelaySubmitError({ reason: 'aborted', message: 'submit: aborted (outcome unknown)', cause: signal?.reason }));
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        // Nothing came back on this connection for the whole timeout: the relay is gone without a CONNECTION_CLOSE
        // (killed, network down). Close it now and redial instead of waiting for the QUIC idle timeout.
        if (this.conn === conn && this.lastProgressAt < started) conn.close(0, 'no answer from the relay');
        reject(new RelaySubmitError({ reason: 'timeout', message: `submit: no answer on the QUIC stream within ${this.ctx.timeoutMs} ms (outcome unknown)` }));
      }, Math.max(0, deadline - performance.now()));
      signal?.addEventListener('abort', onAbort, { once: true });
      p.then((r) => {
        if (r.kind !== 'closed' && this.conn === conn) this.lastProgressAt = performance.now();
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(r);
      }, reject);
    });
  }

  private async streamError(conn: IngressClient, r: StreamResult): Promise<RelaySubmitError> {
    if (r.kind === 'closed') return connectionError(await conn.closed, 'submit');
    if (r.kind !== 'reset' && r.kind !== 'stopped') return new RelaySubmitError({ reason: 'bad_answer', message: `submit: unexpected QUIC stream outcome ${r.kind}` });
    const reason = STREAM_REASONS[r.code];
    return new RelaySubmitError({
      reason: reason ?? 'network_error',
      message: `submit: the relay ${r.kind === 'reset' ? 'reset' : 'stopped'} the QUIC stream (code ${r.code})`,
      quicStreamCode: r.code >= 0 ? r.code : undefined,
    });
  }

  private dial(): void {
    if (this.closing || this.dialing !== null) return;
    this.dialing = (async () => {
      const c = await IngressClient.tryConnect({
        host: this.host,
        port: this.port,
        certificate: this.certificate,
        connectTimeoutMs: this.opts.connectTimeoutMs ?? Math.min(5_000, this.ctx.timeoutMs),
        idleTimeoutMs: this.opts.idleTimeoutMs,
      }).catch((err: unknown) => ({ by: 'local', isApp: false, code: 0, reason: String((err as Error)?.message ?? err), wasEstablished: false }) as QuicCloseInfo);
      this.dialing = null;
      if (!(c instanceof IngressClient)) return this.lost(c);
      if (this.closing) {
        c.close(0, 'client closed');
        return;
      }
      this.conn = c;
      this.connections++;
      const opened = performance.now();
      void c.closed.then((info) => {
        if (this.conn === c) this.conn = null;
        // A connection that lived a while resets the backoff; one closed at once (refused key) does not.
        if (performance.now() - opened > 1_000) this.backoffMs = this.minMs;
        this.lost(info);
      });
      this.wake();
    })();
  }

  private lost(info: QuicCloseInfo): void {
    this.lastClose = info;
    this.wake();
    if (this.closing) return;
    const wait = this.backoffMs;
    this.backoffMs = Math.min(this.maxMs, this.backoffMs * 2);
    this.redialTimer = setTimeout(() => {
      this.redialTimer = null;
      this.dial();
    }, wait);
    this.redialTimer.unref();
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }
}

/** The relay's answer map (the /v1/submit body) as a SubmitResult, or the RelaySubmitError it stands for. */
function readAnswer(a: Record<string, unknown>): SubmitResult {
  if (a.accepted === true && typeof a.signature === 'string') {
    return { accepted: true, signature: a.signature, routes: Array.isArray(a.routes) ? (a.routes as RouteName[]) : [] };
  }
  const e = a.error as Record<string, unknown> | undefined;
  if (e === undefined || e === null || typeof e !== 'object' || typeof e.reason !== 'string') {
    throw new RelaySubmitError({ reason: 'bad_answer', message: "submit: a QUIC answer that is not the relay's ({accepted, signature} or {accepted:false, error})", data: a });
  }
  throw new RelaySubmitError({
    reason: e.reason,
    message: typeof e.message === 'string' ? e.message : `submit refused: ${e.reason}`,
    code: typeof e.code === 'number' ? e.code : undefined,
    data: e.data,
    retryAfterMs: retryAfterOf(e.data),
  });
}

/**
 * The QUIC transport for RelayClient: `new RelayClient({url, apiKey, transport: quicTransport({address})})`. Each
 * RelayClient made with it gets its own connection (and certificate for its key).
 */
export function quicTransport(opts: QuicTransportOptions = {}): SubmitTransportFactory {
  if (opts.address !== undefined) parseAddress(opts.address);
  return (ctx) => new QuicTransport(ctx, opts);
}
