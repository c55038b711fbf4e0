// Taking a passthrough answer apart (front thread, per passthrough call). When the upstream's body has Agave's exact
// shape `{"jsonrpc":"2.0","result":<R>,"id":<ourId>}` (trailing whitespace allowed: jsonrpc-http-server ends bodies
// with a newline), <R> is sliced out as text and handed back byte for byte, without parsing it: a getMultipleAccounts
// answer of megabytes costs a prefix and a suffix compare. Any other shape is parsed and, when it is a JSON-RPC
// answer to our id, its result re-serialised (or its error thrown as the upstream's own error); anything else is not
// a JSON-RPC answer (upstream_unavailable). docs/passthrough.md.
import { UpstreamError, type JsonRpcErrorObject } from '../upstream-client.js';

const PREFIX = '{"jsonrpc":"2.0","result":';

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * The result of `body` (the upstream's answer to the request with id `id`) as JSON text. Throws UpstreamError: kind
 * rpc_error with the upstream's error, or bad_answer.
 */
export function resultText(body: string, id: number): string {
  if (body.startsWith(PREFIX)) {
    const suffix = ',"id":' + id + '}';
    let end = body.length;
    while (end > 0 && isSpace(body.charCodeAt(end - 1))) end--;
    const start = end - suffix.length;
    if (start > PREFIX.length && body.startsWith(suffix, start)) return body.slice(PREFIX.length, start);
  }
  return parsedResultText(body, id);
}

/** The slow path: another member order, other whitespace, an error, or something that is no answer at all. */
function parsedResultText(body: string, id: number): string {
  let v: unknown;
  try {
    v = JSON.parse(body);
  } catch {
    throw new UpstreamError('upstream passthrough answer is not JSON', undefined, 'bad_answer');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw new UpstreamError('upstream passthrough answer is not a JSON-RPC object', undefined, 'bad_answer');
  }
  const o = v as { id?: unknown; result?: unknown; error?: unknown };
  const err = o.error;
  if (err !== undefined && err !== null && typeof err === 'object' && !Array.isArray(err)) {
    throw new UpstreamError('upstream passthrough call answered an error', err as JsonRpcErrorObject);
  }
  if (o.id !== id) throw new UpstreamError('upstream passthrough answer carries another id', undefined, 'bad_answer');
  if (!('result' in o)) throw new UpstreamError('upstream passthrough answer has neither result nor error', undefined, 'bad_answer');
  return JSON.stringify(o.result);
}
