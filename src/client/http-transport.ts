// Submit over HTTP (caller's thread, HOT for a trader: one call per transaction): POST {relay}/v1/submit with the
// key in both `Authorization: Bearer` and `x-api-key` (spec 5), body {"transaction": base64, "routes"?, "maxRetries"?}
// (docs/relay-api.md). Keep-alive comes from what sends (http-post.ts): Node's global fetch keeps connections; an
// undici dispatcher is a pool of your own and the faster path. Answers: 200 {accepted:true, signature, routes}; any other status
// {accepted:false, error:{code, reason, message, data?}} -> RelaySubmitError with the status, Retry-After and x-request-id.
import { RelaySubmitError } from './errors.js';
import { isNoAnswer, post, requestIdOf, retryAfterMsOf, type HttpAnswer, type PostTarget } from './http-post.js';
import type { SubmitRequest, SubmitTransport } from './transport.js';
import type { RouteName, SubmitResult } from './types.js';

export type HttpTransportOptions = PostTarget & {
  /** `http(s)://host:port/.../v1/submit`, parsed once. */
  readonly submitUrl: URL;
};

const WHAT = 'submit';

/** Request body by hand: the base64 needs no escaping, and JSON.stringify of a 1.6 KB string is not free. */
export function submitBody(base64: string, routes: readonly RouteName[] | 'default', maxRetries: number | undefined): string {
  let body = '{"transaction":"' + base64 + '"';
  if (routes !== 'default') body += ',"routes":' + JSON.stringify(routes);
  if (maxRetries !== undefined) body += ',"maxRetries":' + maxRetries;
  return body + '}';
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The answer as a SubmitResult, or the RelaySubmitError it stands for. */
export function readSubmitAnswer(a: HttpAnswer): SubmitResult | RelaySubmitError {
  const doc = parse(a.text) as { accepted?: unknown; signature?: unknown; routes?: unknown; error?: Record<string, unknown> } | undefined;
  const requestId = requestIdOf(a.headers);
  if (a.status === 200 && doc?.accepted === true && typeof doc.signature === 'string') {
    const routes = Array.isArray(doc.routes) ? (doc.routes as RouteName[]) : [];
    return requestId === undefined ? { accepted: true, signature: doc.signature, routes } : { accepted: true, signature: doc.signature, routes, requestId };
  }
  const e = doc?.error;
  if (e === undefined || e === null || typeof e !== 'object' || typeof e.reason !== 'string') {
    return new RelaySubmitError({
      reason: 'bad_answer',
      message: `submit: HTTP ${a.status} with an answer that is not the relay's ({accepted, signature} or {accepted:false, error})`,
      status: a.status,
      data: a.text.slice(0, 200),
      retryAfterMs: retryAfterMsOf(undefined, a.headers),
      requestId,
    });
  }
  return new RelaySubmitError({
    reason: e.reason,
    message: typeof e.message === 'string' ? e.message : `submit refused: ${e.reason}`,
    code: typeof e.code === 'number' ? e.code : undefined,
    status: a.status,
    data: e.data,
    retryAfterMs: retryAfterMsOf(e.data, a.headers),
    requestId,
  });
}

export class HttpTransport implements SubmitTransport {
  readonly kind = 'http' as const;
  private closed = false;

  constructor(private readonly opts: HttpTransportOptions) {}

  async submit(req: SubmitRequest): Promise<SubmitResult> {
    if (this.closed) throw new RelaySubmitError({ reason: 'aborted', message: 'submit: the client is closed' });
    const body = submitBody(req.tx.base64, req.routes, req.maxRetries);
    const extra = req.requestId === undefined ? undefined : { 'x-request-id': req.requestId };
    const a = await post(this.opts, this.opts.submitUrl, body, extra, req.signal, WHAT);
    if (isNoAnswer(a)) throw new RelaySubmitError({ reason: a.reason, message: a.message, cause: a.cause });
    const out = readSubmitAnswer(a);
    if (out instanceof RelaySubmitError) throw out;
    return out;
  }

  /** Nothing of its own to release: connections belong to the fetch / dispatcher in use. */
  async close(): Promise<void> {
    this.closed = true;
  }
}
