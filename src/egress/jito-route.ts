// The jito route (egress worker, HOT): sends every transaction to the configured Jito block engine as
// POST {url}/api/v1/transactions[?bundleOnly=true] {"method":"sendTransaction","params":[base64,{"encoding":"base64"}]}
// (the block engine always skips preflight), with `x-jito-auth: <uuid>` when routes.jito.authUuid is set, over a
// keep-alive node:http(s) agent (routes.jito.connections sockets per worker) and a per-request timeout.
// Outcome: `sent` when the block engine answered a JSON-RPC result (the signature), `failed` otherwise, logged with
// the trace id and a reason: HTTP 429 / -32097 becomes "rate-limited by the block engine" (kit cannot decode -32097,
// so the relay never passes it on), `dropped:shutdown` when close() aborted it.
// Never logged: the auth uuid (a header only) and the URL's query string (block engines also take ?uuid=).
import http from 'node:http';
import https from 'node:https';
import type { Config } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import { ROUTE_IDS } from '../shm/layout.js';
import type { EgressOutcome, EgressRoute, TxView } from './route.js';

/** Largest answer we read: a result is ~100 bytes, an error a few hundred. */
const MAX_RESPONSE_BYTES = 64 * 1024;
/** The block engine's JSON-RPC path for sendTransaction (Jito docs, "Transactions"). */
const TRANSACTIONS_PATH = '/api/v1/transactions';
/** The block engine's "rate limit exceeded" JSON-RPC code (with HTTP 429). */
export const JITO_RATE_LIMITED_CODE = -32097;

export type JitoRouteOptions = NonNullable<Config['routes']['jito']>;

/** Why the block engine did not take a transaction. */
export class JitoSendError extends Error {
  constructor(
    message: string,
    /** Stable short reason for logs: timeout, rate_limited, upstream_error, http_error, network, shutdown. */
    readonly reason: string,
  ) {
    super(message);
  }
}

/** {base}/api/v1/transactions (a URL already ending with that path is kept), with ?bundleOnly=true when asked. */
export function jitoTransactionsUrl(base: string, bundleOnly: boolean): URL {
  const url = new URL(base);
  const path = url.pathname.replace(/\/+$/, '');
  if (!path.endsWith(TRANSACTIONS_PATH)) url.pathname = path + TRANSACTIONS_PATH;
  if (bundleOnly) url.searchParams.set('bundleOnly', 'true');
  return url;
}

export class JitoRoute implements EgressRoute {
  readonly id = ROUTE_IDS.jito;
  readonly name = 'jito' as const;
  private readonly url: URL;
  /** origin + pathname: safe to log. */
  readonly label: string;
  private readonly agent: http.Agent;
  private readonly request: typeof http.request;
  /** Precomputed once: content-type and x-jito-auth. */
  private readonly baseHeaders: Readonly<Record<string, string>>;
  private readonly timeoutMs: number;
  private readonly inFlight = new Set<http.ClientRequest>();
  private closed = false;
  private nextId = 1;

  constructor(
    options: JitoRouteOptions,
    private readonly log: Logger,
  ) {
    this.url = jitoTransactionsUrl(options.url, options.bundleOnly);
    this.label = this.url.origin + this.url.pathname;
    this.timeoutMs = options.timeoutMs;
    const secure = this.url.protocol === 'https:';
    const agentOptions: http.AgentOptions = {
      keepAlive: true,
      maxSockets: options.connections,
      maxFreeSockets: options.connections,
      scheduling: 'lifo',
    };
    this.agent = secure ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
    this.request = secure ? https.request : http.request;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (options.authUuid !== undefined) headers['x-jito-auth'] = options.authUuid;
    this.baseHeaders = Object.freeze(headers);
  }

  send(tx: TxView): Promise<EgressOutcome> | EgressOutcome {
    if (this.closed) return 'dropped:shutdown';
    const body =
      '{"jsonrpc":"2.0","id":' +
      this.nextId++ +
      ',"method":"sendTransaction","params":["' +
      // Base64 straight from the ring slot (or the retry queue's copy): the only encoding pass.
      Buffer.from(tx.sab, tx.byteOffset, tx.length).toString('base64') +
      '",{"encoding":"base64"}]}';
    return this.post(body, true).then(ok, (err: unknown) => this.failed(tx, err));
  }

