// Route measurements: how egress workers report them and where the telemetry thread keeps them (cold: one message
// per report interval per worker; the store is read once per leader per publish).
//
// Input format (the contract with the egress workers): a MessagePort message
//   { type: 'route-measurements', items: RouteMeasurement[] }
// An egress worker gets its port from TelemetryThread.measurementPort() (main.ts, one per egress task) and posts
// fromConnectionReports(cache.report()) every ~1 s (src/egress/quic/quic-egress.ts), also when it is empty: the batch
// doubles as a heartbeat, and the main thread closes ports that stay silent (telemetry-thread.ts).
//
// Two kinds of item:
//   { target, handshakeRttMs?, pathRttMs?, measuredAtUnixMs?, sendLatencyUs? }
//       a live QUIC connection of this relay to `target` ("ip:port"). The telemetry thread files it under every role
//       that address has: the `direct` path of the validator whose advertised tpuQuic it is (getClusterNodes), and the
//       hop of the static path whose peer it is (routes.static.peers). The connection's label (identity,
//       "static:...") is not needed for this.
//   { identity | target, provider, handshakeRttMs?, sendLatencyUs? }   an explicit measurement: provider "direct"
//       (the leader by identity, or by its TPU address) or a txPath provider name (that path's hop; identity ignored).
// `handshakeRttMs` is the QUIC handshake (~1 RTT); `pathRttMs` the live connection's newest round-trip measurement
// (quiche's smoothed RTT as of its last ACK with traffic, the idle RTT probe's PING -> reply without: client-driver.ts;
// preferred when present: a handshake is taken once and kept for the connection's life, so a handshake slowed by a
// busy host would stay the ping for hours) and `measuredAtUnixMs` when it was measured: a report repeats the newest
// measurement every second, and only a newer one is a new sample (issue #47: an idle connection's value was
// re-stamped as new every second). `sendLatencyUs` is streamSend -> datagram handed to the kernel (the connection's
// p50). The telemetry thread's own QUIC handshake probe feeds the same store. Each path keeps its recent round trips
// (rtt-window.ts): the ping is their windowed minimum, with the newest sample's time.

import type { MessagePort } from 'node:worker_threads';
import type { PathMeasurement } from './route-model.js';
import { RttWindow } from './rtt-window.js';

export const ROUTE_MEASUREMENTS = 'route-measurements';

export interface RouteMeasurement {
  readonly identity?: string | null;
  readonly target?: string | null;
  /** Absent: a live connection to `target`, classified by the telemetry thread. */
  readonly provider?: string;
  readonly handshakeRttMs?: number;
  /** The live connection's newest path RTT measurement (ms); wins over handshakeRttMs. */
  readonly pathRttMs?: number;
  /** Unix ms at which pathRttMs was measured; absent: when the batch arrives (a handshake, an explicit measurement). */
  readonly measuredAtUnixMs?: number;
  readonly sendLatencyUs?: number;
}

export interface RouteMeasurementBatch {
  readonly type: typeof ROUTE_MEASUREMENTS;
  readonly items: readonly RouteMeasurement[];
}

export function isRouteMeasurementBatch(m: unknown): m is RouteMeasurementBatch {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === ROUTE_MEASUREMENTS && Array.isArray((m as { items?: unknown }).items);
}

/** Egress side: send one batch (structured clone, a few hundred bytes). Empty batches are sent too (heartbeat). */
export function postRouteMeasurements(port: MessagePort, items: readonly RouteMeasurement[]): void {
  port.postMessage({ type: ROUTE_MEASUREMENTS, items } satisfies RouteMeasurementBatch);
}

/**
 * The egress connection cache's report() rows -> measurements: one item per connection that is active now (a
 * retrying or closing connection's last handshake says nothing about the path today).
 */
