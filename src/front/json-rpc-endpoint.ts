// A JSON-RPC POST endpoint on the uWS front (front thread, HOT): the JSON-RPC host's `/` and the relay host's
// `/v1/sendTransaction` both run through here. Order of checks: key (401) -> media type (415) -> body size (413) ->
// envelope -> rate limit over every batch element (429) -> method table. JSON-RPC results and errors are HTTP 200;
// a single call refused for a transport-level reason (overload, rate) carries that status and Retry-After. A body of
// notifications only (no `id`) is never answered, refused or not: HTTP 200 and no body, as Agave's
// jsonrpc-http-server (docs/errors.md). Refusals made before the body is read (401, 415, 413) cannot know it.
import { isUtf8 } from 'node:buffer';
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { Errors, type ErrorSpec } from '../errors/registry.js';
import { dispatchJsonRpcAnswer, type DispatchHooks, type MethodTable } from '../jsonrpc/dispatch.js';
import { EncodedAnswer } from '../jsonrpc/encoded-result.js';
import { isInvalid, parseJsonRpcBody, type JsonRpcCall, type JsonRpcElement, type JsonRpcId, type ParsedBody } from '../jsonrpc/envelope.js';
import { errorJson } from '../jsonrpc/response.js';
import type { HostLabel } from '../metrics/front-metrics.js';
import { summarizedLog } from '../log/summarized-log.js';
import { afterRead } from '../http/after-read.js';
import { readBody } from '../http/body-reader.js';
import type { KeyEntry } from '../admission/key-table.js';
import type { CallContext } from '../admission/call-context.js';
import type { FrontDeps } from './front-deps.js';
import { countKeyRefusal, retryAfterSeconds, writeJson, writeResponse, JSON_TYPE, type RequestState } from '../http/response.js';
import { beginRequest, mediaType, nowMs } from '../http/request.js';
import { bundleCost } from '../bundles/bundle-methods.js';
import { TOKENS_PER_TRANSACTION } from '../admission/submit-budget.js';

const RETRY_AFTER_OVERLOAD_S = 1;
const RATE_LIMITED_REASON = Errors.RATE_LIMITED.reason;

/** Reason -> registry entry, for mapping a single call's error to its HTTP status. */
const SPEC_BY_REASON = new Map<string, ErrorSpec>(Object.values(Errors).map((e) => [e.reason, e]));

export function rejectRpc(
  deps: FrontDeps,
  st: RequestState,
  spec: ErrorSpec,
  retryAfterS = 0,
  data?: unknown,
  id: JsonRpcId = null,
): void {
  deps.metrics.countRejection(spec.reason);
  countKeyRefusal(st, spec);
  const close = spec === Errors.BODY_TOO_LARGE; // the rest of the body is never read: drop the connection
  writeResponse(st, deps.responseOptions, spec.rpcHttpStatus, JSON_TYPE, errorJson(id, spec.rpcCode, spec.message, data), retryAfterS, close);
}

/** A body of notifications only, refused after parsing: counted like any refusal, answered like any notification. */
function refuseSilently(deps: FrontDeps, st: RequestState, spec: ErrorSpec): void {
  deps.metrics.countRejection(spec.reason);
  countKeyRefusal(st, spec);
  answerNotification(deps, st);
}

/**
 * Which of the key's buckets an element is charged to: sendTransaction to submissions, simulateTransaction to
 * simulations (its simulateLimit, shared with preflights), every other element (reads, passthrough, invalid ones)
 * to reads.
 */
const SUBMIT = 0;
const SIMULATE = 1;
const READ = 2;

function bucketOf(e: JsonRpcElement): number {
  if (isInvalid(e)) return READ;
  if (e.method === 'sendTransaction' || e.method === 'sendBundle') return SUBMIT;
  return e.method === 'simulateTransaction' ? SIMULATE : READ;
}

/** Submissions an element costs: a bundle one per transaction (src/bundles/), anything else one transaction's. */
function submissionCost(e: JsonRpcElement): number {
  return !isInvalid(e) && e.method === 'sendBundle' ? bundleCost(e.params) : TOKENS_PER_TRANSACTION;
}

/**
 * Charge every element of the body (a batch counts each one) to the key's buckets, all or nothing. Returns 0 when
 * admitted, else the milliseconds until it would be.
 */
