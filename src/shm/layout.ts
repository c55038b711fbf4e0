// Every shared-memory offset in one module (the pino thread-stream `indexes.js` pattern): the front thread (producer)
// and the egress workers (consumers) both import this, and check MAGIC + LAYOUT_VERSION when they attach.
// Hot: the constants are read on every push/pop, so they are plain numbers, not lookups.
//
// Ring = one SharedArrayBuffer per egress worker, single producer (front thread) / single consumer (its worker).
//
//   bytes 0..255    control words (Int32Array view `ctl`), each hot word on its own 64-byte cache line
//     ctl[0] MAGIC, ctl[1] LAYOUT_VERSION, ctl[2] slot count (power of two), ctl[3] slot size in bytes
//     ctl[16] HEAD      records published by the producer (free-running u32 counter, wraps)
//     ctl[32] TAIL      records released by the consumer: slots before TAIL may be overwritten
//     ctl[48] WAITING   1 while the consumer sleeps in Atomics.waitAsync on HEAD (producer then notifies)
//     ctl[49] ATTACHED  generation of the consumer currently attached (bumped on every (re)attach)
//     ctl[50] STOP      set to 1 by the egress pool to ask the consumer to finish (shutdown); cold
//   bytes 256..     slot i at 256 + i * slotBytes; a slot = record header (104 bytes) + transaction bytes
//
// Rings: one per egress worker (the HTTP routes) and one for the quic-egress thread (the QUIC routes): src/config/route-plan.ts.
//
// A record stays in its slot until the consumer has finished every route for it, so a worker that crashes
// mid-send leaves it below HEAD and above TAIL: its replacement resends it (at-least-once, never lost).

export const RING_MAGIC = 0x534c5452; // 'SLTR'
export const RING_LAYOUT_VERSION = 3; // 2: REC_RECEIPT_SEQ in the former flags word; 3: REC_JOIN

export const CTL_BYTES = 256;
export const CTL_MAGIC = 0;
export const CTL_VERSION = 1;
export const CTL_SLOT_COUNT = 2;
export const CTL_SLOT_BYTES = 3;
export const CTL_HEAD = 16;
export const CTL_TAIL = 32;
export const CTL_WAITING = 48;
export const CTL_ATTACHED = 49;
export const CTL_STOP = 50;

// Record header, byte offsets inside a slot (DataView / typed views at slot base).
export const REC_TX_LENGTH = 0; // u32: transaction byte length
export const REC_KEY_ID = 4; // u32: index of the API key in the frozen key table (never the key itself)
export const REC_ROUTE_MASK = 8; // u32: bit i set = route ROUTE_IDS[i] requested (already intersected with policy)
export const REC_MAX_RETRIES = 12; // i32: sendTransaction maxRetries, -1 when the client gave none
/** Largest maxRetries a record holds; larger client values are clamped to it (the rebroadcast outlives the blockhash). */
export const MAX_RETRIES_I32 = 0x7fffffff;
export const REC_RECEIVED_AT_MS = 16; // f64: performance.timeOrigin + performance.now() at request arrival
export const REC_RECEIPT_SEQ = 24; // u32: the landing receipt's sequence number (src/shm/receipts-layout.ts), 0 = none
export const REC_TRACE_LENGTH = 28; // u8: length of the ASCII trace id
export const REC_TRACE = 29; // up to TRACE_MAX_BYTES of ASCII trace id (x-request-id or generated)
export const TRACE_MAX_BYTES = 64;
export const REC_JOIN = 96; // u32: join table entry + 1 (src/shm/join.ts) when the record is also in another ring, 0 = none
export const REC_HEADER_BYTES = 104; // a multiple of 8 (the f64 and tx data stay aligned)
export const REC_TX_DATA = REC_HEADER_BYTES;

/** Route ids: bit positions in REC_ROUTE_MASK. Append only; never renumber. */
export const ROUTE_IDS = Object.freeze({ rpc: 0, direct: 1, jito: 2, static: 3 } as const);
export const ROUTE_COUNT = 4;
export const ROUTE_BY_ID = Object.freeze(['rpc', 'direct', 'jito', 'static'] as const);

export function slotBytesFor(maxTransactionBytes: number): number {
  return Math.ceil((REC_HEADER_BYTES + maxTransactionBytes) / 64) * 64;
}

export function ringByteLength(slotCount: number, slotBytes: number): number {
  return CTL_BYTES + slotCount * slotBytes;
}

// Per-worker counters: one Float64Array region per worker in a single SharedArrayBuffer. Each region has exactly
// one writer (its worker), so plain stores suffice (no atomic read-modify-write, no contention); the front thread
// sums the regions when /metrics is scraped. f64 counts exactly up to 2^53.
//
// Egress outcomes are a closed set with stable labels (Jet TxDropReason::as_str): metric label = log field.
export const EGRESS_OUTCOMES = Object.freeze([
  'sent', // handed to the route's transport and acknowledged by it (HTTP 200 / QUIC stream written)
  'failed', // the route tried and failed (network error, timeout, upstream error response)
  'dropped:no_endpoint', // the route has nothing to send to (e.g. rpc route with no endpoints configured)
  'dropped:route_unavailable', // the route is not built into this relay yet or is disabled
  'dropped:shutdown', // the relay stopped before the route could finish
  'dropped:discarded', // routes.discard (benchmark runs only): released without sending
  'dropped:no_leader', // direct: no fresh leader schedule / slot, or no leader with a tpuQuic address
  'dropped:no_connection', // direct/static: no target had a usable QUIC connection (all connecting failed / retrying)
  'dropped:queue_full', // direct/static: every target's wait-for-stream-credit queue was full
  'dropped:stale', // direct/static: queued for stream credit / congestion room longer than routes.direct.staleAfterMs
] as const);
export type EgressOutcome = (typeof EGRESS_OUTCOMES)[number];
export const EGRESS_OUTCOME_COUNT = EGRESS_OUTCOMES.length;