export function fromConnectionReports(
  reports: readonly { target: string; state: string; handshakeMs: number; rttMs?: number; rttAtUnixMs?: number; sendLatencyCount: number; sendLatencyP50Us: number }[],
): RouteMeasurement[] {
  const out: RouteMeasurement[] = [];
  for (const r of reports) {
    if (r.state !== 'active' || !Number.isFinite(r.handshakeMs)) continue;
    const path = valid(r.rttMs) && valid(r.rttAtUnixMs) ? r.rttMs : undefined;
    out.push({
      target: r.target,
      handshakeRttMs: r.handshakeMs,
      ...(path !== undefined ? { pathRttMs: path, measuredAtUnixMs: r.rttAtUnixMs } : {}),
      sendLatencyUs: r.sendLatencyCount > 0 ? r.sendLatencyP50Us : undefined,
    });
  }
  return out;
}

interface Entry {
  readonly rtt: RttWindow;
  sendMs: number;
  sendAt: number;
}

/** Store keys: the direct path to one leader, and the hop of one txPath (leader-independent). */
export const directKey = (identity: string): string => 'direct\u0000' + identity;
export const pathKey = (provider: string): string => 'path\u0000' + provider;

/** Per key: the windowed round trip (kept for ttlMs after its newest sample) and the latest send latency. */
export class MeasurementStore {
  private readonly map = new Map<string, Entry>();

  constructor(private readonly ttlMs: number) {}

  add(key: string, m: { handshakeRttMs?: number; pathRttMs?: number; measuredAtUnixMs?: number; sendLatencyUs?: number }, now: number): void {
    let e = this.map.get(key);
    if (e === undefined) {
      e = { rtt: new RttWindow(), sendMs: NaN, sendAt: -Infinity };
      this.map.set(key, e);
    }
    const path = valid(m.pathRttMs);
    const rtt = path ? m.pathRttMs : valid(m.handshakeRttMs) ? m.handshakeRttMs : undefined;
    // When it was measured (never in the future: another thread's clock read a moment apart); a sample no newer than
    // the newest kept is the same measurement reported again, not a new one.
    const at = path && valid(m.measuredAtUnixMs) ? Math.min(m.measuredAtUnixMs, now) : now;
    if (rtt !== undefined && at > e.rtt.newestAt) e.rtt.add(rtt, at);
    if (typeof m.sendLatencyUs === 'number' && Number.isFinite(m.sendLatencyUs) && m.sendLatencyUs >= 0) {
      e.sendMs = m.sendLatencyUs / 1000;
      e.sendAt = now;
    }
  }

  /** A fresh handshake RTT is required; the send latency is NaN when none is fresh. */
  get(key: string, now: number): PathMeasurement | undefined {
    const e = this.map.get(key);
    if (e === undefined || now - e.rtt.newestAt > this.ttlMs) return undefined;
    return { handshakeRttMs: e.rtt.minRttMs, measuredAt: e.rtt.newestAt, sendLatencyMs: now - e.sendAt > this.ttlMs ? NaN : e.sendMs };
  }

  prune(now: number): void {
    for (const [k, e] of this.map) if (now - Math.max(e.rtt.newestAt, e.sendAt) > this.ttlMs) this.map.delete(k);
  }
}

const valid = (x: number | undefined): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0;

/** Where one batch item lands in the store: [key, ...] (empty: nothing this thread knows about). */
export function classify(
  it: RouteMeasurement,
  lookup: { identityOfTarget(target: string): string | undefined; staticPathOfPeer(target: string): string | undefined },
): string[] {
  const keys: string[] = [];
  const target = typeof it.target === 'string' ? it.target : undefined;
  if (it.provider === undefined) {
    if (target === undefined) return keys;
    const id = lookup.identityOfTarget(target);
    if (id !== undefined) keys.push(directKey(id));
    const p = lookup.staticPathOfPeer(target);
    if (p !== undefined) keys.push(pathKey(p));
    return keys;
  }
  if (typeof it.provider !== 'string') return keys;
  if (it.provider === 'direct') {
    const id = typeof it.identity === 'string' ? it.identity : target !== undefined ? lookup.identityOfTarget(target) : undefined;
    if (id !== undefined) keys.push(directKey(id));
    return keys;
  }
  keys.push(pathKey(it.provider));
  return keys;
}