function takeRateTokens(key: KeyEntry, parsed: ParsedBody, nowMs: number): number {
  let submissions = 0;
  let simulations = 0;
  let reads = 0;
  if (parsed.kind === 'single') {
    const b = bucketOf(parsed.element);
    if (b === SUBMIT) submissions = submissionCost(parsed.element);
    else if (b === SIMULATE) simulations = 1;
    else reads = 1;
  } else if (parsed.kind === 'batch') {
    for (const e of parsed.elements) {
      const b = bucketOf(e);
      if (b === SUBMIT) submissions += submissionCost(e);
      else if (b === SIMULATE) simulations++;
      else reads++;
    }
  } else {
    reads = 1;
  }
  const submitWait = submissions > 0 ? key.submitBucket.take(submissions, nowMs) : 0;
  if (submitWait > 0) return submitWait;
  const simulateWait = simulations > 0 ? key.simulateBucket.take(simulations, nowMs) : 0;
  if (simulateWait > 0) {
    if (submissions > 0) key.submitBucket.refund(submissions);
    return simulateWait;
  }
  const readWait = reads > 0 ? key.readBucket.take(reads, nowMs) : 0;
  if (readWait > 0) {
    if (submissions > 0) key.submitBucket.refund(submissions);
    if (simulations > 0) key.simulateBucket.refund(simulations);
  }
  return readWait;
}

/**
 * One JSON-RPC body being answered: the methods' context, the dispatch hooks and the answer, in one object with
 * prototype methods, so a request allocates no closures for them (front thread, HOT).
 */
class RpcCall implements CallContext, DispatchHooks {
  /** The registry entry of a single call's error: its HTTP status and Retry-After apply to the whole answer. */
  private singleError: ErrorSpec | undefined = undefined;

  constructor(
    private readonly deps: FrontDeps,
    readonly state: RequestState,
    readonly key: KeyEntry,
    private readonly single: boolean,
    private readonly host: HostLabel,
    private readonly path: string,
  ) {}

  onInternalError(err: unknown, call: JsonRpcCall): void {
    // keyName, not key: the logger redacts every `key` field (src/log/logger.ts), which would hide the name too.
    // Bounded (src/log/summarized-log.ts): the first at once, then a count per method per 10 s with one example.
    summarizedLog(this.deps.log).note('error', 'internal_error ' + call.method, { err, method: call.method, requestId: this.state.requestId, keyName: this.key.name }, 'internal error in method');
  }

  onOutcome(method: string | null, reason: string | null): void {
    const metrics = this.deps.metrics;
    metrics.countRequest(this.host, metrics.methodLabel(method), reason ?? 'ok');
    // Every refused element counts, as on the REST paths (slotrelay_rejections_total: requests or elements refused).
    if (reason !== null) {
      metrics.countRejection(reason);
      const usage = this.key.usage;
      usage.refused++;
      if (reason === RATE_LIMITED_REASON) usage.rateLimited++;
    }
    if (reason !== null && this.single) this.singleError = SPEC_BY_REASON.get(reason);
  }

  finish(text: string | EncodedAnswer | null): void {
    const st = this.state;
    // null: notifications only, whatever became of them (a refusal included): no reply, hence no refusal status.
    if (text === null) answerNotification(this.deps, st);
    else writeJson(st, this.deps.responseOptions, this.singleError?.rpcHttpStatus ?? 200, text, this.singleError?.retryable ? RETRY_AFTER_OVERLOAD_S : 0);
    this.deps.metrics.recordLatency(this.path, (nowMs() - st.receivedAtMs) * 1000);
  }
}

/**
 * The answer to a body of notifications only: JSON-RPC 2.0 section 4.1 (the server MUST NOT reply to a notification)
 * as Agave's jsonrpc-http-server does it: HTTP 200, its JSON content type, an empty body (handler.rs: "Notification,
 * just return empty response").
 */
function answerNotification(deps: FrontDeps, st: RequestState): void {
  writeJson(st, deps.responseOptions, 200, '');
}

/** Whether nothing in the body asks for a reply: a notification, or a batch of notifications only. */
function notificationsOnly(parsed: ParsedBody): boolean {
  if (parsed.kind === 'single') return parsed.element.notification;
  return parsed.kind === 'batch' && parsed.elements.every((e) => e.notification);
}

function isSubmission(e: JsonRpcElement): boolean {
  return !isInvalid(e) && e.method === 'sendTransaction';
}

/** Whether any element is a sendTransaction (the only method that hands a transaction to a ring). */
function holdsSubmission(parsed: ParsedBody): boolean {
  if (parsed.kind === 'single') return isSubmission(parsed.element);
  return parsed.kind === 'batch' && parsed.elements.some(isSubmission);
}

