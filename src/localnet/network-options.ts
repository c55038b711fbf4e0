// The localnet's network model: what a test bench sets per validator link, on the RPC facade, and for Agave's QoS
// (localnet process; read once at start, cold). Types and the Agave figures they default to; docs/localnet.md
// ("Network model") says what each knob models on mainnet. The relay config's `localnet:` section
// (src/config/localnet-schema.ts) has the same names.

/** One validator's TPU listener as seen from the senders (index = validator, 0 = largest stake). */
export interface LocalnetLinkOptions {
  /** One-way path delay on every datagram in both directions (ms); a handshake costs 2 x this more. Default 0. */
  readonly oneWayDelayMs?: number;
  /**
   * Percent of incoming UDP datagrams dropped at random (0..100). QUIC retransmits what is lost, so this shows as
   * delay (and a smaller congestion window), not as lost transactions, as real packet loss does. Default 0.
   */
  readonly lossPct?: number;
  /**
   * Percent of the transactions this validator receives (whole streams, read to FIN) that it drops at random
   * before its TPU gate (0..100): a leader that loses transactions (overloaded banking stage, a bad link with
   * retransmissions too late for its window). This is the knob that loses transactions. Default 0.
   */
  readonly txDropPct?: number;
  /**
   * A dead host: the listener ignores every datagram (no handshake, no answer: a sender's connect times out). Its
   * leader slots stay empty. Default false.
   */
  readonly down?: boolean;
}

/** Agave's stake-weighted QoS on the TPU listeners (streamer/src/nonblocking/quic.rs, stream_throttle.rs). */
export interface LocalnetQosOptions {
  /** Default false: no per-peer limits (the localnet before issue #13). */
  readonly enabled?: boolean;
  /**
   * Which of Agave's QoS: `throttle` (default; the older per-100 ms unstaked stream throttle, tpu-qos.ts) or
   * `flow-control` (agave PR #10666: MAX_STREAMS by RTT and stake share, unstaked parked when the leader is
   * saturated; tpu-qos-flow-control.ts).
   */
  readonly model?: 'throttle' | 'flow-control';
  /**
   * flow-control: the leader's capacity in streams per second (Agave: max_streams_per_ms 500 x 1000 = 500,000).
   * A localnet sets it low (e.g. 2,000) so a competing sender can saturate it. Default maxStreamsPerMs x 1000.
   */
  readonly capacityTps?: number;
  /** flow-control: Agave's max_streams_per_ms (500); also sets the minimum stake ratio 1 / (this x 100). */
  readonly maxStreamsPerMs?: number;
  /** flow-control: MAX_STREAMS at 100 ms RTT when not saturated (Agave: 2048 staked, 20 unstaked). */
  readonly baseMaxStreamsStaked?: number;
  readonly baseMaxStreamsUnstaked?: number;
  /** flow-control: connection tables (Agave: 2,000 staked, 500 unstaked in all). */
  readonly maxStakedConnections?: number;
  readonly maxUnstakedConnections?: number;
  /** Connections open at once per unstaked peer; one more is closed with code 4 "too_many". Agave: 8. */
  readonly maxConnectionsPerUnstakedPeer?: number;
  /** Per staked peer. Agave: 16. */
  readonly maxConnectionsPerStakedPeer?: number;
  /** New connections per peer per minute (token bucket, refilled evenly); beyond it code 2 "disallowed". Agave: 8. */
  readonly maxConnectionsPerIpPerMinute?: number;
  /**
   * Streams read per unstaked peer per 100 ms window, shared by all its connections; beyond it the listener stops
   * reading that peer's streams until the window ends (the peer runs out of stream credit and waits). Agave: 20
   * (MAX_UNSTAKED_TPS 200). Staked peers are not throttled here (Agave throttles them only when the whole
   * validator is saturated).
   */
  readonly unstakedStreamsPer100Ms?: number;
}

/** A peer the listeners count as staked besides the validators (the QoS stake table, not the leader schedule). */
export interface LocalnetStakedPeer {
  /** Base58 Ed25519 public key (its QUIC client certificate's key). */
  readonly identity: string;
  /** Lamports. */
  readonly stake: bigint;
}

/** The RPC facade as a node at some distance from its clients, and its send-transaction service. */
export interface LocalnetRpcOptions {
  /**
   * One-way delay between a client and the RPC node (ms): every HTTP request is handled this much after it arrived
   * and answered this much later (a round trip costs 2 x this more); WebSocket messages likewise both ways. A
   * sendTransaction is therefore forwarded to the leaders this much after the client sent it. Default 0.
   */
  readonly oneWayDelayMs?: number;
  /** Distinct upcoming leaders each sendTransaction goes to (Agave send-transaction-service: 2). */
  readonly leaderForwardCount?: number;
  /** Resend interval for a transaction not yet landed (Agave: 2000 ms). 0 = no retries. */
  readonly retryRateMs?: number;
  /** Resends per transaction when the request names no maxRetries (Agave: until its blockhash expires). */
  readonly defaultMaxRetries?: number;
  /** The node's stake (lamports) for the QoS: a staked RPC node's TPU sends are staked traffic. Default 0. */
  readonly stake?: bigint;
}

/** Agave figures (streamer/src/quic.rs, stream_throttle.rs, send-transaction-service). */
export const AGAVE_MAX_CONNECTIONS_PER_UNSTAKED_PEER = 8;
export const AGAVE_MAX_CONNECTIONS_PER_STAKED_PEER = 16;
export const AGAVE_MAX_CONNECTIONS_PER_IPADDR_PER_MINUTE = 8;
/** MAX_UNSTAKED_TPS (200) x STREAM_THROTTLING_INTERVAL_MS (100) / 1000. */
export const AGAVE_UNSTAKED_STREAMS_PER_THROTTLING_INTERVAL = 20;
export const AGAVE_STREAM_THROTTLING_INTERVAL_MS = 100;
export const AGAVE_STS_LEADER_FORWARD_COUNT = 2;
export const AGAVE_STS_RETRY_RATE_MS = 2_000;
/** Agave's send-transaction-service retry pool size (MAX_TRANSACTION_RETRY_POOL_SIZE). */
export const AGAVE_STS_RETRY_POOL_SIZE = 10_000;

/**
 * A region on the same host (docs/localnet.md "Regions on one host"): relays pointed at the facade's
 * /regions/{name} reach every validator through a path this far away (added to the validator's own link).
 */
export interface LocalnetRegionOptions {
  /** Lower-case letters, digits, - and _; the URL path segment. */
  readonly name: string;
  /** One-way delay (ms) to every validator, or one per validator (index = validator; missing: 0). Default 0. */
  readonly oneWayDelayMs?: number | readonly number[];
}
