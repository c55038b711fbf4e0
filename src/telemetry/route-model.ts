// Route model and row text (telemetry thread; once per leader per publish, cold-ish). Turns what the telemetry
// thread knows about one leader (stake, TPU address, location, measurements) into the JSON text of a getLeaderSlots
// row minus its slot ("tail"): a publish builds one tail per distinct leader in the horizon and each row is
// '{"slot":N,' + tail. Definitions (docs/get-leader-slots.md is the reference):
//   pingToLeaders[r].latencyMs  round-trip ms from region r to the leader. This relay's region: the measured QUIC
//                               handshake RTT (egress reports or the probe) when one is fresh, else an estimate.
//                               Other regions: always an estimate (estimated: true).
//   estimate                    baseRttMs + 2 * greatCircleKm * routeFactor / kmPerMs; unknownRttMs without a location.
//   txPaths[p].latencyMs        one-way ms for a transaction from this relay to the leader's TPU over path p.
//                               direct: measured RTT / 2 + measured send latency, else estimated RTT / 2.
//                               static/partner: hop (measured RTT / 2 + send latency, else hopLatencyMs) + estimated
//                               one-way from the path's entry region to the leader. `selected`: the lowest.
//   routeScores[r]              market_latency_ms = regions[r].marketLatencyMs (configured one-way ms from r to the
//                               market); tx_latency_ms = one-way ms from r to the leader (own region: the selected
//                               path's latency; others: their ping / 2); score_ms = the sum; `selected`: the lowest.
import type { TelemetryConfig } from '../config/schema.js';

export interface LeaderLocation {
  readonly dataCenterKey: string;
  readonly region: string;
  readonly latitude: number;
  readonly longitude: number;
}

/** A fresh measurement of one path to one leader. */
export interface PathMeasurement {
  readonly handshakeRttMs: number;
  /** NaN when no send has been measured. */
  readonly sendLatencyMs: number;
}

export interface LeaderInputs {
  readonly identity: string;
  readonly stake: number;
  readonly tpuQuic: string | null;
  readonly location: LeaderLocation | undefined;
  /** provider -> measurement ("direct" for the relay's own TPU connection). */
  readonly measured: (provider: string) => PathMeasurement | undefined;
}

const EARTH_RADIUS_KM = 6371;

export function greatCircleKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const r = Math.PI / 180;
  const dLat = (lat2 - lat1) * r;
  const dLon = (lon2 - lon1) * r;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * r) * Math.cos(lat2 * r) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** Two decimals: enough for ms, short JSON. */
function ms(x: number): number {
  return Math.round(x * 100) / 100;
}

/** JSON string with every non-ASCII character escaped (row text must be ASCII: snapshot.ts slices it by byte). */
function str(s: string): string {
  return JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

export class RouteModel {
  private readonly regionByName: ReadonlyMap<string, TelemetryConfig['regions'][number]>;

  constructor(private readonly t: TelemetryConfig) {
    this.regionByName = new Map(t.regions.map((r) => [r.name, r]));
  }

  estimateRttMs(regionName: string, loc: LeaderLocation | undefined): number {
    const region = this.regionByName.get(regionName);
    if (region === undefined || loc === undefined) return this.t.estimate.unknownRttMs;
    const km = greatCircleKm(region.latitude, region.longitude, loc.latitude, loc.longitude);
    const e = this.t.estimate;
    return e.baseRttMs + (2 * km * e.routeFactor) / e.kmPerMs;
  }

  /** The row JSON after `{"slot":N,` for one leader. */
  tail(l: LeaderInputs): string {
    const t = this.t;
    const own = t.region;
    const direct = l.measured('direct');
    let out = '"identity":' + str(l.identity) + ',"stake":' + l.stake;
    if (l.location !== undefined) {
      const loc = l.location;
      out += ',"location":{"dataCenterKey":' + str(loc.dataCenterKey) + ',"region":' + str(loc.region) + ',"latitude":' + loc.latitude + ',"longitude":' + loc.longitude + '}';
    }

    // pingToLeaders: every configured region.
    const pingByRegion = new Map<string, number>();
    const pings: string[] = [];
    for (const r of t.regions) {
      const measured = r.name === own && direct !== undefined;
      const rtt = measured ? direct.handshakeRttMs : this.estimateRttMs(r.name, l.location);
      pingByRegion.set(r.name, rtt);
      pings.push('{"region":' + str(r.name) + ',"latencyMs":' + ms(rtt) + ',"estimated":' + !measured + '}');
    }
    out += ',"pingToLeaders":[' + pings.join(',') + ']';

    // txPaths: direct (when the leader advertises a TPU QUIC address), then static peers and partners.
    const paths: { provider: string; region: string; latency: number; measured: boolean; dz: boolean }[] = [];
    if (l.tpuQuic !== null) {
      const lat = direct !== undefined ? direct.handshakeRttMs / 2 + (Number.isNaN(direct.sendLatencyMs) ? 0 : direct.sendLatencyMs) : this.estimateRttMs(own, l.location) / 2;
      paths.push({ provider: 'direct', region: own, latency: lat, measured: direct !== undefined, dz: t.direct.doublezeroAvailable });
    }
    for (const p of t.paths) {
      const m = l.measured(p.provider);
      const hop = m !== undefined ? m.handshakeRttMs / 2 + (Number.isNaN(m.sendLatencyMs) ? 0 : m.sendLatencyMs) : p.hopLatencyMs;
      paths.push({ provider: p.provider, region: p.region, latency: hop + this.estimateRttMs(p.region, l.location) / 2, measured: m !== undefined, dz: p.doublezeroAvailable });
    }
    let best = -1;
    for (let i = 0; i < paths.length; i++) if (best < 0 || paths[i].latency < paths[best].latency) best = i;
    out +=
      ',"txPaths":[' +
      paths
        .map(
          (p, i) =>
            '{"provider":' + str(p.provider) + ',"pathRegion":' + str(p.region) + ',"latencyMs":' + ms(p.latency) + ',"measured":' + p.measured + ',"doublezeroAvailable":' + p.dz + ',"selected":' + (i === best) + '}',
        )
        .join(',') +
      ']';

    // routeScores: active regions.
    const scores: { region: string; market: number; tx: number }[] = [];
    for (const r of t.regions) {
      if (!r.active) continue;
      const tx = r.name === own && best >= 0 ? paths[best].latency : (pingByRegion.get(r.name) ?? t.estimate.unknownRttMs) / 2;
      scores.push({ region: r.name, market: r.marketLatencyMs, tx: ms(tx) });
    }
    let bestScore = -1;
    for (let i = 0; i < scores.length; i++) {
      if (bestScore < 0 || scores[i].market + scores[i].tx < scores[bestScore].market + scores[bestScore].tx) bestScore = i;
    }
    out +=
      ',"routeScores":[' +
      scores
        .map(
          (s, i) =>
            '{"active_region":' + str(s.region) + ',"market_latency_ms":' + ms(s.market) + ',"tx_latency_ms":' + s.tx + ',"score_ms":' + ms(s.market + s.tx) + ',"selected":' + (i === bestScore) + '}',
        )
        .join(',') +
      ']}';
    return out;
  }
}

export function rowText(slot: number, tail: string): string {
  return '{"slot":' + slot + ',' + tail;
}
