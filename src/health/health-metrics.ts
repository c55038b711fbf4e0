// What GET /health says, as gauges on /metrics (front thread, cold: per scrape, from the health monitor's last report;
// docs/health.md, docs/monitoring.md). Alerts need numbers: the relay's status, each route's deliverability, the
// upstream's reachability and the age of the leader data. Nothing here is computed per request.
import type { HealthReport, HealthStatus } from './health-monitor.js';
import type { TextBuilder } from '../metrics/prometheus.js';

const STATUSES: readonly HealthStatus[] = ['ok', 'degraded', 'unhealthy', 'shutting_down'];

export function renderHealth(tb: TextBuilder, h: HealthReport): void {
  tb.declare('slotrelay_health_status', 'gauge', 'The GET /health status: 1 for the current one, 0 for the others.');
  for (const s of STATUSES) tb.sample('slotrelay_health_status', { status: s }, h.status === s ? 1 : 0);
  tb.declare('slotrelay_route_deliverable', 'gauge', '1 while the route can take transactions, 0 while /health names why not (endpoint_unreachable, no_fresh_leader_data, route_failing, route_probing).');
  for (const [route, r] of Object.entries(h.routes)) tb.sample('slotrelay_route_deliverable', { route }, r.deliverable ? 1 : 0);
  if (h.upstream.configured) {
    tb.declare('slotrelay_upstream_reachable', 'gauge', '1 while the upstream RPC answered its last reachability probe (health.probeIntervalMs), 0 while not.');
    tb.sample('slotrelay_upstream_reachable', {}, h.upstream.reachable ? 1 : 0);
    if (h.upstream.lastAnswerAgoMs !== null) {
      tb.declare('slotrelay_upstream_last_answer_age_seconds', 'gauge', 'Seconds since the upstream RPC last answered a probe.');
      tb.sample('slotrelay_upstream_last_answer_age_seconds', {}, h.upstream.lastAnswerAgoMs / 1000);
    }
  }
  const ld = h.leaderData;
  if (ld !== null) {
    tb.declare('slotrelay_leader_data_fresh', 'gauge', '1 while the leader-slot snapshot is within telemetry.maxSnapshotAgeMs (direct route and getLeaderSlots served), 0 while not.');
    tb.sample('slotrelay_leader_data_fresh', {}, ld.fresh ? 1 : 0);
    if (ld.ageMs !== null) {
      tb.declare('slotrelay_leader_data_age_seconds', 'gauge', 'Age of the leader-slot snapshot the telemetry thread last published (absent until the first one).');
      tb.sample('slotrelay_leader_data_age_seconds', {}, ld.ageMs / 1000);
    }
  }
}
