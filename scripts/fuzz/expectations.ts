// What the fuzzer expects of an answer (harness process; shared by the case generators and the oracle). The error
// table is docs/errors.md's (reason -> JSON-RPC code, HTTP status on JSON-RPC paths, on REST paths), written out here
// rather than imported from src/ so the oracle checks the relay against its documentation, not against itself.
export type JsonRpcId = string | number | null;

export interface ErrorInfo {
  readonly code: number;
  readonly rpcStatus: number;
  readonly restStatus: number;
  readonly message: string;
}

const e = (code: number, rpcStatus: number, restStatus: number, message: string): ErrorInfo => ({ code, rpcStatus, restStatus, message });

/** docs/errors.md, the reasons the fuzzer can provoke. */
export const ERRORS = {
  parse_error: e(-32700, 200, 400, 'Parse error'),
  invalid_request: e(-32600, 200, 400, 'Invalid request'),
  unsupported_jsonrpc_version: e(-32600, 200, 400, 'Unsupported JSON-RPC protocol version'),
  batch_too_large: e(-32600, 200, 400, 'Invalid request: batch too large'),
  method_not_found: e(-32601, 200, 404, 'Method not found'),
  invalid_params: e(-32602, 200, 400, 'Invalid params'),
  tx_too_large_encoded: e(-32602, 200, 400, ''),
  tx_too_large_decoded: e(-32602, 200, 400, ''),
  tx_bad_encoding: e(-32602, 200, 400, ''),
  tx_undecodable: e(-32602, 200, 400, ''),
  tx_invalid: e(-32602, 200, 400, ''),
  tx_unsupported_encoding: e(-32602, 200, 400, ''),
  signature_verification_failed: e(-32003, 200, 400, 'Transaction signature verification failure'),
  min_context_slot_not_reached: e(-32016, 200, 400, 'Minimum context slot has not been reached'),
  preflight_failed: e(-32002, 200, 422, 'Transaction simulation failed'),
  preflight_not_allowed: e(-32602, 200, 400, 'Invalid params: preflight simulation is not enabled for this API key; send with skipPreflight: true'),
  unauthorized: e(-32600, 401, 401, 'Unauthorized: a valid API key is required (x-token, x-api-key, Authorization: Bearer, or ?key=)'),
  rate_limited: e(-32005, 429, 429, 'Rate limit exceeded: retry after the Retry-After delay'),
  route_not_allowed: e(-32602, 200, 403, 'Invalid params: none of the requested routes is allowed for this API key'),
  route_not_configured: e(-32602, 200, 400, 'Invalid params: none of the requested routes is configured on this relay'),
  unknown_route: e(-32602, 200, 400, 'Invalid params: unknown route'),
  leader_range_not_covered: e(-32016, 200, 400, 'Requested slot range is not covered by the leader-slot snapshot: refresh the current slot and request a near-future range'),
  leader_slots_in_batch: e(-32600, 200, 400, 'Invalid request: getLeaderSlots must be sent as its own request, never inside a batch'),
  body_too_large: e(-32600, 413, 413, 'Payload too large'),
  unsupported_media_type: e(-32600, 415, 415, 'Unsupported media type'),
  method_not_allowed: e(-32600, 405, 405, 'Method not allowed'),
  not_found: e(-32601, 404, 404, 'Not found'),
} as const satisfies Record<string, ErrorInfo>;

export type Reason = keyof typeof ERRORS;

/** How an error's `data` must look. Absent rule: no `data` member at all. */
export type DataRule =
  | { readonly exact: unknown }
  | { readonly shape: 'contextSlot' | 'rate_limited' | 'simulate_rate_limited' | 'leaderRange' };

/** One acceptable error: code, and a rule for the message (exact, prefix, or containing a field name). */
export interface ErrorRule {
  readonly code: number;
  readonly message?: string;
  readonly prefixes?: readonly string[];
  readonly includes?: string;
  readonly data?: DataRule;
}

export type RpcOutcome =
  | { readonly result: 'signature'; readonly signature: string | null }
  /** A getLeaderSlots result, or -32016 when the snapshot does not cover startSlot (checked against its range). */
  | { readonly result: 'leaderSlots'; readonly startSlot: number; readonly limit: number }
  | { readonly error: ErrorRule };

/** A JSON-RPC response object: its id, and any one of the outcomes. */
export interface RpcElementExp {
  readonly id: JsonRpcId;
  readonly outcomes: readonly RpcOutcome[];
}

export type RestOutcome =
  | { readonly accepted: true; readonly signature: string | null; readonly routes: readonly string[] }
  | { readonly reason: Reason; readonly rule: ErrorRule };

export type Expectation =
  | { readonly kind: 'rpc'; readonly status: number; readonly element: RpcElementExp; readonly retryAfter?: boolean; readonly close?: boolean }
  | { readonly kind: 'rpcBatch'; readonly elements: readonly RpcElementExp[] }
  /** Only notifications: HTTP 200 and no body. */
  | { readonly kind: 'empty' }
  | { readonly kind: 'rest'; readonly status: number; readonly outcome: RestOutcome; readonly retryAfter?: boolean; readonly close?: boolean }
  | { readonly kind: 'health' }
  | { readonly kind: 'metrics' }
  | { readonly kind: 'cors' }
  | { readonly kind: 'anyOf'; readonly options: readonly Expectation[] };

/** An error rule for a registry reason with its fixed message. */
export function fixed(reason: Reason, data?: DataRule): ErrorRule {
  return { code: ERRORS[reason].code, message: ERRORS[reason].message, ...(data === undefined ? {} : { data }) };
}

export function rpcError(id: JsonRpcId, rule: ErrorRule, status = 200, retryAfter = false): Expectation {
  return { kind: 'rpc', status, element: { id, outcomes: [{ error: rule }] }, ...(retryAfter ? { retryAfter } : {}) };
}

/** The answer of a JSON-RPC path that refused the request before reading it (401, 413, 415, 405). */
export function rpcTransport(reason: Reason): Expectation {
  const x = ERRORS[reason];
  return { kind: 'rpc', status: x.rpcStatus, element: { id: null, outcomes: [{ error: fixed(reason) }] }, ...(reason === 'body_too_large' ? { close: true } : {}) };
}

/** A REST error answer: status from the table, message exact, by prefix, or naming a field. */
export function restError(reason: Reason, rule: Omit<ErrorRule, 'code'> = { message: ERRORS[reason].message }): Expectation {
  const x = ERRORS[reason];
  return { kind: 'rest', status: x.restStatus, outcome: { reason, rule: { code: x.code, ...rule } }, ...(reason === 'body_too_large' ? { close: true } : {}) };
}

export function restAccepted(signature: string | null): Expectation {
  return { kind: 'rest', status: 200, outcome: { accepted: true, signature, routes: ['rpc'] } };
}

export function anyOf(...options: Expectation[]): Expectation {
  return options.length === 1 ? options[0] : { kind: 'anyOf', options };
}

/** The 429 a tight key may get instead of its answer (JSON-RPC: with the single element's id, else null). */
export function rpcRateLimited(id: JsonRpcId): Expectation {
  return rpcError(id, fixed('rate_limited', { shape: 'rate_limited' }), 429, true);
}

export function restRateLimited(): Expectation {
  return { kind: 'rest', status: 429, outcome: { reason: 'rate_limited', rule: fixed('rate_limited', { shape: 'rate_limited' }) }, retryAfter: true };
}
