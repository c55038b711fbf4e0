// Skipped slots as the upstream tells them (front thread; cold: a few calls per slot). Two kinds of evidence, fed by
// whichever source has them (docs/receipts.md "Skipped target slots"):
//   bank(slot, parent): a block exists for `slot` built on `parent` (slotSubscribe's slotNotification, slotsUpdates'
//     createdBank): the slots parent+1 .. slot-1 have no block on this fork, so they were skipped;
//   dead(slot): the upstream says so outright (slotsUpdates `dead`, Geyser SLOT_DEAD).
// Each skipped slot is told once, whichever source told it first. Duplicates (the same notification from two
// subscriptions), out-of-order notifications and a slot told as a bank after a gap are handled by two bounded sets:
// the slots seen with a bank and the slots already told, both kept for WINDOW_SLOTS behind the newest slot seen.
// A gap wider than MAX_GAP_SLOTS (a reconnect after a long outage, a cluster restart) is not reported slot by slot.
// What this cannot know: a slot told skipped on one fork that a later fork switch makes part of the chain (rare under
// Alpenglow, where a skip is itself certified); it is not taken back.

/** Slots remembered behind the newest one (seen banks, told skips): well past any reordering of notifications. */
const WINDOW_SLOTS = 512;
/** A parent further back than this is not a run of skips worth telling one by one (a reconnect, a restart). */
export const MAX_GAP_SLOTS = 64;

export type SkipSource = 'pubsub' | 'grpc';

export type SkipListener = (slot: number, source: SkipSource) => void;

export class SkippedSlots {
  private readonly banks = new Set<number>();
  private readonly told = new Set<number>();
  private newest = -1;
  /** Skipped slots told (each once), by the source that told it first. */
  readonly counts: Record<SkipSource, number> = { pubsub: 0, grpc: 0 };

  constructor(private readonly onSkipped: SkipListener) {}

  /** A block for `slot` whose parent is `parent` (null: unknown, e.g. genesis). */
  bank(slot: number, parent: number | null, source: SkipSource): void {
    if (!Number.isSafeInteger(slot) || slot < 0 || slot < this.newest - WINDOW_SLOTS) return;
    if (this.banks.has(slot)) return; // a duplicate: its gap was handled the first time
    this.banks.add(slot);
    this.advance(slot);
    if (parent === null || !Number.isSafeInteger(parent) || parent >= slot - 1) return;
    if (slot - parent - 1 > MAX_GAP_SLOTS) return;
    for (let s = Math.max(parent + 1, this.newest - WINDOW_SLOTS); s < slot; s++) if (!this.banks.has(s)) this.tell(s, source);
  }

  /** The upstream says `slot` is dead (skipped, or its block failed replay). */
  dead(slot: number, source: SkipSource): void {
    if (!Number.isSafeInteger(slot) || slot < 0 || slot < this.newest - WINDOW_SLOTS) return;
    if (this.banks.has(slot)) return;
    this.advance(slot);
    this.tell(slot, source);
  }

  private tell(slot: number, source: SkipSource): void {
    if (this.told.has(slot)) return;
    this.told.add(slot);
    this.counts[source]++;
    this.onSkipped(slot, source);
  }

  /** A newer slot: forget what fell out of the window (amortized O(1) per slot). */
  private advance(slot: number): void {
    if (slot <= this.newest) return;
    this.newest = slot;
    const floor = slot - WINDOW_SLOTS;
    if (this.banks.size > WINDOW_SLOTS * 2) for (const s of this.banks) if (s < floor) this.banks.delete(s);
    if (this.told.size > WINDOW_SLOTS * 2) for (const s of this.told) if (s < floor) this.told.delete(s);
  }
}
