// The landing tracker's poll costs what it asks, not what it follows (issue #28: it runs on the front thread): with
// 20,000 receipts followed, one poll reads the receipt table for the expired head and the 2,048 it asks about only,
// asks the oldest live ones in acceptance order, ends the expired ones as not_landed and stops following confirmed
// ones — the same answers the full scan it replaced gave.
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import { LandingTracker } from '../../../src/receipts/landing-tracker.js';
import { ReceiptMetrics } from '../../../src/receipts/receipt-metrics.js';
import { ReceiptTable } from '../../../src/receipts/receipt-table.js';
import type { UpstreamRpcClient } from '../../../src/rpc/upstream-client.js';

const sig = (i: number): string => `sig${String(i).padStart(8, '0')}`;

/** getSignatureStatuses: confirmed for the signatures in `confirmed`, null for the others; records what was asked. */
class FakeUpstream {
  readonly asked: string[][] = [];
  constructor(readonly confirmed: Set<string>) {}
  async call<T>(method: string, params: unknown[]): Promise<T> {
    if (method !== 'getSignatureStatuses') throw new Error(`unexpected ${method}`);
    const sigs = params[0] as string[];
    this.asked.push(sigs);
    return { context: { slot: 200 }, value: sigs.map((s) => (this.confirmed.has(s) ? { slot: 150, err: null, confirmationStatus: 'confirmed' } : null)) } as T;
  }
}

/** Counts the table reads a poll makes (current / acceptedAt / landingState: the per-receipt work). */
function countingTable(t: ReceiptTable): { reads: () => number; reset: () => void } {
  let n = 0;
  for (const m of ['current', 'acceptedAt', 'landingState'] as const) {
    const f = t[m].bind(t) as (seq: number) => never;
    (t as unknown as Record<string, unknown>)[m] = (seq: number) => {
      n++;
      return f(seq);
    };
  }
  return { reads: () => n, reset: () => void (n = 0) };
}

describe('landing tracker poll', () => {
  it('with 20,000 followed, a poll reads ~2,048 of them, asks the oldest live ones in order, expires the head and drops the confirmed', async () => {
    const N = 20_000;
    const table = new ReceiptTable({ capacity: 32_768, ttlMs: 600_000 });
    const metrics = new ReceiptMetrics();
    const now = Date.now();
    // The first 100 were accepted 100 s ago (beyond trackForMs 90 s), the rest just now.
    const seqs = Array.from({ length: N }, (_, i) => table.accept(sig(i), 1, 1, `r${i}`, i < 100 ? now - 100_000 : now, 99));
    const confirmed = new Set([sig(100), sig(101), sig(500), sig(2_148)]);
    const upstream = new FakeUpstream(confirmed);
    const tracker = new LandingTracker(table, upstream as unknown as UpstreamRpcClient, null, metrics, { pollMs: 200, trackForMs: 90_000, maxTracked: N, timeoutMs: 1_000 }, createLogger('silent', 'test'));
    for (const s of seqs) tracker.track(s);
    const reads = countingTable(table);

    await tracker.poll();
    // Expired head: not_landed, no longer followed; the next 2,048 asked, oldest first, 256 per call.
    expect(metrics.notLanded).toBe(100);
    expect(table.toJson(seqs[0]).status).toBe('not_landed');
    expect(upstream.asked).toHaveLength(8);
    expect(upstream.asked.flat()).toEqual(Array.from({ length: 2_048 }, (_, k) => sig(100 + k)));
    // Confirmed among them: landed and dropped; sig(2_148) was not asked (beyond the window), so still pending.
    expect(table.toJson(seqs[100]).status).toBe('landed');
    expect(table.toJson(seqs[2_148]).status).toBe('pending');
    expect(tracker.tracked).toBe(N - 100 - 3);
    // The work bound: the 100 expired + the stop entry, then the statuses of what was asked (< 3 reads each at
    // most) — not 20,000 receipts walked per poll (the full scan made >= 3 reads per followed receipt: > 60,000).
    expect(reads.reads()).toBeLessThan(101 * 3 + 2_048 * 3);

    upstream.asked.length = 0;
    reads.reset();
    await tracker.poll();
    // Next poll: the window moved up by the 3 confirmed ones; sig(2_148) is now asked and confirmed.
    expect(upstream.asked.flat()[0]).toBe(sig(102));
    expect(upstream.asked.flat()).toContain(sig(2_148));
    expect(upstream.asked.flat()).not.toContain(sig(500));
    expect(table.toJson(seqs[2_148]).status).toBe('landed');
    expect(tracker.tracked).toBe(N - 100 - 4);
    expect(reads.reads()).toBeLessThan(2_048 * 3 + 10);
  });

  it('keeps following what track() adds while a poll waits for the upstream, and stays within maxTracked', async () => {
    const table = new ReceiptTable({ capacity: 4_096, ttlMs: 600_000 });
    const metrics = new ReceiptMetrics();
    const upstream = new FakeUpstream(new Set([sig(0)]));
    const tracker = new LandingTracker(table, upstream as unknown as UpstreamRpcClient, null, metrics, { pollMs: 200, trackForMs: 90_000, maxTracked: 10, timeoutMs: 1_000 }, createLogger('silent', 'test'));
    const seqs = Array.from({ length: 12 }, (_, i) => table.accept(sig(i), 1, 1, `r${i}`, Date.now(), 99));
    for (const s of seqs.slice(0, 5)) tracker.track(s);
    const polled = tracker.poll();
    for (const s of seqs.slice(5)) tracker.track(s); // during the poll's await: 5 + 7 > 10, two untracked
    await polled;
    expect(table.toJson(seqs[0]).status).toBe('landed');
    expect(tracker.tracked).toBe(9);
    expect(metrics.untracked).toBe(2);
    upstream.asked.length = 0;
    await tracker.poll();
    expect(upstream.asked.flat()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9].map(sig));
  });
});
