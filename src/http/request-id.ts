// x-request-id (front thread, HOT: once per request). Honoured when the client sends 1-64 printable ASCII characters
// (it is echoed, logged and stored in the ring record), otherwise a fresh id. One rule for every response: the
// request handlers (request.ts) and the plain answers (/health, /metrics, 404/405, OPTIONS in front-server.ts).
//
// A fresh id is UUID-shaped: 28 characters of a random UUID drawn per process (and again every 805 million ids),
// then 8 hex digits of a counter. crypto.randomUUID() per request cost ~180 ns (its string building was 1.9% of the
// front thread's samples under load); this costs ~30 ns, because the counter stays a small integer (Smi), whose
// toString(16) is V8's fast path. Ids stay unique per process and are unguessable across processes.
import { randomUUID } from 'node:crypto';

const REQUEST_ID_RE = /^[\x21-\x7e]{1,64}$/;

// [0x10000000, 0x3fffffff]: always 8 hex digits, and below 2^30, so a Smi even with pointer compression.
const COUNTER_FIRST = 0x1000_0000;
const COUNTER_LAST = 0x3fff_ffff;
let prefix = randomUUID().slice(0, 28);
let counter = COUNTER_FIRST;

function freshRequestId(): string {
  if (counter > COUNTER_LAST) {
    prefix = randomUUID().slice(0, 28);
    counter = COUNTER_FIRST;
  }
  return prefix + (counter++).toString(16);
}

/** The request id to use for a request whose `x-request-id` header is `offered` ('' when absent). */
export function requestIdFor(offered: string): string {
  return offered !== '' && REQUEST_ID_RE.test(offered) ? offered : freshRequestId();
}
