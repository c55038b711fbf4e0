// How each supervised thread role is restarted (cold: read when a supervisor is made). One row per role, read by
// ./supervisor.ts; docs/architecture.md ("Thread supervision") says why the rows differ.
import type { SupervisedRole } from './roles.js';

export interface RestartPolicy {
  /** First restart delay after a crash; doubles per consecutive crash up to maxBackoffMs. */
  readonly firstBackoffMs: number;
  readonly maxBackoffMs: number;
  /** A run that lasted this long before it ended starts the backoff over (it was not a crash loop). */
  readonly stableMs: number;
  /** A run not ready this long after its spawn is ended and replaced as a crash; null = no limit (readiness is awaited elsewhere). */
  readonly startupTimeoutMs: number | null;
  /** stop(): how long a run asked to stop gets to return before it is ended anyway. */
  readonly stopGraceMs: number;
}

/** Ring consumers and QUIC threads: a crash loses no record (the replacement resumes at the ring's TAIL), so restart fast. */
const RING_THREAD: RestartPolicy = { firstBackoffMs: 100, maxBackoffMs: 5_000, stableMs: 10_000, startupTimeoutMs: null, stopGraceMs: 2_000 };

/** Status threads: their owner asks from its own thread meanwhile, so there is no hurry; a slow start on a busy host is waited for. */
const STATUS_THREAD: RestartPolicy = { firstBackoffMs: 500, maxBackoffMs: 10_000, stableMs: 30_000, startupTimeoutMs: 15_000, stopGraceMs: 0 };

export const RESTART_POLICIES: Readonly<Record<SupervisedRole, RestartPolicy>> = Object.freeze({
  egress: RING_THREAD,
  'quic-egress': RING_THREAD,
  'quic-link': RING_THREAD,
  // Was a fixed 500 ms forever: a listener crashing at once would restart twice a second; it now backs off as the others.
  'quic-ingress': { firstBackoffMs: 500, maxBackoffMs: 5_000, stableMs: 10_000, startupTimeoutMs: null, stopGraceMs: 2_000 },
  // firstBackoffMs is the default of telemetry.restartBackoffMs (src/config/telemetry-schema.ts), which overrides it.
  telemetry: { firstBackoffMs: 200, maxBackoffMs: 5_000, stableMs: 10_000, startupTimeoutMs: null, stopGraceMs: 0 },
  'receipt-status': STATUS_THREAD,
  'retry-status': STATUS_THREAD,
});
