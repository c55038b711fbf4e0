// Which txPaths a getLeaderSlots row lists (cold: derived once when the telemetry thread starts; checked once at
// config load). The list comes from the route plan (./route-plan.ts), so it cannot drift from the routes offered:
//   direct        routes.direct.enabled (and, per leader, only when the cluster advertises its tpuQuic)
//   static:<peer> one per routes.static.peers entry, in that order
//   jito          when routes.jito is set (a partner route)
// telemetry.paths only annotates those entries (display name, entry region, configured hop, DoubleZero flag); an
// annotation that matches no configured route is a configuration error (telemetryPathIssues, run by loadConfig).
import type { OfferedRoutes } from './route-plan.js';
import type { TelemetryConfig } from './schema.js';

export interface TxPathSpec {
  /** txPaths.provider. */
  readonly provider: string;
  readonly kind: 'direct' | 'static' | 'partner';
  /** txPaths.pathRegion: where the path enters the cluster (this relay's region unless annotated). */
  readonly region: string;
  /** static: the peer "ip:port" (its QUIC connection measures the hop); null otherwise. */
  readonly peer: string | null;
  /** Configured one-way ms to the path's entry point, used while the hop is not measured; null = estimate. */
  readonly hopLatencyMs: number | null;
  readonly doublezeroAvailable: boolean;
}

type Annotation = TelemetryConfig['paths'][number];

function staticAnnotation(t: TelemetryConfig, peer: string): Annotation | undefined {
  return t.paths.find((p) => p.kind === 'static' && (p.peer === peer || (p.peer === undefined && p.provider === `static:${peer}`)));
}

/** The ordered path list (direct first, then static peers, then partners): ties in `selected` go to the earlier. */
export function txPathSpecs(t: TelemetryConfig, routes: OfferedRoutes): TxPathSpec[] {
  const out: TxPathSpec[] = [];
  if (routes.direct) {
    out.push({ provider: 'direct', kind: 'direct', region: t.region, peer: null, hopLatencyMs: null, doublezeroAvailable: t.direct.doublezeroAvailable });
  }
  for (const peer of routes.staticPeers) {
    const a = staticAnnotation(t, peer);
    out.push({
      provider: a?.provider ?? `static:${peer}`,
      kind: 'static',
      region: a?.region ?? t.region,
      peer,
      hopLatencyMs: a?.hopLatencyMs ?? null,
      doublezeroAvailable: a?.doublezeroAvailable ?? false,
    });
  }
  if (routes.jito) {
    const a = t.paths.find((p) => p.kind === 'partner' && p.provider === 'jito');
    out.push({ provider: 'jito', kind: 'partner', region: a?.region ?? t.region, peer: null, hopLatencyMs: a?.hopLatencyMs ?? null, doublezeroAvailable: a?.doublezeroAvailable ?? false });
  }
  return out;
}

/** telemetry.paths entries that annotate nothing the relay offers, or annotate one path twice (messages name the entry). */
export function telemetryPathIssues(t: TelemetryConfig, routes: OfferedRoutes): string[] {
  const issues: string[] = [];
  const used = new Map<string, number>();
  t.paths.forEach((p, i) => {
    const at = `telemetry.paths.${i}`;
    let key: string | null = null;
    if (p.kind === 'static') {
      const peer = p.peer ?? (p.provider.startsWith('static:') ? p.provider.slice('static:'.length) : undefined);
      if (peer === undefined || !routes.staticPeers.includes(peer)) {
        issues.push(`${at}: static path "${p.provider}" matches no routes.static.peers entry (set peer: "ip:port" to one of them)`);
      } else key = `static:${peer}`;
    } else if (p.provider !== 'jito') {
      issues.push(`${at}: partner "${p.provider}" is not a route this relay has (the only partner route is "jito")`);
    } else if (!routes.jito) {
      issues.push(`${at}: partner "jito" is annotated but routes.jito is not configured`);
    } else key = 'jito';
    if (key !== null) {
      const prev = used.get(key);
      if (prev !== undefined) issues.push(`${at}: annotates the same path as telemetry.paths.${prev}`);
      else used.set(key, i);
    }
  });
  const names = new Set<string>();
  for (const s of txPathSpecs(t, routes)) {
    if (names.has(s.provider)) issues.push(`telemetry.paths: provider name "${s.provider}" is used by two paths`);
    names.add(s.provider);
  }
  return issues;
}
