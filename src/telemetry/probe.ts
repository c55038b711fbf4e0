// QUIC handshake probe (telemetry thread; cold: a few handshakes every probe.intervalMs). Measures this relay's
// round trip to upcoming leaders' TPU QUIC ports until the egress workers report RTTs from live connections: a full
// solana-tpu handshake (client certificate, ALPN), timed by the connection itself (connect -> established, ~1 RTT
// plus TLS processing), then closed with code 0. Leaders are probed one after the other: never a burst of
// handshakes, which an Agave validator rate-limits per IP (8 new connections per minute for an unstaked peer).
import { QuicClientConnection, createRandomIdentityCertificate, type IdentityCertificate } from '../quic/index.js';
import { ipOf } from './locations.js';

let identity: Promise<IdentityCertificate> | null = null;

export interface ProbeResult {
  readonly identity: string;
  /** null when the handshake failed or timed out. */
  readonly rttMs: number | null;
}

export async function probeHandshake(tpuQuic: string, timeoutMs: number): Promise<number | null> {
  identity ??= createRandomIdentityCertificate();
  const host = ipOf(tpuQuic);
  const port = Number(tpuQuic.slice(tpuQuic.lastIndexOf(':') + 1));
  if (!Number.isInteger(port) || port <= 0) return null;
  let conn: QuicClientConnection | null = null;
  try {
    conn = await QuicClientConnection.connect({ host, port, identity: await identity, connectTimeoutMs: timeoutMs });
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
