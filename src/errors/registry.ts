// The error registry: every error slotrelay can answer, in one table (cold; read at start-up and per error).
// Each entry has a stable `reason` (also the metrics label and log field), the JSON-RPC code, the HTTP status it
// carries on JSON-RPC paths (200 unless the failure is transport-level: auth, rate, size, overload) and on the
// REST-style relay paths (/v1/submit, /v1/transactions), and the message. docs/errors.md is generated from and
// checked against this table by test/unit/errors/registry-docs.test.ts. Across threads only the numeric `id` travels.
// Two carriers of a registry entry: Failure, a plain value the hot intake path RETURNS (no stack trace), and
// RelayError, an Error that cold paths and non-hot method handlers throw. Both default `data` the same way.
//
// JSON-RPC codes: only -32700, -32600..-32603 and -32001..-32021 are used, because @solana/kit cannot decode others.

export interface ErrorSpec {
  /** Small integer used across threads and in shared-memory counters. Never reuse a retired id. */
  readonly id: number;
  /** snake_case label, stable: metrics label, log field, `error.data.reason` on relay paths. */
  readonly reason: string;
  readonly rpcCode: number;
  /** HTTP status on JSON-RPC paths (JSON-RPC host `/`, relay `/v1/sendTransaction`). */
  readonly rpcHttpStatus: number;
  /** HTTP status on the REST-style relay paths (`/v1/submit`, `/v1/transactions`). */
  readonly restHttpStatus: number;
  /** Message, or its fixed prefix when a detail follows after ": ". */
  readonly message: string;
  /** Set when the response carries Retry-After. */
  readonly retryable?: boolean;
}

function spec(
  id: number,
  reason: string,
  rpcCode: number,
  rpcHttpStatus: number,
  restHttpStatus: number,
  message: string,
  retryable = false,
): ErrorSpec {
  return Object.freeze({ id, reason, rpcCode, rpcHttpStatus, restHttpStatus, message, retryable });
}

