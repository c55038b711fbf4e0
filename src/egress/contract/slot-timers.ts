// The egress timers that follow the cluster's slot time (egress workers and QUIC threads; cold: read when a timer is
// armed or a transaction queued). Each is a number of slots times the measured slot duration (src/telemetry/slot-ms.ts),
// unless the operator set the ms figure in the config, which then wins. docs/slot-time.md lists them.
// The slot counts are the old millisecond defaults expressed at the 400 ms slots they were chosen for, so a 400 ms
// cluster sees the same timers as before and a 200 ms one sees them halved.

/** Rebroadcast interval: Agave's send-transaction-service retry rate, 2000 ms at 400 ms slots. */
export const REBROADCAST_SLOTS = 5;
/** getSignatureStatuses / isBlockhashValid poll of the retry queue: 1000 ms at 400 ms slots. */
export const STATUS_POLL_SLOTS = 2.5;
/**
 * A blockhash lives 150 blocks (Agave MAX_PROCESSING_AGE); skipped slots make 150 blocks take more slots, and the
 * blockhash was made before the client signed: 150 x 1.5 slots (90 s at 400 ms, 45 s at 200 ms). Used only when the
 * upstream cannot answer isBlockhashValid.
 */
export const BLOCKHASH_TTL_SLOTS = 225;
/**
 * A transaction waiting on a QUIC connection this long ends as dropped:stale: one leader window (4 slots) plus one
 * slot of margin, after which the leader it was aimed at has moved on (2000 ms at 400 ms slots).
 */
export const STALE_SLOTS = 5;

/** ms for `slots` slots at the current slot time, unless `configured` (ms) was set. */
export function slotTimer(configured: number | undefined, slots: number, slotMs: () => number): () => number {
  if (configured !== undefined) return () => configured;
  return () => Math.max(1, Math.round(slots * slotMs()));
}
