// A validator's TPU kind from what it publishes in getClusterNodes (telemetry thread; cold, once per cluster
// refresh). Firedancer nodes report a 0.x version (mainnet late 2026: "0.708.20306"), Agave nodes 2.x-4.x (older
// Agave, Jito-Solana and Paladin forks report their Agave version). Anything else is unknown. docs/tpu-quic.md
// "Leaders of both kinds".
import type { LeaderKind } from '../shm/layout.js';

export function leaderKindOfVersion(version: string | null | undefined): LeaderKind {
  if (typeof version !== 'string') return 'unknown';
  const major = /^(\d+)\./.exec(version)?.[1];
  if (major === undefined) return 'unknown';
  if (major === '0') return 'firedancer';
  return major === '1' || major === '2' || major === '3' || major === '4' ? 'agave' : 'unknown';
}

/** Validators per kind, for the log line the telemetry thread writes when the cluster's mix changes. */
export function countKinds(kinds: ReadonlyMap<string, LeaderKind>): Record<LeaderKind, number> {
  const out: Record<LeaderKind, number> = { agave: 0, firedancer: 0, unknown: 0 };
  for (const k of kinds.values()) out[k]++;
  return out;
}
