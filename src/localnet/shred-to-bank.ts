// When the localnet's RPC node learns of a slot (localnet process, main thread; one timer per slot, cold). On an Agave
// RPC node the first shred of slot N arrives by turbine and is announced at once (Geyser FIRST_SHRED_RECEIVED,
// slotsUpdates firstShredReceived), while slotSubscribe's notification and Geyser CREATED_BANK wait until replay
// creates N's bank, after N's parent is frozen (docs/localnet.md "When the RPC node learns of a slot" cites the
// Agave files). Here slot N's first shred is its slot clock tick and its bank is created `shredToBankMs` after the
// tick, on the monotonic clock. Every slot's bank is created before the next slot's first shred is announced (a late
// timer is flushed first), so listeners see per slot: first shred, then bank, then the next slot.
import type { SlotClock } from './slot-clock.js';

/** Default ms from a slot's first shred to its bank (docs/localnet.md "When the RPC node learns of a slot"). */
export const DEFAULT_SHRED_TO_BANK_MS = 5;

export type SlotStageListener = (slot: number) => void;

export class ShredToBank {
  private readonly firstShred: SlotStageListener[] = [];
  private readonly bankCreated: SlotStageListener[] = [];
  /** Slots whose first shred was announced and whose bank is not created yet, oldest first. */
  private readonly pending: { slot: number; timer: NodeJS.Timeout | null }[] = [];
  private stopped = false;

  constructor(
    private readonly clock: Pick<SlotClock, 'slotStartNs' | 'slotMs'>,
    readonly shredToBankMs: number,
  ) {
    // A bank created after the next slot started would put the next slot's first shred before it.
    if (!(shredToBankMs >= 0 && shredToBankMs < clock.slotMs)) throw new Error(`shredToBankMs must be 0 or more and below the slot time (${clock.slotMs} ms)`);
  }

  /** `slot`'s first shred arrived (its slot clock tick). */
  onFirstShred(fn: SlotStageListener): void {
    this.firstShred.push(fn);
  }

  /** `slot`'s bank was created (replay): slotSubscribe notifies here. */
  onBankCreated(fn: SlotStageListener): void {
    this.bankCreated.push(fn);
  }

  /** Slot clock listener. */
  onSlot(slot: number): void {
    if (this.stopped) return;
    while (this.pending.length > 0) this.create(); // a late timer: the earlier banks first
    for (const fn of this.firstShred) fn(slot);
    if (this.shredToBankMs === 0) {
      for (const fn of this.bankCreated) fn(slot); // main's behaviour, no timer
      return;
    }
    const dueNs = this.clock.slotStartNs(slot) + BigInt(Math.round(this.shredToBankMs * 1e6));
    const entry: { slot: number; timer: NodeJS.Timeout | null } = { slot, timer: null };
    entry.timer = setTimeout(() => this.create(), Math.max(0, Math.ceil(Number(dueNs - process.hrtime.bigint()) / 1e6)));
    this.pending.push(entry);
  }

  stop(): void {
    this.stopped = true;
    for (const p of this.pending) if (p.timer !== null) clearTimeout(p.timer);
    this.pending.length = 0;
  }

  /** The oldest pending slot's bank is created. */
  private create(): void {
    const p = this.pending.shift();
    if (p === undefined) return;
    if (p.timer !== null) clearTimeout(p.timer);
    for (const fn of this.bankCreated) fn(p.slot);
  }
}
