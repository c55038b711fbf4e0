// Which routes a consumer has (cold: once per consumer start; egress worker or QUIC thread 0). Builds, by the frozen
// route plan (or the config when a test gives none), this consumer's family of routes: rpc and jito in an egress
// worker, direct and static in the QUIC thread (one identity certificate and one QUIC connection cache for both), or
// the benchmark's discard route everywhere.
import type { MessagePort } from 'node:worker_threads';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../log/logger.js';
import { ROUTE_COUNT, ROUTE_IDS } from '../../shm/layout.js';
import type { RouteFamily, RoutePlan } from '../../config/route-plan.js';
import type { EgressRoute } from '../contract/route.js';
import { RpcRoute } from '../worker-routes/rpc-route.js';
import { DiscardRoute } from '../worker-routes/discard-route.js';
import { DirectRoute, createLeaderSource } from '../quic/direct-route.js';
import { StaticRoute } from '../quic/static-route.js';
import { QuicEgress } from '../quic/quic-egress.js';
import { JitoRoute } from '../worker-routes/jito-route.js';
import type { QuicLink } from '../../shm/quic-link-layout.js';
import { slotMsSource } from '../../telemetry/slot-ms.js';

export interface RouteInputs {
  readonly snapshot?: SharedArrayBuffer;
  /** The adaptive routing's widen table, for the direct route (absent: routing.adaptive off). */
  readonly widen?: SharedArrayBuffer;
  readonly measurementPort?: MessagePort;
  readonly identitySecret?: Uint8Array;
  /** Build only this family's routes (the others stay null); absent = all. */
  readonly family?: RouteFamily;
  /** The frozen route plan; absent = decided from config as before (tests, benches). */
  readonly plan?: RoutePlan;
  /** This consumer's counter region: the QUIC connection cache writes its gauges there. */
  readonly quicGauges?: Float64Array;
  /** QUIC thread 0 of several: the links to the threads owning the other targets. */
  readonly quicLinks?: readonly QuicLink[];
}

export function buildRoutes(config: Config, log: Logger, telemetry: RouteInputs = {}): (EgressRoute | null)[] {
  const routes: (EgressRoute | null)[] = new Array(ROUTE_COUNT).fill(null);
  const family = telemetry.family;
  const plan = telemetry.plan;
  if (config.routes.discard) return family === 'quic' ? routes : routes.map((_, id) => new DiscardRoute(id));
  const http = family !== 'quic';
  const quicFamily = family !== 'workers';
  if (http && (plan === undefined || plan.rpc)) {
    const rpc = new RpcRoute(config.routes.rpc, log);
    routes[rpc.id] = rpc;
  }
  // direct + static share one identity certificate and one QUIC connection cache (the QUIC thread's: one connection
  // per leader per process). Leaders come from the telemetry snapshot when the pool passes one, else from polling
  // upstream.rpcUrl (createLeaderSource).
  const wantDirect =
    quicFamily && (plan !== undefined ? plan.direct : config.routes.direct.enabled && (telemetry.snapshot !== undefined || config.upstream.rpcUrl !== undefined));
  const wantStatic = quicFamily && (plan !== undefined ? plan.staticPeers.length > 0 : config.routes.static.peers.length > 0);
  const slotMs = slotMsSource(telemetry.snapshot);
  const quic = wantDirect || wantStatic ? new QuicEgress(config, log, { identitySecret: telemetry.identitySecret, gauges: telemetry.quicGauges, links: telemetry.quicLinks, slotMs }) : null;
  if (quic !== null && wantDirect) {
    const source = createLeaderSource(config, log, telemetry.snapshot);
    if (source !== null) routes[ROUTE_IDS.direct] = new DirectRoute(quic, source, config.routes.direct, telemetry.widen);
  }
  if (quic !== null && telemetry.measurementPort !== undefined) quic.reportMeasurementsTo(telemetry.measurementPort);
  if (quic !== null && wantStatic) routes[ROUTE_IDS.static] = new StaticRoute(quic, config.routes.static.peers);
  if (http && config.routes.jito !== undefined && (plan === undefined || plan.jito)) routes[ROUTE_IDS.jito] = new JitoRoute(config.routes.jito, log);
  return routes;
}
