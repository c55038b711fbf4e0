// The relay client library (HTTP path). Takes the relay base URL or the full submit URL and a key, and sends a
// base64 transaction with a route set (or the server default). Sends both `Authorization: Bearer` and `x-api-key`,
// as the spec's client library does. Errors from the relay are raised as RelaySubmitError with the relay's
// {code, reason, message} and the HTTP status.
import type { RouteName } from '../config/schema.js';

export interface SubmitResult {
  readonly accepted: boolean;
  readonly signature: string;
  /** Routes the relay will use (the request's set intersected with the key's policy). */
  readonly routes?: readonly RouteName[];
}

export interface RelayClientOptions {
  /** `http://host:port` (relay base) or `http://host:port/v1/submit`. */
  readonly url: string;
  readonly apiKey: string;
  readonly timeoutMs?: number;
}

export class RelaySubmitError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export class RelayClient {
  private readonly submitUrl: string;
  private readonly headers: Record<string, string>;

  constructor(private readonly opts: RelayClientOptions) {
    const u = new URL(opts.url);
    if (!u.pathname.endsWith('/v1/submit')) u.pathname = u.pathname.replace(/\/+$/, '') + '/v1/submit';
    this.submitUrl = u.toString();
    this.headers = {
      'content-type': 'application/json',
      authorization: `Bearer ${opts.apiKey}`,
      'x-api-key': opts.apiKey,
    };
  }

  /** Submit a base64 transaction. `routes` omitted or "default" lets the server choose. */
  async submit(transactionBase64: string, routes: readonly RouteName[] | 'default' = 'default', maxRetries?: number): Promise<SubmitResult> {
    const res = await fetch(this.submitUrl, {
      method: 'POST',
      headers: this.headers,
      body: JSON.stringify({ transaction: transactionBase64, routes, ...(maxRetries === undefined ? {} : { maxRetries }) }),
      signal: AbortSignal.timeout(this.opts.timeoutMs ?? 10_000),
    });
    const body = (await res.json()) as SubmitResult & { error?: { code: number; reason: string; message: string } };
    if (res.status !== 200 || !body.accepted) {
      const e = body.error ?? { code: 0, reason: 'unknown', message: `HTTP ${res.status}` };
      const ra = res.headers.get('retry-after');
      throw new RelaySubmitError(res.status, e.code, e.reason, e.message, ra === null ? undefined : Number(ra));
    }
    return body;
  }
}
