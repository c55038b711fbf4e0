// When the QUIC thread gives freed native memory back (src/ingress/ingress-memory-trim.ts): once a burst of datagrams
// is over, not during one, not for a trickle, not again without a new burst; and each trim is one full collection
// followed by the trim, reported with the RSS around it.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startIngressMemoryTrim, TRIM_AFTER_DATAGRAMS, TRIM_CHECK_MS, TrimPolicy, type TrimEvent } from '../../../src/ingress/ingress-memory-trim.js';

/** Feeds the policy one counter value per window: the datagrams of each window in turn. */
function decisions(windows: readonly number[]): boolean[] {
  const p = new TrimPolicy();
  let total = 0;
  p.observe(total);
  return windows.map((w) => p.observe((total += w)));
}

describe('TrimPolicy', () => {
  it('trims once when a burst ends, not while it lasts', () => {
    const burst = TRIM_AFTER_DATAGRAMS / 2;
    expect(decisions([burst, burst, burst, 0, 0, 0])).toEqual([false, false, false, true, false, false]);
  });

  it('a burst that slows to a quarter of its peak is over; one that slows to half is not', () => {
    const w = TRIM_AFTER_DATAGRAMS;
    expect(decisions([w, w / 2])).toEqual([false, false]);
    expect(decisions([w, w / 4])).toEqual([false, true]);
  });

  it('never for traffic below the threshold, however long it lasts', () => {
    const trickle = Math.floor(TRIM_AFTER_DATAGRAMS / 100);
    expect(decisions(Array.from({ length: 99 }, (_, i) => (i % 2 === 0 ? trickle : 0))).some((x) => x)).toBe(false);
  });

  it('a second burst trims again', () => {
    const w = TRIM_AFTER_DATAGRAMS;
    expect(decisions([w, 0, 0, w, 0])).toEqual([false, true, false, false, true]);
  });
});

describe('startIngressMemoryTrim', () => {
  afterEach(() => vi.useRealTimers());

  it('after a burst: one trim, reported with the datagrams it followed, and none without a new burst', async () => {
    vi.useFakeTimers();
    let datagrams = 0;
    const trims: number[] = [];
    const events: TrimEvent[] = [];
    const stop = startIngressMemoryTrim(
      () => {
        trims.push(datagrams);
        return Promise.resolve(true);
      },
      () => datagrams,
      (e) => events.push(e),
    );
    datagrams += TRIM_AFTER_DATAGRAMS;
    await vi.advanceTimersByTimeAsync(TRIM_CHECK_MS);
    expect(trims).toEqual([]); // the burst's own window
    await vi.advanceTimersByTimeAsync(TRIM_CHECK_MS + 1_000);
    expect(trims).toEqual([TRIM_AFTER_DATAGRAMS]);
    expect(events).toHaveLength(1);
    expect(events[0].datagrams).toBe(TRIM_AFTER_DATAGRAMS);
    expect(events[0].rssBeforeBytes).toBeGreaterThan(0);
    await vi.advanceTimersByTimeAsync(10 * TRIM_CHECK_MS);
    expect(trims).toHaveLength(1);
    stop();
  });
});
