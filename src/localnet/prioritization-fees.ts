// Recent prioritization fees (localnet process; record() is HOT, once per committed transaction; query cold).
// Agave's PrioritizationFeeCache: per block, the minimum compute-unit price over its (non-vote) transactions, and
// per writable account the minimum price over the transactions that write it. getRecentPrioritizationFees answers
// per slot max(block minimum, max over the requested accounts of that account's minimum), for up to 150 recent
// completed slots, ascending; a slot without transactions reports 0.
// The price recorded is ParsedTx.computeUnitPrice: legacy/v0 the SetComputeUnitPrice value, v1 Agave's derived
// floor(total priority fee × 1e6 / compute-unit limit); a transaction with a zero limit is not recorded (the block
// producer skips it, as Agave's PrioritizationFeeCache::update does). docs/localnet-v1.md.
export const PRIORITIZATION_FEE_SLOTS = 150;

interface SlotFees {
  readonly slot: number;
  min: bigint;
  readonly accounts: Map<string, bigint>;
}

export class PrioritizationFees {
  private readonly slots: SlotFees[] = [];

  constructor(private readonly keepSlots = PRIORITIZATION_FEE_SLOTS) {}

  private slotEntry(slot: number): SlotFees {
    const last = this.slots[this.slots.length - 1];
    if (last !== undefined && last.slot === slot) return last;
    const e: SlotFees = { slot, min: -1n, accounts: new Map() };
    this.slots.push(e);
    while (this.slots.length > this.keepSlots + 1) this.slots.shift();
    return e;
  }

  /** A slot started: make sure it has an entry even if nothing lands in it. */
  openSlot(slot: number): void {
    this.slotEntry(slot);
  }

  record(slot: number, price: bigint, accountKeys: readonly string[], writable: readonly boolean[]): void {
    const e = this.slotEntry(slot);
    if (e.min < 0n || price < e.min) e.min = price;
    for (let i = 0; i < accountKeys.length; i++) {
      if (!writable[i]) continue;
      const prev = e.accounts.get(accountKeys[i]);
      if (prev === undefined || price < prev) e.accounts.set(accountKeys[i], price);
    }
  }

  /** Completed slots before `currentSlot`, ascending, at most `keepSlots`. */
  query(currentSlot: number, accounts: readonly string[]): { slot: number; prioritizationFee: number }[] {
    const out: { slot: number; prioritizationFee: number }[] = [];
    for (const e of this.slots) {
      if (e.slot >= currentSlot || e.slot < currentSlot - this.keepSlots) continue;
      let fee = e.min < 0n ? 0n : e.min;
      for (const a of accounts) {
        const f = e.accounts.get(a);
        if (f !== undefined && f > fee) fee = f;
      }
      out.push({ slot: e.slot, prioritizationFee: Number(fee) });
    }
    return out;
  }
}
