// HTTP response writing for the uWS front (front thread, hot). Status lines and header sets are precomputed at
// start (pino's "work at setup" rule); every answer leaves in one send: uWS corks the socket during its own callbacks,
// and an answer written after them (a promise) is wrapped in res.cork.
import type { HttpResponse } from 'uWebSockets.js';
import { Errors, type ErrorSpec } from '../errors/registry.js';
import type { EncodedAnswer } from '../jsonrpc/encoded-result.js';
import { offHeapBytes } from './off-heap-bytes.js';

const STATUS_LINES: Record<number, string> = {
  200: '200 OK',
  204: '204 No Content',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  413: '413 Payload Too Large',
  415: '415 Unsupported Media Type',
  422: '422 Unprocessable Entity',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};

export function statusLine(status: number): string {
  return STATUS_LINES[status] ?? `${status} Status`;
}

// The constant parts of every answer are encoded once (off-heap-bytes.ts); only the request id and the body stay strings.
const STATUS_BYTES = new Map<number, ArrayBuffer>(Object.entries(STATUS_LINES).map(([k, v]) => [Number(k), offHeapBytes(v)]));
const H_CONTENT_TYPE = offHeapBytes('content-type');
const H_ALLOW_ORIGIN = offHeapBytes('access-control-allow-origin');
const H_REQUEST_ID = offHeapBytes('x-request-id');
const H_KEEP_ALIVE = offHeapBytes('keep-alive');
const H_RETRY_AFTER = offHeapBytes('retry-after');

/** A header value that cannot end the header line early: visible ASCII and inner spaces, no CR/LF. */
export const HEADER_VALUE_RE = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/;

/** Per-request state that must outlive the synchronous uWS handler (abort flag, trace id, timing). */
/** What a refusal counts into: the part of a key's request counts the response writer touches. */
export interface RefusalCounts {
  refused: number;
  rateLimited: number;
}

export class RequestState {
  /** The client went away (uWS onAborted): the response must not be touched, no further work done. */
  aborted = false;
  /** A response was written. */
  answered = false;
  /**
   * Code is running inside one of uWS's own callbacks for this request (the route handler, onData), where uWS has
   * already corked the socket: an answer written now leaves in one send without res.cork, whose JS round trip cost
   * ~0.7 us per answer (measured with a scratch server). Created true because a
   * RequestState is made at the top of a uWS handler; readBody() clears it while waiting for the body and sets it
   * around onBody. Anything answering later (a promise, a timer) finds it false and corks.
   */
  corked = true;
  /**
   * The request declares a body (Content-Length > 0, or Transfer-Encoding) that has not been read to its end: set by
   * the request's prologue, cleared by readBody. An answer written meanwhile (a refusal before the body, a 404)
   * closes the connection: uWS would otherwise swallow the rest of the body under the idle keep-alive timer, not its
   * slow-client one, so a body dribbled behind an early answer would hold the socket http.idleTimeoutSeconds.
   */
  bodyPending = false;
  /** readBody() took the body (its onData is set): an early answer can no longer drain it (drainThenWrite). */
  bodyReading = false;
  /** The key's usage counters once the key is known (the key table's KeyRequestCounts): refusals are counted into them. */
  usage: RefusalCounts | null = null;
  constructor(
    readonly res: HttpResponse,
    readonly requestId: string,
    readonly receivedAtMs: number,
  ) {}
}

/** Header values every answer carries, encoded once when the front is built (see `enc` above). */
export interface ResponseOptions {
  /** Access-Control-Allow-Origin. */
  readonly corsOrigin: ArrayBuffer;
  /**
   * `keep-alive: timeout=N`: N is how long an idle connection is guaranteed to stay open (src/native/uws.ts).
   * undici/fetch (@solana/kit, our client) retire a socket 1 s before it; Node's http.Agent only when its own
   * `timeout` option is longer (docs/protocol-decisions.md).
   */
  readonly keepAlive: ArrayBuffer;
  /**
   * The header lines of an answer with this content type, as ONE `content-type` value to which the request id is
   * appended: `<type>\r\naccess-control-allow-origin: <origin>\r\nkeep-alive: timeout=N\r\nx-request-id: `.
   * uWS writes a header value verbatim, so four headers cost one native call (~240 ns, measured) instead of four
   * (~140-210 ns each). Safe because every part is checked: the origin against HEADER_VALUE_RE at start, the types
   * are constants, and a request id is printable ASCII (request-id.ts).
   */
  headerLines(contentType: string): string;
}

export function responseOptions(corsOrigin: string, idleTimeoutSeconds: number): ResponseOptions {
  if (!HEADER_VALUE_RE.test(corsOrigin)) throw new Error('http.corsAllowOrigin is not a valid header value');
  const lines = new Map<string, string>();
  return {
    corsOrigin: offHeapBytes(corsOrigin),
    keepAlive: offHeapBytes(`timeout=${idleTimeoutSeconds}`),
    headerLines(contentType: string): string {
      let l = lines.get(contentType);
      if (l === undefined) {
        if (!HEADER_VALUE_RE.test(contentType)) throw new Error('content type is not a valid header value');
        l = `${contentType}\r\naccess-control-allow-origin: ${corsOrigin}\r\nkeep-alive: timeout=${idleTimeoutSeconds}\r\nx-request-id: `;
        if (lines.size < 64) lines.set(contentType, l);
      }
      return l;
    },
  };
}

