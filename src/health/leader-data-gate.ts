// Start-up gate (main thread, cold, once): when the direct route is offered, the relay says it is ready only once
// the telemetry thread has published fresh leader data, or after a bound (then it starts degraded, as /health says).
// Without it, the first second after `relay_ready` refused every direct-only transaction with 503
// routes_unavailable (no_fresh_leader_data), which is what a newcomer's first request hit.
import type { SnapshotReader } from '../telemetry/snapshot.js';

const CHECK_MS = 50;

/** Resolves true once the snapshot is fresh (younger than maxAgeMs), false after waitMs without it. */
export async function waitForLeaderData(reader: SnapshotReader, maxAgeMs: number, waitMs: number, now: () => number = Date.now): Promise<boolean> {
  const until = now() + waitMs;
  for (;;) {
    const v = reader.current();
    if (v !== null && v.supported && now() - v.generatedAtUnixMs <= maxAgeMs) return true;
    if (now() >= until) return false;
    await new Promise((r) => setTimeout(r, CHECK_MS));
  }
}
