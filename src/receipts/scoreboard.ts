// The adaptive routing's scoreboard (front thread, cold: fed by a 100 ms timer and the landing tracker, read once per
// slot): per (leader, route), how much good and bad evidence the relay has seen lately, each decaying by half every
// `halfLifeMs`, so that what a leader did a minute ago weighs little against what it does now. Bounded: at most
// `maxLeaders` leaders; the one touched longest ago goes first. docs/adaptive-routing.md.
import { ROUTE_COUNT } from '../shm/layout.js';

export interface ScoreboardOptions {
  readonly halfLifeMs: number;
  readonly maxLeaders: number;
}

/** One leader's row: [route * 2] good, [route * 2 + 1] bad, both decayed to `atMs`. */
interface Row {
  readonly counts: Float64Array;
  atMs: number;
}

export interface RouteScore {
  readonly good: number;
  readonly bad: number;
}

export class Scoreboard {
  private readonly rows = new Map<string, Row>();
  /** Leaders evicted for the bound (metrics). */
  evicted = 0;

  constructor(private readonly o: ScoreboardOptions) {}

  get size(): number {
    return this.rows.size;
  }

  /** Evidence about `route` at `leader`: good (it landed there by that route) or bad (parked, refused, not landed). */
  note(leader: string, route: number, good: boolean, weight: number, nowMs: number): void {
    let row = this.rows.get(leader);
    if (row === undefined) {
      if (this.rows.size >= this.o.maxLeaders) {
        // Map keeps insertion order and a touch re-inserts: the first key is the least recently touched.
        const oldest = this.rows.keys().next().value as string;
        this.rows.delete(oldest);
        this.evicted++;
      }
      row = { counts: new Float64Array(ROUTE_COUNT * 2), atMs: nowMs };
    } else {
      this.decay(row, nowMs);
      this.rows.delete(leader);
    }
    this.rows.set(leader, row);
    row.counts[route * 2 + (good ? 0 : 1)] += weight;
  }

  /** The decayed evidence now (zero for a leader never seen or evicted). */
  score(leader: string, route: number, nowMs: number): RouteScore {
    const row = this.rows.get(leader);
    if (row === undefined) return { good: 0, bad: 0 };
    const f = this.factor(row, nowMs);
    return { good: row.counts[route * 2] * f, bad: row.counts[route * 2 + 1] * f };
  }

  /** good / (good + bad) once there is at least `minEvidence` of it, else NaN (not known). */
  share(leader: string, route: number, nowMs: number, minEvidence: number): number {
    const s = this.score(leader, route, nowMs);
    const n = s.good + s.bad;
    return n < minEvidence ? NaN : s.good / n;
  }

  /** Every leader with its decayed rows (cold: /health, getLeaderSlots, tests). */
  *leaders(nowMs: number): IterableIterator<{ leader: string; scores: RouteScore[] }> {
    for (const [leader, row] of this.rows) {
      const f = this.factor(row, nowMs);
      const scores: RouteScore[] = [];
      for (let r = 0; r < ROUTE_COUNT; r++) scores.push({ good: row.counts[r * 2] * f, bad: row.counts[r * 2 + 1] * f });
      yield { leader, scores };
    }
  }

  private factor(row: Row, nowMs: number): number {
    const dt = nowMs - row.atMs;
    return dt <= 0 ? 1 : Math.pow(2, -dt / this.o.halfLifeMs);
  }

  private decay(row: Row, nowMs: number): void {
    const f = this.factor(row, nowMs);
    if (f !== 1) for (let i = 0; i < row.counts.length; i++) row.counts[i] *= f;
    if (nowMs > row.atMs) row.atMs = nowMs;
  }
}
