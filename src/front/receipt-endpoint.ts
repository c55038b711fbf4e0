// GET {relay_url}/v1/transactions/{signature} (front thread, cold): the landing receipt of a transaction this key
// submitted (docs/receipts.md). 200 with the receipt; 401 without a valid key; 400 for a path that is not a
// signature; 404 when there is no receipt for this key (unknown, submitted by another key — whose existence is not
// revealed — or older than receipts.ttlMs, or receipts are off). Charged to the key's read budget.
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { Errors, type ErrorSpec } from '../errors/registry.js';
import type { FrontDeps } from './front-deps.js';
import { retryAfterSeconds, writeJson, type RequestState } from '../http/response.js';
import { beginRequest } from '../http/request.js';
import { looksLikeSignature } from '../tx/base58.js';

const PATH = '/v1/transactions/:signature';

function errorBody(spec: ErrorSpec, message: string = spec.message, data?: unknown): string {
  return JSON.stringify({ error: { code: spec.rpcCode, reason: spec.reason, message, ...(data === undefined ? {} : { data }) } });
}

function refuse(deps: FrontDeps, st: RequestState, spec: ErrorSpec, message?: string, data?: unknown, retryAfterS = 0): void {
  deps.metrics.countRequest('relay', PATH, spec.reason);
  deps.metrics.countRejection(spec.reason);
  writeJson(st, deps.responseOptions, spec.restHttpStatus, errorBody(spec, message, data), retryAfterS);
}

export function receiptEndpoint(deps: FrontDeps): (res: HttpResponse, req: HttpRequest) => void {
  return (res, req) => {
    const signature = req.getParameter(0) ?? '';
    const head = beginRequest(res, req);
    const st = head.state;
    const key = deps.keys.lookup(head.keyCandidate);
    if (key === undefined) return refuse(deps, st, Errors.UNAUTHORIZED);
    const waitMs = key.readBucket.take(1, st.receivedAtMs);
    if (waitMs > 0) return refuse(deps, st, Errors.RATE_LIMITED, undefined, { reason: Errors.RATE_LIMITED.reason, retryAfterMs: waitMs }, retryAfterSeconds(waitMs));
    if (!looksLikeSignature(signature)) {
      return refuse(deps, st, Errors.INVALID_PARAMS, 'Invalid params: the path must end with a transaction signature (base58 of 64 bytes)');
    }
    const receipt = deps.receipts?.lookup(signature, key.id) ?? null;
    if (receipt === null) return refuse(deps, st, Errors.RECEIPT_NOT_FOUND);
    deps.metrics.countRequest('relay', PATH, 'ok');
    writeJson(st, deps.responseOptions, 200, JSON.stringify(receipt));
  };
}
