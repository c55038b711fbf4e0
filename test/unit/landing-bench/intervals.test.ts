// The landing report's intervals against published figures: Wilson's score interval and Newcombe's hybrid score
// interval for a difference of proportions (Newcombe 1998, Statistics in Medicine 17:873, table II, method 10).
import { describe, expect, it } from 'vitest';
import { againstBest, newcombe, wilson } from '../../../src/landing-bench/intervals.js';

describe('landing intervals', () => {
  it('Wilson: Newcombe\'s examples, and 0 / n and n / n stay inside [0, 1] with a width', () => {
    const a = wilson(56, 70);
    expect(a.lo).toBeCloseTo(0.6918, 3);
    expect(a.hi).toBeCloseTo(0.877, 3);
    const none = wilson(0, 20);
    expect(none.lo).toBe(0);
    expect(none.hi).toBeCloseTo(0.1611, 3);
    const all = wilson(20, 20);
    expect(all.hi).toBe(1);
    expect(all.lo).toBeCloseTo(0.8389, 3);
  });

  it('Newcombe method 10: 56/70 - 48/80 is 0.0524 to 0.3339; 9/10 - 3/10 is 0.1705 to 0.8090', () => {
    const d = newcombe(wilson(56, 70), wilson(48, 80));
    expect(d.diff).toBeCloseTo(0.2, 10);
    expect(d.lo).toBeCloseTo(0.0524, 3);
    expect(d.hi).toBeCloseTo(0.3339, 3);
    expect(d.significant).toBe(true);
    const e = newcombe(wilson(9, 10), wilson(3, 10));
    expect(e.lo).toBeCloseTo(0.1705, 3);
    expect(e.hi).toBeCloseTo(0.809, 3);
  });

  it('each set against the best; a close call is not significant', () => {
    const rows = againstBest([
      { name: 'direct', share: wilson(180, 200) },
      { name: 'direct+rpc', share: wilson(200, 200) },
      { name: 'adaptive', share: wilson(198, 200) },
    ]);
    expect(rows.map((r) => [r.set, r.against])).toEqual([
      ['direct', 'direct+rpc'],
      ['adaptive', 'direct+rpc'],
    ]);
    expect(rows[0].significant).toBe(true);
    expect(rows[1].significant).toBe(false);
    expect(rows[1].lo).toBeLessThan(0);
    expect(rows[1].hi).toBeGreaterThan(0);
  });
});
