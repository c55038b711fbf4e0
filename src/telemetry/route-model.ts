// Route model and row text (telemetry thread; once per leader per publish, cold-ish). Turns what the telemetry
// thread knows about one leader (stake, TPU address, location, measurements) into the JSON text of a getLeaderSlots
// row minus its slot ("tail"): a publish builds one tail per distinct leader in the horizon and each row is
// '{"slot":N,' + tail. Definitions (docs/get-leader-slots.md is the reference):
//   pingToLeaders[r].latencyMs  round-trip ms from region r to the leader. This relay's region: the measured QUIC
//                               handshake RTT (egress reports or the probe) when one is fresh, else an estimate.
//                               Other regions: always an estimate (estimated: true).
//   estimate                    baseRttMs + 2 * greatCircleKm * routeFactor / kmPerMs; unknownRttMs without a location.
//   txPaths[p].latencyMs        one-way ms for a transaction from this relay to the leader's TPU over path p; the
//                               paths are the routes the relay offers (../config/tx-paths.ts), in order direct, static, partner.
//                               direct: measured RTT / 2 + measured send latency, else estimated RTT / 2.
//                               static/partner: hop (measured RTT / 2 + send latency, else the configured hop, else
//                               an estimate) + estimated one-way from the path's entry region to the leader.
//   txPaths[p].selected         the relay sends a transaction over every route of its route set at once, so the
//                               one that decides when it arrives is the fastest: the lowest printed latency (ties:
//                               the earlier path).
//   routeScores[r]              market_latency_ms = regions[r].marketLatencyMs (configured one-way ms from r to the
//                               market); tx_latency_ms = one-way ms from r to the leader (own region: the selected
//                               path's latency; others: their ping / 2); score_ms = the sum of the two printed values
//                               (computed in hundredths, so it is exact as printed); `selected`: the lowest.
//   other regions, in a cluster  while another relay's figures for region r are fresh (src/cluster/telemetry-share.ts),
//                               r's ping and tx latency are that relay's own measured ones (estimated: false).
import type { TelemetryConfig } from '../config/schema.js';
import type { TxPathSpec } from '../config/tx-paths.js';

export interface LeaderLocation {
  readonly dataCenterKey: string;
  readonly region: string;
  readonly latitude: number;
  readonly longitude: number;
}

/** A fresh measurement of one path to one leader. */
export interface PathMeasurement {
  /** Round trip, ms: the windowed minimum of the path's recent samples (rtt-window.ts). */
  readonly handshakeRttMs: number;
  /** Unix ms of the newest sample: the row's measuredAtUnixMs. */
  readonly measuredAt: number;
  /** NaN when no send has been measured. */
  readonly sendLatencyMs: number;
}

export interface LeaderInputs {
  readonly identity: string;
  readonly stake: number;
  readonly tpuQuic: string | null;
  readonly location: LeaderLocation | undefined;
  /** The fresh measurement of the relay's own QUIC path to this leader (egress connection or probe). */
  readonly direct: PathMeasurement | undefined;
  /** The fresh hop measurement of a static / partner path (by provider), leader-independent. */
  readonly hop: (provider: string) => PathMeasurement | undefined;
  /** Another region's own measured figures for this leader (cluster shared telemetry), when fresh. */
  readonly remote?: (region: string) => RegionFigures | undefined;
}

/** A region's measured ping (round trip) and tx latency (one way) to one leader, in integer hundredths of a ms. */
export interface RegionFigures {
  readonly pingH: number;
  readonly txH: number;
  /** Unix ms of the newest round-trip sample behind pingH (that region's relay's clock). */
  readonly atMs: number;
}
const EARTH_RADIUS_KM = 6371;

export function greatCircleKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const r = Math.PI / 180;
  const dLat = (lat2 - lat1) * r;
  const dLon = (lon2 - lon1) * r;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * r) * Math.cos(lat2 * r) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** Milliseconds -> integer hundredths: every printed latency is h / 100, so sums of printed values are exact. */
function hundredths(x: number): number {
  return Math.round(x * 100);
}

function measuredOneWay(m: PathMeasurement): number {
  return m.handshakeRttMs / 2 + (Number.isNaN(m.sendLatencyMs) ? 0 : m.sendLatencyMs);
}

