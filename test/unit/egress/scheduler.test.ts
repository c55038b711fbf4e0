// Fanout policies and the pre-warm set over a fixed leader table (no network).
import { describe, expect, it } from 'vitest';
import { Scheduler, type SchedulerOptions } from '../../../src/egress/quic/scheduler.js';
import type { LeaderInfo, LeaderSource } from '../../../src/telemetry/leader-source.js';

/** Windows of 4 slots led by the letters in `plan` (repeating); X has no tpuQuic. */
function source(plan: string, slot: { v: number }, age = 0): LeaderSource {
  const info = (c: string): LeaderInfo => ({ identity: c, tpuQuic: c === 'X' ? null : `10.0.0.${c.charCodeAt(0)}:8009`, stake: 1 });
  return {
    currentSlot: () => slot.v,
    leaderAt: (s) => (s < 0 || s >= plan.length * 4 ? undefined : info(plan[Math.floor(s / 4)])),
    ageMs: () => age,
  };
}

const base: SchedulerOptions = { fanout: 'next-leaders', leaders: 1, windowTailSlots: 2, lookahead: 4, staleLeaderMs: 5_000 };
const ids = (s: Scheduler): string[] => s.targets().map((t) => t.identity);

describe('Scheduler', () => {
  it('next-leaders: the current leader and the next N distinct ones, in every slot', () => {
    const slot = { v: 0 };
    const s = new Scheduler(source('AABCDA', slot), { ...base, leaders: 2 });
    for (const v of [0, 3, 5, 7]) {
      slot.v = v;
      expect(ids(s)).toEqual(['A', 'B', 'C']); // A's two windows count once
    }
    slot.v = 8;
    expect(ids(s)).toEqual(['B', 'C', 'D']);
    slot.v = 16;
    expect(ids(s)).toEqual(['D', 'A']); // the schedule ends after A
  });

  it('window-aware: current only at the start of a run, current + next in its last windowTailSlots slots', () => {
    const slot = { v: 0 };
    const s = new Scheduler(source('ABBC', slot), { ...base, fanout: 'window-aware' });
    const at = (v: number): string[] => ((slot.v = v), ids(s));
    expect(at(0)).toEqual(['A']);
    expect(at(1)).toEqual(['A']);
    expect(at(2)).toEqual(['A', 'B']);
    expect(at(3)).toEqual(['A', 'B']);
    // B holds two windows in a row (slots 4-11): its "end" is slots 10-11, not 6-7.
    expect(at(6)).toEqual(['B']);
    expect(at(9)).toEqual(['B']);
    expect(at(10)).toEqual(['B', 'C']);
  });

  it('skips leaders without tpuQuic and dedupes by address', () => {
    const slot = { v: 0 };
    const s = new Scheduler(source('XAB', slot), base);
    expect(ids(s)).toEqual(['A']);
    expect(s.counters.leadersWithoutTpu).toBeGreaterThan(0);
  });

  it('fails closed on stale or missing data', () => {
    expect(new Scheduler(source('AB', { v: 0 }, 10_000), base).targets()).toEqual([]);
    expect(new Scheduler(source('AB', { v: -1 }), base).targets()).toEqual([]);
    expect(new Scheduler(source('AB', { v: 99 }), base).targets()).toEqual([]);
  });

  it('pre-warms the current window and the next `lookahead` windows, once per window', () => {
    const slot = { v: 1 };
    const s = new Scheduler(source('ABCDEFG', slot), { ...base, fanout: 'window-aware', lookahead: 3 });
    expect(s.prewarmTargets()!.map((t) => t.identity)).toEqual(['A', 'B', 'C', 'D']);
    slot.v = 2;
    expect(s.prewarmTargets()).toBeNull(); // same window: nothing to do
    slot.v = 4;
    expect(s.prewarmTargets()!.map((t) => t.identity)).toEqual(['B', 'C', 'D', 'E']);
  });

  it('recomputes targets once per slot', () => {
    const slot = { v: 0 };
    const s = new Scheduler(source('AB', slot), base);
    for (let i = 0; i < 100; i++) s.targets();
    slot.v = 1;
    s.targets();
    expect(s.counters.recomputed).toBe(2);
  });
});
