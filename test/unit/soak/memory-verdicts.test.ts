// The soak's two memory verdicts on made-up series (scripts/soak/rss.ts, scripts/soak/thread-heaps.ts): a plateau
// passes wherever it sits, growth still going at the end fails; a thread whose live heap keeps growing fails, a flat or
// once-stepped one passes; short runs leave RSS unjudged.
import { describe, expect, it } from 'vitest';
import { RssSampler } from '../../../scripts/soak/rss.js';
import { ThreadHeapWatch, type HeapSample } from '../../../scripts/soak/thread-heaps.js';

function rssWith(points: readonly [number, number][]): RssSampler {
  const r = new RssSampler(0, () => null, () => 0);
  for (const [t, mb] of points) r.samples.push({ t, relayMb: mb, localnetMb: null });
  return r;
}

function heapsWith(samples: readonly HeapSample[]): ThreadHeapWatch {
  const w = new ThreadHeapWatch(undefined as never, '', () => 0);
  w.samples.push(...samples);
  return w;
}

const every5s = (fromS: number, toS: number): number[] => Array.from({ length: Math.floor((toS - fromS) / 5) + 1 }, (_, i) => fromS + 5 * i);

describe('RSS verdict (plateau)', () => {
  it('a climb to a high-water mark that then holds is flat', () => {
    const pts = every5s(0, 600).map((t): [number, number] => [t, t < 200 ? 250 + t : 450 + ((t / 5) % 3) * 5]);
    expect(rssWith(pts).verdict(30, 600)?.flat).toBe(true);
  });

  it('growth of 12 MB/min that is still going in the last third is not', () => {
    const pts = every5s(0, 600).map((t): [number, number] => [t, 300 + (12 * t) / 60]);
    const v = rssWith(pts).verdict(30, 600)!;
    expect(v.flat).toBe(false);
    expect(v.lastPeakMb).toBeGreaterThan(v.limitMb);
  });

  it('a run too short to reach its high-water mark is reported, not judged', () => {
    const pts = every5s(0, 60).map((t): [number, number] => [t, 250 + 3 * t]);
    expect(rssWith(pts).verdict(7, 60)?.flat).toBeNull();
  });
});

describe('live heap verdict (per thread role)', () => {
  const flat = (t: number): Record<string, number> => ({ front: 25 + (t % 2) * 0.2, egress: 30, heapTotal: 100 + t });
  it('flat live heaps pass (heapTotal, a reservation, is not judged)', () => {
    const v = heapsWith(every5s(0, 60).map((t) => ({ t, mb: flat(t) }))).verdict(7, 60);
    expect([...v.judged].sort()).toEqual(['egress', 'front']);
    expect(v.ok).toBe(true);
  });

  it('a role leaking 12 MB/min fails, named', () => {
    const v = heapsWith(every5s(0, 60).map((t) => ({ t, mb: { ...flat(t), egress: 30 + (12 * t) / 60 } }))).verdict(7, 60);
    expect(v.ok).toBe(false);
    expect(v.growing.map((g) => g.role)).toEqual(['egress']);
  });

  it('one step (a bounded table filling once, early) within the slack passes', () => {
    const v = heapsWith(every5s(0, 60).map((t) => ({ t, mb: { ...flat(t), front: t < 20 ? 25 : 28 } }))).verdict(7, 60);
    expect(v.ok).toBe(true);
  });
});
