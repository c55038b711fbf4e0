// Signature and blockhash status lookups for the retry scheduler (egress consumer thread, cold: one batch per
// retries.statusPollMs while the retry queue is not empty). getSignatureStatuses takes at most 256 signatures per
// call (Agave MAX_GET_SIGNATURE_STATUSES_QUERY_ITEMS), so larger sets are split into sequential calls: up to 40 for a
// full retry queue (retries.maxQueue 10,000), which run in a status thread of this consumer thread's own
// (src/rpc/status/, issue #28 item 2: not on the thread that sends the transactions), or here while it is down;
// blockhashes are few (most queued transactions share the last few) and are checked with isBlockhashValid one by one,
// here.
// Upstream failures never throw out of here: an unanswered signature is "unknown" and an unanswered blockhash null,
// and the scheduler falls back to retries and retries.blockhashTtlMs. The upstream URL may carry a provider key:
// it is never logged (UpstreamRpcClient messages name the method only).
import type { Logger } from '../../log/logger.js';
import { callsFor, MAX_SIGNATURES_PER_CALL, upstreamStatusAsker, type SignatureStatusAsker } from '../../rpc/status/signature-statuses.js';
import { StatusThread } from '../../rpc/status/status-thread.js';
import { UpstreamRpcClient } from '../../rpc/upstream-client.js';

export { MAX_SIGNATURES_PER_CALL };
/** Timeout of one status call (the next poll tick asks again anyway). */
const STATUS_CALL_TIMEOUT_MS = 5_000;

/** What the scheduler needs from a signature's status. */
export const SIGNATURE_STATE = Object.freeze({ unknown: 0, processed: 1, landed: 2 } as const);
export type SignatureState = (typeof SIGNATURE_STATE)[keyof typeof SIGNATURE_STATE];

export interface StatusRpc {
  call<T>(method: string, params: readonly unknown[]): Promise<T>;
}

export interface StatusBatchResult {
  /** One state per signature, in order. */
  readonly states: SignatureState[];
  /** Transaction error of landed signatures (null = executed without error), same order; undefined otherwise. */
  readonly errors: unknown[];
  /** Calls that failed (their signatures are `unknown`): a failed call ends the poll, the rest is asked next poll. */
  readonly failedCalls: number;
  readonly calls: number;
  /** Last failure message (for one log line per poll, not per signature). */
  readonly lastError: string | null;
}

export class SignatureStatusPoller {
  private readonly rpc: StatusRpc;
  private readonly asker: SignatureStatusAsker;
  /** The status thread the getSignatureStatuses calls run in (null: they run here). */
  private readonly thread: StatusThread | null = null;
  private threadStarted = false;

  /**
   * A URL: the upstream, with the calls in a status thread when `log` is given (the consumer threads), else here.
   * A StatusRpc (tests): called here.
   */
  constructor(rpcOrUrl: StatusRpc | string, log?: Logger) {
    this.rpc = typeof rpcOrUrl === 'string' ? new UpstreamRpcClient(rpcOrUrl, STATUS_CALL_TIMEOUT_MS) : rpcOrUrl;
    const here = upstreamStatusAsker(this.rpc, STATUS_CALL_TIMEOUT_MS);
    if (typeof rpcOrUrl === 'string' && log !== undefined) {
      this.thread = new StatusThread({ role: 'retry-status', url: rpcOrUrl, timeoutMs: STATUS_CALL_TIMEOUT_MS, log, fallback: here });
    }
    this.asker = this.thread ?? here;
  }

  /** Statuses of `signatures` (any number; split into calls of <= 256). Confirmed or finalized = landed. */
  async statuses(signatures: readonly string[]): Promise<StatusBatchResult> {
    const states: SignatureState[] = new Array(signatures.length).fill(SIGNATURE_STATE.unknown);
    const errors: unknown[] = new Array(signatures.length).fill(undefined);
    if (this.thread !== null && !this.threadStarted) {
      this.threadStarted = true; // at the first poll: a consumer whose queue stays empty never starts one
      this.thread.start();
    }
    const { values, failure } = await this.asker.ask(signatures);
    for (let i = 0; i < values.length && i < signatures.length; i++) {
      const s = values[i];
      if (s === null) continue;
      const c = s.confirmationStatus;
      // Old nodes without confirmationStatus: confirmations null means rooted (finalized).
      const landed = c === 'confirmed' || c === 'finalized' || (c === undefined && (s.confirmations === null || (s.confirmations ?? 0) > 0));
      states[i] = landed ? SIGNATURE_STATE.landed : SIGNATURE_STATE.processed;
      if (landed) errors[i] = s.err ?? null;
    }
    const calls = failure === null ? callsFor(signatures.length) : callsFor(values.length) + 1;
    return { states, errors, failedCalls: failure === null ? 0 : 1, calls, lastError: failure };
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

  /** Stops the status thread (the scheduler's close). */
  close(): void {
    void this.thread?.stop();
  }
}
