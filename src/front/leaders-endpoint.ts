// GET {relay_url}/v1/leaders (front thread, cold): the per-leader counters of the last receipts.leaderSlots slots for
// the key's own transactions (docs/leader-counters.md, src/receipts/leader-counters.ts). 200 with the report; 401
// without a valid key; 404 when the relay keeps no receipts or has no leader data (the counters are read from both).
// Charged to the key's read budget like a receipt lookup: a report scans the window's receipts.
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { Errors } from '../errors/registry.js';
import type { FrontDeps } from './front-deps.js';
import { writeJson } from '../http/response.js';
import { beginKeyedRead, refuseRead } from './read-endpoint.js';

const PATH = '/v1/leaders';
const UNAVAILABLE = 'Not found: per-leader counters need landing receipts (receipts.enabled) and leader data (the telemetry thread)';

export function leadersEndpoint(deps: FrontDeps): (res: HttpResponse, req: HttpRequest) => void {
  return (res, req) => {
    const read = beginKeyedRead(deps, res, req, PATH);
    if (read === null) return;
    const counters = deps.leaderCounters ?? null;
    if (counters === null) return refuseRead(deps, read.st, PATH, Errors.NOT_FOUND, UNAVAILABLE);
    deps.metrics.countRequest('relay', PATH, 'ok');
    writeJson(read.st, deps.responseOptions, 200, JSON.stringify(counters.report(read.key.id)));
  };
}
