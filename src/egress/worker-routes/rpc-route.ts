// The rpc route (egress worker, HOT): forwards every transaction to each configured JSON-RPC endpoint as
// sendTransaction [base64, {encoding: "base64", skipPreflight: true, maxRetries?}] over keep-alive node:http(s)
// agents (maxSockets = routes.rpc.connections per endpoint, per worker), with a per-request timeout.
// Outcome: `sent` when at least one endpoint answered a JSON-RPC result, `failed` otherwise, `dropped:no_endpoint`
// with no endpoints, `dropped:shutdown` when close() aborted it. A failure's answer carries the first endpoint's cause
// (timeout, network, HTTP status, -JSON-RPC code) for the landing receipt. An endpoint's refusal is logged bounded, per endpoint
// and reason (timeout, network, http_error, upstream_error, too_large): the first at once with the trace id and the
// upstream's message, then a count per 10 s with one example (src/log/summarized-log.ts), a last one at close().
// Endpoint URLs may carry provider API keys in their query: logs show origin + path only.
import type http from 'node:http';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../log/logger.js';
import { SummarizedLog } from '../../log/summarized-log.js';
import { ROUTE_IDS } from '../../shm/layout.js';
import { CAUSE } from '../../shm/receipts-layout.js';
import { keepAliveTarget, MAX_RESPONSE_BYTES, postJson, type JsonPostErrors, type JsonPostTarget } from './json-post.js';
import { sendResult, type EgressOutcome, type EgressRoute, type RouteAnswer, type TxView } from '../contract/route.js';

interface Endpoint {
  readonly target: JsonPostTarget;
  /** origin + pathname: safe to log (no query string, no credentials). */
  readonly label: string;
}

/** Why an endpoint did not take a transaction: a closed set, the `reason` field of the log lines. */
type EndpointFailure = 'timeout' | 'network' | 'http_error' | 'upstream_error' | 'too_large' | 'shutdown';

/** Why one endpoint did not take the transaction. */
class EndpointError extends Error {
  constructor(
    message: string,
    readonly reason: EndpointFailure,
    /** The HTTP status (http_error) or -JSON-RPC code (upstream_error) for the landing receipt; 0 = none. */
    readonly code = 0,
  ) {
    super(message);
  }
}

/** The landing receipt's cause for an endpoint failure (src/shm/receipts-layout.ts). */
function causeOf(e: unknown): { cause: number; code: number } {
  if (!(e instanceof EndpointError)) return { cause: CAUSE.route_network, code: 0 };
  const cause =
    e.reason === 'timeout' ? CAUSE.route_timeout : e.reason === 'http_error' || e.reason === 'too_large' ? CAUSE.route_http : e.reason === 'upstream_error' ? CAUSE.route_upstream : CAUSE.route_network;
  return { cause, code: e.code };
}

export type RpcRouteOptions = Config['routes']['rpc'];

const JSON_HEADERS: Readonly<http.OutgoingHttpHeaders> = Object.freeze({ 'content-type': 'application/json' });

const RPC_POST_ERRORS: JsonPostErrors = {
  timeout: (ms) => new EndpointError(`timeout after ${ms} ms`, 'timeout'),
  tooLarge: (status) => new EndpointError(`response larger than ${MAX_RESPONSE_BYTES} bytes (HTTP ${status})`, 'too_large'),
  network: (err) => (err instanceof EndpointError ? err : new EndpointError(err.message, 'network')),
  answer: (status, body) => answerError(status, body),
};

export class RpcRoute implements EgressRoute {
  readonly id = ROUTE_IDS.rpc;
  readonly name = 'rpc' as const;
  private readonly endpoints: Endpoint[];
  private readonly timeoutMs: number;
  private readonly inFlight = new Set<http.ClientRequest>();
  private closed = false;
  private nextId = 1;
  private readonly failures: SummarizedLog;

