// The slot duration a reader of the leader-slot snapshot should use (any thread that holds a SnapshotReader: front
// thread, egress workers; HOT-safe: two field reads, no allocation). docs/slot-time.md.
// A stale snapshot still carries the last measurement: the slot number ages, the slot time does not (it changes at
// epoch boundaries only), so the age rule that makes getLeaderSlots fail closed does not apply here.
import { FALLBACK_SLOT_MS } from './slot-duration.js';
import type { SnapshotView } from './snapshot.js';

/** The measured slot duration in `view`, ms; FALLBACK_SLOT_MS when there is no view or nothing was measured yet. */
export function slotMsOf(view: SnapshotView | null): number {
  return view !== null && view.slotMsSamples > 0 && view.slotMs > 0 ? view.slotMs : FALLBACK_SLOT_MS;
}

/** True when `view` carries a measured slot duration (not the fallback). */
export function slotMsMeasured(view: SnapshotView | null): boolean {
  return view !== null && view.slotMsSamples > 0 && view.slotMs > 0;
}
