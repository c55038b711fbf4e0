// Per-request prologue for every uWS handler (front thread, HOT). uWS request objects are stack-allocated and die
// when the handler returns, so every header the request needs is read here, synchronously, once.
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { extractKey } from './api-key-carrier.js';
import { BAD_TRANSFER_ENCODING_MESSAGE, CONFLICTING_CONTENT_LENGTH_MESSAGE, RequestState } from './response.js';
import { offHeapBytes } from './off-heap-bytes.js';
import { requestIdFor } from './request-id.js';

export interface RequestHead {
  readonly state: RequestState;
  readonly contentType: string;
  /** Content-Length, or -1 when absent. */
  readonly contentLength: number;
  /** The key from the first carrier present, or '' (never logged). */
  readonly keyCandidate: string;
  readonly query: string;
  /**
   * Why the body's framing is ambiguous, or '' when it is not: a Transfer-Encoding other than exactly `chunked`
   * (`xchunked`, `gzip, chunked`, `chunked, identity`: uWS would read the body as chunked anyway, where a proxy in
   * front may not), or Content-Length headers that disagree (uWS frames the body by the first and parses the rest as
   * a new request). Either is request smuggling behind a proxy; RFC 9112 6.3: answered 400 and closed.
   */
  readonly badFraming: string;
}

export function nowMs(): number {
  // Epoch-based and sub-millisecond; comparable across threads (unlike performance.now() alone).
  return performance.timeOrigin + performance.now();
}

// Header names as bytes (off-heap-bytes.ts): cheaper for uWS than strings, six per request.
const H_REQUEST_ID = offHeapBytes('x-request-id');
const H_CONTENT_LENGTH = offHeapBytes('content-length');
const H_CONTENT_TYPE = offHeapBytes('content-type');
const H_X_TOKEN = offHeapBytes('x-token');
const H_X_API_KEY = offHeapBytes('x-api-key');
const H_AUTHORIZATION = offHeapBytes('authorization');
const H_TRANSFER_ENCODING = offHeapBytes('transfer-encoding');

function badTransferEncoding(te: string): boolean {
  return te !== '' && te !== 'chunked' && te.trim().toLowerCase() !== 'chunked';
}

/** The maintained build walks headers with `forEach`; the legacy build (whose typings we compile against) with `forEachHeader`. */
interface MaintainedHeaderWalk {
  forEach?(cb: (name: string, value: string) => void): void;
}

function walkHeaders(req: HttpRequest, cb: (name: string, value: string) => void): void {
  const maintained = req as unknown as MaintainedHeaderWalk;
  if (maintained.forEach !== undefined) maintained.forEach(cb);
  else req.forEachHeader(cb);
}

// conflictingContentLength's walk state: module-level, with one callback made once, so that walking the headers
// allocates no closure per request (front thread only, one walk at a time: the walk is synchronous).
let clFirst = '';
let clSeen = 0;
let clConflict = false;
const countContentLength = (name: string, value: string): void => {
  if (name === 'content-length' && ++clSeen > 1 && value !== clFirst) clConflict = true;
};

/** Our source build's one-call check (vendor/uws-patches/0007); the prebuilt builds lack it. */
interface ConflictingHeaderCheck {
  hasConflictingHeader?(lowerCasedName: ArrayBuffer): boolean;
}

/**
 * Whether a later Content-Length header disagrees with the first (identical repeats are one value: RFC 9110 8.6).
 * Our uWS build answers it in one call; the prebuilt builds have no header count, so there every header is walked
 * (two strings and a call into JavaScript per header), only for requests that carry a Content-Length. The walk was
 * ~4.5 us of the front's ~35 us per request with the 11 headers web3.js sends (bench/results/conflicting-header-check.md).
 */
function conflictingContentLength(req: HttpRequest, first: string): boolean {
  const check = req as unknown as ConflictingHeaderCheck;
  if (check.hasConflictingHeader !== undefined) return check.hasConflictingHeader(H_CONTENT_LENGTH);
  clFirst = first;
  clSeen = 0;
  clConflict = false;
  walkHeaders(req, countContentLength);
  return clConflict;
}

/** Whether a request declares a body: a Content-Length other than 0, or any Transfer-Encoding (RequestState.bodyPending). */
function declaresBody(contentLength: string, transferEncoding: string): boolean {
  return transferEncoding !== '' || (contentLength !== '' && contentLength !== '0');
}

/** The same, read from the request (the answers that never read a body: health, metrics, 404/405). */
export function requestDeclaresBody(req: HttpRequest): boolean {
  return declaresBody(req.getHeader(H_CONTENT_LENGTH), req.getHeader(H_TRANSFER_ENCODING));
}

export function beginRequest(res: HttpResponse, req: HttpRequest): RequestHead {
  const requestId = requestIdFor(req.getHeader(H_REQUEST_ID));
  const state = new RequestState(res, requestId, nowMs());
  res.onAborted(() => {
    state.aborted = true;
  });
  const cl = req.getHeader(H_CONTENT_LENGTH);
  const te = req.getHeader(H_TRANSFER_ENCODING);
  state.bodyPending = declaresBody(cl, te);
  const query = req.getQuery() ?? '';
  return {
    state,
    contentType: req.getHeader(H_CONTENT_TYPE),
    contentLength: cl === '' ? -1 : Number(cl),
    keyCandidate: extractKey(
      req.getHeader(H_X_TOKEN),
      req.getHeader(H_X_API_KEY),
      req.getHeader(H_AUTHORIZATION),
      query === '' ? '' : (req.getQuery('key') ?? ''), // most requests have no query: one native call fewer
    ),
    query,
    badFraming: badTransferEncoding(te)
      ? BAD_TRANSFER_ENCODING_MESSAGE
      : cl !== '' && conflictingContentLength(req, cl)
        ? CONFLICTING_CONTENT_LENGTH_MESSAGE
        : '',
  };
}

/** media type without parameters, lower-cased: "application/json; charset=utf-8" -> "application/json". */
export function mediaType(contentType: string): string {
  const semi = contentType.indexOf(';');
  return (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}
