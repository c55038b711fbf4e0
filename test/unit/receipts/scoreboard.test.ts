// The adaptive routing's scoreboard (src/receipts/scoreboard.ts): evidence halves every halfLifeMs, a share needs
// minEvidence, the leader count is bounded with the least recently touched evicted first.
import { describe, expect, it } from 'vitest';
import { Scoreboard } from '../../../src/receipts/scoreboard.js';
import { ROUTE_IDS } from '../../../src/shm/layout.js';

const D = ROUTE_IDS.direct;
const RPC = ROUTE_IDS.rpc;

describe('scoreboard', () => {
  it('halves the evidence every halfLifeMs, per route', () => {
    const s = new Scoreboard({ halfLifeMs: 1_000, maxLeaders: 8 });
    for (let i = 0; i < 8; i++) s.note('L', D, false, 1, 0);
    s.note('L', RPC, true, 4, 0);
    expect(s.score('L', D, 0)).toEqual({ good: 0, bad: 8 });
    expect(s.score('L', D, 1_000).bad).toBeCloseTo(4, 9);
    expect(s.score('L', D, 3_000).bad).toBeCloseTo(1, 9);
    expect(s.score('L', RPC, 2_000).good).toBeCloseTo(1, 9);
    // A new note decays the old evidence first: 4 old bad at t=1000 + 4 new good.
    for (let i = 0; i < 4; i++) s.note('L', D, true, 1, 1_000);
    const now = s.score('L', D, 1_000);
    expect(now.bad).toBeCloseTo(4, 9);
    expect(now.good).toBeCloseTo(4, 9);
    expect(s.share('L', D, 1_000, 8)).toBeCloseTo(0.5, 9);
  });

  it('answers no share (NaN) below minEvidence, and for a leader it never saw', () => {
    const s = new Scoreboard({ halfLifeMs: 10_000, maxLeaders: 8 });
    for (let i = 0; i < 3; i++) s.note('L', D, false, 1, 0);
    expect(s.share('L', D, 0, 4)).toBeNaN();
    s.note('L', D, true, 1, 0);
    expect(s.share('L', D, 0, 4)).toBe(0.25);
    expect(s.share('other', D, 0, 1)).toBeNaN();
    // Decay takes it back under the bar: 4 at t=0 is 2 at t=halfLife.
    expect(s.share('L', D, 10_000, 4)).toBeNaN();
  });

  it('keeps at most maxLeaders, evicting the least recently touched', () => {
    const s = new Scoreboard({ halfLifeMs: 10_000, maxLeaders: 3 });
    s.note('A', D, false, 1, 0);
    s.note('B', D, false, 1, 1);
    s.note('C', D, false, 1, 2);
    s.note('A', D, false, 1, 3); // A touched again: B is now the oldest
    s.note('D', D, false, 1, 4);
    expect(s.size).toBe(3);
    expect(s.evicted).toBe(1);
    const names = [...s.leaders(4)].map((l) => l.leader).sort();
    expect(names).toEqual(['A', 'C', 'D']);
    expect(s.score('B', D, 4)).toEqual({ good: 0, bad: 0 });
    for (let i = 0; i < 1_000; i++) s.note(`X${i}`, D, true, 1, 5 + i);
    expect(s.size).toBe(3);
  });
});
