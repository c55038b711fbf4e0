// The egress part of GET /metrics (front thread, cold: runs per scrape). The front's handler concatenates it with
// its own text, or passes its TextBuilder to renderEgressMetrics().
import type { Histogram } from 'hdr-histogram-js';
import {
  CACHE_EVENTS,
  LEADER_KINDS,
  CONNECTION_STATES,
  QUIC_COUNTER,
  EGRESS_OUTCOMES,
  RETRY_OUTCOMES,
  ROUTE_BY_ID,
  ROUTE_COUNT,
  WORKER_COUNTER,
  egressCounterIndex,
  rebroadcastCounterIndex,
  retryCounterIndex,
} from '../shm/layout.js';
import { TextBuilder } from './prometheus.js';

/** What the renderer needs; EgressPool provides it. */
export interface EgressMetricsSource {
  depths(): number[];
  /** Labels of depths()' rings (default: their index); the quic-egress thread's ring is "quic". */
  ringLabels?(): string[];
  readonly restartCount: number;
  summedCounters(): Float64Array;
  /** Open QUIC connections (every state but closed) per QUIC thread, thread 0 first; absent or empty = no QUIC thread. */
  quicThreadConnections?(): number[];
  /** CPU seconds used per QUIC thread, thread 0 first; empty = unknown (no QUIC thread, not Linux). */
  quicThreadCpuSeconds?(): number[];
  readonly latency: { readonly byRoute: readonly Histogram[] };
  /** The wait policy each kind of ring consumer runs; absent = not reported. */
  waitPolicies?(): ConsumerWaitPolicy[];
}

export interface ConsumerWaitPolicy {
  readonly consumer: string;
  readonly policy: string;
  readonly spinUs: number;
}

