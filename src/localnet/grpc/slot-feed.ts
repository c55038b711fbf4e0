// The slot statuses the localnet's Geyser server streams (localnet process, main thread; once per slot, cold).
// Turns the slot clock's ticks into Yellowstone's per-slot sequence, in order for every slot: FIRST_SHRED_RECEIVED
// when the slot starts (its first shred), CREATED_BANK when replay creates its bank, shredToBankMs later
// (src/localnet/shred-to-bank.ts, always before the next slot starts); COMPLETED and PROCESSED when the next one
// starts (its bank is frozen);
// CONFIRMED and FINALIZED when the consensus says so. This is the one place that maps the localnet's consensus to
// Geyser statuses: tower by the depths the facade uses (FacadeContext.confirmedDepth / finalizedDepth); Alpenglow
// (src/localnet/consensus.ts) by its certificates: CONFIRMED then FINALIZED together when a block's finalization
// certificate arrives (confirmed answers what finalized does), and a skipped slot has no bank: DEAD when the next
// slot starts, nothing before.
import { SlotStatus, type SlotStatusCode } from '../../geyser/proto.js';

export interface SlotEvent {
  readonly slot: number;
  readonly parent: number | null;
  readonly status: SlotStatusCode;
}

export type SlotEventListener = (e: SlotEvent) => void;

/** The localnet's consensus as the feed needs it (src/localnet/consensus.ts). */
export interface SlotFeedConsensus {
  readonly mode: 'alpenglow' | 'tower';
  isSkipped(slot: number): boolean;
  onFinalized(fn: (finalizedSlot: number) => void): void;
}

export interface SlotFeedDepths {
  readonly confirmedDepth: number;
  readonly finalizedDepth: number;
  /** Absent or tower: statuses by depth. */
  readonly consensus?: SlotFeedConsensus;
}

export class SlotFeed {
  private readonly listeners: SlotEventListener[] = [];
  /** The newest slot at each status (index = SlotStatus code); -1 before the first. */
  private readonly newest: number[] = [-1, -1, -1, -1, -1, -1, -1];

  private readonly alpenglow: SlotFeedConsensus | null;
  /** Alpenglow: the newest slot already sent CONFIRMED/FINALIZED. */
  private certified = -1;

  constructor(private readonly depths: SlotFeedDepths) {
    this.alpenglow = depths.consensus?.mode === 'alpenglow' ? depths.consensus : null;
    this.alpenglow?.onFinalized((f) => this.onCertified(f));
  }

  onEvent(fn: SlotEventListener): void {
    this.listeners.push(fn);
  }

  /** The newest slot that reached `status` (0 before any did). */
  newestAt(status: SlotStatusCode): number {
    return Math.max(0, this.newest[status]);
  }

  /**
   * First-shred listener (src/localnet/shred-to-bank.ts, at the slot clock's tick): slot `slot` has just started.
   * Its CREATED_BANK comes from onBankCreated.
   */
  onSlot(slot: number): void {
    if (this.alpenglow !== null) return this.onAlpenglowSlot(slot, this.alpenglow);
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
  }

  /** Bank listener (src/localnet/shred-to-bank.ts): replay created `slot`'s bank; a skipped Alpenglow slot has none. */
  onBankCreated(slot: number): void {
    if (this.alpenglow?.isSkipped(slot) === true) return;
    this.emit(slot, SlotStatus.CREATED_BANK);
  }

  private onAlpenglowSlot(slot: number, c: SlotFeedConsensus): void {
    const prev = slot - 1;
    if (prev >= 0) {
      if (c.isSkipped(prev)) this.emit(prev, SlotStatus.DEAD);
      else {
        this.emit(prev, SlotStatus.COMPLETED);
        this.emit(prev, SlotStatus.PROCESSED);
      }
    }
    if (c.isSkipped(slot)) return; // its leader misses it: no shred, no bank
    this.emit(slot, SlotStatus.FIRST_SHRED_RECEIVED);
  }

  /**
   * Alpenglow: the certificate for `finalized` arrived: every block up to it is confirmed and finalized, in order.
   * Its timer starts when the slot after `finalized` starts, by when `finalized`'s bank was created (shred-to-bank.ts).
   */
  private onCertified(finalized: number): void {
    const c = this.alpenglow!;
    for (let s = this.certified + 1; s <= finalized; s++) {
      if (c.isSkipped(s)) continue;
      this.emit(s, SlotStatus.CONFIRMED);
      this.emit(s, SlotStatus.FINALIZED);
    }
    this.certified = Math.max(this.certified, finalized);
  }

  private emit(slot: number, status: SlotStatusCode): void {
    this.newest[status] = slot;
    const e: SlotEvent = { slot, parent: slot > 0 ? slot - 1 : null, status };
    for (const fn of this.listeners) fn(e);
  }
}
