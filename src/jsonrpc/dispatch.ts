// Method-table dispatch for parsed JSON-RPC bodies (front thread, hot). A handler returns the result as JSON text,
// synchronously when it can (sendTransaction with skipPreflight never awaits) or as a Promise (preflight, upstream
// calls). A refusal is either RETURNED as a Failure (hot handlers: sendTransaction, so that refusing costs no stack
// trace, issue #18 defect 9) or thrown as a RelayError (non-hot handlers); both become the same JSON-RPC error with
// the request id preserved. Anything else thrown becomes -32603 and is reported through `onInternalError` (logged by
// the caller, never sent to the client). A result answered many times may come as an EncodedResult (its answer's
// bytes up to the id, encoded once: encoded-result.ts); dispatchJsonRpcAnswer hands a single call's such answer on
// as bytes, every other path (batches, dispatchJsonRpc) writes its text.
import { Errors, Failure, RelayError, UpstreamRpcError } from '../errors/registry.js';
import { EncodedAnswer, EncodedResult } from './encoded-result.js';
import { isInvalid, type JsonRpcCall, type JsonRpcElement, type ParsedBody } from './envelope.js';
import { batchJson, errorJson, errorJsonHead, errorJsonWithHead, resultJson } from './response.js';

/** The result as JSON text, or the refusal; either may come later (a Promise, which may also reject). */
export type MethodResult = string | EncodedResult | Failure | Promise<string | Failure>;
export type MethodHandler<C> = (params: unknown, ctx: C, call: JsonRpcCall) => MethodResult;
export type MethodTable<C> = ReadonlyMap<string, MethodHandler<C>>;

export interface DispatchHooks {
  /** Called for errors that are not RelayError (bugs, unexpected upstream shapes). */
  onInternalError(err: unknown, call: JsonRpcCall): void;
  /** Called once per answered element with the method (or null) and the error reason (or null on success). */
  onOutcome?(method: string | null, errorReason: string | null): void;
}

/**
 * Answers of the preallocated refusals up to the id, serialised on first use. Refusing must cost less than accepting
 * (issue #18 defect 9), and JSON.stringify of a ~100-character Agave message was the largest item left on the
 * refusal path after the exceptions went. Only frozen Failures whose data is absent or frozen are cached: their
 * answer cannot change.
 */
const HEADS = new WeakMap<Failure, string>();

/** A refusal's answer (counted as its reason). */
function failureJson(call: JsonRpcCall, f: Failure, hooks: DispatchHooks): string {
  hooks.onOutcome?.(call.method, f.spec.reason);
  if (!Object.isFrozen(f)) return errorJson(call.id, f.spec.rpcCode, f.message, f.data);
  let head = HEADS.get(f);
  if (head === undefined) {
    head = errorJsonHead(f.spec.rpcCode, f.message, f.data);
    if (f.data === undefined || f.data === null || Object.isFrozen(f.data)) HEADS.set(f, head);
  }
  return errorJsonWithHead(head, call.id);
}

/** A handler's answer once it is known: the result, or the refusal it returned. */
function answerFor(call: JsonRpcCall, r: string | Failure, hooks: DispatchHooks): string {
  if (typeof r === 'string') {
    hooks.onOutcome?.(call.method, null);
    return resultJson(call.id, r);
  }
  return failureJson(call, r, hooks);
}

/** A synchronous answer: as bytes when the result is encoded and the caller takes bytes (`encoded`), else text. */
function syncAnswerFor(call: JsonRpcCall, r: string | EncodedResult | Failure, hooks: DispatchHooks, encoded: boolean): string | EncodedAnswer {
  if (!(r instanceof EncodedResult)) return answerFor(call, r, hooks);
  hooks.onOutcome?.(call.method, null);
  return encoded ? new EncodedAnswer(r, call.id) : resultJson(call.id, r.text);
}

/** What a handler threw (or its promise rejected with). */
function errorFor(call: JsonRpcCall, err: unknown, hooks: DispatchHooks): string {
  if (err instanceof Failure) return failureJson(call, err, hooks); // returned is the convention, but never a 500 for it
  if (err instanceof UpstreamRpcError) {
    hooks.onOutcome?.(call.method, err.spec.reason);
    return errorJson(call.id, err.code, err.message, err.data);
  }
  if (err instanceof RelayError) {
    hooks.onOutcome?.(call.method, err.spec.reason);
    return errorJson(call.id, err.spec.rpcCode, err.message, err.data);
  }
  hooks.onInternalError(err, call);
  hooks.onOutcome?.(call.method, Errors.INTERNAL_ERROR.reason);
  return errorJson(call.id, Errors.INTERNAL_ERROR.rpcCode, Errors.INTERNAL_ERROR.message);
}