  private failed(tx: TxView, err: unknown): EgressOutcome {
    if (this.closed || (err instanceof JitoSendError && err.reason === 'shutdown')) return 'dropped:shutdown';
    this.log.warn(
      {
        traceId: tx.traceId,
        keyId: tx.keyId,
        route: 'jito',
        endpoint: this.label,
        reason: err instanceof JitoSendError ? err.reason : 'network',
        err: err instanceof Error ? err.message : String(err),
      },
      'jito route: block engine did not accept the transaction',
    );
    return 'failed';
  }

  /** POST one body; resolves on a JSON-RPC result, rejects with the reason otherwise. */
  private post(body: string, mayRetry: boolean): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.closed) {
        reject(new JitoSendError('relay shutting down', 'shutdown'));
        return;
      }
      const req = this.request(this.url, {
        method: 'POST',
        agent: this.agent,
        headers: { ...this.baseHeaders, 'content-length': body.length },
      });
      this.inFlight.add(req);
      let settled = false;
      const timer = setTimeout(
        () => req.destroy(new JitoSendError(`timeout after ${this.timeoutMs} ms`, 'timeout')),
        this.timeoutMs,
      );
      const finish = (err: Error | null): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.inFlight.delete(req);
        if (err === null) resolve();
        else reject(err);
      };
      req.on('error', (err: NodeJS.ErrnoException) => {
        // A kept-alive socket the server closed while idle: retry once on a fresh one (Node http docs' advice).
        if (mayRetry && req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE') && !settled) {
          settled = true;
          clearTimeout(timer);
          this.inFlight.delete(req);
          this.post(body, false).then(resolve, reject);
          return;
        }
        finish(err instanceof JitoSendError ? err : new JitoSendError(err.message, 'network'));
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) {
            req.destroy(new JitoSendError(`response larger than ${MAX_RESPONSE_BYTES} bytes (HTTP ${res.statusCode})`, 'http_error'));
            return;
          }
          chunks.push(c);
        });
        res.on('error', (err) => finish(err));
        res.on('end', () => finish(jitoAnswerError(res.statusCode ?? 0, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks))));
      });
      req.end(body);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const req of this.inFlight) req.destroy(new JitoSendError('relay shutting down', 'shutdown'));
    this.inFlight.clear();
    this.agent.destroy();
  }
}

function ok(): EgressOutcome {
  return 'sent';
}

/** null when the block engine answered a JSON-RPC result; otherwise why not (429 / -32097 named as a rate limit). */
export function jitoAnswerError(status: number, body: Buffer): JitoSendError | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const o = (parsed !== null && typeof parsed === 'object' ? parsed : {}) as {
    result?: unknown;
    error?: { code?: unknown; message?: unknown } | null;
  };
  const err = o.error !== undefined && o.error !== null && typeof o.error === 'object' ? o.error : undefined;
  if (status === 429 || err?.code === JITO_RATE_LIMITED_CODE) {
    const detail = err !== undefined && typeof err.message === 'string' ? `: ${err.message}` : '';
    return new JitoSendError(`rate-limited by the block engine (HTTP ${status}, code ${String(err?.code ?? 'none')})${detail}`, 'rate_limited');
  }
  if (status === 200 && o.result !== undefined && o.result !== null && err === undefined) return null;
  if (err !== undefined) {
    return new JitoSendError(`block engine error ${String(err.code)}: ${String(err.message)} (HTTP ${status})`, 'upstream_error');
  }
  if (parsed === undefined) {
    return new JitoSendError(`HTTP ${status}, body is not JSON: ${body.subarray(0, 120).toString('utf8')}`, 'http_error');
  }
  return new JitoSendError(`HTTP ${status}, no JSON-RPC result in answer`, 'http_error');
}
