// How a ring consumer waits for the next record (cold: resolved once per consumer start, and per /metrics scrape).
// `park`: sleep in Atomics.waitAsync at once (woken by the front's notify: p50 60 us / p99 240 us measured on the
// 2-core reference box); `spin-then-park`: keep checking the ring once per event-loop turn for a bound after the last
// record, then park; `spin`: never park (a core per consumer, always). `auto` spends cores only where the host has
// them to spare: the quic-egress thread (the direct route's latency path) first, the egress workers once every consumer has
// a core of its own. docs/configuration.md "Rings" has the figures.
export const WAIT_POLICIES = ['auto', 'park', 'spin-then-park', 'spin'] as const;
export type WaitPolicySetting = (typeof WAIT_POLICIES)[number];

/** The spin bound `spin-then-park` uses when rings.pollBeforeParkUs is 0 (measured, docs/configuration.md). */
export const DEFAULT_SPIN_US = 2_000;

/** Which consumer: the quic-egress thread (QUIC ring: direct, static) or an egress worker (rpc, jito). */
export type ConsumerKind = 'quic-thread' | 'egress-worker';

export interface ResolvedWaitPolicy {
  readonly policy: 'park' | 'spin-then-park' | 'spin';
  /** spin-then-park: how long after the last record the consumer keeps polling (microseconds); else 0. */
  readonly spinUs: number;
  /** Why: the setting, or for `auto` the core count it was chosen from. */
  readonly reason: string;
}

/**
 * The policy a consumer runs. `auto`: an explicit rings.pollBeforeParkUs > 0 keeps its meaning (spin-then-park with
 * that bound, as before this setting existed); else the quic-egress thread spins-then-parks when the host has a core for the
 * front, one for it and one spare (>= 3), an egress worker when every consumer (front, QUIC threads, workers) has a
 * core and one is spare; otherwise park: on a host without spare cores spinning only takes CPU from the threads that
 * carry transactions.
 */
export interface RingWaitSettings {
  readonly waitPolicy: WaitPolicySetting;
  readonly pollBeforeParkUs: number;
  readonly quicThreads: number;
  readonly workers: number;
}

export function resolveWaitPolicy(rings: RingWaitSettings, kind: ConsumerKind, cores: number): ResolvedWaitPolicy {
  const setting = rings.waitPolicy;
  const bound = rings.pollBeforeParkUs > 0 ? rings.pollBeforeParkUs : DEFAULT_SPIN_US;
  if (setting === 'park') return { policy: 'park', spinUs: 0, reason: 'rings.waitPolicy' };
  if (setting === 'spin') return { policy: 'spin', spinUs: 0, reason: 'rings.waitPolicy' };
  if (setting === 'spin-then-park') return { policy: 'spin-then-park', spinUs: bound, reason: 'rings.waitPolicy' };
  if (rings.pollBeforeParkUs > 0) return { policy: 'spin-then-park', spinUs: bound, reason: 'auto: rings.pollBeforeParkUs' };
  const needed = kind === 'quic-thread' ? 3 : 2 + rings.quicThreads + rings.workers;
  return cores >= needed
    ? { policy: 'spin-then-park', spinUs: bound, reason: `auto: ${cores} cores >= ${needed}` }
    : { policy: 'park', spinUs: 0, reason: `auto: ${cores} cores < ${needed}` };
}