/** Answer one element: a string or, when `encoded`, bytes (sync), a Promise of a string, or null for a notification. */
function dispatchElement<C>(
  el: JsonRpcElement,
  table: MethodTable<C>,
  ctx: C,
  hooks: DispatchHooks,
  encoded: boolean,
): string | EncodedAnswer | Promise<string> | null {
  if (isInvalid(el)) {
    hooks.onOutcome?.(null, el.error.reason);
    return el.notification ? null : errorJson(el.id, el.error.rpcCode, el.error.message);
  }
  const handler = table.get(el.method);
  let out: string | EncodedAnswer | Promise<string>;
  if (handler === undefined) {
    hooks.onOutcome?.(el.method, Errors.METHOD_NOT_FOUND.reason);
    out = errorJson(el.id, Errors.METHOD_NOT_FOUND.rpcCode, Errors.METHOD_NOT_FOUND.message);
  } else {
    try {
      const r = handler(el.params, ctx, el);
      if (typeof r === 'string' || r instanceof Failure || r instanceof EncodedResult) {
        out = syncAnswerFor(el, r, hooks, encoded);
      } else {
        out = r.then(
          (json) => answerFor(el, json, hooks),
          (err: unknown) => errorFor(el, err, hooks),
        );
      }
    } catch (err) {
      out = errorFor(el, err, hooks);
    }
  }
  if (el.notification) {
    // A notification is executed but never answered; swallow async failures (already counted by hooks).
    if (typeof out !== 'string' && !(out instanceof EncodedAnswer)) out.catch(() => undefined);
    return null;
  }
  return out;
}

/**
 * Answer a parsed body. Returns the response text, null when nothing must be sent (notifications only), or a
 * Promise of either when some handler was asynchronous. Batch responses keep request order.
 */
export function dispatchJsonRpc<C>(
  parsed: ParsedBody,
  table: MethodTable<C>,
  ctx: C,
  hooks: DispatchHooks,
): string | null | Promise<string | null> {
  if (parsed.kind === 'single') return textOf(dispatchElement(parsed.element, table, ctx, hooks, false));
  return dispatchBody(parsed, table, ctx, hooks);
}

/**
 * dispatchJsonRpc for a caller that writes bytes too (the front's JSON-RPC endpoint): a single call answered
 * synchronously from an EncodedResult comes back as an EncodedAnswer, written as bytes (no string conversion).
 */
export function dispatchJsonRpcAnswer<C>(
  parsed: ParsedBody,
  table: MethodTable<C>,
  ctx: C,
  hooks: DispatchHooks,
): string | EncodedAnswer | null | Promise<string | null> {
  if (parsed.kind === 'single') return dispatchElement(parsed.element, table, ctx, hooks, true);
  return dispatchBody(parsed, table, ctx, hooks);
}

/** An element's answer as text (an EncodedAnswer only comes when asked for: never here). */
function textOf(r: string | EncodedAnswer | Promise<string> | null): string | Promise<string> | null {
  return r instanceof EncodedAnswer ? r.text() : r;
}

/** A fatal body or a batch (always text). */
function dispatchBody<C>(
  parsed: Exclude<ParsedBody, { readonly kind: 'single' }>,
  table: MethodTable<C>,
  ctx: C,
  hooks: DispatchHooks,
): string | null | Promise<string | null> {
  if (parsed.kind === 'fatal') {
    hooks.onOutcome?.(null, parsed.error.reason);
    return errorJson(null, parsed.error.rpcCode, parsed.error.message);
  }
  const parts: (string | Promise<string>)[] = [];
  let pending = false;
  for (const el of parsed.elements) {
    const r = textOf(dispatchElement(el, table, ctx, hooks, false));
    if (r === null) continue;
    if (typeof r !== 'string') pending = true;
    parts.push(r);
  }
  if (!pending) return batchJson(parts as string[]);
  return Promise.all(parts).then(batchJson);
}