function dispatch(
  deps: FrontDeps,
  table: MethodTable<CallContext>,
  st: RequestState,
  key: KeyEntry,
  parsed: ParsedBody,
  host: HostLabel,
  path: string,
): void {
  const call = new RpcCall(deps, st, key, parsed.kind === 'single', host, path);
  const out = dispatchJsonRpcAnswer(parsed, table, call, call);
  if (out === null || typeof out === 'string' || out instanceof EncodedAnswer) call.finish(out);
  else
    out.then(
      (text) => call.finish(text),
      (err: unknown) => {
        summarizedLog(deps.log).note('error', 'dispatch_failure', { err, requestId: st.requestId }, 'unexpected dispatch failure');
        call.finish(errorJson(null, Errors.INTERNAL_ERROR.rpcCode, Errors.INTERNAL_ERROR.message));
      },
    );
}

/** Jito's auth carriers: the x-jito-auth header, else ?uuid=. */
function jitoKeyCandidate(req: HttpRequest, query: string): string {
  const h = req.getHeader('x-jito-auth');
  if (h !== '') return h;
  return query === '' ? '' : (req.getQuery('uuid') ?? '');
}

/** A body that is not UTF-8 is not JSON: one parse error, like Agave. */
const NOT_UTF8: ParsedBody = Object.freeze({ kind: 'fatal', error: Errors.PARSE_ERROR });

export function jsonRpcEndpoint(
  deps: FrontDeps,
  table: MethodTable<CallContext>,
  host: HostLabel,
  path: string,
  /**
   * POST /v1/bundles: also take the key where Jito's clients put their auth (x-jito-auth, ?uuid=), so that a Jito
   * client (jito-js-rpc: `new JitoJsonRpcClient(relay + '/v1', key)`) works unchanged. Never logged either.
   */
  jitoAuth = false,
): (res: HttpResponse, req: HttpRequest) => void {
  return (res, req) => {
    const head = beginRequest(res, req);
    const st = head.state;
    if (head.badFraming !== '') {
      // Before the body is read, and the connection closed: uWS's framing of the body may not be a proxy's.
      deps.metrics.countRejection(Errors.INVALID_REQUEST.reason);
      return writeResponse(st, deps.responseOptions, 400, JSON_TYPE, errorJson(null, Errors.INVALID_REQUEST.rpcCode, head.badFraming), 0, true);
    }
    const key = deps.keys.lookup(head.keyCandidate !== '' || !jitoAuth ? head.keyCandidate : jitoKeyCandidate(req, head.query));
    if (key === undefined) return rejectRpc(deps, st, Errors.UNAUTHORIZED);
    key.usage.requests++;
    st.usage = key.usage;
    const mt = mediaType(head.contentType);
    if (mt !== 'application/json') return rejectRpc(deps, st, Errors.UNSUPPORTED_MEDIA_TYPE);

    readBody(res, st, head.contentLength, deps.config.http.maxBodyBytes, (body) => {
      // JSON text is UTF-8 (RFC 8259); toString would turn invalid bytes into U+FFFD and run a request the client did
      // not send (Agave's serde_json::from_slice answers -32700). simdutf's check costs ~0.2 us on a 1.7 KB body.
      const parsed = isUtf8(body) ? parseJsonRpcBody(body.toString('utf8'), deps.config.http.maxBatchSize) : NOT_UTF8;
      const waitMs = takeRateTokens(key, parsed, st.receivedAtMs);
      if (waitMs > 0) {
        deps.keyUsage?.rateLimited(key.id);
        if (notificationsOnly(parsed)) return refuseSilently(deps, st, Errors.RATE_LIMITED);
        const id = parsed.kind === 'single' ? parsed.element.id : null;
        return rejectRpc(deps, st, Errors.RATE_LIMITED, retryAfterSeconds(waitMs), { reason: 'rate_limited', retryAfterMs: waitMs }, id);
      }

      // Spec 7.2 / 8: a batch that contains getLeaderSlots is rejected as a whole, with one error (id null).
      if (parsed.kind === 'batch' && parsed.elements.some((e) => !isInvalid(e) && e.method === 'getLeaderSlots')) {
        if (notificationsOnly(parsed)) return refuseSilently(deps, st, Errors.LEADER_SLOTS_IN_BATCH);
        return rejectRpc(deps, st, Errors.LEADER_SLOTS_IN_BATCH);
      }
      // A body that may hand a transaction to a ring runs after the read is parsed (after-read.ts); reads run now.
      if (holdsSubmission(parsed)) afterRead(st, () => dispatch(deps, table, st, key, parsed, host, path));
      else dispatch(deps, table, st, key, parsed, host, path);
    }, () => rejectRpc(deps, st, Errors.BODY_TOO_LARGE));
  };
}
