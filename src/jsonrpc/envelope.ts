// JSON-RPC 2.0 envelope parsing with Agave's (paritytech jsonrpc) rules. Front thread, hot: runs once per request.
// - `id` is echoed with its type; a request without an `id` member is a notification (no reply).
// - A batch is answered in request order; `[]` -> one -32600; non-object elements -> -32600 each.
// - `jsonrpc` must be exactly "2.0": another value -> "Invalid request"; absent/null -> "Unsupported JSON-RPC protocol
//   version" (unanswered without an id), as jsonrpc-core.
// - An id that is not a string, a finite number or null (e.g. 1e400, which parses to Infinity) -> -32600, id null.
import { Errors, type ErrorSpec } from '../errors/registry.js';

export type JsonRpcId = string | number | null;

/** One well-formed call. `params` is whatever the client sent (validated by the method). */
export interface JsonRpcCall {
  readonly id: JsonRpcId;
  readonly notification: boolean;
  readonly method: string;
  readonly params: unknown;
}

/** An element that is not a valid call: answered with `error` (unless it was a notification). */
export interface JsonRpcInvalid {
  readonly id: JsonRpcId;
  readonly notification: boolean;
  readonly error: ErrorSpec;
}

export type JsonRpcElement = JsonRpcCall | JsonRpcInvalid;

export type ParsedBody =
  | { readonly kind: 'single'; readonly element: JsonRpcElement }
  | { readonly kind: 'batch'; readonly elements: readonly JsonRpcElement[] }
  /** The whole body is answered with one error (parse error, empty batch, batch too large). */
  | { readonly kind: 'fatal'; readonly error: ErrorSpec };

export function isInvalid(e: JsonRpcElement): e is JsonRpcInvalid {
  return (e as JsonRpcInvalid).error !== undefined;
}

function readElement(v: unknown): JsonRpcElement {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    return { id: null, notification: false, error: Errors.INVALID_REQUEST };
  }
  const o = v as Record<string, unknown>;
  const hasId = 'id' in o;
  const rawId = o.id;
  // A number id must survive being echoed: JSON.parse reads 1e400 as Infinity, which is not JSON. Agave (jsonrpc-core's
  // Id: u64, string or null) refuses it as an invalid request too; docs/protocol-decisions.md.
  const idOk =
    !hasId || rawId === null || typeof rawId === 'string' || (typeof rawId === 'number' && Number.isFinite(rawId));
  const id: JsonRpcId = hasId && idOk ? (rawId as JsonRpcId) : null;
  if (!idOk) return { id: null, notification: false, error: Errors.INVALID_REQUEST };
  if (o.jsonrpc !== '2.0') {
    // jsonrpc-core (Agave): `jsonrpc` is an Option<Version> that deserializes only from "2.0". Any other value makes
    // the element Call::Invalid ("Invalid request", id kept); absent or null is None, refused in handle_call with
    // "Unsupported JSON-RPC protocol version" — and, without an id, a notification that is dropped unanswered.
    // (Without a method string the element is no call at all: Call::Invalid, answered even without an id.)
    if ((o.jsonrpc === undefined || o.jsonrpc === null) && typeof o.method === 'string') {
      return { id, notification: !hasId, error: Errors.UNSUPPORTED_JSONRPC_VERSION };
    }
    return { id, notification: false, error: Errors.INVALID_REQUEST };
  }
  if (typeof o.method !== 'string') return { id, notification: false, error: Errors.INVALID_REQUEST };
  return { id, notification: !hasId, method: o.method, params: o.params };
}

/** Parse a request body. Never throws. `maxBatchSize` bounds the number of elements of a batch. */
export function parseJsonRpcBody(text: string, maxBatchSize: number): ParsedBody {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'fatal', error: Errors.PARSE_ERROR };
  }
  if (!Array.isArray(value)) return { kind: 'single', element: readElement(value) };
  if (value.length === 0) return { kind: 'fatal', error: Errors.INVALID_REQUEST };
  if (value.length > maxBatchSize) return { kind: 'fatal', error: Errors.BATCH_TOO_LARGE };
  const elements = new Array<JsonRpcElement>(value.length);
  for (let i = 0; i < value.length; i++) elements[i] = readElement(value[i]);
  return { kind: 'batch', elements };
}
