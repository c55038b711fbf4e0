// JSON-RPC response serialisation (front thread, hot). Results arrive already serialised as JSON text so a handler
// can answer from a precomputed string; the envelope is concatenated around it in Agave's member order
// {"jsonrpc":"2.0","result":...,"id":...}. `data` is omitted when absent, never sent as null (web3.js reads
// error.data.logs and crashes on null).
import type { JsonRpcId } from './envelope.js';

export function idText(id: JsonRpcId): string {
  // Numbers and null stringify without allocation-heavy escaping; strings need JSON escaping.
  return typeof id === 'string' ? JSON.stringify(id) : String(id);
}

export function resultJson(id: JsonRpcId, result: string): string {
  return '{"jsonrpc":"2.0","result":' + result + ',"id":' + idText(id) + '}';
}

export function errorJson(id: JsonRpcId, code: number, message: string, data?: unknown): string {
  return errorJsonHead(code, message, data) + idText(id) + '}';
}

/**
 * An error answer up to its id, `{"jsonrpc":"2.0","error":{...},"id":` (errorJson = head + id + '}'): a refusal that
 * is the same for every request can serialise its message and data once (src/jsonrpc/dispatch.ts).
 */
export function errorJsonHead(code: number, message: string, data?: unknown): string {
  // null is omitted like undefined: an upstream's `data: null` passed through must not reach web3.js (see above).
  const dataPart = data === undefined || data === null ? '' : ',"data":' + JSON.stringify(data);
  return '{"jsonrpc":"2.0","error":{"code":' + code + ',"message":' + JSON.stringify(message) + dataPart + '},"id":';
}

/** errorJson from a head made by errorJsonHead. */
export function errorJsonWithHead(head: string, id: JsonRpcId): string {
  return head + idText(id) + '}';
}

/** Join batch element responses; null when every element was a notification (no body at all). */
export function batchJson(parts: readonly string[]): string | null {
  return parts.length === 0 ? null : '[' + parts.join(',') + ']';
}
