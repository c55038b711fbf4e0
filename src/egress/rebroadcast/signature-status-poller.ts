// Signature and blockhash status lookups for the retry scheduler (egress worker, cold: one batch per
// retries.statusPollMs while the retry queue is not empty). getSignatureStatuses takes at most 256 signatures per
// call (Agave MAX_GET_SIGNATURE_STATUSES_QUERY_ITEMS), so larger sets are split into sequential calls; blockhashes
// are few (most queued transactions share the last few) and are checked with isBlockhashValid one by one.
// Upstream failures never throw out of here: an unanswered signature is "unknown" and an unanswered blockhash null,
// and the scheduler falls back to retries and retries.blockhashTtlMs. The upstream URL may carry a provider key:
// it is never logged (UpstreamRpcClient messages name the method only).
import { UpstreamRpcClient } from '../../rpc/upstream-client.js';

/** Agave's limit on getSignatureStatuses params[0]. */
export const MAX_SIGNATURES_PER_CALL = 256;
/** Timeout of one status call (the next poll tick asks again anyway). */
const STATUS_CALL_TIMEOUT_MS = 5_000;

/** What the scheduler needs from a signature's status. */
export const SIGNATURE_STATE = Object.freeze({ unknown: 0, processed: 1, landed: 2 } as const);
export type SignatureState = (typeof SIGNATURE_STATE)[keyof typeof SIGNATURE_STATE];

export interface StatusRpc {
  call<T>(method: string, params: readonly unknown[]): Promise<T>;
}

interface SignatureStatus {
  confirmationStatus?: 'processed' | 'confirmed' | 'finalized' | null;
  confirmations?: number | null;
  err?: unknown;
}

export interface StatusBatchResult {
  /** One state per signature, in order. */
  readonly states: SignatureState[];
  /** Transaction error of landed signatures (null = executed without error), same order; undefined otherwise. */
  readonly errors: unknown[];
  /** Calls that failed (their signatures are `unknown`). */
  readonly failedCalls: number;
  readonly calls: number;
  /** Last failure message (for one log line per poll, not per signature). */
  readonly lastError: string | null;
}

export class SignatureStatusPoller {
  private readonly rpc: StatusRpc;
  constructor(rpcOrUrl: StatusRpc | string) {
    this.rpc = typeof rpcOrUrl === 'string' ? new UpstreamRpcClient(rpcOrUrl, STATUS_CALL_TIMEOUT_MS) : rpcOrUrl;
  }

  /** Statuses of `signatures` (any number; split into calls of <= 256). Confirmed or finalized = landed. */
  async statuses(signatures: readonly string[]): Promise<StatusBatchResult> {
    const states: SignatureState[] = new Array(signatures.length).fill(SIGNATURE_STATE.unknown);
    const errors: unknown[] = new Array(signatures.length).fill(undefined);
    let failedCalls = 0;
    let calls = 0;
    let lastError: string | null = null;
    for (let start = 0; start < signatures.length; start += MAX_SIGNATURES_PER_CALL) {
      const batch = signatures.slice(start, start + MAX_SIGNATURES_PER_CALL);
      calls++;
      let value: (SignatureStatus | null)[];
      try {
        // searchTransactionHistory false: only the status cache (recent slots), which is where a retried
        // transaction lands; the ledger search is slow and never needed for transactions younger than ~90 s.
        const r = await this.rpc.call<{ value: (SignatureStatus | null)[] }>('getSignatureStatuses', [batch, { searchTransactionHistory: false }]);
        value = Array.isArray(r?.value) ? r.value : [];
      } catch (err) {
        failedCalls++;
        lastError = err instanceof Error ? err.message : String(err);
        continue;
      }
      for (let i = 0; i < batch.length; i++) {
        const s = value[i];
        if (s === null || s === undefined) continue;
        const c = s.confirmationStatus;
        // Old nodes without confirmationStatus: confirmations null means rooted (finalized).
        const landed = c === 'confirmed' || c === 'finalized' || (c === undefined && (s.confirmations === null || (s.confirmations ?? 0) > 0));
        states[start + i] = landed ? SIGNATURE_STATE.landed : SIGNATURE_STATE.processed;
        if (landed) errors[start + i] = s.err ?? null;
      }
    }
    return { states, errors, failedCalls, calls, lastError };
  }

  /** true/false from isBlockhashValid; null when the upstream did not answer it (method missing, error, timeout). */
  async blockhashValid(blockhash: string): Promise<boolean | null> {
    try {
      const r = await this.rpc.call<{ value: unknown }>('isBlockhashValid', [blockhash, { commitment: 'processed' }]);
      return typeof r?.value === 'boolean' ? r.value : null;
    } catch {
      return null;
    }
  }
}