export const Errors = Object.freeze({
  // JSON-RPC envelope (Agave / paritytech jsonrpc wording).
  PARSE_ERROR: spec(1, 'parse_error', -32700, 200, 400, 'Parse error'),
  INVALID_REQUEST: spec(2, 'invalid_request', -32600, 200, 400, 'Invalid request'),
  UNSUPPORTED_JSONRPC_VERSION: spec(3, 'unsupported_jsonrpc_version', -32600, 200, 400, 'Unsupported JSON-RPC protocol version'),
  BATCH_TOO_LARGE: spec(4, 'batch_too_large', -32600, 200, 400, 'Invalid request: batch too large'),
  METHOD_NOT_FOUND: spec(5, 'method_not_found', -32601, 200, 404, 'Method not found'),
  INVALID_PARAMS: spec(6, 'invalid_params', -32602, 200, 400, 'Invalid params'),
  INTERNAL_ERROR: spec(7, 'internal_error', -32603, 200, 500, 'Internal error'),
  // Transaction intake (Agave sendTransaction wording; detail follows the prefix).
  TX_TOO_LARGE_ENCODED: spec(10, 'tx_too_large_encoded', -32602, 200, 400, 'encoded solana_transaction::versioned::VersionedTransaction too large'),
  TX_TOO_LARGE_DECODED: spec(11, 'tx_too_large_decoded', -32602, 200, 400, 'decoded solana_transaction::versioned::VersionedTransaction too large'),
  TX_BAD_ENCODING: spec(12, 'tx_bad_encoding', -32602, 200, 400, 'invalid encoding'),
  TX_UNDECODABLE: spec(13, 'tx_undecodable', -32602, 200, 400, 'failed to deserialize solana_transaction::versioned::VersionedTransaction'),
  TX_INVALID: spec(14, 'tx_invalid', -32602, 200, 400, 'invalid transaction'),
  TX_UNSUPPORTED_ENCODING: spec(15, 'tx_unsupported_encoding', -32602, 200, 400, 'unsupported encoding'),
  SIGNATURE_VERIFICATION_FAILED: spec(16, 'signature_verification_failed', -32003, 200, 400, 'Transaction signature verification failure'),
  UNSUPPORTED_TX_VERSION: spec(17, 'unsupported_transaction_version', -32015, 200, 400, 'Transaction version is not supported'),
  // Agave's RpcCustomError::MinContextSlotNotReached (data {contextSlot}): the relay has not seen minContextSlot yet.
  MIN_CONTEXT_SLOT_NOT_REACHED: spec(18, 'min_context_slot_not_reached', -32016, 200, 400, 'Minimum context slot has not been reached'),
  // Preflight.
  PREFLIGHT_FAILED: spec(20, 'preflight_failed', -32002, 200, 422, 'Transaction simulation failed'),
  PREFLIGHT_NOT_ALLOWED: spec(21, 'preflight_not_allowed', -32602, 200, 400, 'Invalid params: preflight simulation is not enabled for this API key; send with skipPreflight: true'),
  PREFLIGHT_UNAVAILABLE: spec(22, 'preflight_unavailable', -32005, 200, 503, 'Node is unhealthy: preflight simulation upstream is unavailable', true),
  // Upstream calls made for a client (passthrough reads, simulateTransaction, fee fetches): data {reason}.
  UPSTREAM_UNAVAILABLE: spec(23, 'upstream_unavailable', -32005, 200, 503, 'Node is unhealthy: the upstream RPC is unavailable', true),
  UPSTREAM_TIMEOUT: spec(24, 'upstream_timeout', -32005, 200, 504, 'Node is unhealthy: the upstream RPC did not answer in time', true),
  // The upstream's own JSON-RPC error for a passed-through call: its code, message and data go back unchanged.
  UPSTREAM_ERROR: spec(25, 'upstream_error', -32603, 200, 502, "The upstream RPC's error, passed on with its own code and message"),
  // Access and admission.
  UNAUTHORIZED: spec(30, 'unauthorized', -32600, 401, 401, 'Unauthorized: a valid API key is required (x-token, x-api-key, Authorization: Bearer, or ?key=)'),
  RATE_LIMITED: spec(31, 'rate_limited', -32005, 429, 429, 'Rate limit exceeded: retry after the Retry-After delay', true),
  OVERLOADED: spec(32, 'overloaded', -32005, 503, 503, 'Server overloaded: the transaction queue is full, retry after the Retry-After delay', true),
  ROUTE_NOT_ALLOWED: spec(33, 'route_not_allowed', -32602, 200, 403, 'Invalid params: none of the requested routes is allowed for this API key'),
  UNKNOWN_ROUTE: spec(34, 'unknown_route', -32602, 200, 400, 'Invalid params: unknown route'),
  // The key may use a requested (or default) route, but this relay runs none of them (not configured here: routes.rpc
  // .endpoints empty, routes.direct.enabled false, no routes.jito, no static peers). The relay's matter, not the key's;
  // another region's relay may run it. data {reason, configured: the routes this relay runs}.
  ROUTE_NOT_CONFIGURED: spec(38, 'route_not_configured', -32602, 200, 400, 'Invalid params: none of the requested routes is configured on this relay'),
  SHUTTING_DOWN: spec(35, 'shutting_down', -32005, 503, 503, 'Node is unhealthy: the relay is shutting down', true),
  // None of the transaction's routes can deliver now (upstream unreachable, no fresh leader data, a route failing
  // every send: docs/health.md). Refused rather than accepted and dropped; data {reason, routes: {name: why}}.
  ROUTES_UNAVAILABLE: spec(36, 'routes_unavailable', -32005, 503, 503, 'Node is unhealthy: none of the transaction\'s routes can deliver now', true),
  // PubSub (docs/pubsub.md): a subscribe over the key's subscriptionLimit; data {reason, limit}.
  SUBSCRIPTION_LIMIT: spec(37, 'subscription_limit', -32005, 200, 429, "Subscription refused: the API key's limit on open subscriptions is reached"),
  // getLeaderSlots fails closed (docs/get-leader-slots.md): one code per family, each one @solana/kit decodes.
  LEADER_SNAPSHOT_MISSING: spec(50, 'leader_snapshot_missing', -32014, 200, 503, 'Leader-slot snapshot not available yet: retry shortly or use the default transaction path'),
  LEADER_SNAPSHOT_STALE: spec(51, 'leader_snapshot_stale', -32004, 200, 503, 'Leader-slot snapshot is stale: retry shortly or use the default transaction path'),
  LEADER_RANGE_NOT_COVERED: spec(52, 'leader_range_not_covered', -32016, 200, 400, 'Requested slot range is not covered by the leader-slot snapshot: refresh the current slot and request a near-future range'),
  LEADER_SNAPSHOT_UNSUPPORTED_SCHEMA: spec(53, 'leader_snapshot_unsupported_schema', -32015, 200, 500, 'Unsupported leader-slot snapshot schema version'),
  LEADER_SLOTS_IN_BATCH: spec(54, 'leader_slots_in_batch', -32600, 200, 400, 'Invalid request: getLeaderSlots must be sent as its own request, never inside a batch'),
  // Bundles (docs/bundles.md): refused before the bundle service is asked. data {reason, ...}.
  BUNDLES_NOT_ENABLED: spec(60, 'bundles_not_enabled', -32602, 200, 403, 'Invalid params: bundles are not enabled for this API key'),
  BUNDLE_INVALID: spec(61, 'bundle_invalid', -32602, 200, 400, 'Invalid params: invalid bundle'),
  BUNDLE_TIP_TOO_LOW: spec(62, 'bundle_tip_too_low', -32602, 200, 400, 'Invalid params: bundle tip below the minimum'),
  // HTTP transport.
  BODY_TOO_LARGE: spec(40, 'body_too_large', -32600, 413, 413, 'Payload too large'),
  UNSUPPORTED_MEDIA_TYPE: spec(41, 'unsupported_media_type', -32600, 415, 415, 'Unsupported media type'),
  METHOD_NOT_ALLOWED: spec(42, 'method_not_allowed', -32600, 405, 405, 'Method not allowed'),
  NOT_FOUND: spec(43, 'not_found', -32601, 404, 404, 'Not found'),
  // GET /v1/transactions/{signature} (docs/receipts.md): unknown, another key's, or older than receipts.ttlMs.
  RECEIPT_NOT_FOUND: spec(44, 'receipt_not_found', -32602, 200, 404, "Not found: no receipt for this signature under this API key (unknown, another key's, or older than receipts.ttlMs)"),
});

