// Who asks the upstream for signature statuses on the landing tracker's behalf (cold: once per receipts.pollMs). The
// tracker hands over the signatures of one poll (up to 2,048) and gets their statuses back in the same order; it does
// not care where the calls ran. Two askers: this module's, which calls from the thread it lives in, and the status
// thread's (status-thread.ts), which keeps the requests' JSON, undici and the answers' parse off the front and
// crosses threads once per poll, not once per call.
import type { UpstreamRpcClient } from '../rpc/upstream-client.js';

/** Agave's limit on getSignatureStatuses (MAX_GET_SIGNATURE_STATUSES_QUERY_ITEMS). */
export const MAX_SIGNATURES_PER_CALL = 256;

/** One entry of getSignatureStatuses' value (Agave's TransactionStatus, the fields the tracker reads). */
export interface SignatureStatus {
  readonly slot: number;
  readonly err: unknown;
  readonly confirmationStatus?: string | null;
}

/**
 * The statuses of the first `values.length` signatures asked (null: the upstream knows none), in order. The calls run
 * one after the other and stop at the first that fails: then `failure` says why (the upstream client's message, which
 * never holds its URL) and the signatures after `values` were not asked.
 */
export interface StatusAnswers {
  readonly values: readonly (SignatureStatus | null)[];
  readonly failure: string | null;
}

export interface SignatureStatusAsker {
  /** getSignatureStatuses (searchTransactionHistory false) of `signatures`, MAX_SIGNATURES_PER_CALL per call. */
  ask(signatures: readonly string[]): Promise<StatusAnswers>;
}

/** Where a poll's calls ran: counted on /metrics (slotrelay_receipts_status_polls_total). */
export type AskedBy = 'status_thread' | 'front';

/** Calls one poll of `n` signatures makes. */
export function callsFor(n: number): number {
  return Math.ceil(n / MAX_SIGNATURES_PER_CALL);
}

/** Asks from the calling thread (the status thread's own; the front's when that thread is off or down). */
export function upstreamStatusAsker(upstream: UpstreamRpcClient, timeoutMs: number): SignatureStatusAsker {
  return {
    async ask(signatures) {
      const values: (SignatureStatus | null)[] = [];
      for (let i = 0; i < signatures.length; i += MAX_SIGNATURES_PER_CALL) {
        const chunk = signatures.slice(i, i + MAX_SIGNATURES_PER_CALL);
        let result: unknown;
        try {
          result = await upstream.call('getSignatureStatuses', [chunk, { searchTransactionHistory: false }], timeoutMs);
        } catch (err) {
          return { values, failure: err instanceof Error ? err.message : String(err) };
        }
        // Whatever the upstream sent: a value that is not an array, or a short one, knows nothing of the rest.
        const value = (result as { value?: unknown } | null)?.value;
        const got = Array.isArray(value) ? (value as unknown[]) : [];
        for (let k = 0; k < chunk.length; k++) values.push(asStatus(got[k]));
      }
      return { values, failure: null };
    },
  };
}

/** A status the tracker can read (an object with a numeric slot), else null. */
function asStatus(x: unknown): SignatureStatus | null {
  return x !== null && typeof x === 'object' && typeof (x as { slot?: unknown }).slot === 'number' ? (x as SignatureStatus) : null;
}
