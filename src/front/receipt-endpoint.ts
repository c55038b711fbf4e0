// GET {relay_url}/v1/transactions/{signature} (front thread, cold): the landing receipt of a transaction this key
// submitted (docs/receipts.md). 200 with the receipt; 401 without a valid key; 400 for a path that is not a
// signature; 404 when there is no receipt for this key (unknown, submitted by another key — whose existence is not
// revealed — or older than receipts.ttlMs, or receipts are off). Charged to the key's read budget.
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { Errors } from '../errors/registry.js';
import type { FrontDeps } from './front-deps.js';
import { writeJson } from '../http/response.js';
import { looksLikeSignature } from '../tx/base58.js';
import { beginKeyedRead, refuseRead } from './read-endpoint.js';

const PATH = '/v1/transactions/:signature';

export function receiptEndpoint(deps: FrontDeps): (res: HttpResponse, req: HttpRequest) => void {
  return (res, req) => {
    const signature = req.getParameter(0) ?? '';
    const read = beginKeyedRead(deps, res, req, PATH);
    if (read === null) return;
    const { st, key } = read;
    if (!looksLikeSignature(signature)) {
      return refuseRead(deps, st, PATH, Errors.INVALID_PARAMS, 'Invalid params: the path must end with a transaction signature (base58 of 64 bytes)');
    }
    const receipt = deps.receipts?.lookup(signature, key.id) ?? null;
    if (receipt === null) return refuseRead(deps, st, PATH, Errors.RECEIPT_NOT_FOUND);
    deps.metrics.countRequest('relay', PATH, 'ok');
    writeJson(st, deps.responseOptions, 200, JSON.stringify(receipt));
  };
}
