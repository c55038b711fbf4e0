// The jito route (egress worker, HOT): sends every transaction to the configured Jito block engine as
// POST {url}/api/v1/transactions[?bundleOnly=true] {"method":"sendTransaction","params":[base64,{"encoding":"base64"}]}
// (the block engine always skips preflight), with `x-jito-auth: <uuid>` when routes.jito.authUuid is set, over a
// keep-alive node:http(s) agent (routes.jito.connections sockets per worker) and a per-request timeout.
// Outcome: `sent` when the block engine answered a JSON-RPC result (the signature), `failed` otherwise, logged with
// the trace id and a reason: HTTP 429 / -32097 becomes "rate-limited by the block engine" (kit cannot decode -32097,
// so the relay never passes it on), `dropped:shutdown` when close() aborted it. Failure lines are bounded per reason
// (src/log/summarized-log.ts): the first at once, then a count per 10 s with one example, a last one at close().
// Never logged: the auth uuid (a header only) and the URL's query string (block engines also take ?uuid=).
import type http from 'node:http';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../log/logger.js';
import { SummarizedLog } from '../../log/summarized-log.js';
import { ROUTE_IDS } from '../../shm/layout.js';
import { CAUSE } from '../../shm/receipts-layout.js';
import { keepAliveTarget, MAX_RESPONSE_BYTES, postJson, type JsonPostErrors, type JsonPostTarget } from './json-post.js';
import { sendResult, type EgressOutcome, type EgressRoute, type RouteAnswer, type TxView } from '../contract/route.js';

/** The block engine's JSON-RPC path for sendTransaction (Jito docs, "Transactions"). */
const TRANSACTIONS_PATH = '/api/v1/transactions';
/** The block engine's "rate limit exceeded" JSON-RPC code (with HTTP 429). */
export const JITO_RATE_LIMITED_CODE = -32097;

export type JitoRouteOptions = NonNullable<Config['routes']['jito']>;

const JITO_POST_ERRORS: JsonPostErrors = {
  timeout: (ms) => new JitoSendError(`timeout after ${ms} ms`, 'timeout'),
  tooLarge: (status) => new JitoSendError(`response larger than ${MAX_RESPONSE_BYTES} bytes (HTTP ${status})`, 'http_error'),
  network: (err) => (err instanceof JitoSendError ? err : new JitoSendError(err.message, 'network')),
  answer: (status, body) => jitoAnswerError(status, body),
};

/** Why the block engine did not take a transaction. */
export class JitoSendError extends Error {
  constructor(
    message: string,
    /** Stable short reason for logs: timeout, rate_limited, upstream_error, http_error, network, shutdown. */
    readonly reason: string,
    /** The HTTP status (http_error, rate_limited) or -JSON-RPC code (upstream_error) for the landing receipt; 0 = none. */
    readonly code = 0,
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
  /** The block engine's sendTransaction URL, its agent and headers (content-type, x-jito-auth). */
  private readonly target: JsonPostTarget;
  /** origin + pathname: safe to log. */
  readonly label: string;
  private readonly inFlight = new Set<http.ClientRequest>();
  private closed = false;
  private nextId = 1;
  private readonly failures: SummarizedLog;

  constructor(
    options: JitoRouteOptions,
    log: Logger,
  ) {
    this.failures = new SummarizedLog(log);
    const url = jitoTransactionsUrl(options.url, options.bundleOnly);
    this.label = url.origin + url.pathname;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (options.authUuid !== undefined) headers['x-jito-auth'] = options.authUuid;
    this.target = keepAliveTarget(url, options.connections, Object.freeze(headers), options.timeoutMs, this.inFlight);
  }

  send(tx: TxView): Promise<RouteAnswer> | RouteAnswer {
    if (this.closed) return 'dropped:shutdown';
    const body =
      '{"jsonrpc":"2.0","id":' +
      this.nextId++ +
      ',"method":"sendTransaction","params":["' +
      // Base64 straight from the ring slot (or the retry queue's copy): the only encoding pass.
      Buffer.from(tx.sab, tx.byteOffset, tx.length).toString('base64') +
      '",{"encoding":"base64"}]}';
    return this.post(body).then(ok, (err: unknown) => this.failed(tx, err));
  }

  private failed(tx: TxView, err: unknown): RouteAnswer {
    if (this.closed || (err instanceof JitoSendError && err.reason === 'shutdown')) return 'dropped:shutdown';
    const reason = err instanceof JitoSendError ? err.reason : 'network';
    // The landing receipt's cause (cold: a failure).
    const code = err instanceof JitoSendError ? err.code : 0;
    const cause =
      reason === 'timeout' ? CAUSE.route_timeout : reason === 'upstream_error' ? CAUSE.route_upstream : reason === 'network' ? CAUSE.route_network : CAUSE.route_http;
    this.failures.note(
      'warn',
      reason,
      { traceId: tx.traceId, keyId: tx.keyId, route: 'jito', endpoint: this.label, reason, err: err instanceof Error ? err.message : String(err) },
      'jito route: block engine did not accept the transaction',
    );
    return sendResult('failed', 0, -1, cause, code);
  }

  /** POST one body; resolves on a JSON-RPC result, rejects with the reason otherwise. */
  private post(body: string): Promise<unknown> {
    if (this.closed) return Promise.reject(new JitoSendError('relay shutting down', 'shutdown'));
    return postJson(this.target, body, JITO_POST_ERRORS);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const req of this.inFlight) req.destroy(new JitoSendError('relay shutting down', 'shutdown'));
    this.inFlight.clear();
    this.target.agent.destroy();
    this.failures.close();
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
    return new JitoSendError(`rate-limited by the block engine (HTTP ${status}, code ${String(err?.code ?? 'none')})${detail}`, 'rate_limited', status);
  }
  if (status === 200 && o.result !== undefined && o.result !== null && err === undefined) return null;
  if (err !== undefined) {
    return new JitoSendError(`block engine error ${String(err.code)}: ${String(err.message)} (HTTP ${status})`, 'upstream_error', -Number(err.code) || 0);
  }
  if (parsed === undefined) {
    return new JitoSendError(`HTTP ${status}, body is not JSON: ${body.subarray(0, 120).toString('utf8')}`, 'http_error', status);
  }
  return new JitoSendError(`HTTP ${status}, no JSON-RPC result in answer`, 'http_error', status);
}
