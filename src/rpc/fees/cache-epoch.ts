// Which "epoch" the fee cache is in (front thread; HOT: read on every getRecentPrioritizationFees call, one
// Atomics.load in the snapshot reader and one Date.now(), no allocation while the snapshot's generation is unchanged).
// An epoch is one cluster slot when the relay knows the slot: the telemetry snapshot's snapshotSlot, as long as the
// snapshot is younger than telemetry.maxSnapshotAgeMs (the same freshness rule as sendTransaction's minContextSlot
// check). When it does not know it (telemetry disabled, no snapshot yet, or a stale one: the cluster or its RPC
// stalled), an epoch is a fixed time window of UNKNOWN_SLOT_WINDOW_MS, so cached answers still expire about as often
// as slots pass. Slot epochs are >= 0; window epochs are negative and count down, so the two never collide.
// docs/fees.md "When the slot is unknown".
import type { SnapshotReader } from '../../telemetry/snapshot.js';

/** Solana's target slot time, ms: the cache lifetime while the slot is unknown. */
export const UNKNOWN_SLOT_WINDOW_MS = 400;

export interface EpochClock {
  /** The current epoch (see the module header). */
  current(): number;
}

export interface SnapshotEpochOptions {
  /** The telemetry snapshot's reader; null when telemetry is off. */
  readonly reader: SnapshotReader | null;
  /** telemetry.maxSnapshotAgeMs: an older snapshot does not say which slot it is. */
  readonly maxAgeMs: number;
  readonly now?: () => number;
}

/** Epochs from the telemetry snapshot, falling back to time windows. */
export function snapshotEpochs(o: SnapshotEpochOptions): EpochClock {
  const reader = o.reader;
  const maxAgeMs = o.maxAgeMs;
  const now = o.now ?? Date.now;
  return {
    current(): number {
      const t = now();
      const view = reader === null ? null : reader.current();
      if (view !== null && t - view.generatedAtUnixMs <= maxAgeMs && view.snapshotSlot >= 0) return view.snapshotSlot;
      return -1 - Math.floor(t / UNKNOWN_SLOT_WINDOW_MS);
    },
  };
}

/** True when `older` is the epoch right before `epoch` (the previous slot, or the previous time window). */
export function isPreviousEpoch(older: number, epoch: number): boolean {
  return epoch >= 0 ? older === epoch - 1 : older === epoch + 1;
}
