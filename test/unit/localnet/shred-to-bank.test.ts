// src/localnet/shred-to-bank.ts on a real SlotClock: each slot's first shred at its tick, its bank shredToBankMs
// later, never after the next slot's first shred (a late tick flushes the bank first), and a delay of a slot or more
// refused.
import { describe, expect, it } from 'vitest';
import { ShredToBank } from '../../../src/localnet/shred-to-bank.js';
import { SlotClock } from '../../../src/localnet/slot-clock.js';
import { waitFor } from '../../helpers/wait-for.js';

describe('ShredToBank', () => {
  it('announces the bank the delay after the first shred, on the slot clock', async () => {
    const clock = new SlotClock(100);
    const stb = new ShredToBank(clock, 40);
    const seen: { what: string; slot: number; afterStartMs: number }[] = [];
    const at = (slot: number): number => Number(process.hrtime.bigint() - clock.slotStartNs(slot)) / 1e6;
    stb.onFirstShred((slot) => seen.push({ what: 'shred', slot, afterStartMs: at(slot) }));
    stb.onBankCreated((slot) => seen.push({ what: 'bank', slot, afterStartMs: at(slot) }));
    clock.onSlot((slot) => stb.onSlot(slot));
    clock.start();
    try {
      await waitFor('slot 4 bank', () => seen.some((e) => e.what === 'bank' && e.slot === 4), Boolean, 3_000);
    } finally {
      clock.stop();
      stb.stop();
    }
    expect(seen.slice(0, 8).map((e) => `${e.what}${e.slot}`)).toEqual(['shred1', 'bank1', 'shred2', 'bank2', 'shred3', 'bank3', 'shred4', 'bank4']);
    for (const e of seen.filter((x) => x.what === 'bank')) expect(e.afterStartMs).toBeGreaterThanOrEqual(39);
  });

  it('a late tick that starts two slots at once creates the first one\'s bank before the second one\'s first shred', () => {
    const clock = new SlotClock(100);
    const stb = new ShredToBank(clock, 40);
    const seen: string[] = [];
    stb.onFirstShred((slot) => seen.push(`shred${slot}`));
    stb.onBankCreated((slot) => seen.push(`bank${slot}`));
    clock.start();
    stb.onSlot(1);
    stb.onSlot(2);
    stb.stop();
    expect(seen).toEqual(['shred1', 'bank1', 'shred2']);
  });

  it('0 announces both at the tick; a delay of a slot or more is refused', () => {
    const clock = new SlotClock(100);
    const stb = new ShredToBank(clock, 0);
    const seen: string[] = [];
    stb.onFirstShred((slot) => seen.push(`shred${slot}`));
    stb.onBankCreated((slot) => seen.push(`bank${slot}`));
    stb.onSlot(1);
    expect(seen).toEqual(['shred1', 'bank1']);
    expect(() => new ShredToBank(clock, 100)).toThrow(/below the slot time/);
    expect(() => new ShredToBank(clock, -1)).toThrow();
  });
});
