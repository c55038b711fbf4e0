// QUIC handshake probe (telemetry thread; cold: a few handshakes every probe.intervalMs). Measures this relay's
// round trip to upcoming leaders' TPU QUIC ports that the egress workers do not measure: a full solana-tpu handshake
// (client certificate, ALPN), timed by the connection itself (connect -> established, ~1 RTT plus TLS processing),
// then closed with code 0. Leaders are probed one after the other, never in a burst.
//
// Budget: an Agave validator accepts 8 new connections per minute from one unstaked client IP (the egress workers
// and this probe share our IP). ProbePlanner therefore
//   - skips a validator the egress reported a live connection to within the last EGRESS_WINDOW_MS (its ping comes
//     from that connection, and its connections already spend the budget);
//   - probes one validator (TPU address) at most once per probe.perPeerIntervalMs (30 s: 2 a minute, leaving 6).
// Types only at the top: the quiche native binding (BoringSSL, a few MB mapped per thread) is loaded on the first probe
// (dynamic import below), so a telemetry thread that never probes never maps it.
import type { IdentityCertificate, QuicClientConnection } from '../quic/index.js';
import { ipOf } from './locations.js';

/** Agave's connection-rate window: the egress having connected within it means the probe stays away. */
export const EGRESS_WINDOW_MS = 60_000;

export interface ProbeTarget {
  readonly identity: string;
  readonly tpuQuic: string;
}

/** Decides which upcoming leaders one probe round may handshake with (pure bookkeeping, unit-tested). */
export class ProbePlanner {
  private readonly probedAt = new Map<string, number>();
  private readonly egressAt = new Map<string, number>();

  constructor(private readonly perPeerIntervalMs: number) {}

  /** An egress worker reported a live connection to this TPU address. */
  noteEgress(tpuQuic: string, now: number): void {
    this.egressAt.set(tpuQuic, now);
  }

  /** The candidates (upcoming leaders, in slot order) this round may probe; marks them probed at `now`. */
  plan(candidates: readonly ProbeTarget[], now: number): ProbeTarget[] {
    const out: ProbeTarget[] = [];
    for (const c of candidates) {
      const e = this.egressAt.get(c.tpuQuic);
      if (e !== undefined && now - e < EGRESS_WINDOW_MS) continue;
      const p = this.probedAt.get(c.tpuQuic);
      if (p !== undefined && now - p < this.perPeerIntervalMs) continue;
      this.probedAt.set(c.tpuQuic, now);
      out.push(c);
    }
    return out;
  }

  /** Forget entries older than every window (bounded memory over epochs). */
  prune(now: number): void {
    const horizon = Math.max(EGRESS_WINDOW_MS, this.perPeerIntervalMs);
    for (const [k, t] of this.probedAt) if (now - t >= horizon) this.probedAt.delete(k);
    for (const [k, t] of this.egressAt) if (now - t >= horizon) this.egressAt.delete(k);
  }
}

let identity: Promise<IdentityCertificate> | null = null;

export interface ProbeResult {
  readonly identity: string;
  /** null when the handshake failed or timed out. */
  readonly rttMs: number | null;
}

export async function probeHandshake(tpuQuic: string, timeoutMs: number): Promise<number | null> {
  const quic = await import('../quic/index.js');
  identity ??= quic.createRandomIdentityCertificate();
  const host = ipOf(tpuQuic);
  const port = Number(tpuQuic.slice(tpuQuic.lastIndexOf(':') + 1));
  if (!Number.isInteger(port) || port <= 0) return null;
  let conn: QuicClientConnection | null = null;
  try {
    conn = await quic.QuicClientConnection.connect({ host, port, identity: await identity, connectTimeoutMs: timeoutMs });
    const ms = conn.stats().handshakeMs;
    return Number.isFinite(ms) ? ms : null;
  } catch {
    return null;
  } finally {
    conn?.close(0, 'probe');
  }
}

export async function probeHandshakes(targets: readonly { identity: string; tpuQuic: string }[], timeoutMs: number): Promise<ProbeResult[]> {
  const out: ProbeResult[] = [];
  for (const t of targets) out.push({ identity: t.identity, rttMs: await probeHandshake(t.tpuQuic, timeoutMs) });
  return out;
}
