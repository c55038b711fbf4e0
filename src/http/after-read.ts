// Work that must wait until uWS has parsed everything that arrived in the same read as its request (front thread,
// HOT): handing a transaction to a ring, and the answer that says so.
//
// Why: uWS parses a read's requests one after the other, inside one callback. If a later request in that read is
// malformed, uWS writes its error (505/400) and closes the connection, discarding the answers already written for
// the earlier requests (they sit in its cork buffer) — both builds we run do this (docs/known-issues.md). A
// submission answered and handed to a ring in its own handler would then be SENT while its client, never seeing the
// answer, retries: the transaction goes out twice. And while an answer is pending, uWS refuses any further request on
// the connection by closing it. So a submission is parked here and run from setImmediate, which Node runs after the
// poll phase in which uWS consumed the whole read: by then a connection that carried more bytes (valid or not)
// behind the submission has been closed, its onAborted has run, and the parked work is dropped — nothing sent, no
// answer; the client sees the connection close and can retry safely. Pipelining behind a submission is thereby
// refused; a client sending one request at a time (every HTTP client library) pays one setImmediate per loop turn
// and a res.cork per answer.
import type { RequestState } from './response.js';

type Work = (st: RequestState) => void;

const states: RequestState[] = [];
const works: Work[] = [];
let scheduled = false;
/** Submissions dropped because their connection closed before they ran (pipelined bytes behind them). */
let refused = 0;

function run(): void {
  scheduled = false;
  const n = states.length;
  for (let i = 0; i < n; i++) {
    const st = states[i]!;
    const work = works[i]!;
    if (st.aborted) {
      refused++;
      continue;
    }
    st.corked = false; // outside uWS's callbacks: an answer must cork itself (RequestState.corked)
    try {
      work(st);
    } catch {
      // Each work answers its own failures; one that throws must not cost the others their turn.
    }
  }
  states.splice(0, n);
  works.splice(0, n);
  if (states.length > 0 && !scheduled) {
    scheduled = true;
    setImmediate(run);
  }
}

/** Run `work` after the current read has been parsed, unless the client's connection is gone by then. */
export function afterRead(st: RequestState, work: Work): void {
  states.push(st);
  works.push(work);
  if (!scheduled) {
    scheduled = true;
    setImmediate(run);
  }
}

/** How many parked submissions were dropped because their connection closed first (a metric). */
export function refusedAfterRead(): number {
  return refused;
}
