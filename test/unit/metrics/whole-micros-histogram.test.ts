import { describe, expect, it } from 'vitest';
import { newLatencyHistogram } from '../../../src/metrics/front-metrics.js';
import { WholeMicrosHistogram } from '../../../src/metrics/whole-micros-histogram.js';

describe('WholeMicrosHistogram', () => {
  it('ends up with exactly the histogram that recording every value into hdr gives', () => {
    const direct = newLatencyHistogram();
    const buffered = new WholeMicrosHistogram(newLatencyHistogram());
    let seed = 12345;
    const random = (): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const values: number[] = [0, 0.2, 1, 1.5, 2047.9, 2048, 2049.5, 3000.7, 4095.99, 4096, 4097.3, 59_999_999];
    for (let i = 0; i < 20_000; i++) values.push(random() < 0.9 ? random() * 50 : random() < 0.9 ? random() * 5000 : random() * 2e6);
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      direct.recordValue(v < 1 ? 1 : v); // what FrontMetrics did before
      buffered.record(v);
      if (i === 7_000) buffered.histogram(); // a scrape in the middle: the fold must not lose or double anything
    }
    const h = buffered.histogram();
    expect(h.totalCount).toBe(direct.totalCount);
    expect(h.mean).toBeCloseTo(direct.mean, 9);
    expect(h.maxValue).toBe(direct.maxValue);
    for (const p of [0, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100]) expect(h.getValueAtPercentile(p), `p${p}`).toBe(direct.getValueAtPercentile(p));
    expect(buffered.histogram().totalCount).toBe(direct.totalCount); // reading again adds nothing
  });
});
