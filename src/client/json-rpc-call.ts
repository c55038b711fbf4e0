// One JSON-RPC call to the JSON-RPC host (caller's thread, cold: leader slots, fees, getSlot). The host is a different
// listener from the relay host (spec 1: {base_url} vs {relay_url}); the key goes in the same two headers. An error
// answer becomes an RpcError with the relay's code, message, data, HTTP status, retryAfterMs and x-request-id;
// `reason` is data.reason when the relay gave one (every -32005 does, docs/errors.md), else read from the status or
// the standard codes.
import { RpcError } from './errors.js';
import { isNoAnswer, post, requestIdOf, retryAfterMsOf, type PostTarget } from './http-post.js';

const STANDARD_REASONS: ReadonlyMap<number, string> = new Map([
  [-32700, 'parse_error'],
  [-32600, 'invalid_request'],
  [-32601, 'method_not_found'],
  [-32602, 'invalid_params'],
  [-32603, 'internal_error'],
]);

const STATUS_REASONS: ReadonlyMap<number, string> = new Map([
  [401, 'unauthorized'],
  [413, 'body_too_large'],
  [415, 'unsupported_media_type'],
  [429, 'rate_limited'],
]);

export interface RpcTarget extends PostTarget {
  readonly rpcUrl: URL;
}

interface RpcErrorObject {
  code?: unknown;
  message?: unknown;
  data?: unknown;
}

function reasonOf(status: number, code: number | undefined, data: unknown): string {
  const fromData = (data as { reason?: unknown } | null | undefined)?.reason;
  if (typeof fromData === 'string') return fromData;
  return STATUS_REASONS.get(status) ?? (code === undefined ? undefined : STANDARD_REASONS.get(code)) ?? 'rpc_error';
}

let nextId = 1;

/** Calls `method` with `params`; resolves with `result` as parsed JSON, rejects with an RpcError. */
export async function rpcCall(target: RpcTarget, method: string, params: readonly unknown[], signal?: AbortSignal): Promise<unknown> {
  const id = nextId++;
  const a = await post(target, target.rpcUrl, JSON.stringify({ jsonrpc: '2.0', id, method, params }), undefined, signal, method);
  if (isNoAnswer(a)) throw new RpcError({ reason: a.reason, message: a.message, cause: a.cause });
  let doc: { result?: unknown; error?: RpcErrorObject } | undefined;
  try {
    doc = JSON.parse(a.text) as typeof doc;
  } catch {
    doc = undefined;
  }
  const requestId = requestIdOf(a.headers);
  if (doc !== undefined && doc !== null && typeof doc === 'object' && 'result' in doc && a.status === 200) return doc.result;
  const e = doc?.error;
  if (e === undefined || e === null || typeof e !== 'object') {
    throw new RpcError({
      reason: STATUS_REASONS.get(a.status) ?? 'bad_answer',
      message: `${method}: HTTP ${a.status} with an answer that is not JSON-RPC`,
      status: a.status,
      data: a.text.slice(0, 200),
      retryAfterMs: retryAfterMsOf(undefined, a.headers),
      requestId,
    });
  }
  const code = typeof e.code === 'number' ? e.code : undefined;
  throw new RpcError({
    reason: reasonOf(a.status, code, e.data),
    message: typeof e.message === 'string' ? e.message : `${method} failed`,
    code,
    status: a.status,
    data: e.data,
    retryAfterMs: retryAfterMsOf(e.data, a.headers),
    requestId,
  });
}