export type ErrorName = keyof typeof Errors;

const byId = new Map<number, ErrorSpec>();
for (const e of Object.values(Errors)) {
  if (byId.has(e.id)) throw new Error(`duplicate error id ${e.id}`);
  byId.set(e.id, e);
}

export function errorById(id: number): ErrorSpec | undefined {
  return byId.get(id);
}

/**
 * A registry error thrown by cold paths and non-hot method handlers (getLeaderSlots, preflight, the localnet facade).
 * `message` defaults to the registry message. The hot intake path (decode, parse, intake, sendTransaction, the relay
 * endpoints) returns a Failure instead (below). Rejections decided in the endpoints before any handler runs (auth,
 * rate limit, media type, body size) write the ErrorSpec directly (rejectRpc / rejectRest).
 */
export class RelayError extends Error {
  readonly data?: unknown;
  constructor(
    readonly spec: ErrorSpec,
    message: string = spec.message,
    data?: unknown,
  ) {
    super(message);
    this.data = defaultData(spec, data);
  }
}

/**
 * The upstream's own JSON-RPC error for a call the relay passed on (passthrough reads, simulateTransaction): answered
 * with the upstream's code, message and data (null data omitted) and the caller's id; counted as upstream_error.
 */
export class UpstreamRpcError extends Error {
  readonly spec: ErrorSpec = Errors.UPSTREAM_ERROR;
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/**
 * A refusal as a value, RETURNED by the hot intake path (front thread): the registry entry, the message (Agave's full
 * wording, e.g. "base64 encoded ... too large: 1700 bytes (max: encoded/raw 1644/1232)") and the data. Not an Error:
 * constructing an Error captures a stack trace, and with the throw and unwind that was over half of the front thread's work
 * on a refused transaction, making a refusal dearer than an acceptance (issue #18 defect 9,
 * bench/results/refusal-cost.md). A Failure whose message has no per-request detail is preallocated and frozen
 * (failureOf); one with detail is a small object. Never thrown: toError() makes the RelayError where a throw is needed.
 */
export class Failure {
  readonly spec: ErrorSpec;
  readonly message: string;
  /** undefined when the answer carries no `data` (then omitted, never null). */
  readonly data: unknown;
  constructor(spec: ErrorSpec, message: string = spec.message, data?: unknown) {
    this.spec = spec;
    this.message = message;
    this.data = defaultData(spec, data);
  }

  /** The same refusal as a RelayError, for code that must throw (promise chains, cold callers). */
  toError(): RelayError {
    return new RelayError(this.spec, this.message, this.data);
  }
}

/** Agave's JSON_RPC_SERVER_ERROR_NODE_UNHEALTHY, which @solana/kit decodes as "back off". */
const NODE_UNHEALTHY_CODE = -32005;

const REASON_DATA = new Map<ErrorSpec, Readonly<{ reason: string }>>();
for (const e of Object.values(Errors)) if (e.rpcCode === NODE_UNHEALTHY_CODE) REASON_DATA.set(e, Object.freeze({ reason: e.reason }));

function reasonData(spec: ErrorSpec): Readonly<{ reason: string }> {
  return REASON_DATA.get(spec) ?? Object.freeze({ reason: spec.reason });
}

/**
 * -32005 covers rate limits, overload, shutdown and an unavailable preflight upstream: `data.reason` tells them apart
 * (docs/errors.md), so an error of that code always carries at least {reason}.
 */
function defaultData(spec: ErrorSpec, data: unknown): unknown {
  return data === undefined && spec.rpcCode === NODE_UNHEALTHY_CODE ? reasonData(spec) : data;
}

const PREALLOCATED = new Map<ErrorSpec, Failure>();
for (const e of Object.values(Errors)) PREALLOCATED.set(e, Object.freeze(new Failure(e)));

/**
 * The frozen, shared Failure of a registry entry with its registry message and default data. Hot modules take theirs
 * once at load (`const F = failureOf(Errors.X)`), so refusing allocates nothing.
 */
export function failureOf(spec: ErrorSpec): Failure {
  return PREALLOCATED.get(spec) ?? Object.freeze(new Failure(spec));
}

/** The value if it is not a Failure; else throws it as a RelayError. For cold callers of the value-returning API. */
export function orThrow<T>(value: T | Failure): T {
  if (value instanceof Failure) throw value.toError();
  return value;
}
