// Receipts that tell executed from failed from included-without-execution (issue #24 item 6), from what the cluster
// reports. The embedded localnet cannot produce a SIMD-0290 no-op (it never commits a transaction whose fee payer
// cannot pay), so this drives the real LandingTracker against an upstream that answers getSignatureStatuses and
// getTransaction with Agave's JSON shapes for each case (agave rpc-client-types / transaction-status-client-types:
// status entries {slot, confirmations, err, status:{Ok|Err}, confirmationStatus}; a no-op is committed with
// status Err(fee-payer validation error), fee 0, no logs, no inner instructions: svm ProcessedTransaction::NoOp,
// anza-xyz/agave#13556).
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import { TextBuilder } from '../../../src/metrics/prometheus.js';
import type { UpstreamRpcClient } from '../../../src/rpc/upstream-client.js';
import { executionFromMeta, executionFromStatus } from '../../../src/receipts/execution-outcome.js';
import { LandingTracker } from '../../../src/receipts/landing-tracker.js';
import { ReceiptMetrics } from '../../../src/receipts/receipt-metrics.js';
import { ReceiptTable } from '../../../src/receipts/receipt-table.js';

function sig(i: number): string {
  return `E${i.toString().padStart(87, '1')}`;
}

/** An Agave getSignatureStatuses entry. */
function status(slot: number, err: unknown, confirmationStatus: 'processed' | 'confirmed' | 'finalized' = 'confirmed') {
  return { slot, confirmations: confirmationStatus === 'finalized' ? null : 1, err, status: err === null ? { Ok: null } : { Err: err }, confirmationStatus };
}

/** An Agave getTransaction answer (encoding base64) with the meta fields a committed transaction carries. */
function transaction(slot: number, err: unknown, fee: number, logs: string[] | null) {
  return {
    slot,
    blockTime: 1_790_000_000,
    version: 'legacy',
    transaction: ['AQ==', 'base64'],
    meta: {
      err,
      status: err === null ? { Ok: null } : { Err: err },
      fee,
      preBalances: [fee === 0 ? 4_000 : 1_000_000, 0],
      postBalances: [fee === 0 ? 4_000 : 1_000_000 - fee, 0],
      innerInstructions: fee === 0 ? [] : [],
      logMessages: logs,
      preTokenBalances: [],
      postTokenBalances: [],
      rewards: [],
      loadedAddresses: { writable: [], readonly: [] },
      computeUnitsConsumed: fee === 0 ? 200_000 : 150,
    },
  };
}

// The cases, by what the cluster reports.
const OK = { status: status(100, null), tx: transaction(100, null, 5_000, ['Program 11111111111111111111111111111111 success']) };
const FAILED_IN_EXECUTION = {
  status: status(101, { InstructionError: [0, { Custom: 1 }] }),
  tx: transaction(101, { InstructionError: [0, { Custom: 1 }] }, 5_000, ['Transfer: insufficient lamports 1000, need 2000']),
};
const NOOP_UNFUNDED = { status: status(102, 'InsufficientFundsForFee'), tx: transaction(102, 'InsufficientFundsForFee', 0, null) };
const NOOP_NO_PAYER = { status: status(103, 'AccountNotFound'), tx: transaction(103, 'AccountNotFound', 0, null) };
const NOOP_RENT = { status: status(104, { InsufficientFundsForRent: { account_index: 0 } }), tx: transaction(104, { InsufficientFundsForRent: { account_index: 0 } }, 0, null) };
const EXECUTED_RENT = { status: status(105, { InsufficientFundsForRent: { account_index: 0 } }), tx: transaction(105, { InsufficientFundsForRent: { account_index: 0 } }, 5_000, ['Program 11111111111111111111111111111111 success']) };

class FakeUpstream {
  readonly calls: { method: string; params: readonly unknown[] }[] = [];
  /** getTransaction answers null (not in history yet) until this is set. */
  historyReady = true;
  constructor(private readonly bySignature: Map<string, { status: unknown; tx: unknown }>) {}

  async call<T>(method: string, params: readonly unknown[]): Promise<T> {
    this.calls.push({ method, params });
    if (method === 'getSignatureStatuses') {
      const sigs = params[0] as string[];
      return { context: { slot: 200 }, value: sigs.map((s) => this.bySignature.get(s)?.status ?? null) } as T;
    }
    if (method === 'getTransaction') return (this.historyReady ? (this.bySignature.get(params[0] as string)?.tx ?? null) : null) as T;
    throw new Error(`unexpected ${method}`);
  }
}

function setup(cases: { status: unknown; tx: unknown }[]) {
  const table = new ReceiptTable({ capacity: 64, ttlMs: 600_000 });
  const metrics = new ReceiptMetrics();
  const map = new Map<string, { status: unknown; tx: unknown }>();
  const seqs = cases.map((c, i) => {
    map.set(sig(i), c);
    return table.accept(sig(i), 1, 1, `r${i}`, Date.now(), 99);
  });
  const upstream = new FakeUpstream(map);
  const tracker = new LandingTracker(table, upstream as unknown as UpstreamRpcClient, null, metrics, { pollMs: 100, trackForMs: 90_000, maxTracked: 100, timeoutMs: 1_000 }, createLogger('silent', 'test'));
  for (const s of seqs) tracker.track(s);
  const metricsText = () => {
    const tb = new TextBuilder();
    metrics.render(tb, tracker.tracked, table.size);
    return tb.text();
  };
  return { table, seqs, upstream, tracker, metricsText };
}

