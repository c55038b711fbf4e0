// One transaction's draw on its key's submit budget: the first step of accepting it, wherever that happens (HOT). The
// front's paths draw through the key's TokenBucket (src/admission/rate-limit.ts: private tokens, a cluster budget, or
// the key's slot in the budget buffer); the quic-egress thread's local admission draws from that same slot of the budget
// buffer directly (src/shm/budget-layout.ts: the bucket's arithmetic under the slot's lock), so HTTP and QUIC spend
// one budget. A JSON-RPC body is charged as a whole (src/front/json-rpc-endpoint.ts: a batch, a bundle's transactions).
import { Errors, Failure } from '../errors/registry.js';
import type { BudgetTable } from '../shm/budget-layout.js';
import type { KeyEntry } from './key-table.js';
import type { KeyUsage } from './key-usage.js';

/** Tokens one transaction costs of its key's submit budget. */
export const TOKENS_PER_TRANSACTION = 1;

/**
 * Front thread: one transaction's token from the key's submit bucket. 0 = taken; else the milliseconds until it
 * would be (nothing taken), counted as rate limited in the key's usage.
 */
export function takeSubmitToken(key: KeyEntry, nowMs: number, usage: KeyUsage | null | undefined): number {
  const waitMs = key.submitBucket.take(TOKENS_PER_TRANSACTION, nowMs);
  if (waitMs !== 0) usage?.rateLimited(key.id);
  return waitMs;
}

/** The refusal of a spent budget, as every path answers it (docs/errors.md): data {reason, retryAfterMs}. */
export function rateLimitedRefusal(waitMs: number): Failure {
  return new Failure(Errors.RATE_LIMITED, Errors.RATE_LIMITED.message, { reason: Errors.RATE_LIMITED.reason, retryAfterMs: waitMs });
}

/**
 * QUIC thread: one transaction's token from key `keyId`'s slot of the budget buffer. The slot it came from, or -1
 * (the key has no slot there, or its budget is spent: the front then decides, and answers, as for any stream).
 */
export function takeSharedSubmitToken(budgets: BudgetTable, keyId: number, nowMs: number): number {
  const slot = budgets.bucketOf(keyId);
  return slot >= 0 && budgets.take(slot, TOKENS_PER_TRANSACTION, nowMs) === 0 ? slot : -1;
}

/** QUIC thread: gives back the token takeSharedSubmitToken took from `slot` (a later check refused the transaction). */
export function refundSharedSubmitToken(budgets: BudgetTable, slot: number): void {
  budgets.refund(slot, TOKENS_PER_TRANSACTION);
}
