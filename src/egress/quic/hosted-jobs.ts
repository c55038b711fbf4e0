// Jobs the quic-egress thread hosts besides its ring consumer (cold: one message per job start and end). The front side
// (EgressPool.hostInQuicThread, main thread) posts a HostRequest on the QUIC task's host port; the quic-egress thread
// (src/egress/consumer/quic-egress-main.ts) runs the job and answers a HostAnswer when it ends. Today's one job: the QUIC ingress
// listener, whose task (src/ingress/ingress-task-runner.ts QuicThreadTask) would otherwise need a thread of its own.
export const HOSTED_JOBS = Object.freeze(['quic-ingress'] as const);
export type HostedJob = (typeof HOSTED_JOBS)[number];

export interface HostRequest {
  readonly type: 'host';
  readonly id: number;
  readonly job: HostedJob;
  /** The job's own task payload (structured-cloned; its ports transferred with it). */
  readonly task: unknown;
}

export interface HostAnswer {
  readonly type: 'host-ended';
  readonly id: number;
  /** null: the job returned; else why it failed. */
  readonly error: string | null;
}

export function isHostRequest(m: unknown): m is HostRequest {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'host' && (HOSTED_JOBS as readonly unknown[]).includes((m as { job?: unknown }).job);
}

export function isHostAnswer(m: unknown): m is HostAnswer {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'host-ended' && typeof (m as { id?: unknown }).id === 'number';
}
