// GET {relay_url}/v1/leaders (front thread, cold): the per-leader counters of the last receipts.leaderSlots slots for
// the key's own transactions (docs/leader-counters.md, src/receipts/leader-counters.ts). 200 with the report; 401
// without a valid key; 404 when the relay keeps no receipts or has no leader data (the counters are read from both).
// Charged to the key's read budget like a receipt lookup: a report scans the window's receipts.
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { Errors, type ErrorSpec } from '../errors/registry.js';
import type { FrontDeps } from './front-deps.js';
import { retryAfterSeconds, writeJson, type RequestState } from '../http/response.js';
import { beginRequest } from '../http/request.js';

const PATH = '/v1/leaders';
const UNAVAILABLE = 'Not found: per-leader counters need landing receipts (receipts.enabled) and leader data (the telemetry thread)';

function errorBody(spec: ErrorSpec, message: string = spec.message, data?: unknown): string {
  return JSON.stringify({ error: { code: spec.rpcCode, reason: spec.reason, message, ...(data === undefined ? {} : { data }) } });
}

function refuse(deps: FrontDeps, st: RequestState, spec: ErrorSpec, message?: string, data?: unknown, retryAfterS = 0): void {
  deps.metrics.countRequest('relay', PATH, spec.reason);
  deps.metrics.countRejection(spec.reason);
  writeJson(st, deps.responseOptions, spec.restHttpStatus, errorBody(spec, message, data), retryAfterS);
}

export function leadersEndpoint(deps: FrontDeps): (res: HttpResponse, req: HttpRequest) => void {
  return (res, req) => {
    const head = beginRequest(res, req);
    const st = head.state;
    const key = deps.keys.lookup(head.keyCandidate);
    if (key === undefined) return refuse(deps, st, Errors.UNAUTHORIZED);
    const waitMs = key.readBucket.take(1, st.receivedAtMs);
    if (waitMs > 0) return refuse(deps, st, Errors.RATE_LIMITED, undefined, { reason: Errors.RATE_LIMITED.reason, retryAfterMs: waitMs }, retryAfterSeconds(waitMs));
    const counters = deps.leaderCounters ?? null;
    if (counters === null) return refuse(deps, st, Errors.NOT_FOUND, UNAVAILABLE);
    deps.metrics.countRequest('relay', PATH, 'ok');
    writeJson(st, deps.responseOptions, 200, JSON.stringify(counters.report(key.id)));
  };
}
