// One JSON-RPC call for the doctor's upstream checks (cold, CLI only): the result, the round trip and the answer's
// HTTP Date header (the clock check's fallback). Errors carry a one-line reason (refused, timed out, HTTP status,
// JSON-RPC error), never the URL's query string (an RPC provider's API key often sits there).
import { urlForLog } from '../log/url-for-log.js';

export interface RpcAnswer<T> {
  readonly result: T;
  readonly ms: number;
  /** The HTTP Date header, when the server sent one. */
  readonly date?: string;
}

export class RpcCallError extends Error {}

function reason(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'no answer (timed out)';
  const code = e.cause?.code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host name does not resolve';
  return e.cause?.message ?? e.message ?? String(err);
}

export async function rpcCall<T>(url: string, method: string, params: unknown[], timeoutMs: number): Promise<RpcAnswer<T>> {
  const t0 = performance.now();
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    throw new RpcCallError(`${method} to ${urlForLog(url)}: ${reason(err)}`);
  }
  let body: { result?: T; error?: { code: number; message: string } };
  try {
    body = (await res.json()) as typeof body;
  } catch {
    throw new RpcCallError(`${method} to ${urlForLog(url)}: HTTP ${res.status}, not a JSON-RPC answer`);
  }
  const ms = performance.now() - t0;
  if (body.error !== undefined) throw new RpcCallError(`${method} to ${urlForLog(url)}: error ${body.error.code} ${body.error.message}`);
  if (res.status !== 200) throw new RpcCallError(`${method} to ${urlForLog(url)}: HTTP ${res.status}`);
  const date = res.headers.get('date') ?? undefined;
  return { result: body.result as T, ms, ...(date !== undefined ? { date } : {}) };
}
