// Which "epoch" the fee cache is in (front thread; HOT: read on every getRecentPrioritizationFees call: one
// Atomics.load in the snapshot reader and a few compares, no allocation while the snapshot's generation is unchanged).
// An epoch is one cluster slot when the relay knows the slot: the telemetry snapshot's snapshotSlot, as long as the
// snapshot is younger than telemetry.maxSnapshotAgeMs (the same freshness rule as sendTransaction's minContextSlot
// check). When it does not know it (telemetry disabled, no snapshot yet, or a stale one: the cluster or its RPC
// stalled), an epoch is a time window one slot long at the measured slot time (the last snapshot's, which stays
// right when its slot number goes stale; the documented fallback before anything is measured: docs/slot-time.md), so
// cached answers still expire about as often as slots pass. Slot epochs are >= 0; window epochs are negative and
// count down from the first window, one per window passed, so the two never collide and a change of window length
// never reuses a number.
// The time comes from a coarse clock (below), not Date.now(): Date.now() returns a freshly boxed 16-byte number on
// every call, the only allocation a cache hit would otherwise make (bench/rpc/fee-cache.bench.ts).
// docs/fees.md "When the slot is unknown".
import type { SnapshotReader } from '../../telemetry/snapshot.js';
import { slotMsOf } from '../../telemetry/slot-ms.js';

/** How often the coarse clock is refreshed, ms: the error it adds to the age check and to window boundaries. */
export const COARSE_CLOCK_TICK_MS = 20;

let coarseWallMs = Date.now();
/** performance.now(): monotonic (a wall clock stepped back must not reopen old windows), near 0 at process start. */
let coarseMonoMs = performance.now();
let ticker: NodeJS.Timeout | null = null;

function coarseWall(): number {
  return coarseWallMs;
}

function coarseMono(): number {
  return coarseMonoMs;
}

/** Starts the coarse clock: both readings at most COARSE_CLOCK_TICK_MS behind (unref'd: never keeps the process up). */
function startCoarseClock(): void {
  if (ticker !== null) return;
  const tick = (): void => {
    coarseWallMs = Date.now();
    coarseMonoMs = performance.now();
  };
  tick();
  ticker = setInterval(tick, COARSE_CLOCK_TICK_MS);
  ticker.unref();
}

export interface EpochClock {
  /** The current epoch (see the module header). */
  current(): number;
}

export interface SnapshotEpochOptions {
  /** The telemetry snapshot's reader; null when telemetry is off. */
  readonly reader: SnapshotReader | null;
  /** telemetry.maxSnapshotAgeMs: an older snapshot does not say which slot it is. */
  readonly maxAgeMs: number;
  /** Tests: other clocks, wall (compared with the snapshot's generatedAtUnixMs) and monotonic (time windows). */
  readonly now?: () => number;
  readonly monotonicNow?: () => number;
}

/** Epochs from the telemetry snapshot, falling back to time windows. */
export function snapshotEpochs(o: SnapshotEpochOptions): EpochClock {
  const reader = o.reader;
  const maxAgeMs = o.maxAgeMs;
  let wall = o.now;
  let mono = o.monotonicNow ?? o.now;
  if (wall === undefined || mono === undefined) {
    startCoarseClock();
    wall ??= coarseWall;
    mono ??= coarseMono;
  }
  const wallNow = wall;
  const monoNow = mono;
  // Window epochs: -1, -2, ... (small integers, V8 Smis, never boxed); windowStart on the monotonic clock.
  let windowEpoch = -1;
  let windowStart = monoNow();
  return {
    current(): number {
      const view = reader === null ? null : reader.current();
      if (view !== null && wallNow() - view.generatedAtUnixMs <= maxAgeMs && view.snapshotSlot >= 0) return view.snapshotSlot;
      const windowMs = slotMsOf(view);
      const elapsed = monoNow() - windowStart;
      if (elapsed >= windowMs) {
        const passed = Math.floor(elapsed / windowMs);
        windowEpoch -= passed;
        windowStart += passed * windowMs;
      }
      return windowEpoch;
    },
  };
}

/** True when `older` is the epoch right before `epoch` (the previous slot, or the previous time window). */
export function isPreviousEpoch(older: number, epoch: number): boolean {
  return epoch >= 0 ? older === epoch - 1 : older === epoch + 1;
}
