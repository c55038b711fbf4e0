// What the relay host's keyed GET endpoints share (front thread, cold): their error body ({error: {code, reason,
// message, data?}}, no `accepted` since nothing was submitted), the refusal with its counters, and the key check
// with the read budget charge (GET /v1/transactions/{signature}, GET /v1/leaders; docs/relay-api.md).
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { Errors, type ErrorSpec } from '../errors/registry.js';
import type { KeyEntry } from '../admission/key-table.js';
import type { FrontDeps } from './front-deps.js';
import { retryAfterSeconds, writeJson, type RequestState } from '../http/response.js';
import { beginRequest } from '../http/request.js';

function errorBody(spec: ErrorSpec, message: string = spec.message, data?: unknown): string {
  return JSON.stringify({ error: { code: spec.rpcCode, reason: spec.reason, message, ...(data === undefined ? {} : { data }) } });
}

/** Answer `spec`'s HTTP status and error body, counted under `path`. */
export function refuseRead(deps: FrontDeps, st: RequestState, path: string, spec: ErrorSpec, message?: string, data?: unknown, retryAfterS = 0): void {
  deps.metrics.countRequest('relay', path, spec.reason);
  deps.metrics.countRejection(spec.reason);
  writeJson(st, deps.responseOptions, spec.restHttpStatus, errorBody(spec, message, data), retryAfterS);
}

/** Begin a keyed read: the request's state and its key, charged one read; null once refused (401, 429). */
export function beginKeyedRead(deps: FrontDeps, res: HttpResponse, req: HttpRequest, path: string): { readonly st: RequestState; readonly key: KeyEntry } | null {
  const head = beginRequest(res, req);
  const st = head.state;
  const key = deps.keys.lookup(head.keyCandidate);
  if (key === undefined) {
    refuseRead(deps, st, path, Errors.UNAUTHORIZED);
    return null;
  }
  const waitMs = key.readBucket.take(1, st.receivedAtMs);
  if (waitMs > 0) {
    refuseRead(deps, st, path, Errors.RATE_LIMITED, undefined, { reason: Errors.RATE_LIMITED.reason, retryAfterMs: waitMs }, retryAfterSeconds(waitMs));
    return null;
  }
  return { st, key };
}