export function renderEgressMetrics(tb: TextBuilder, src: EgressMetricsSource): void {
  const c = src.summedCounters();
  tb.declare('slotrelay_egress_outcomes_total', 'counter', 'Route outcomes of transactions taken from the rings, by route and outcome.');
  for (let r = 0; r < ROUTE_COUNT; r++) {
    for (let o = 0; o < EGRESS_OUTCOMES.length; o++) {
      const v = c[egressCounterIndex(r, o)];
      // Always expose the rpc route's full set (dashboards need zeros); other routes once they have counts.
      if (v !== 0 || r === 0) tb.sample('slotrelay_egress_outcomes_total', { route: ROUTE_BY_ID[r], outcome: EGRESS_OUTCOMES[o] }, v);
    }
  }
  tb.declare('slotrelay_egress_rebroadcasts_total', 'counter', 'Rebroadcast sends (retries), by route and outcome; first sends are in slotrelay_egress_outcomes_total.');
  for (let r = 0; r < ROUTE_COUNT; r++) {
    for (let o = 0; o < EGRESS_OUTCOMES.length; o++) {
      const v = c[rebroadcastCounterIndex(r, o)];
      if (v !== 0) tb.sample('slotrelay_egress_rebroadcasts_total', { route: ROUTE_BY_ID[r], outcome: EGRESS_OUTCOMES[o] }, v);
    }
  }
  tb.declare('slotrelay_retry_transactions_total', 'counter', 'Transactions that asked for rebroadcasts: queued or shed, and how each queued one ended.');
  let retryOpen = 0;
  for (let o = 0; o < RETRY_OUTCOMES.length; o++) {
    const v = c[retryCounterIndex(o)];
    tb.sample('slotrelay_retry_transactions_total', { outcome: RETRY_OUTCOMES[o] }, v);
    if (RETRY_OUTCOMES[o] === 'queued') retryOpen += v;
    else if (RETRY_OUTCOMES[o] !== 'dropped:retry_queue_full' && RETRY_OUTCOMES[o] !== 'recovered') retryOpen -= v;
  }
  tb.declare('slotrelay_retry_queue_depth', 'gauge', 'Transactions in the egress workers\' retry queues (queued minus ended).');
  tb.sample('slotrelay_retry_queue_depth', {}, retryOpen);
  tb.declare(
    'slotrelay_egress_records_total',
    'counter',
    'Records taken from the rings (consumed), released after every route finished, ended with no route sent (undelivered), or ended unreleased by a stop (shutdown).',
  );
  tb.sample('slotrelay_egress_records_total', { stage: 'consumed' }, c[WORKER_COUNTER.consumed]);
  tb.sample('slotrelay_egress_records_total', { stage: 'released' }, c[WORKER_COUNTER.released]);
  tb.sample('slotrelay_egress_records_total', { stage: 'undelivered' }, c[WORKER_COUNTER.undelivered]);
  tb.sample('slotrelay_egress_records_total', { stage: 'shutdown' }, c[WORKER_COUNTER.shutdown]);
  tb.declare('slotrelay_ring_depth', 'gauge', 'Records published into a ring and not yet released by its egress worker (ring="quic": the quic-egress thread).');
  const depths = src.depths();
  const labels = src.ringLabels?.();
  for (let i = 0; i < depths.length; i++) tb.sample('slotrelay_ring_depth', { ring: labels?.[i] ?? i }, depths[i]);
  tb.declare('slotrelay_quic_connections', 'gauge', 'QUIC connections of the QUIC threads (direct and static routes: one per leader or peer), by state.');
  for (let i = 0; i < CONNECTION_STATES.length; i++) tb.sample('slotrelay_quic_connections', { state: CONNECTION_STATES[i] }, c[QUIC_COUNTER.stateBase + i]);
  const perThread = src.quicThreadConnections?.() ?? [];
  if (perThread.length > 0) {
    tb.declare('slotrelay_quic_thread_connections', 'gauge', 'Open QUIC connections held by each QUIC thread (rings.quicThreads: each leader or static peer is owned by one).');
    for (let t = 0; t < perThread.length; t++) tb.sample('slotrelay_quic_thread_connections', { thread: t }, perThread[t]);
  }
  const cpu = src.quicThreadCpuSeconds?.() ?? [];
  if (cpu.length > 0) {
    tb.declare('slotrelay_quic_thread_cpu_seconds_total', 'counter', 'CPU time (user + system) of each QUIC thread: the one near a full core is the limit (rings.quicThreads).');
    for (let t = 0; t < cpu.length; t++) tb.sample('slotrelay_quic_thread_cpu_seconds_total', { thread: t }, cpu[t]);
  }
  tb.declare('slotrelay_quic_queued_transactions', 'gauge', 'Transactions waiting in the QUIC connections\' queues (handshake, stream credit, congestion room).');
  tb.sample('slotrelay_quic_queued_transactions', {}, c[QUIC_COUNTER.queued]);
  tb.declare('slotrelay_quic_connection_events_total', 'counter', 'QUIC connection cache events: connections created, evicted (LRU), idle-closed, refused (cache full), cycled by an identity change.');
  for (let i = 0; i < CACHE_EVENTS.length; i++) tb.sample('slotrelay_quic_connection_events_total', { event: CACHE_EVENTS[i] }, c[QUIC_COUNTER.eventBase + i]);
  tb.declare('slotrelay_quic_connections_by_leader_kind', 'gauge', 'Open QUIC connections by the leader\'s TPU kind as the handshake showed it (a stateless Retry: firedancer; none: agave; unknown before the first handshake). docs/tpu-quic.md.');
  for (let i = 0; i < LEADER_KINDS.length; i++) tb.sample('slotrelay_quic_connections_by_leader_kind', { kind: LEADER_KINDS[i] }, c[QUIC_COUNTER.kindBase + i]);
  const policies = src.waitPolicies?.() ?? [];
  if (policies.length > 0) {
    tb.declare('slotrelay_ring_wait_policy', 'gauge', 'How each kind of ring consumer waits for records (rings.waitPolicy): 1 for the policy it runs; spin_us = its spin bound.');
    for (const p of policies) tb.sample('slotrelay_ring_wait_policy', { consumer: p.consumer, policy: p.policy, spin_us: String(p.spinUs) }, 1);
  }
  tb.declare('slotrelay_egress_worker_restarts_total', 'counter', 'Egress consumer restarts (worker crashed or its task ended unexpectedly).');
  tb.sample('slotrelay_egress_worker_restarts_total', {}, src.restartCount);
  const byRoute = src.latency.byRoute;
  for (let r = 0; r < byRoute.length; r++) {
    if (byRoute[r].totalCount === 0) continue;
    tb.summary(
      'slotrelay_egress_latency_seconds',
      'Time from request arrival on the front thread to the route outcome in the egress worker, by route.',
      { route: ROUTE_BY_ID[r] },
      byRoute[r],
      1e-6,
    );
  }
}

/** Standalone text for the egress metrics (when the caller has no TextBuilder of its own). */
export function egressMetricsText(src: EgressMetricsSource): string {
  const tb = new TextBuilder();
  renderEgressMetrics(tb, src);
  return tb.text();
}
