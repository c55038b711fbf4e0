// Per-slot load of the leaders (localnet process, main thread; one record per slot, cold). At each slot start the
// slot that ended is recorded with its leader, the streams that leader's TPU listener read during it, the
// transactions it dropped for want of block space (block_full), and whether its QoS was saturated at any moment of
// it (flow-control model; false for the throttle). The landing bench colours its leader bands by this
// (localnet_getSlotLoad, facade/methods-localnet.ts).
import type { LandingLog } from './landings.js';
import type { LeaderSchedule } from './leader-schedule.js';
import type { TpuListener } from './tpu-listener.js';

export interface SlotLoadRecord {
  readonly slot: number;
  readonly leader: string;
  /** Transactions the leader's listener read during the slot (every sender's, any validity). */
  readonly received: number;
  /** Transactions the leader dropped as block_full during the slot. */
  readonly blockFull: number;
  /** The leader's flow-control QoS was saturated at some moment of the slot. */
  readonly saturated: boolean;
}

const KEEP = 20_000;

export class SlotLoadLog {
  private readonly ring: SlotLoadRecord[] = [];
  private lastTx: number[];
  private lastFull: number[];

  constructor(
    private readonly schedule: LeaderSchedule,
    private readonly identities: readonly string[],
    private readonly listeners: readonly TpuListener[],
    private readonly landings: LandingLog,
    private readonly saturated: (validator: number) => boolean,
  ) {
    this.lastTx = listeners.map((l) => l.counters.transactions);
    this.lastFull = identities.map((id) => landings.countersOf(id).dropped.block_full);
  }

  /** Slot listener: `slot` just started, so slot - 1 ended. */
  onSlot(slot: number): void {
    const ended = slot - 1;
    if (ended < 0) return;
    const leader = this.schedule.leaderAt(ended);
    const i = this.identities.indexOf(leader);
    const tx = this.listeners.map((l) => l.counters.transactions);
    const full = this.identities.map((id) => this.landings.countersOf(id).dropped.block_full);
    if (i >= 0) {
      this.ring.push({ slot: ended, leader, received: tx[i] - this.lastTx[i], blockFull: full[i] - this.lastFull[i], saturated: this.saturated(i) });
      if (this.ring.length > KEEP) this.ring.splice(0, this.ring.length - KEEP);
    }
    this.lastTx = tx;
    this.lastFull = full;
  }

  /** Records for slots >= from (at most `limit`). */
  since(from: number, limit: number): SlotLoadRecord[] {
    const out: SlotLoadRecord[] = [];
    for (const r of this.ring) {
      if (r.slot < from) continue;
      out.push(r);
      if (out.length >= limit) break;
    }
    return out;
  }
}
