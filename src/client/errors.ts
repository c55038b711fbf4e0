// Typed errors of the client library (caller's thread, cold). One base class, SlotrelayError, whose `reason` is the
// discriminator: the relay's stable reason label when the relay answered (docs/errors.md), or one of the client's
// own (CLIENT_REASONS) when it did not. Subclasses say which call failed, so `instanceof` and `reason` together
// cover every case a caller must handle (docs/client.md, "Errors"). Messages come from the relay (which never echoes
// a key) or from here; none contains the API key.

/** Reasons the client reports itself, when the relay gave no answer to read. */
export const CLIENT_REASONS = [
  /** No answer within timeoutMs. A submit's outcome is then unknown (resending the same signed bytes is safe). */
  'timeout',
  /** The caller's AbortSignal fired. */
  'aborted',
  /** Connection refused, reset or closed before an answer. */
  'network_error',
  /** An answer that is not the documented shape (not JSON, no error object). */
  'bad_answer',
  /** The transport cannot be used as asked ('quic' as a string: pass quicTransport() from `slotrelay/client/quic`). */
  'transport_unavailable',
  /** QUIC: the relay closed the connection because the key already has its maximum of connections (code 2). */
  'key_connection_limit',
  /** A method that needs the JSON-RPC host was called on a client built without rpcUrl. */
  'rpc_url_missing',
  /** A receipt stream the relay closed (data.closeCode, data.closeReason: 1008 slow_consumer when it was not read). */
  'stream_closed',
  /** A receipt stream whose updates the caller did not pull: more than maxQueued waited. */
  'stream_overflow',
  /** A JSON-RPC error whose code and data name no reason (e.g. an upstream's own error passed on). */
  'rpc_error',
] as const;
export type ClientReason = (typeof CLIENT_REASONS)[number];

export interface SlotrelayErrorFields {
  readonly reason: string;
  readonly message: string;
  /** JSON-RPC code the relay answered (also on the REST paths' error object). */
  readonly code?: number;
  /** HTTP status of the answer; undefined when there was none. */
  readonly status?: number;
  /** The relay's error data, when it sent some. */
  readonly data?: unknown;
  /** How long to wait before retrying: data.retryAfterMs, else the Retry-After header (seconds) x 1000. */
  readonly retryAfterMs?: number;
  /** The relay's x-request-id for this request (its logs carry it). */
  readonly requestId?: string;
  /** QUIC: the application code of the STOP_SENDING / RESET_STREAM that refused the stream (docs/quic-ingress.md). */
  readonly quicStreamCode?: number;
  /** QUIC: the application code of the CONNECTION_CLOSE that ended the connection (1 unauthorized, 2, 3, 4). */
  readonly quicConnectionCode?: number;
  readonly cause?: unknown;
}

/** Reasons after which the same request may succeed later (back off for retryAfterMs when given). */
const TRANSIENT = new Set([
  'rate_limited',
  'overloaded',
  'shutting_down',
  'routes_unavailable',
  'preflight_unavailable',
  'upstream_unavailable',
  'upstream_timeout',
  'leader_snapshot_missing',
  'leader_snapshot_stale',
  'timeout',
  'network_error',
]);

export class SlotrelayError extends Error {
  override readonly name: string = 'SlotrelayError';
  readonly reason: string;
  readonly code: number | undefined;
  readonly status: number | undefined;
  readonly data: unknown;
  readonly retryAfterMs: number | undefined;
  readonly requestId: string | undefined;
  readonly quicStreamCode: number | undefined;
  readonly quicConnectionCode: number | undefined;

  constructor(f: SlotrelayErrorFields) {
    super(f.message, f.cause === undefined ? undefined : { cause: f.cause });
    this.reason = f.reason;
    this.code = f.code;
    this.status = f.status;
    this.data = f.data;
    this.retryAfterMs = f.retryAfterMs;
    this.requestId = f.requestId;
    this.quicStreamCode = f.quicStreamCode;
    this.quicConnectionCode = f.quicConnectionCode;
  }

  /** The same request may succeed later (rate limits, overload, shutdown, timeouts); wait retryAfterMs first. */
  get retryable(): boolean {
    return TRANSIENT.has(this.reason);
  }
}

/** A submit the relay refused ({accepted:false, error}) or that got no usable answer. Nothing was queued when the
 *  relay answered a refusal; after `timeout`/`network_error`/`aborted` the outcome is unknown. */
export class RelaySubmitError extends SlotrelayError {
  override readonly name: string = 'RelaySubmitError';
}

/** An error answer (or no usable answer) from the JSON-RPC host: {code, message, data} with the HTTP status. */
export class RpcError extends SlotrelayError {
  override readonly name: string = 'RpcError';
}

/**
 * getLeaderSlots could not be served after the spec 7.3 recovery (retries for a missing or stale snapshot, one
 * refresh for a range not covered): route by the default path. `reason` is the relay's last answer's family.
 */
export class LeaderSlotsUnavailableError extends RpcError {
  override readonly name: string = 'LeaderSlotsUnavailableError';
  readonly useDefaultPath = true as const;
}

/** The relay's leader-slot snapshot has a schema version this client does not read (spec 7.3: incompatible, alert).
 *  `data` is {schemaVersion, supportedSchemaVersions}. Not retried. */
export class IncompatibleRelayError extends RpcError {
  override readonly name: string = 'IncompatibleRelayError';
}

/** The requested transport is not available (construction fails with it, never a stub that pretends). */
export class TransportUnavailableError extends SlotrelayError {
  override readonly name: string = 'TransportUnavailableError';
}
