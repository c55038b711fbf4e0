// The slot-duration estimator (src/telemetry/slot-duration.ts): fallback, outliers, quantised polls, a slot-time cut.
import { describe, expect, it } from 'vitest';
import { FALLBACK_SLOT_MS, MIN_SLOT_SAMPLES, SLOT_WINDOW_SAMPLES, SlotDurationEstimator } from '../../../src/telemetry/slot-duration.js';

/** Deterministic jitter in [-1, 1) (a fixed LCG: the test must not depend on Math.random). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0;
    return s / 2 ** 31 - 1;
  };
}

/** Feed `n` slot notifications `slotMs` apart (each seen with up to ±jitterMs of delivery jitter). */
function feed(e: SlotDurationEstimator, from: { slot: number; at: number }, n: number, slotMs: number, jitterMs = 0, seed = 1): { slot: number; at: number } {
  const r = lcg(seed);
  let { slot, at } = from;
  for (let i = 0; i < n; i++) {
    slot++;
    at += slotMs;
    e.observe(slot, at + r() * jitterMs);
  }
  return { slot, at };
}

describe('SlotDurationEstimator', () => {
  it('answers the documented fallback until enough samples exist', () => {
    const e = new SlotDurationEstimator();
    expect(e.slotMs).toBe(FALLBACK_SLOT_MS);
    expect(FALLBACK_SLOT_MS).not.toBe(400);
    expect(e.samples).toBe(0);
    e.observe(10, 1_000); // one point: no interval yet
    feed(e, { slot: 10, at: 1_000 }, MIN_SLOT_SAMPLES - 1, 200);
    expect(e.samples).toBe(0);
    expect(e.slotMs).toBe(FALLBACK_SLOT_MS);
    feed(e, { slot: 10 + MIN_SLOT_SAMPLES - 1, at: 1_000 + (MIN_SLOT_SAMPLES - 1) * 200 }, 1, 200);
    expect(e.samples).toBe(MIN_SLOT_SAMPLES);
    expect(e.slotMs).toBeCloseTo(200, 6);
  });

  it('measures a steady slot time through delivery jitter', () => {
    const e = new SlotDurationEstimator();
    e.observe(0, 0);
    feed(e, { slot: 0, at: 0 }, 200, 200, 40);
    expect(Math.abs(e.slotMs - 200)).toBeLessThan(200 * 0.02);
  });

  it('leaves out a stall and a burst of queued notifications', () => {
    const e = new SlotDurationEstimator();
    e.observe(0, 0);
    let p = feed(e, { slot: 0, at: 0 }, 20, 400, 10);
    // A 6 s stall on one slot, then a burst: three notifications 1 ms apart (the slots' real times were lost).
    p = { slot: p.slot + 1, at: p.at + 6_000 };
    e.observe(p.slot, p.at);
    for (let i = 0; i < 3; i++) e.observe(++p.slot, ++p.at);
    expect(e.samples).toBeLessThan(SLOT_WINDOW_SAMPLES);
    expect(Math.abs(e.slotMs - 400)).toBeLessThan(400 * 0.03);
    // Without the outlier rule the stall alone would have moved the mean to (23 x 400 + 6000) / 24 ~ 633 ms.
    feed(e, p, 8, 400, 10);
    expect(Math.abs(e.slotMs - 400)).toBeLessThan(400 * 0.03);
  });

  it('gets 300 ms slots right from getSlot polls every 400 ms (1 or 2 slots per poll)', () => {
    const e = new SlotDurationEstimator();
    for (let t = 0; t <= 20_000; t += 400) e.observe(Math.floor(t / 300), t);
    expect(Math.abs(e.slotMs - 300)).toBeLessThan(300 * 0.05);
  });

  it('follows a cut from 400 to 200 ms within one window of samples', () => {
    const e = new SlotDurationEstimator();
    e.observe(0, 0);
    let p = feed(e, { slot: 0, at: 0 }, 100, 400, 20);
    expect(Math.abs(e.slotMs - 400)).toBeLessThan(8);
    let prev = e.slotMs;
    for (let i = 1; i <= SLOT_WINDOW_SAMPLES; i++) {
      p = feed(e, p, 1, 200, 0);
      expect(e.slotMs).toBeLessThanOrEqual(prev + 1); // never back towards 400
      prev = e.slotMs;
      if (i === SLOT_WINDOW_SAMPLES / 2) expect(e.slotMs).toBeLessThan(310);
    }
    expect(Math.abs(e.slotMs - 200)).toBeLessThan(200 * 0.01);
  });

  it('follows a step larger than the outlier factor (400 -> 100 ms) within half a window', () => {
    const e = new SlotDurationEstimator();
    e.observe(0, 0);
    let p = feed(e, { slot: 0, at: 0 }, 64, 400);
    p = feed(e, p, SLOT_WINDOW_SAMPLES / 2 + 1, 100);
    expect(Math.abs(e.slotMs - 100)).toBeLessThan(1);
  });

  it('forgets the old cluster on reset', () => {
    const e = new SlotDurationEstimator();
    e.observe(0, 0);
    feed(e, { slot: 0, at: 0 }, 40, 400);
    e.reset();
    expect(e.slotMs).toBe(FALLBACK_SLOT_MS);
    expect(e.samples).toBe(0);
    e.observe(5, 100_000);
    feed(e, { slot: 5, at: 100_000 }, 8, 50);
    expect(e.slotMs).toBeCloseTo(50, 6);
  });

  it('does not take a jump of hundreds of slots as a rate', () => {
    const e = new SlotDurationEstimator();
    e.observe(0, 0);
    const p = feed(e, { slot: 0, at: 0 }, 40, 200);
    e.observe(p.slot + 5_000, p.at + 200);
    expect(Math.abs(e.slotMs - 200)).toBeLessThan(1);
  });
});
