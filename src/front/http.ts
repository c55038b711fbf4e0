// HTTP response writing for the uWS front (front thread, hot). Status lines and header sets are precomputed at
// start (pino's "work at setup" rule); every write happens inside res.cork so headers and body leave in one syscall.
import type { HttpResponse } from 'uWebSockets.js';
import type { ErrorSpec } from '../errors/registry.js';

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

// Every JS string handed to uWS is measured and transcoded to UTF-8 on each call (v8::String::Utf8Length + WriteUtf8
// were among the front thread's top native costs under load); the constant parts of every answer are encoded once
// here and handed over as bytes. Only the request id and the body stay strings.
// Off-heap memory of their own (allocUnsafeSlow): a typed array of <= 64 bytes made with `new Uint8Array(...)` lives
// inside the V8 heap, where a GC may move it; these are handed to native code on every answer.
const enc = (text: string): Uint8Array => {
  const b = Buffer.allocUnsafeSlow(Buffer.byteLength(text, 'utf8'));
  b.write(text, 'utf8');
  return b;
};
const STATUS_BYTES = new Map<number, Uint8Array>(Object.entries(STATUS_LINES).map(([k, v]) => [Number(k), enc(v)]));
const H_CONTENT_TYPE = enc('content-type');
const H_ALLOW_ORIGIN = enc('access-control-allow-origin');
const H_REQUEST_ID = enc('x-request-id');
const H_KEEP_ALIVE = enc('keep-alive');
const H_RETRY_AFTER = enc('retry-after');
/** Encoded content types, cached on first use. */
const valueBytes = new Map<string, Uint8Array>();
function constantValue(v: string): Uint8Array {
  let b = valueBytes.get(v);
  if (b === undefined) {
    b = enc(v);
    if (valueBytes.size < 64) valueBytes.set(v, b);
  }
  return b;
}

/** Per-request state that must outlive the synchronous uWS handler (abort flag, trace id, timing). */
export class RequestState {
  /** The client went away (uWS onAborted): the response must not be touched, no further work done. */
  aborted = false;
  /** A response was written. */
  answered = false;
  constructor(
    readonly res: HttpResponse,
    readonly requestId: string,
    readonly receivedAtMs: number,
  ) {}
}

/** Header values every answer carries, encoded once when the front is built (see `enc` above). */
export interface ResponseOptions {
  /** Access-Control-Allow-Origin. */
  readonly corsOrigin: Uint8Array;
  /**
   * `keep-alive: timeout=N`: N is how long an idle connection is guaranteed to stay open (src/native/uws.ts).
   * undici/fetch (@solana/kit, our client) retire a socket 1 s before it; Node's http.Agent only when its own
   * `timeout` option is longer (docs/protocol-decisions.md).
   */
  readonly keepAlive: Uint8Array;
}

export function responseOptions(corsOrigin: string, idleTimeoutSeconds: number): ResponseOptions {
  return { corsOrigin: enc(corsOrigin), keepAlive: enc(`timeout=${idleTimeoutSeconds}`) };
}

export function writeResponse(
  st: RequestState,
  opts: ResponseOptions,
  status: number,
  contentType: string,
  body: string,
  retryAfterSeconds = 0,
  closeConnection = false,
): void {
  if (st.aborted || st.answered) return; // the client is gone, or it already has its answer
  const res = st.res;
  res.cork(() => {
    res.writeStatus(STATUS_BYTES.get(status) ?? statusLine(status));
    res.writeHeader(H_CONTENT_TYPE, constantValue(contentType));
    res.writeHeader(H_ALLOW_ORIGIN, opts.corsOrigin);
    res.writeHeader(H_REQUEST_ID, st.requestId);
    res.writeHeader(H_KEEP_ALIVE, opts.keepAlive);
    if (retryAfterSeconds > 0) res.writeHeader(H_RETRY_AFTER, String(retryAfterSeconds));
    res.end(body, closeConnection);
  });
  st.answered = true;
}

export const JSON_TYPE = 'application/json; charset=utf-8';
export const TEXT_TYPE = 'text/plain; charset=utf-8';

export function writeJson(st: RequestState, opts: ResponseOptions, status: number, body: string, retryAfterSeconds = 0): void {
  writeResponse(st, opts, status, JSON_TYPE, body, retryAfterSeconds);
}

/** Retry-After in whole seconds (at least 1) from a millisecond delay. */
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
    (data === undefined ? '' : ',"data":' + JSON.stringify(data)) +
    '}}'
  );
}

/** OPTIONS on any path: the CORS preflight a browser sends before a POST carrying x-api-key (204, no body). */
export function answerCorsPreflight(res: HttpResponse, opts: ResponseOptions, requestId?: string): void {
  res.cork(() => {
    res.writeStatus(STATUS_LINES[204]);
    res.writeHeader(H_ALLOW_ORIGIN, opts.corsOrigin);
    res.writeHeader('access-control-allow-methods', 'POST, GET, OPTIONS');
    res.writeHeader(
      'access-control-allow-headers',
      'content-type, x-api-key, x-token, authorization, x-request-id, solana-client',
    );
    res.writeHeader('access-control-max-age', '86400');
    if (requestId !== undefined) res.writeHeader(H_REQUEST_ID, requestId);
    res.writeHeader(H_KEEP_ALIVE, opts.keepAlive);
    res.end();
  });
}
