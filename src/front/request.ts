// Per-request prologue for every uWS handler (front thread, HOT). uWS request objects are stack-allocated and die
// when the handler returns, so every header the request needs is read here, synchronously, once.
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { extractKey } from './auth.js';
import { RequestState } from './http.js';
import { requestIdFor } from './request-id.js';

export interface RequestHead {
  readonly state: RequestState;
  readonly contentType: string;
  /** Content-Length, or -1 when absent. */
  readonly contentLength: number;
  /** The key from the first carrier present, or '' (never logged). */
  readonly keyCandidate: string;
  readonly query: string;
}

export function nowMs(): number {
  // Epoch-based and sub-millisecond; comparable across threads (unlike performance.now() alone).
  return performance.timeOrigin + performance.now();
}

export function beginRequest(res: HttpResponse, req: HttpRequest): RequestHead {
  const requestId = requestIdFor(req.getHeader('x-request-id'));
  const state = new RequestState(res, requestId, nowMs());
  res.onAborted(() => {
    state.aborted = true;
  });
  const cl = req.getHeader('content-length');
  return {
    state,
    contentType: req.getHeader('content-type'),
    contentLength: cl === '' ? -1 : Number(cl),
    keyCandidate: extractKey(
      req.getHeader('x-token'),
      req.getHeader('x-api-key'),
      req.getHeader('authorization'),
      req.getQuery('key') ?? '',
    ),
    query: req.getQuery() ?? '',
  };
}

/** media type without parameters, lower-cased: "application/json; charset=utf-8" -> "application/json". */
export function mediaType(contentType: string): string {
  const semi = contentType.indexOf(';');
  return (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}
