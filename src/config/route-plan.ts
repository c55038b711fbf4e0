// The route plan (cold: built once at start by main, frozen, handed to every thread): which routes this relay
// delivers by and which thread owns each one. Every "does route X exist here" reads this object, so the front, the
// telemetry thread and the consumers cannot disagree. Two families (ROUTE_FAMILY): the QUIC routes (direct, static)
// in the quic-egress thread, the HTTP routes (rpc, jito) in the egress workers; a record asking for both goes into both rings
// and is joined once (src/shm/join.ts). Threads and rings: docs/architecture.md.
import { ROUTE_BY_ID, ROUTE_IDS } from '../shm/layout.js';
import type { Config, RouteName } from './schema.js';
import { QUIC_PORT_DISABLED } from './quic-ingress-schema.js';

/** Which thread owns each route. */
export const ROUTE_FAMILIES = Object.freeze(['workers', 'quic'] as const);
export type RouteFamily = (typeof ROUTE_FAMILIES)[number];
export const ROUTE_FAMILY: Readonly<Record<RouteName, RouteFamily>> = Object.freeze({ rpc: 'workers', direct: 'quic', jito: 'workers', static: 'quic' });

/** What the quic-egress thread's telemetry probe does: handshakes in the quic-egress thread, or none. */
export const PROBE_MODES = Object.freeze(['quic-thread', 'off'] as const);
export type ProbeMode = (typeof PROBE_MODES)[number];

export interface RoutePlan {
  /** Routes this relay can deliver by (bits of ROUTE_IDS). */
  readonly available: number;
  readonly discard: boolean;
  readonly rpc: boolean;
  /** direct needs leader data from an upstream (the localnet's when none is configured). */
  readonly direct: boolean;
  readonly jito: boolean;
  /** routes.static.peers ("ip:port"), empty when the static route is off. */
  readonly staticPeers: readonly string[];
  /**
   * Route bits whose records go into the quic-egress thread's ring (its family's routes, available or not: the quic-egress thread
   * answers dropped:route_unavailable for the unavailable ones); 0 = no QUIC ring (routes.discard, or no QUIC thread).
   */
  readonly quicRing: number;
  /** Route bits the egress workers handle: every other bit. */
  readonly workerRing: number;
  /** Whether the quic-egress thread runs at all: an available QUIC route, the telemetry probe or the QUIC ingress needs it. */
  readonly quicThread: boolean;
  readonly probe: ProbeMode;
  /** The QUIC ingress listener (relayHost.quicPort != 0) runs in the quic-egress thread. */
  readonly ingress: boolean;
  /**
   * QUIC threads (rings.quicThreads; 0 when quicThread is false). Thread 0 consumes the QUIC ring, runs the routes,
   * the probe and the ingress; each leader or static peer's connection belongs to one thread (src/egress/quic/shard-owner.ts).
   */
  readonly quicThreads: number;
}

/** The routes that can reach a leader, as the telemetry thread's txPaths rows list them (./tx-paths.ts). */
export type OfferedRoutes = Pick<RoutePlan, 'direct' | 'staticPeers' | 'jito'>;

function maskOf(names: readonly RouteName[]): number {
  let m = 0;
  for (const n of names) m |= 1 << ROUTE_IDS[n];
  return m;
}

/** Bits of every route of `family`. */
export function familyMask(family: RouteFamily): number {
  return maskOf(ROUTE_BY_ID.filter((n) => ROUTE_FAMILY[n] === family));
}

export function buildRoutePlan(config: Readonly<Config>): RoutePlan {
  const r = config.routes;
  const discard = r.discard;
  const rpc = discard || r.rpc.endpoints.length > 0;
  const direct = !discard && r.direct.enabled && config.upstream.rpcUrl !== undefined;
  const jito = !discard && r.jito !== undefined;
  const staticPeers = discard ? [] : r.static.peers;
  const names: RouteName[] = [];
  if (rpc) names.push('rpc');
  if (direct) names.push('direct');
  if (jito) names.push('jito');
  if (staticPeers.length > 0) names.push('static');
  const available = maskOf(names);
  const probe: ProbeMode = config.telemetry.enabled && config.telemetry.probe.enabled ? 'quic-thread' : 'off';
  const ingress = config.relayHost.enabled && config.relayHost.quicPort !== QUIC_PORT_DISABLED;
  const quicThread = (available & familyMask('quic')) !== 0 || probe === 'quic-thread' || ingress;
  const all = maskOf(ROUTE_BY_ID);
  // With discard the workers take every record (and release it unsent), whatever its routes.
  const quicRing = discard || !quicThread ? 0 : familyMask('quic');
  return Object.freeze({
    available,
    discard,
    rpc,
    direct,
    jito,
    staticPeers: Object.freeze([...staticPeers]),
    quicRing,
    workerRing: all & ~quicRing,
    quicThread,
    probe,
    ingress,
    quicThreads: quicThread ? config.rings.quicThreads : 0,
  });
}

/** The route bits a consumer of `family` handles (its ring's records are filtered to these). */
export function ringMaskOf(plan: RoutePlan, family: RouteFamily): number {
  return family === 'quic' ? plan.quicRing : plan.workerRing;
}