describe('execution from the status alone', () => {
  it('null: executed; an instruction error: failed; a fee-payer validation error: not executed; others: ask getTransaction', () => {
    expect(executionFromStatus(null)).toEqual({ execution: 'executed', confirmWithTransaction: false });
    expect(executionFromStatus({ InstructionError: [0, { Custom: 1 }] })).toEqual({ execution: 'failed', confirmWithTransaction: false });
    for (const e of ['InsufficientFundsForFee', 'AccountNotFound', 'InvalidAccountForFee']) {
      expect(executionFromStatus(e)).toEqual({ execution: 'not_executed', confirmWithTransaction: false });
    }
    expect(executionFromStatus({ InsufficientFundsForRent: { account_index: 0 } })).toEqual({ execution: 'failed', confirmWithTransaction: true });
    expect(executionFromStatus('ProgramAccountNotFound')).toEqual({ execution: 'failed', confirmWithTransaction: true });
  });

  it('getTransaction meta: fee 0 with an error is not executed; a charged fee is executed (failed when err is set)', () => {
    expect(executionFromMeta(NOOP_RENT.tx.meta)).toBe('not_executed');
    expect(executionFromMeta(EXECUTED_RENT.tx.meta)).toBe('failed');
    expect(executionFromMeta(OK.tx.meta)).toBe('executed');
    expect(executionFromMeta(null)).toBeNull();
    expect(executionFromMeta({ err: null } as never)).toBeNull();
  });
});

describe('receipts tell included from executed (LandingTracker on Agave-shaped answers)', () => {
  it('executed, failed in execution, and two SIMD-0290 no-ops: status, landed.err and landed.execution differ', async () => {
    const { table, seqs, upstream, tracker, metricsText } = setup([OK, FAILED_IN_EXECUTION, NOOP_UNFUNDED, NOOP_NO_PAYER]);
    await tracker.poll();
    const [ok, failed, unfunded, noPayer] = seqs.map((s) => table.toJson(s));
    expect(ok).toMatchObject({ status: 'landed', landed: { slot: 100, err: null, execution: 'executed', executionSource: 'status' } });
    expect(failed).toMatchObject({ status: 'landed_failed', landed: { err: { InstructionError: [0, { Custom: 1 }] }, execution: 'failed', executionSource: 'status' } });
    expect(unfunded).toMatchObject({ status: 'landed_failed', landed: { slot: 102, err: 'InsufficientFundsForFee', execution: 'not_executed', executionSource: 'status' } });
    expect(noPayer).toMatchObject({ landed: { err: 'AccountNotFound', execution: 'not_executed' } });
    // None of these needed getTransaction.
    expect(upstream.calls.map((c) => c.method)).toEqual(['getSignatureStatuses']);
    const text = metricsText();
    expect(text).toMatch(/^slotrelay_receipts_landed_failed_total 1$/m);
    expect(text).toMatch(/^slotrelay_receipts_not_executed_total 2$/m);
  });

  it('InsufficientFundsForRent of the fee payer: getTransaction settles it by the fee (0: not executed; charged: failed)', async () => {
    const { table, seqs, upstream, tracker, metricsText } = setup([NOOP_RENT, EXECUTED_RENT]);
    upstream.historyReady = false;
    await tracker.poll();
    // The status alone says failed, and says where that came from.
    expect(table.toJson(seqs[0]).landed).toMatchObject({ execution: 'failed', executionSource: 'status' });
    const lookups = upstream.calls.filter((c) => c.method === 'getTransaction');
    expect(lookups.length).toBe(2);
    expect(lookups[0].params[1]).toEqual({ encoding: 'base64', commitment: 'confirmed', maxSupportedTransactionVersion: 1 });
    // Not in the node's history yet (null): asked again on the next poll, the statuses are not.
    upstream.historyReady = true;
    await tracker.poll();
    expect(upstream.calls.filter((c) => c.method === 'getSignatureStatuses').length).toBe(1);
    expect(table.toJson(seqs[0])).toMatchObject({ status: 'landed_failed', landed: { execution: 'not_executed', executionSource: 'transaction' } });
    expect(table.toJson(seqs[1])).toMatchObject({ status: 'landed_failed', landed: { execution: 'failed', executionSource: 'transaction' } });
    const text = metricsText();
    expect(text).toMatch(/^slotrelay_receipts_landed_failed_total 1$/m);
    expect(text).toMatch(/^slotrelay_receipts_not_executed_total 1$/m);
    // Settled: nothing more is asked.
    const before = upstream.calls.length;
    await tracker.poll();
    expect(upstream.calls.length).toBe(before);
  });

  it('an error the status cannot settle is asked only once the status is confirmed (getTransaction serves nothing below)', async () => {
    const processed = { status: status(106, { InsufficientFundsForRent: { account_index: 0 } }, 'processed'), tx: NOOP_RENT.tx };
    const { upstream, tracker } = setup([processed]);
    await tracker.poll();
    expect(upstream.calls.map((c) => c.method)).toEqual(['getSignatureStatuses']);
  });
});
