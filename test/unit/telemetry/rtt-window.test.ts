// RttWindow (issue #30 item 2): the ping is the minimum of the samples of the last RTT_WINDOW_MS before the newest.
import { describe, expect, it } from 'vitest';
import { RTT_WINDOW_MS, RttWindow } from '../../../src/telemetry/rtt-window.js';

describe('RttWindow', () => {
  it('discounts load outliers, follows a faster path at once and a slower one after the window', () => {
    const w = new RttWindow();
    expect(w.minRttMs).toBeNaN();
    w.add(64.97, 0); // a handshake slowed by a busy start
    expect(w.minRttMs).toBe(64.97);
    w.add(9, 1_000);
    expect([w.minRttMs, w.newestAt]).toEqual([9, 1_000]);
    w.add(120, 2_000); // an outlier under load
    expect(w.minRttMs).toBe(9);
    for (let t = 3_000; t <= 1_000 + RTT_WINDOW_MS; t += 1_000) w.add(20, t);
    expect(w.minRttMs).toBe(9); // still in the window
    w.add(20, 1_001 + RTT_WINDOW_MS);
    expect(w.minRttMs).toBe(20); // the path really got slower
  });

  it('keeps at most 64 samples', () => {
    const w = new RttWindow();
    for (let i = 0; i < 1_000; i++) w.add(i === 0 ? 1 : 50, 0);
    expect(w.minRttMs).toBe(50);
  });
});
