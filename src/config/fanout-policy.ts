// The direct route's fanout policies, as routes.direct.fanout names them (cold). The config owns the words; the
// scheduler (src/egress/quic/scheduler.ts) implements them.
export const FANOUT_POLICIES = Object.freeze(['next-leaders', 'window-aware'] as const);
export type FanoutPolicy = (typeof FANOUT_POLICIES)[number];
/**
 * routes.direct.producers: which of a slot's block producers get the transaction when the leader data gives a slot
 * more than one (issue #44 item 5; one per slot from every source today, so both words send the same now).
 */
export const PRODUCER_POLICIES = Object.freeze(['all', 'first'] as const);
export type ProducerPolicy = (typeof PRODUCER_POLICIES)[number];