export const WORKER_COUNTER = Object.freeze({
  /** records taken from the ring */
  consumed: 0,
  /** records whose every route finished (released back to the ring) */
  released: 1,
  /** records that ended with no route reporting `sent` (released, or ended by a stop) */
  undelivered: 2,
  /**
   * records a stop ended without releasing them (in flight or never taken when the consumer stopped); every route
   * that had not answered is counted dropped:shutdown. consumed = released + shutdown once the relay stopped.
   */
  shutdown: 3,
  /** first egress-outcome counter: index = EGRESS_BASE + routeId * EGRESS_OUTCOME_COUNT + outcomeIndex */
  egressBase: 8,
} as const);
export const WORKER_COUNTER_SLOTS = 128;

export function egressCounterIndex(routeId: number, outcomeIndex: number): number {
  return WORKER_COUNTER.egressBase + routeId * EGRESS_OUTCOME_COUNT + outcomeIndex;
}

// Rebroadcasts (src/egress/rebroadcast/retry-scheduler.ts) are counted apart from first sends, so the first-send matrix above
// keeps exactly one outcome per (transaction, requested route): its rows sum to the transactions per route.
/** Rebroadcast outcomes: a second matrix shaped like the first, right after it. */
export const REBROADCAST_BASE = WORKER_COUNTER.egressBase + ROUTE_COUNT * EGRESS_OUTCOME_COUNT;
export function rebroadcastCounterIndex(routeId: number, outcomeIndex: number): number {
  return REBROADCAST_BASE + routeId * EGRESS_OUTCOME_COUNT + outcomeIndex;
}

/**
 * Retry lifecycle of a transaction that asked for rebroadcasts (maxRetries != 0), one counter per label. Every such
 * transaction is counted once as `queued` or `dropped:retry_queue_full`, and each queued one ends once as landed,
 * dropped:expired, dropped:retries_exhausted or dropped:shutdown (queued - those = the queue depth).
 */
export const RETRY_OUTCOMES = Object.freeze([
  'queued', // copied out of the ring into the worker's retry queue after its first send
  'dropped:retry_queue_full', // shed: the retry queue was full (the first send still happened)
  'landed', // getSignatureStatuses reported it confirmed or finalized: rebroadcast stopped
  'dropped:expired', // its recent blockhash is no longer valid (isBlockhashValid false, or retries.blockhashTtlMs)
  'dropped:retries_exhausted', // maxRetries rebroadcasts done and one more interval without landing
  'dropped:shutdown', // still queued when the worker stopped
  'recovered', // not counted in the sum: its first send reached no route, a rebroadcast did
] as const);
export type RetryOutcome = (typeof RETRY_OUTCOMES)[number];
export const RETRY_BASE = REBROADCAST_BASE + ROUTE_COUNT * EGRESS_OUTCOME_COUNT;
export function retryCounterIndex(outcomeIndex: number): number {
  return RETRY_BASE + outcomeIndex;
}

// The quic-egress thread's connection cache (src/egress/quic/connection-cache.ts), written once a second by the quic-egress thread into
// its own region (the other regions keep zeros, so the summed value is the quic-egress thread's): connections per state and
// the transactions waiting in their queues (gauges), and the cache's events (counters).
/** Connection states (src/egress/quic/connection-worker.ts), the `state` label of slotrelay_quic_connections. */
export const CONNECTION_STATES = Object.freeze(['connecting', 'active', 'retrying', 'closing', 'closed'] as const);
export const CACHE_EVENTS = Object.freeze(['created', 'evicted', 'idle_closed', 'refused_full', 'identity_cycled'] as const);
export const QUIC_BASE = RETRY_BASE + RETRY_OUTCOMES.length;
export const QUIC_COUNTER = Object.freeze({
  /** + index in CONNECTION_STATES: connections in that state now (gauge). */
  stateBase: QUIC_BASE,
  /** Transactions queued on every connection now (gauge). */
  queued: QUIC_BASE + CONNECTION_STATES.length,
  /** + index in CACHE_EVENTS (counters). */
  eventBase: QUIC_BASE + CONNECTION_STATES.length + 1,
  /** + index in LEADER_KINDS: open connections whose leader is of that kind (gauge). */
  kindBase: QUIC_BASE + CONNECTION_STATES.length + 1 + CACHE_EVENTS.length,
} as const);
/**
 * A leader's TPU kind as the egress learned it (docs/tpu-quic.md "Leaders of both kinds"), the `kind` label of
 * slotrelay_quic_connections_by_leader_kind: a stateless Retry on connect = firedancer; none = agave; unknown until
 * the first handshake.
 */
export const LEADER_KINDS = Object.freeze(['agave', 'firedancer', 'unknown'] as const);
export type LeaderKind = (typeof LEADER_KINDS)[number];
if (QUIC_COUNTER.kindBase + LEADER_KINDS.length > WORKER_COUNTER_SLOTS) {
  throw new Error('WORKER_COUNTER_SLOTS too small for the egress outcome, retry and QUIC counters');
}
