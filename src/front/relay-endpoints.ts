// The REST-style relay paths (front thread, HOT): POST /v1/submit and POST /v1/transactions. Both answer
// {"accepted":true,"signature":...} on success and {"accepted":false,"error":{code,reason,message,data?}} with the
// registry's REST status on failure; payloads are specified in docs/relay-api.md. Refusals are RETURNED as Failure
// values by every check and by intake, and answered from them (refuseRest): a flood of bad submissions must cost no
// more than good ones (issue #18 defect 9). The try/catch around each body only answers what nothing should throw.
import { isUtf8 } from 'node:buffer';
import { BAD_MAX_RETRIES, EVERY_ROUTE, defaultRoutes, maxRetriesFrom, resolveRoutes, routeNames, withAddedRoutes } from '../admission/send-options.js';
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { Errors, Failure, RelayError, type ErrorSpec } from '../errors/registry.js';
import { tryParseEncodingParam, type TransactionEncoding } from '../tx/index.js';
import type { KeyEntry } from '../admission/key-table.js';
import { readBody } from '../http/body-reader.js';
import type { FrontDeps } from './front-deps.js';
import { summarizedLog } from '../log/summarized-log.js';
import { countKeyRefusal, restErrorBody, retryAfterSeconds, writeJson, writeResponse, JSON_TYPE, type RequestState } from '../http/response.js';
import type { SubmissionMeta } from '../admission/intake.js';
import { rateLimitedRefusal, takeSubmitToken } from '../admission/submit-budget.js';
import { beginRequest, mediaType, nowMs } from '../http/request.js';

const RETRY_AFTER_OVERLOAD_S = 1;

/** `,"routes":[...]}` suffix per route mask, precomputed so a success answer is two concatenations. */
const ROUTES_SUFFIX: string[] = [];
for (let mask = 0; mask <= EVERY_ROUTE; mask++) ROUTES_SUFFIX.push(',"routes":' + JSON.stringify(routeNames(mask)) + '}');

function rejectRest(deps: FrontDeps, st: RequestState, spec: ErrorSpec, message?: string, data?: unknown, retryAfterS = 0): void {
  deps.metrics.countRejection(spec.reason);
  countKeyRefusal(st, spec);
  const close = spec === Errors.BODY_TOO_LARGE;
  const retry = retryAfterS > 0 ? retryAfterS : spec.retryable ? RETRY_AFTER_OVERLOAD_S : 0;
  writeResponse(st, deps.responseOptions, spec.restHttpStatus, JSON_TYPE, restErrorBody(spec, message, data), retry, close);
}

/** An ambiguous body framing (request.ts badFraming): 400 and the connection closed, before the body is read. */
function refuseFraming(deps: FrontDeps, st: RequestState, message: string): void {
  deps.metrics.countRejection(Errors.INVALID_REQUEST.reason);
  writeResponse(st, deps.responseOptions, 400, JSON_TYPE, restErrorBody(Errors.INVALID_REQUEST, message), 0, true);
}

function failRest(deps: FrontDeps, st: RequestState, path: string, err: unknown): void {
  if (err instanceof RelayError) {
    deps.metrics.countRequest('relay', path, err.spec.reason);
    rejectRest(deps, st, err.spec, err.message, err.data);
  } else {
    summarizedLog(deps.log).note('error', 'internal_error ' + path, { err, requestId: st.requestId }, 'internal error on relay path'); // bounded per path
    deps.metrics.countRequest('relay', path, Errors.INTERNAL_ERROR.reason);
    rejectRest(deps, st, Errors.INTERNAL_ERROR);
  }
}

/** A refusal returned by a check or by intake: counted as its reason, answered with its REST status. */
function refuseRest(deps: FrontDeps, st: RequestState, path: string, f: Failure): void {
  deps.metrics.countRequest('relay', path, f.spec.reason);
  rejectRest(deps, st, f.spec, f.message, f.data);
}

