// SnapshotLeaderSource: the LeaderSource (./leader-source.ts) the egress scheduler uses, answered from the same
// shared snapshot getLeaderSlots serves — one source of truth for "who leads next". Runs wherever the scheduler runs
// (egress worker threads); HOT: leaderAt() is an Atomics.load plus two array reads while the generation is unchanged.
//
//   const source = new SnapshotLeaderSource(snapshotSab, { maxAgeMs: config.telemetry.maxSnapshotAgeMs });
//   const l = source.leaderAt(source.currentSlot() + 1);   // undefined: unknown slot, stale or missing snapshot
import type { LeaderInfo, LeaderSource } from './leader-source.js';
import { SnapshotReader, producersOfRow, type SnapshotView } from './snapshot.js';
import { slotMsOf } from './slot-ms.js';

export interface SnapshotLeaderSourceOptions {
  /** Fail closed beyond this age: currentSlot() -1, leaderAt() undefined. Default Infinity (caller decides). */
  readonly maxAgeMs?: number;
  /** Clock for ages (tests). Default Date.now. */
  readonly now?: () => number;
}

export class SnapshotLeaderSource implements LeaderSource {
  private readonly reader: SnapshotReader;
  private readonly maxAgeMs: number;
  private readonly now: () => number;

  constructor(sabOrReader: SharedArrayBuffer | SnapshotReader, opts: SnapshotLeaderSourceOptions = {}) {
    // Leaders only: no row text copied or decoded per generation on the thread that schedules transactions.
    this.reader = sabOrReader instanceof SnapshotReader ? sabOrReader : new SnapshotReader(sabOrReader, { rows: false });
    this.maxAgeMs = opts.maxAgeMs ?? Infinity;
    this.now = opts.now ?? Date.now;
  }

  /** The current usable view, or null (missing, unsupported schema, or older than maxAgeMs). */
  view(): SnapshotView | null {
    const v = this.reader.current();
    if (v === null || !v.supported) return null;
    if (this.now() - v.generatedAtUnixMs > this.maxAgeMs) return null;
    return v;
  }

  /**
   * The cluster's slot now, extrapolated from the snapshot's slot by the measured slot duration (the fallback before
   * one is measured; the snapshot is republished every slot, so this adds at most one or two). -1 when there is no
   * usable snapshot.
   */
  currentSlot(): number {
    const v = this.view();
    if (v === null) return -1;
    const elapsed = Math.max(0, this.now() - v.generatedAtUnixMs);
    return v.snapshotSlot + Math.floor(elapsed / slotMsOf(v));
  }

  leaderAt(slot: number): LeaderInfo | undefined {
    const v = this.view();
    if (v === null) return undefined;
    const i = slot - v.firstSlot;
    if (!(i >= 0 && i < v.rowCount)) return undefined;
    return v.leaders[v.leaderIndex[i]];
  }

  /** Every producer of `slot` (the leader first); one per slot unless the snapshot carries more (producersPerSlot). */
  producersAt(slot: number): readonly LeaderInfo[] | undefined {
    const v = this.view();
    if (v === null) return undefined;
    const i = slot - v.firstSlot;
    if (!(i >= 0 && i < v.rowCount)) return undefined;
    if (v.producersPerSlot === 1) return [v.leaders[v.leaderIndex[i]]];
    return producersOfRow(v, i).map((li) => v.leaders[li]);
  }

  ageMs(): number {
    const v = this.reader.current();
    return v === null ? Infinity : Math.max(0, this.now() - v.generatedAtUnixMs);
  }

  /** Upcoming distinct leaders from `fromSlot`, in slot order, at most `count` (connection pre-warming). */
  nextLeaders(fromSlot: number, count: number): LeaderInfo[] {
    const v = this.view();
    const out: LeaderInfo[] = [];
    if (v === null) return out;
    let prev = -1;
    for (let i = Math.max(0, fromSlot - v.firstSlot); i < v.rowCount && out.length < count; i++) {
      const li = v.leaderIndex[i];
      if (li === prev) continue;
      prev = li;
      const l = v.leaders[li];
      if (!out.includes(l)) out.push(l);
    }
    return out;
  }
}
