// Admission by delay, the measuring end (egress worker, QUIC thread 0; sample() HOT: once per route answer, tick()
// cold: once per interval). Every route answer of this consumer's records is a sojourn sample: the time from the
// front's acceptance (the record's receivedAtMs) to the route's answer — for direct/static, the write of the QUIC
// stream. Judged as CoDel judges a queue (by how long things wait, not by how many there are): a route whose minimum
// sojourn over a whole interval was above its target has a standing queue, and its bit goes up in this consumer's
// OVER word (src/shm/sojourn-layout.ts), which the intakes read before accepting (src/admission/intake.ts,
// src/ingress/local-admission.ts). One sample at or under the target brings it down at once (CoDel leaves its
// dropping state the same way), and so does an interval with no sample and nothing in flight (the queue is empty).
// A queue that answers nothing at all (a parked connection: no stream credit) gives no sample until its transactions
// go stale, seconds later; so an interval without a sample for a route is judged by the age of the oldest record
// still waiting in the ring (its head of line: a lower bound of that record's sojourn) when that record has the route.
// And, as CoDel does not drop while its queue holds less than one packet (maxpacket), a route is judged over only
// when the ring's backlog could not drain within the target at the rate the interval just answered (and holds at
// least minBacklog records): otherwise the wait is not the queue's (a handshake to a new leader, a host stalled
// under a GC pause; the burst of answers after the stall drains it) and refusing would not shorten it. Without this
// guard a loaded box refused 8 of 1,000 transactions offered at 25/s (a landing bench run, 2026-12-07); with it a
// slow peer (80/s) is still over once more than 8 records (100 ms of its answers) wait.
import { ROUTE_COUNT, ROUTE_IDS } from '../../shm/layout.js';
import type { SojournBoard } from '../../shm/sojourn-layout.js';

export interface SojournTargets {
  readonly direct: number;
  readonly static: number;
  readonly rpc: number;
  readonly jito: number;
}

export class SojournJudge {
  /** Target per route id, us; 0 = not judged. */
  private readonly targetUs = new Float64Array(ROUTE_COUNT);
  /** Minimum sojourn seen in the current interval per route, us (Infinity = no sample yet). */
  private readonly minUs = new Float64Array(ROUTE_COUNT).fill(Infinity);
  /** Answers per route in the current interval: the rate the backlog drains at. */
  private readonly answers = new Float64Array(ROUTE_COUNT);
  private readonly targetPerInterval = new Float64Array(ROUTE_COUNT);
  private over = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly board: SojournBoard,
    /** This consumer's row (its ring's index). */
    private readonly writer: number,
    targetsMs: SojournTargets,
    intervalMs: number,
    /** Whether records are in flight (taken, not every route answered): no sample then means nothing left yet. */
    private readonly busy: () => boolean,
    /** The ring's head of line: how long its oldest unreleased record has waited (us; -1 = none), and its routes. */
    private readonly oldest: { ageUs(): number; routeMask(): number } | null = null,
    /** Records not released yet (taken or waiting), and the fewest that make a standing queue (0 = no guard). */
    private readonly backlog: { depth(): number; min: number } = { depth: () => Infinity, min: 0 },
  ) {
    for (const [name, id] of Object.entries(ROUTE_IDS)) {
      this.targetUs[id] = targetsMs[name as keyof SojournTargets] * 1000;
      this.targetPerInterval[id] = targetsMs[name as keyof SojournTargets] / intervalMs;
    }
    board.reset(writer);
    this.timer = setInterval(() => this.tick(), intervalMs);
    this.timer.unref();
  }

  /** HOT: route `route` answered a record accepted `us` microseconds ago. No allocation; a store only on a change. */
  sample(route: number, us: number): void {
    const target = this.targetUs[route];
    if (target === 0) return;
    if (us < this.minUs[route]) this.minUs[route] = us;
    this.answers[route]++;
    // Under the target while over: the standing queue is gone; reopen now rather than at the interval's end.
    if (us <= target && (this.over & (1 << route)) !== 0) {
      this.over &= ~(1 << route);
      this.board.setOver(this.writer, this.over);
    }
  }

  /** End of an interval (cold): judge each route by its minimum, publish it, start the next interval. */
  tick(): void {
    let over = this.over;
    const busy = this.busy();
    const oldest = this.oldest;
    const headUs = oldest === null ? -1 : oldest.ageUs();
    const headMask = headUs < 0 ? 0 : oldest!.routeMask();
    const depth = this.backlog.depth();
    for (let r = 0; r < ROUTE_COUNT; r++) {
      const target = this.targetUs[r];
      if (target === 0) continue;
      const min = this.minUs[r];
      this.minUs[r] = Infinity;
      this.board.setMinUs(this.writer, r, min === Infinity ? -1 : Math.min(0x7fffffff, Math.round(min)));
      // Below CoDel's maxpacket: a backlog the interval's answer rate drains within the target is no standing queue.
      const drainsInTarget = this.answers[r] * this.targetPerInterval[r];
      this.answers[r] = 0;
      if (this.backlog.min > 0 && (depth < this.backlog.min || depth <= drainsInTarget)) over &= ~(1 << r);
      else if (min === Infinity) {
        // No answer for a whole interval: a head of line older than the target is a standing queue; an empty queue
        // reopens; a busy one otherwise keeps its state (its answers decide).
        if ((headMask & (1 << r)) !== 0 && headUs > target) over |= 1 << r;
        else if (!busy) over &= ~(1 << r);
      } else if (min > target) over |= 1 << r;
      else over &= ~(1 << r);
    }
    if (over !== this.over) {
      this.over = over;
      this.board.setOver(this.writer, over);
    }
  }

  /** The consumer stopped: nothing of it is over any more (a replacement starts its row over). */
  close(): void {
    clearInterval(this.timer);
    this.over = 0;
    this.board.reset(this.writer);
  }
}
