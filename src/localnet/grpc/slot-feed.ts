// The slot statuses the localnet's Geyser server streams (localnet process, main thread; once per slot, cold).
// Turns the slot clock's ticks into Yellowstone's per-slot sequence, in order for every slot: FIRST_SHRED_RECEIVED
// and CREATED_BANK when the slot starts; COMPLETED and PROCESSED when the next one starts (its bank is frozen);
// CONFIRMED and FINALIZED when the consensus depths the facade uses (FacadeContext.confirmedDepth / finalizedDepth)
// are reached. This is the one place that maps the localnet's consensus to Geyser statuses: a consensus mode that
// confirms or finalizes differently changes the depths handed in here.
import { SlotStatus, type SlotStatusCode } from '../../geyser/proto.js';

export interface SlotEvent {
  readonly slot: number;
  readonly parent: number | null;
  readonly status: SlotStatusCode;
}

export type SlotEventListener = (e: SlotEvent) => void;

export interface SlotFeedDepths {
  readonly confirmedDepth: number;
  readonly finalizedDepth: number;
}

export class SlotFeed {
  private readonly listeners: SlotEventListener[] = [];
  /** The newest slot at each status (index = SlotStatus code); -1 before the first. */
  private readonly newest: number[] = [-1, -1, -1, -1, -1, -1, -1];

  constructor(private readonly depths: SlotFeedDepths) {}

  onEvent(fn: SlotEventListener): void {
    this.listeners.push(fn);
  }

  /** The newest slot that reached `status` (0 before any did). */
  newestAt(status: SlotStatusCode): number {
    return Math.max(0, this.newest[status]);
  }

  /** Slot clock listener: slot `slot` has just started. */
  onSlot(slot: number): void {
    const prev = slot - 1;
    if (prev >= 0) {
      this.emit(prev, SlotStatus.COMPLETED);
      this.emit(prev, SlotStatus.PROCESSED);
    }
    // Depth 0 would confirm a slot before it is processed: the earliest is the slot just frozen.
    const confirmed = slot - Math.max(1, this.depths.confirmedDepth);
    if (confirmed >= 0) this.emit(confirmed, SlotStatus.CONFIRMED);
    const finalized = slot - Math.max(1, this.depths.finalizedDepth);
    if (finalized >= 0) this.emit(finalized, SlotStatus.FINALIZED);
    this.emit(slot, SlotStatus.FIRST_SHRED_RECEIVED);
    this.emit(slot, SlotStatus.CREATED_BANK);
  }

  private emit(slot: number, status: SlotStatusCode): void {
    this.newest[status] = slot;
    const e: SlotEvent = { slot, parent: slot > 0 ? slot - 1 : null, status };
    for (const fn of this.listeners) fn(e);
  }
}
