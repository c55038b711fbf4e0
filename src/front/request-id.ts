// x-request-id (front thread, HOT: once per request). Honoured when the client sends 1-64 printable ASCII characters
// (it is echoed, logged and stored in the ring record), otherwise a fresh UUID. One rule for every response: the
// request handlers (request.ts) and the plain answers (/health, /metrics, 404/405, OPTIONS in front-server.ts).
import { randomUUID } from 'node:crypto';

const REQUEST_ID_RE = /^[\x21-\x7e]{1,64}$/;

/** The request id to use for a request whose `x-request-id` header is `offered` ('' when absent). */
export function requestIdFor(offered: string): string {
  return offered !== '' && REQUEST_ID_RE.test(offered) ? offered : randomUUID();
}
