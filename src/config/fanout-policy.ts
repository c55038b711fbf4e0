// The direct route's fanout policies, as routes.direct.fanout names them (cold). The config owns the words; the
// scheduler (src/egress/quic/scheduler.ts) implements them.
export const FANOUT_POLICIES = Object.freeze(['next-leaders', 'window-aware'] as const);
export type FanoutPolicy = (typeof FANOUT_POLICIES)[number];