/** JSON string with every non-ASCII character escaped (row text must be ASCII: snapshot.ts slices it by byte). */
function str(s: string): string {
  return JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

export class RouteModel {
  private readonly regionByName: ReadonlyMap<string, TelemetryConfig['regions'][number]>;

  /**
   * @param paths the txPaths to list (../config/tx-paths.ts txPathSpecs), in tie-break order.
   * @param hopEstimateMs one-way ms to a path's entry point when it is neither measured nor configured (static peer:
   *   from its location when the dataset knows its IP; else unknownRttMs / 2).
   */
  constructor(
    private readonly t: TelemetryConfig,
    private readonly paths: readonly TxPathSpec[] = [],
    private readonly hopEstimateMs: (p: TxPathSpec) => number = () => t.estimate.unknownRttMs / 2,
  ) {
    this.regionByName = new Map(t.regions.map((r) => [r.name, r]));
  }

  estimateRttMs(regionName: string, loc: LeaderLocation | undefined): number {
    const region = this.regionByName.get(regionName);
    if (region === undefined || loc === undefined) return this.t.estimate.unknownRttMs;
    const km = greatCircleKm(region.latitude, region.longitude, loc.latitude, loc.longitude);
    const e = this.t.estimate;
    return e.baseRttMs + (2 * km * e.routeFactor) / e.kmPerMs;
  }

  /**
   * The row JSON after `{"slot":N,` for one leader. `ownFigures` receives this relay's region's figures when its ping
   * is measured (what the cluster shares with the other regions).
   */
  tail(l: LeaderInputs, ownFigures?: (f: RegionFigures) => void): string {
    const t = this.t;
    const own = t.region;
    const direct = l.direct;
    let out = '"identity":' + str(l.identity) + ',"stake":' + l.stake;
    if (l.location !== undefined) {
      const loc = l.location;
      out += ',"location":{"dataCenterKey":' + str(loc.dataCenterKey) + ',"region":' + str(loc.region) + ',"latitude":' + loc.latitude + ',"longitude":' + loc.longitude + '}';
    }

    // pingToLeaders: every configured region (hundredths of a ms).
    const pingByRegion = new Map<string, number>();
    const remoteTx = new Map<string, number>();
    const pings: string[] = [];
    for (const r of t.regions) {
      const measured = r.name === own && direct !== undefined;
      const remote = r.name !== own && l.remote !== undefined ? l.remote(r.name) : undefined;
      if (remote !== undefined) remoteTx.set(r.name, remote.txH);
      const rtt = remote !== undefined ? remote.pingH : hundredths(measured ? direct.handshakeRttMs : this.estimateRttMs(r.name, l.location));
      pingByRegion.set(r.name, rtt);
      // How fresh a measured ping is: its newest sample (an estimate has none).
      const at = remote !== undefined ? remote.atMs : measured ? Math.round(direct.measuredAt) : null;
      pings.push('{"region":' + str(r.name) + ',"latencyMs":' + rtt / 100 + ',"estimated":' + !(measured || remote !== undefined) + ',"measuredAtUnixMs":' + at + '}');
    }
    out += ',"pingToLeaders":[' + pings.join(',') + ']';

    // txPaths: the offered routes that reach this leader (direct only when it advertises a TPU QUIC address).
    let best = -1;
    let bestLatency = 0;
    const texts: string[] = [];
    const latencies: number[] = [];
    for (const p of this.paths) {
      let latency: number;
      let measured: boolean;
      if (p.kind === 'direct') {
        if (l.tpuQuic === null) continue;
        measured = direct !== undefined;
        latency = hundredths(direct !== undefined ? measuredOneWay(direct) : this.estimateRttMs(own, l.location) / 2);
      } else {
        const m = l.hop(p.provider);
        measured = m !== undefined;
        const hop = m !== undefined ? measuredOneWay(m) : (p.hopLatencyMs ?? this.hopEstimateMs(p));
        latency = hundredths(hop + this.estimateRttMs(p.region, l.location) / 2);
      }
      if (best < 0 || latency < bestLatency) {
        best = texts.length;
        bestLatency = latency;
      }
      latencies.push(latency);
      texts.push('{"provider":' + str(p.provider) + ',"pathRegion":' + str(p.region) + ',"latencyMs":' + latency / 100 + ',"measured":' + measured + ',"doublezeroAvailable":' + p.doublezeroAvailable + ',"selected":');
    }
    out += ',"txPaths":[' + texts.map((x, i) => x + (i === best) + '}').join(',') + ']';
    if (ownFigures !== undefined && direct !== undefined) {
      const pingH = pingByRegion.get(t.region) ?? hundredths(direct.handshakeRttMs);
      ownFigures({ pingH, txH: best >= 0 ? latencies[best] : Math.round(pingH / 2), atMs: Math.round(direct.measuredAt) });
    }

    // routeScores: active regions; integer hundredths so score = market + tx exactly as printed.
    const scores: { region: string; market: number; tx: number }[] = [];
    for (const r of t.regions) {
      if (!r.active) continue;
      const tx =
        r.name === own && best >= 0 ? latencies[best] : (remoteTx.get(r.name) ?? Math.round((pingByRegion.get(r.name) ?? hundredths(t.estimate.unknownRttMs)) / 2));
      scores.push({ region: r.name, market: hundredths(r.marketLatencyMs), tx });
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
            '{"active_region":' + str(s.region) + ',"market_latency_ms":' + s.market / 100 + ',"tx_latency_ms":' + s.tx / 100 + ',"score_ms":' + (s.market + s.tx) / 100 + ',"selected":' + (i === bestScore) + '}',
        )
        .join(',') +
      ']}';
    return out;
  }
}

export function rowText(slot: number, tail: string): string {
  return '{"slot":' + slot + ',' + tail;
}