  constructor(
    options: RpcRouteOptions,
    log: Logger,
  ) {
    this.failures = new SummarizedLog(log);
    this.timeoutMs = options.timeoutMs;
    this.endpoints = options.endpoints.map((u) => {
      const url = new URL(u);
      return { target: keepAliveTarget(url, options.connections, JSON_HEADERS, this.timeoutMs, this.inFlight), label: url.origin + url.pathname };
    });
  }

  send(tx: TxView): Promise<RouteAnswer> | RouteAnswer {
    if (this.closed) return 'dropped:shutdown';
    const n = this.endpoints.length;
    if (n === 0) return 'dropped:no_endpoint';
    const body =
      '{"jsonrpc":"2.0","id":' +
      this.nextId++ +
      ',"method":"sendTransaction","params":["' +
      // Base64 straight from the ring slot: the only encoding pass.
      Buffer.from(tx.sab, tx.byteOffset, tx.length).toString('base64') +
      (tx.maxRetries >= 0
        ? '",{"encoding":"base64","skipPreflight":true,"maxRetries":' + tx.maxRetries + '}]}'
        : '",{"encoding":"base64","skipPreflight":true}]}');
    if (n === 1) return this.post(this.endpoints[0], body).then(ok, (e: unknown) => this.failed(tx, [this.endpoints[0]], [e]));
    return Promise.allSettled(this.endpoints.map((ep) => this.post(ep, body))).then((results) => {
      const errors: unknown[] = [];
      for (const r of results) {
        if (r.status === 'fulfilled') return 'sent' as const;
        errors.push(r.reason);
      }
      return this.failed(tx, this.endpoints, errors);
    });
  }

  private failed(tx: TxView, eps: readonly Endpoint[], errors: unknown[]): RouteAnswer {
    if (this.closed) return 'dropped:shutdown'; // aborted by close(): whatever error the socket reported
    let shutdown = true;
    let answer: RouteAnswer = 'dropped:shutdown';
    for (let i = 0; i < errors.length; i++) {
      const e = errors[i];
      const reason: EndpointFailure = e instanceof EndpointError ? e.reason : 'network';
      if (reason === 'shutdown') continue;
      if (shutdown) {
        // The first endpoint's failure stands for the route's (cold: a failure).
        const c = causeOf(e);
        answer = sendResult('failed', 0, -1, c.cause, c.code);
      }
      shutdown = false;
      const endpoint = eps[i].label;
      this.failures.note(
        'warn',
        endpoint + ' ' + reason,
        { traceId: tx.traceId, keyId: tx.keyId, route: 'rpc', endpoint, reason, err: e instanceof Error ? e.message : String(e) },
        'rpc route: endpoint did not accept the transaction',
      );
    }
    return answer;
  }

  /** POST one JSON-RPC body; resolves when the endpoint answered a result, rejects with the reason otherwise. */
  private post(ep: Endpoint, body: string): Promise<unknown> {
    if (this.closed) return Promise.reject(new EndpointError('relay shutting down', 'shutdown'));
    return postJson(ep.target, body, RPC_POST_ERRORS);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const req of this.inFlight) req.destroy(new EndpointError('relay shutting down', 'shutdown'));
    this.inFlight.clear();
    for (const ep of this.endpoints) ep.target.agent.destroy();
    this.failures.close();
  }
}

function ok(): EgressOutcome {
  return 'sent';
}

/** null when the answer is a JSON-RPC result; otherwise why not. */
function answerError(status: number, body: Buffer): Error | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return new EndpointError(`HTTP ${status}, body is not JSON: ${body.subarray(0, 120).toString('utf8')}`, 'http_error', status);
  }
  if (parsed !== null && typeof parsed === 'object') {
    const o = parsed as { result?: unknown; error?: { code?: unknown; message?: unknown } };
    if (o.result !== undefined && o.error === undefined) return null;
    if (o.error !== undefined && o.error !== null && typeof o.error === 'object') {
      return new EndpointError(`upstream error ${String(o.error.code)}: ${String(o.error.message)} (HTTP ${status})`, 'upstream_error', -Number(o.error.code) || 0);
    }
  }
  return new EndpointError(`HTTP ${status}, no JSON-RPC result in answer`, 'http_error', status);
}
