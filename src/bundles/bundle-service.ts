// The client of the configured bundle service, a Jito-compatible block engine (front thread; async, cold relative to
// the send path): one JSON-RPC POST to {bundles.url}/api/v1/bundles over a keep-alive agent (bundles.connections
// sockets) with a per-request timeout, `x-jito-auth` when bundles.authUuid is set (a header only: never in a URL or
// a log). Its answers become the relay's documented errors: HTTP 429 or Jito's -32097 -> rate_limited (kit cannot
// read -32097), no answer in time -> upstream_timeout, no connection or a broken answer -> upstream_unavailable,
// any other JSON-RPC error -> passed on with its own code and message (upstream_error).
import type http from 'node:http';
import type { Config } from '../config/schema.js';
import { keepAliveTarget, type JsonPostErrors, type JsonPostTarget } from '../egress/worker-routes/json-post.js';
import { postJson } from '../egress/worker-routes/json-post.js';
import { Errors, RelayError, UpstreamRpcError } from '../errors/registry.js';

/** The block engine's JSON-RPC path for bundles (Jito docs, "Bundles"). */
export const BUNDLES_PATH = '/api/v1/bundles';
/** The block engine's "rate limit exceeded" code (with HTTP 429). */
export const JITO_RATE_LIMITED_CODE = -32097;
/** What the client is told to wait after the service limited us: Jito's limits are per second. */
const RATE_LIMITED_RETRY_MS = 1_000;

export type BundleServiceOptions = Pick<Config['bundles'], 'authUuid' | 'timeoutMs' | 'connections'> & { readonly url: string };

/** {base}/api/v1/bundles (a URL already ending with that path is kept). */
export function bundlesUrl(base: string): URL {
  const url = new URL(base);
  const path = url.pathname.replace(/\/+$/, '');
  if (!path.endsWith(BUNDLES_PATH)) url.pathname = path + BUNDLES_PATH;
  return url;
}

function rateLimited(): RelayError {
  return new RelayError(Errors.RATE_LIMITED, 'Rate limit exceeded: the bundle service is rate-limiting this relay, retry after the Retry-After delay', {
    reason: 'bundle_service_rate_limited',
    retryAfterMs: RATE_LIMITED_RETRY_MS,
  });
}

function unavailable(detail: string): RelayError {
  return new RelayError(Errors.UPSTREAM_UNAVAILABLE, 'Node is unhealthy: the bundle service is unavailable', { reason: 'upstream_unavailable', service: 'bundles', detail });
}

interface Answer {
  readonly result?: unknown;
  readonly error?: { readonly code?: unknown; readonly message?: unknown; readonly data?: unknown };
}

function parseAnswer(body: Buffer): Answer | null {
  try {
    const v = JSON.parse(body.toString('utf8')) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Answer) : null;
  } catch {
    return null;
  }
}

const ERRORS: JsonPostErrors = {
  timeout: (ms) =>
    new RelayError(Errors.UPSTREAM_TIMEOUT, 'Node is unhealthy: the bundle service did not answer in time', { reason: 'upstream_timeout', service: 'bundles', timeoutMs: ms }),
  tooLarge: (status) => unavailable(`answer too large (HTTP ${status})`),
  network: (err) => (err instanceof RelayError ? err : unavailable(err.code ?? err.message)),
  answer: (status, body) => {
    const a = parseAnswer(body);
    if (status === 429 || a?.error?.code === JITO_RATE_LIMITED_CODE) return rateLimited();
    if (a?.error !== undefined) {
      const code = typeof a.error.code === 'number' ? a.error.code : Errors.UPSTREAM_ERROR.rpcCode;
      return new UpstreamRpcError(code, typeof a.error.message === 'string' ? a.error.message : 'bundle service error', a.error.data ?? undefined);
    }
    if (status !== 200) return unavailable(`HTTP ${status}`);
    if (a === null || !('result' in a)) return unavailable('an answer without a JSON-RPC result');
    return null;
  },
};

export class BundleService {
  private readonly target: JsonPostTarget;
  private readonly inFlight = new Set<http.ClientRequest>();
  private nextId = 1;
  /** origin + path: safe to log. */
  readonly label: string;

  constructor(opts: BundleServiceOptions) {
    const url = bundlesUrl(opts.url);
    this.label = url.origin + url.pathname;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (opts.authUuid !== undefined) headers['x-jito-auth'] = opts.authUuid;
    this.target = keepAliveTarget(url, opts.connections, Object.freeze(headers), opts.timeoutMs, this.inFlight);
  }

  /**
   * One call; resolves with the result, rejects with a RelayError or UpstreamRpcError (above). `params` must
   * serialise to ASCII (base58/base64 transactions, hex bundle ids: the callers check them first).
   */
  async call(method: string, params: readonly unknown[]): Promise<unknown> {
    const body = JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method, params });
    const answer = await postJson(this.target, body, ERRORS);
    return (parseAnswer(answer) as Answer).result;
  }

  close(): void {
    for (const req of this.inFlight) req.destroy();
    this.target.agent.destroy();
  }
}
