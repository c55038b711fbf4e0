// A JSON-RPC client for the configured upstream (front thread; async, never on the skip-preflight hot path): preflight,
// simulateTransaction, fee fetches. Uses Node's fetch (undici) whose global dispatcher keeps connections alive.
// Failures carry a `kind` so callers answer the client with the matching registry error (upstreamFailure below).
import { Errors, RelayError, UpstreamRpcError } from '../errors/registry.js';

/** Why an upstream call failed: no answer in time, no connection, a non-200 status, a body that is not JSON-RPC, or the upstream's own JSON-RPC error. */
export type UpstreamFailureKind = 'timeout' | 'unreachable' | 'bad_status' | 'bad_answer' | 'rpc_error';

export class UpstreamError extends Error {
  constructor(
    message: string,
    /** The upstream's JSON-RPC error, when it answered one (transport failures leave it undefined). */
    readonly rpcError?: JsonRpcErrorObject,
    readonly kind: UpstreamFailureKind = rpcError === undefined ? 'unreachable' : 'rpc_error',
  ) {
    super(message);
  }
}

export interface JsonRpcErrorObject {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

function isTimeout(err: unknown): boolean {
  const name = (err as { name?: unknown } | null)?.name;
  return name === 'TimeoutError' || name === 'AbortError';
}

export class UpstreamRpcClient {
  private nextId = 1;
  constructor(
    readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  /**
   * Call one method; resolves with `result`, rejects UpstreamError on transport failure or an error response.
   * `timeoutMs` overrides the client's default for this call.
   */
  async call<T>(method: string, params: readonly unknown[], timeoutMs: number = this.timeoutMs): Promise<T> {
    let res: Response;
    try {
      res = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method, params }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new UpstreamError(`upstream ${method} failed: ${(err as Error).message}`, undefined, isTimeout(err) ? 'timeout' : 'unreachable');
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new UpstreamError(`upstream ${method} answered HTTP ${res.status}`, undefined, 'bad_status');
    }
    let body: { result?: T; error?: JsonRpcErrorObject };
    try {
      body = (await res.json()) as { result?: T; error?: JsonRpcErrorObject };
    } catch (err) {
      throw new UpstreamError(`upstream ${method} sent invalid JSON: ${(err as Error).message}`, undefined, isTimeout(err) ? 'timeout' : 'bad_answer');
    }
    if (body === null || typeof body !== 'object') throw new UpstreamError(`upstream ${method} sent no JSON-RPC object`, undefined, 'bad_answer');
    if (body.error) throw new UpstreamError(`upstream ${method} error ${body.error.code}: ${body.error.message}`, body.error);
    if (!('result' in body)) throw new UpstreamError(`upstream ${method} sent neither result nor error`, undefined, 'bad_answer');
    return body.result as T;
  }
}

/**
 * What the client is answered for a failed upstream call made on its behalf: the upstream's own JSON-RPC error as it
 * was (UpstreamRpcError), -32005 upstream_timeout, or -32005 upstream_unavailable (no connection, a non-200 status, an
 * answer that is not JSON-RPC). Never the upstream's URL or the transport's message: either may carry a provider key.
 */
export function upstreamFailure(err: unknown): Error {
  if (err instanceof UpstreamError) {
    if (err.kind === 'rpc_error' && err.rpcError !== undefined) {
      const e = err.rpcError;
      return new UpstreamRpcError(typeof e.code === 'number' ? e.code : Errors.INTERNAL_ERROR.rpcCode, typeof e.message === 'string' ? e.message : Errors.INTERNAL_ERROR.message, e.data ?? undefined);
    }
    if (err.kind === 'timeout') return new RelayError(Errors.UPSTREAM_TIMEOUT);
  }
  return new RelayError(Errors.UPSTREAM_UNAVAILABLE);
}