/** `routes`: where the transaction goes, the relay's own additions (static everyTransaction) included. */
function accepted(deps: FrontDeps, st: RequestState, path: string, signature: string, mask: number, key: KeyEntry): void {
  deps.metrics.countRequest('relay', path, 'ok');
  // Without the routes admission by delay left out of this record (src/admission/intake.ts shedMask).
  const routes = withAddedRoutes(mask, key.id, deps.addedRouteMasks) & ~deps.intake.shedMask;
  writeJson(st, deps.responseOptions, 200, '{"accepted":true,"signature":"' + signature + '"' + ROUTES_SUFFIX[routes]);
  deps.metrics.recordLatency(path, (nowMs() - st.receivedAtMs) * 1000);
}


const NOT_JSON = Object.freeze(new Failure(Errors.PARSE_ERROR, 'Parse error: the body is not valid JSON'));
const NOT_AN_OBJECT = Object.freeze(
  new Failure(Errors.INVALID_PARAMS, 'Invalid params: the body must be a JSON object with a `transaction` string'),
);
const TRANSACTION_NOT_A_STRING = Object.freeze(new Failure(Errors.INVALID_PARAMS, 'Invalid params: `transaction` must be a string'));
const EMPTY_BODY = Object.freeze(
  new Failure(Errors.TX_UNDECODABLE, 'failed to deserialize solana_transaction::versioned::VersionedTransaction: empty body'),
);

/**
 * `?maxRetries=` of /v1/transactions: absent -> -1; otherwise decimal digits only. Number() would read "" as 0 and
 * accept " 5", "1e3" or "0x10", so the text is checked first.
 */
function maxRetriesFromQuery(params: URLSearchParams): number | Failure {
  const text = params.get('maxRetries');
  if (text === null) return -1;
  if (!/^[0-9]{1,15}$/.test(text)) return BAD_MAX_RETRIES;
  return Number(text);
}

/** Common prologue: key (401) and rate limit (429). Returns the key or undefined when already answered. */
function admit(deps: FrontDeps, head: ReturnType<typeof beginRequest>): KeyEntry | undefined {
  const st = head.state;
  const key = deps.keys.lookup(head.keyCandidate);
  if (key === undefined) {
    rejectRest(deps, st, Errors.UNAUTHORIZED);
    return undefined;
  }
  key.usage.requests++;
  st.usage = key.usage;
  return key;
}

function takeToken(deps: FrontDeps, st: RequestState, key: KeyEntry): boolean {
  const waitMs = takeSubmitToken(key, st.receivedAtMs, deps.keyUsage);
  if (waitMs === 0) return true;
  // Same data as the JSON-RPC paths (docs/errors.md): {reason, retryAfterMs}.
  const f = rateLimitedRefusal(waitMs);
  rejectRest(deps, st, f.spec, undefined, f.data, retryAfterSeconds(waitMs));
  return false;
}

function meta(key: KeyEntry, st: RequestState, routeMask: number, maxRetries: number): SubmissionMeta {
  return {
    keyId: key.id,
    routeMask,
    maxRetries,
    receivedAtMs: st.receivedAtMs,
    traceId: st.requestId,
    verifySignatures: key.config.verifySignatures,
  };
}

