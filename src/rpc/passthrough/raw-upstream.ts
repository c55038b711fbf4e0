// The raw upstream caller of passthrough reads (front thread; async, cold relative to the send path but on the
// passthrough read path, so kept lean: docs/passthrough.md). One undici Pool to the upstream's origin (keep-alive,
// pipelining 1, bounded connections) driven through Dispatcher#dispatch with a handler object: no fetch Response, no
// web or Node stream per call, the body collected as Buffer chunks and decoded once. Every call ends within its
// timeout (queued time included): resolved with the body text of a 200, or rejected with an UpstreamError whose kind
// says why (timeout, unreachable, bad_status, bad_answer); upstreamFailure() turns that into the client's answer.
// The upstream URL and the transport's message never leave this module in an answer (either may carry a provider key).
import { Pool, type Dispatcher } from 'undici';
import { UpstreamError } from '../upstream-client.js';

/** Connections to the upstream at most (pipelining 1: one request in flight on each). More wait in the pool's queue. */
export const UPSTREAM_CONNECTIONS = 64;
/**
 * Idle keep-alive connections are closed after this long (undici's default, 4 s): below the idle timeouts of the
 * servers we talk to (uWS, which the embedded localnet uses, closes idle HTTP after ~10 s), so a request is never
 * written to a socket the server is closing.
 */
const KEEP_ALIVE_MS = 4_000;
/**
 * Largest upstream answer accepted, bytes. getMultipleAccounts of 100 accounts of 10 MiB each would be ~1.3 GB of
 * base64: holding that (twice, as chunks and as text) for one caller would endanger every other one. Over this the
 * call fails (upstream_unavailable).
 */
export const MAX_RESPONSE_BYTES = 128 * 1024 * 1024;

/** One call in flight: the undici handler, its timer and its promise's settlers in one object (no closures). */
class Call implements Dispatcher.DispatchHandlers {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private status = 0;
  private done = false;
  private abort: ((err?: Error) => void) | null = null;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly resolve: (text: string) => void,
    private readonly reject: (err: UpstreamError) => void,
    timeoutMs: number,
  ) {
    this.timer = setTimeout(Call.onTimeout, timeoutMs, this);
  }

  private static onTimeout(c: Call): void {
    c.fail(new UpstreamError('upstream passthrough call timed out', undefined, 'timeout'));
  }

  private fail(err: UpstreamError): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.chunks = [];
    this.reject(err);
    // Free the connection now (or, when still queued, as soon as it is handed one: onConnect below).
    this.abort?.(err);
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abort = abort;
    if (this.done) abort(new Error('passthrough call already given up'));
  }

  onHeaders(statusCode: number): boolean {
    this.status = statusCode;
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.done) return false;
    this.bytes += chunk.length;
    if (this.bytes > MAX_RESPONSE_BYTES) {
      this.fail(new UpstreamError('upstream passthrough answer too large', undefined, 'bad_answer'));
      return false;
    }
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    if (this.status !== 200) {
      this.reject(new UpstreamError(`upstream passthrough call answered HTTP ${this.status}`, undefined, 'bad_status'));
      return;
    }
    const c = this.chunks;
    this.chunks = [];
    this.resolve(c.length === 1 ? c[0].toString('utf8') : Buffer.concat(c, this.bytes).toString('utf8'));
  }

  onError(err: Error): void {
    // Connection refused or reset, DNS, TLS: the upstream is not there (its message stays in this process).
    this.fail(new UpstreamError(`upstream passthrough call failed: ${err.message}`, undefined, 'unreachable'));
  }
}

export interface RawUpstreamOptions {
  /** The upstream's JSON-RPC URL (path and query kept; userinfo sent as Basic authorization). */
  readonly url: string;
  /** Default per-call limit, ms (upstream.requestTimeoutMs). */
  readonly timeoutMs: number;
  readonly connections?: number;
}

export class RawUpstream {
  private readonly pool: Pool;
  private readonly path: string;
  private readonly headers: string[];
  readonly timeoutMs: number;

  constructor(opts: RawUpstreamOptions) {
    const u = new URL(opts.url);
    this.path = (u.pathname || '/') + u.search;
    this.headers = ['content-type', 'application/json'];
    if (u.username !== '' || u.password !== '') {
      const cred = decodeURIComponent(u.username) + ':' + decodeURIComponent(u.password);
      this.headers.push('authorization', 'Basic ' + Buffer.from(cred).toString('base64'));
    }
    this.timeoutMs = opts.timeoutMs;
    this.pool = new Pool(u.origin, {
      connections: opts.connections ?? UPSTREAM_CONNECTIONS,
      pipelining: 1,
      keepAliveTimeout: KEEP_ALIVE_MS,
      // Our own timer (Call) bounds the whole call, queueing included; undici's per-phase timers are not needed.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  /** POST `body` (a JSON-RPC request text); the answer's text when the upstream answered HTTP 200. */
  post(body: string, timeoutMs: number = this.timeoutMs): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const call = new Call(resolve, reject, timeoutMs);
      try {
        this.pool.dispatch({ path: this.path, method: 'POST', headers: this.headers, body }, call);
      } catch (err) {
        call.onError(err as Error);
      }
    });
  }

  /** Close the pool's connections (tests, benches; the relay's process simply exits). */
  close(): Promise<void> {
    return this.pool.destroy();
  }
}
