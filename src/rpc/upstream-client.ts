// A minimal JSON-RPC client for the configured upstream (front thread for preflight; cold relative to the
// skip-preflight hot path). Uses Node's fetch (undici) whose global dispatcher keeps connections alive.
export class UpstreamError extends Error {
  constructor(
    message: string,
    /** The upstream's JSON-RPC error, when it answered one (transport failures leave it undefined). */
    readonly rpcError?: JsonRpcErrorObject,
  ) {
    super(message);
  }
}

export interface JsonRpcErrorObject {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

export class UpstreamRpcClient {
  private nextId = 1;
  constructor(
    readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  /** Call one method; resolves with `result`, rejects UpstreamError on transport failure or an error response. */
  async call<T>(method: string, params: readonly unknown[]): Promise<T> {
    let res: Response;
    try {
      res = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method, params }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new UpstreamError(`upstream ${method} failed: ${(err as Error).message}`);
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new UpstreamError(`upstream ${method} answered HTTP ${res.status}`);
    }
    let body: { result?: T; error?: JsonRpcErrorObject };
    try {
      body = (await res.json()) as { result?: T; error?: JsonRpcErrorObject };
    } catch (err) {
      throw new UpstreamError(`upstream ${method} sent invalid JSON: ${(err as Error).message}`);
    }
    if (body.error) throw new UpstreamError(`upstream ${method} error ${body.error.code}: ${body.error.message}`, body.error);
    return body.result as T;
  }
}