/** POST /v1/submit: {"transaction": base64, "encoding"?: "base64"|"base58", "routes"?: [...]|"default", "maxRetries"?: n}. */
export function submitEndpoint(deps: FrontDeps): (res: HttpResponse, req: HttpRequest) => void {
  const path = '/v1/submit';
  return (res, req) => {
    const head = beginRequest(res, req);
    const st = head.state;
    if (head.badFraming !== '') return refuseFraming(deps, st, head.badFraming);
    const key = admit(deps, head);
    if (key === undefined) return;
    if (mediaType(head.contentType) !== 'application/json') return rejectRest(deps, st, Errors.UNSUPPORTED_MEDIA_TYPE, 'Unsupported media type: send application/json');
    readBody(res, st, head.contentLength, deps.config.http.maxBodyBytes, (body) => {
      if (!takeToken(deps, st, key)) return;
      try {
        let doc: unknown;
        // Invalid UTF-8 is not JSON (RFC 8259); toString would silently replace it (see json-rpc-endpoint.ts).
        if (!isUtf8(body)) return refuseRest(deps, st, path, NOT_JSON);
        try {
          doc = JSON.parse(body.toString('utf8'));
        } catch {
          return refuseRest(deps, st, path, NOT_JSON);
        }
        if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return refuseRest(deps, st, path, NOT_AN_OBJECT);
        const o = doc as Record<string, unknown>;
        if (typeof o.transaction !== 'string') return refuseRest(deps, st, path, TRANSACTION_NOT_A_STRING);
        // Absent or null: the documented default, base64 (tryParseEncodingParam's default is Agave's base58).
        const encoding = o.encoding === undefined || o.encoding === null ? 'base64' : tryParseEncodingParam(o.encoding);
        if (encoding instanceof Failure) return refuseRest(deps, st, path, encoding);
        const mask = resolveRoutes(o.routes, key, deps.availableRouteMask);
        if (typeof mask !== 'number') return refuseRest(deps, st, path, mask);
        const maxRetries = maxRetriesFrom(o.maxRetries);
        if (typeof maxRetries !== 'number') return refuseRest(deps, st, path, maxRetries);
        const sig = deps.intake.submitEncoded(o.transaction, encoding, meta(key, st, mask, maxRetries));
        if (typeof sig !== 'string') return refuseRest(deps, st, path, sig);
        accepted(deps, st, path, sig, mask, key);
      } catch (err) {
        failRest(deps, st, path, err);
      }
    }, () => rejectRest(deps, st, Errors.BODY_TOO_LARGE), true); // deferred: after-read.ts
  };
}

/**
 * POST /v1/transactions: raw wire bytes (application/octet-stream), or the transaction as text (text/plain,
 * base64 by default, ?encoding=base58 for base58). Optional ?maxRetries=n. Routes: the key's defaults.
 */
export function transactionsEndpoint(deps: FrontDeps): (res: HttpResponse, req: HttpRequest) => void {
  const path = '/v1/transactions';
  return (res, req) => {
    const head = beginRequest(res, req);
    const st = head.state;
    if (head.badFraming !== '') return refuseFraming(deps, st, head.badFraming);
    const key = admit(deps, head);
    if (key === undefined) return;
    const mt = mediaType(head.contentType);
    const raw = mt === 'application/octet-stream';
    if (!raw && mt !== 'text/plain') {
      return rejectRest(deps, st, Errors.UNSUPPORTED_MEDIA_TYPE, 'Unsupported media type: send application/octet-stream (wire bytes) or text/plain (base64/base58)');
    }
    const params = new URLSearchParams(head.query);
    readBody(res, st, head.contentLength, deps.config.http.maxBodyBytes, (body) => {
      if (!takeToken(deps, st, key)) return;
      try {
        const mask = defaultRoutes(key, deps.availableRouteMask);
        if (typeof mask !== 'number') return refuseRest(deps, st, path, mask);
        const maxRetries = maxRetriesFromQuery(params);
        if (typeof maxRetries !== 'number') return refuseRest(deps, st, path, maxRetries);
        const m = meta(key, st, mask, maxRetries);
        let sig: string | Failure;
        if (raw) {
          sig = body.length === 0 ? EMPTY_BODY : deps.intake.submitBytes(body, m);
        } else {
          const encoding: TransactionEncoding | Failure = params.has('encoding') ? tryParseEncodingParam(params.get('encoding')) : 'base64';
          sig = encoding instanceof Failure ? encoding : deps.intake.submitEncoded(body.toString('latin1').trim(), encoding, m);
        }
        if (typeof sig !== 'string') return refuseRest(deps, st, path, sig);
        accepted(deps, st, path, sig, mask, key);
      } catch (err) {
        failRest(deps, st, path, err);
      }
    }, () => rejectRest(deps, st, Errors.BODY_TOO_LARGE), true); // deferred: after-read.ts
  };
}
