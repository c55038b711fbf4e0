// What the landing tracker waits for follows the cluster's consensus (issue #43 item 2): under Alpenglow a receipt
// whose status cannot settle execution is looked up with getTransaction at `finalized` (confirmed is the same event
// there, and announced for removal); under Tower, or while the consensus is unknown, at `confirmed`. A status at
// finalized ends the wait in both. Driven through LandingTracker.poll() against a stand-in upstream with Agave's shapes.
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import type { UpstreamRpcClient } from '../../../src/rpc/upstream-client.js';
import { LandingTracker } from '../../../src/receipts/landing-tracker.js';
import { ReceiptMetrics } from '../../../src/receipts/receipt-metrics.js';
import { ReceiptTable } from '../../../src/receipts/receipt-table.js';

const SIG = `F${'1'.repeat(87)}`;
const RENT = { InsufficientFundsForRent: { account_index: 0 } };

function run(mode: 'alpenglow' | 'tower' | 'unknown', confirmationStatus: 'confirmed' | 'finalized') {
  const calls: { method: string; params: readonly unknown[] }[] = [];
  const upstream = {
    async call<T>(method: string, params: readonly unknown[]): Promise<T> {
      calls.push({ method, params });
      if (method === 'getSignatureStatuses') {
        const st = { slot: 50, confirmations: confirmationStatus === 'finalized' ? null : 1, err: RENT, status: { Err: RENT }, confirmationStatus };
        return { context: { slot: 60 }, value: [st] } as T;
      }
      if (method === 'getTransaction') return null as T; // not in history yet: asked again next poll
      throw new Error(`unexpected ${method}`);
    },
  };
  const table = new ReceiptTable({ capacity: 8, ttlMs: 600_000 });
  const seq = table.accept(SIG, 1, 1, 'r0', Date.now(), 99);
  const tracker = new LandingTracker(table, upstream as unknown as UpstreamRpcClient, null, new ReceiptMetrics(), { pollMs: 100, trackForMs: 90_000, maxTracked: 8, timeoutMs: 1_000 }, createLogger('silent', 'test'));
  tracker.setConsensus(() => mode);
  tracker.track(seq);
  return { calls, tracker };
}

describe('landing waits by consensus', () => {
  it('Alpenglow: getTransaction at finalized once the status is finalized', async () => {
    const { calls, tracker } = run('alpenglow', 'finalized');
    await tracker.poll();
    const lookups = calls.filter((c) => c.method === 'getTransaction');
    expect(lookups).toHaveLength(1);
    expect(lookups[0].params[1]).toEqual({ encoding: 'base64', commitment: 'finalized', maxSupportedTransactionVersion: 1 });
    expect(tracker.tracked).toBe(0); // final: no longer followed
  });

  it('Tower and unknown: getTransaction at confirmed, as before', async () => {
    for (const mode of ['tower', 'unknown'] as const) {
      const { calls, tracker } = run(mode, 'confirmed');
      await tracker.poll();
      const lookups = calls.filter((c) => c.method === 'getTransaction');
      expect(lookups.map((c) => (c.params[1] as { commitment: string }).commitment), mode).toEqual(['confirmed']);
      expect(tracker.tracked, mode).toBe(0);
    }
  });
});
