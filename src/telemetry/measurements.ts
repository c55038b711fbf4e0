// Route measurements: how egress workers report them and where the telemetry thread keeps them (cold: one message
// per report interval per worker; the store is read once per leader per publish).
//
// Input format (the contract with the egress workers): a MessagePort message
//   { type: 'route-measurements', items: RouteMeasurement[] }
// Each item names the leader by `identity` or by its TPU address `target` ("ip:port", resolved through
// getClusterNodes), the path `provider` ("direct" for the relay's own QUIC connection to the leader, or a configured
// static/partner provider name), and what was measured: `handshakeRttMs` (QUIC handshake, ~1 RTT) and/or
// `sendLatencyUs` (streamSend -> datagram handed to the kernel, e.g. the p50 of the interval). An egress worker gets
// its port from TelemetryThread.measurementPort() (main.ts) and calls postRouteMeasurements() every ~1 s, e.g. with
// fromConnectionReports(cache.report()). The telemetry thread's own QUIC handshake probe feeds the same store.

import type { MessagePort } from 'node:worker_threads';
import type { PathMeasurement } from './route-model.js';

export const ROUTE_MEASUREMENTS = 'route-measurements';

export interface RouteMeasurement {
  readonly identity?: string | null;
  readonly target?: string | null;
  readonly provider: string;
  readonly handshakeRttMs?: number;
  readonly sendLatencyUs?: number;
}

export interface RouteMeasurementBatch {
  readonly type: typeof ROUTE_MEASUREMENTS;
  readonly items: readonly RouteMeasurement[];
}

export function isRouteMeasurementBatch(m: unknown): m is RouteMeasurementBatch {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === ROUTE_MEASUREMENTS && Array.isArray((m as { items?: unknown }).items);
}

/** Egress side: send one batch (structured clone, a few hundred bytes). */
export function postRouteMeasurements(port: MessagePort, items: readonly RouteMeasurement[]): void {
  if (items.length > 0) port.postMessage({ type: ROUTE_MEASUREMENTS, items } satisfies RouteMeasurementBatch);
}

/** The egress connection cache's report() rows -> measurements (label = static/partner provider, else direct). */
export function fromConnectionReports(
  reports: readonly { target: string; label: string | null; handshakeMs: number; sendLatencyCount: number; sendLatencyP50Us: number }[],
): RouteMeasurement[] {
  return reports
    .filter((r) => Number.isFinite(r.handshakeMs))
    .map((r) => ({
      target: r.target,
      provider: r.label ?? 'direct',
      handshakeRttMs: r.handshakeMs,
      sendLatencyUs: r.sendLatencyCount > 0 ? r.sendLatencyP50Us : undefined,
    }));
}

interface Entry {
  rttMs: number;
  rttAt: number;
  sendMs: number;
  sendAt: number;
}

/** Latest value per (identity, provider), each kept for ttlMs. */
export class MeasurementStore {
  private readonly map = new Map<string, Entry>();

  constructor(private readonly ttlMs: number) {}

  add(identity: string, provider: string, m: { handshakeRttMs?: number; sendLatencyUs?: number }, now: number): void {
    const k = identity + '\u0000' + provider;
    let e = this.map.get(k);
    if (e === undefined) {
      e = { rttMs: NaN, rttAt: -Infinity, sendMs: NaN, sendAt: -Infinity };
      this.map.set(k, e);
    }
    if (typeof m.handshakeRttMs === 'number' && Number.isFinite(m.handshakeRttMs) && m.handshakeRttMs >= 0) {
      e.rttMs = m.handshakeRttMs;
      e.rttAt = now;
    }
    if (typeof m.sendLatencyUs === 'number' && Number.isFinite(m.sendLatencyUs) && m.sendLatencyUs >= 0) {
      e.sendMs = m.sendLatencyUs / 1000;
      e.sendAt = now;
    }
  }

  /** A fresh handshake RTT is required; the send latency is NaN when none is fresh. */
  get(identity: string, provider: string, now: number): PathMeasurement | undefined {
    const e = this.map.get(identity + '\u0000' + provider);
    if (e === undefined || now - e.rttAt > this.ttlMs) return undefined;
    return { handshakeRttMs: e.rttMs, sendLatencyMs: now - e.sendAt > this.ttlMs ? NaN : e.sendMs };
  }

  prune(now: number): void {
    for (const [k, e] of this.map) if (now - Math.max(e.rttAt, e.sendAt) > this.ttlMs) this.map.delete(k);
  }
}
