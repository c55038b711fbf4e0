// getSignatureStatuses for whoever follows transactions (cold: once per poll): the receipts' landing tracker (front)
// and the rebroadcast scheduler (each egress consumer thread: egress workers, QUIC thread). The caller hands over the
// signatures of one poll (any number) and gets their statuses back in the same order; it does not care where the
// calls ran. Two askers: this module's, which calls from the thread it lives in, and a status thread's
// (status-thread.ts), which keeps the requests' JSON, undici and the answers' parse off the thread that carries
// transactions and crosses threads once per poll, not once per call.
import type { UpstreamRpcClient } from '../upstream-client.js';

/** Agave's limit on getSignatureStatuses (MAX_GET_SIGNATURE_STATUSES_QUERY_ITEMS). */
export const MAX_SIGNATURES_PER_CALL = 256;

/** One entry of getSignatureStatuses' value (Agave's TransactionStatus, the fields the callers read). */
export interface SignatureStatus {
  readonly slot?: number;
  readonly err?: unknown;
  readonly confirmationStatus?: string | null;
  /** Old nodes without confirmationStatus: null means rooted. */
  readonly confirmations?: number | null;
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

/** Where a poll's calls ran: counted on /metrics. */
export type AskedBy = 'status_thread' | 'caller';

/** What the asker calls: the upstream client, or a test's scripted one. */
export type StatusCaller = Pick<UpstreamRpcClient, 'call'>;

/** Calls one poll of `n` signatures makes. */
export function callsFor(n: number): number {
  return Math.ceil(n / MAX_SIGNATURES_PER_CALL);
}

/** Asks from the calling thread (a status thread's own; its caller's while that thread is off or down). */
export function upstreamStatusAsker(upstream: StatusCaller, timeoutMs: number): SignatureStatusAsker {
  return {
    async ask(signatures) {
      const values: (SignatureStatus | null)[] = [];
      for (let i = 0; i < signatures.length; i += MAX_SIGNATURES_PER_CALL) {
        const chunk = signatures.slice(i, i + MAX_SIGNATURES_PER_CALL);
        let result: unknown;
        try {
          // searchTransactionHistory false: only the status cache (recent slots), where a followed transaction lands;
          // the ledger search is slow and never needed for transactions younger than ~90 s.
          result = await upstream.call('getSignatureStatuses', [chunk, { searchTransactionHistory: false }], timeoutMs);
        } catch (err) {
          return { values, failure: err instanceof Error ? err.message : String(err) };
        }
        // Whatever the upstream sent: a value that is not an array, or a short one, knows nothing of the rest.
        const value = (result as { value?: unknown } | null)?.value;
        const got = Array.isArray(value) ? (value as unknown[]) : [];
        for (let k = 0; k < chunk.length; k++) {
          const s = got[k];
          values.push(s !== null && typeof s === 'object' ? (s as SignatureStatus) : null);
        }
      }
      return { values, failure: null };
    },
  };
}