function writeAll(
  res: HttpResponse,
  headers: string,
  status: number,
  body: string | EncodedAnswer,
  retryAfterSeconds: number,
  closeConnection: boolean,
): void {
  // uWS answers "200 OK" when no status is written: one native call fewer on the common answer.
  if (status !== 200) res.writeStatus(STATUS_BYTES.get(status) ?? statusLine(status));
  res.writeHeader(H_CONTENT_TYPE, headers);
  if (retryAfterSeconds > 0) res.writeHeader(H_RETRY_AFTER, String(retryAfterSeconds));
  // An EncodedAnswer's bytes are made here, right before uWS copies them (they are valid until its next answer).
  res.end(typeof body === 'string' ? body : body.bytes(), closeConnection);
}

export function writeResponse(
  st: RequestState,
  opts: ResponseOptions,
  status: number,
  contentType: string,
  body: string | EncodedAnswer,
  retryAfterSeconds = 0,
  closeConnection = false,
): void {
  if (st.aborted || st.answered) return; // the client is gone, or it already has its answer
  st.answered = true;
  const res = st.res;
  const headers = opts.headerLines(contentType) + st.requestId;
  // An answer before a declared body was read (a 401, 415, 404...), still inside the uWS handler: read the body and drop
  // it first (for up to DRAIN_WAIT_MS), so the connection stays for the next request (closing made a client with a bad
  // key pay a TCP handshake per request: 0.5x the accept rate in bench-e2e).
  if (st.bodyPending && !closeConnection && !st.bodyReading && st.corked) return drainThenWrite(st, headers, status, body, retryAfterSeconds);
  const close = closeConnection || st.bodyPending; // RFC 9110 10.1.1: answering before the rest of the body, we close
  if (st.corked) writeAll(res, headers, status, body, retryAfterSeconds, close);
  else res.cork(() => writeAll(res, headers, status, body, retryAfterSeconds, close));
}

/** Longest body read and dropped behind an early answer; a longer one closes the connection instead. */
const DRAIN_LIMIT_BYTES = 65_536;
/**
 * Longest wait for that body: a body still arriving then gets its answer at once and the connection closed (a client
 * dribbling it must not hold the socket, issue #30 item 9). A client that sent its request in one go is long done.
 */
const DRAIN_WAIT_MS = 500;

function drainThenWrite(st: RequestState, headers: string, status: number, body: string | EncodedAnswer, retryAfterSeconds: number): void {
  const res = st.res;
  let seen = 0;
  let finished = false;
  st.bodyReading = true;
  const finish = (close: boolean, corked: boolean): void => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    st.bodyPending = false;
    if (st.aborted) return;
    if (corked) writeAll(res, headers, status, body, retryAfterSeconds, close);
    else res.cork(() => writeAll(res, headers, status, body, retryAfterSeconds, close));
  };
  const timer = setTimeout(() => finish(true, false), DRAIN_WAIT_MS);
  res.onAborted(() => {
    st.aborted = true;
    clearTimeout(timer);
  });
  res.onData((chunk, isLast) => {
    if (finished || st.aborted) return;
    seen += chunk.byteLength;
    if (seen > DRAIN_LIMIT_BYTES) finish(true, true); // the rest is never read: closed
    else if (isLast) finish(false, true); // inside uWS's data callback: corked
  });
}

export const JSON_TYPE = 'application/json; charset=utf-8';
export const TEXT_TYPE = 'text/plain; charset=utf-8';

export function writeJson(st: RequestState, opts: ResponseOptions, status: number, body: string | EncodedAnswer, retryAfterSeconds = 0): void {
  writeResponse(st, opts, status, JSON_TYPE, body, retryAfterSeconds);
}

/** Retry-After in whole seconds (at least 1) from a millisecond delay. */
/** A refusal of a request whose key is known counts in that key's usage (the status page); a 429 also as rate-limited. */
export function countKeyRefusal(st: RequestState, spec: ErrorSpec): void {
  const u = st.usage;
  if (u === null) return;
  u.refused++;
  if (spec === Errors.RATE_LIMITED) u.rateLimited++;
}

export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** Error body of the REST-style relay paths: {accepted:false, error:{code, reason, message, data?}}. */
export function restErrorBody(spec: ErrorSpec, message: string = spec.message, data?: unknown): string {
  return (
    '{"accepted":false,"error":{"code":' +
    spec.rpcCode +
    ',"reason":"' +
    spec.reason +
    '","message":' +
    JSON.stringify(message) +
    (data === undefined || data === null ? '' : ',"data":' + JSON.stringify(data)) + // never "data": null (docs/errors.md)
    '}}'
  );
}

/** The messages of a request refused for its framing (request.ts badFraming): 400, connection closed. */
export const BAD_TRANSFER_ENCODING_MESSAGE = 'Invalid request: Transfer-Encoding must be exactly chunked (or absent)';
export const CONFLICTING_CONTENT_LENGTH_MESSAGE = 'Invalid request: Content-Length headers with different values';

/** OPTIONS on any path: the CORS preflight a browser sends before a POST carrying x-api-key (204, no body). */
export function answerCorsPreflight(res: HttpResponse, opts: ResponseOptions, requestId?: string, closeConnection = false): void {
  // Always answered inside the OPTIONS handler, where uWS has corked the socket (see RequestState.corked).
  res.writeStatus(STATUS_LINES[204]);
  res.writeHeader(H_ALLOW_ORIGIN, opts.corsOrigin);
  res.writeHeader('access-control-allow-methods', 'POST, GET, OPTIONS');
  res.writeHeader('access-control-allow-headers', 'content-type, x-api-key, x-token, authorization, x-request-id, solana-client');
  res.writeHeader('access-control-max-age', '86400');
  if (requestId !== undefined) res.writeHeader(H_REQUEST_ID, requestId);
  res.writeHeader(H_KEEP_ALIVE, opts.keepAlive);
  res.end('', closeConnection); // closed when a body was declared (RequestState.bodyPending)
}
