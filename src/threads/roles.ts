// The relay's thread roles, named once (cold: read at start-up and per scrape). The same names are the `thread` field
// of each thread's logs, the `thread` label of the per-thread memory metrics (src/metrics/thread-memory.ts), the
// `role` of a restart log line (./supervisor.ts), a plain worker_thread's name and the glossary of
// docs/architecture.md. A role names what a thread does, not how it is started (a Piscina pool or a Worker of its own).

export const THREAD_ROLES = [
  /** The main thread: the uWS front (HTTP/WS, admission, every ring's producer end). */
  'front',
  /** An egress worker: a Piscina thread consuming one egress ring (the HTTP routes: rpc, jito; rebroadcasts). */
  'egress',
  /** QUIC thread 0: consumes the QUIC ring (direct and static routes), hosts the QUIC ingress and the probe. */
  'quic-egress',
  /** QUIC thread k >= 1 (rings.quicThreads > 1): the connections of the targets it owns, fed over its link ring. */
  'quic-link',
  /** The QUIC ingress in a thread of its own: only in a relay with no QUIC thread (routes.discard, the benches). */
  'quic-ingress',
  /** The telemetry thread: follows the cluster, writes the leader-slot snapshot. */
  'telemetry',
  /** The front's status thread: getSignatureStatuses for the landing receipts. */
  'receipt-status',
  /** An egress or QUIC thread's status thread: getSignatureStatuses for its rebroadcast scheduler. */
  'retry-status',
] as const;

export type ThreadRole = (typeof THREAD_ROLES)[number];

/** The roles a supervisor restarts (every role but the front, which is the process). */
export type SupervisedRole = Exclude<ThreadRole, 'front'>;

export function isThreadRole(s: string): s is ThreadRole {
  return (THREAD_ROLES as readonly string[]).includes(s);
}
