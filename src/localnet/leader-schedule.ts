// Stake-weighted leader schedule (localnet process; computed once per epoch, cold; leaderAt() is hot and O(1)).
// Built like Agave's leader_schedule_utils::stake_weighted_slot_leaders: stakes sorted by stake then pubkey
// (descending), a per-epoch seed, one weighted draw per NUM_CONSECUTIVE_LEADER_SLOTS window. The random stream is
// SHA-256 in counter mode over (seed, epoch) instead of ChaCha20 + rand's WeightedIndex, so schedules are
// deterministic and stake-weighted but not byte-identical to a real cluster's for the same stakes.
// Epochs have a fixed length (no warm-up); the schedule of epoch e+1 is available during epoch e, as on a cluster
// (leader_schedule_slot_offset = slots_per_epoch).
import { createHash } from 'node:crypto';

/** Agave NUM_CONSECUTIVE_LEADER_SLOTS. */
export const NUM_CONSECUTIVE_LEADER_SLOTS = 4;

export interface StakedNode {
  readonly identity: string;
  readonly stake: bigint;
}

export class LeaderSchedule {
  private readonly sorted: StakedNode[];
  private readonly total: bigint;
  private readonly cache = new Map<number, readonly string[]>();

  constructor(
    nodes: readonly StakedNode[],
    readonly slotsPerEpoch: number,
    private readonly seed: string,
  ) {
    if (slotsPerEpoch % NUM_CONSECUTIVE_LEADER_SLOTS !== 0) throw new Error('slotsPerEpoch must be a multiple of 4');
    this.sorted = [...nodes].sort((a, b) => (a.stake === b.stake ? (a.identity < b.identity ? 1 : -1) : a.stake < b.stake ? 1 : -1));
    this.total = this.sorted.reduce((s, n) => s + n.stake, 0n);
  }

  epochOf(slot: number): number {
    return Math.floor(slot / this.slotsPerEpoch);
  }

  firstSlotOf(epoch: number): number {
    return epoch * this.slotsPerEpoch;
  }

  /** Leaders of every slot of `epoch` (index = slot offset in the epoch). */
  forEpoch(epoch: number): readonly string[] {
    let s = this.cache.get(epoch);
    if (s !== undefined) return s;
    const windows = this.slotsPerEpoch / NUM_CONSECUTIVE_LEADER_SLOTS;
    const out = new Array<string>(this.slotsPerEpoch);
    let counter = 0;
    let block = Buffer.alloc(0);
    let at = 32;
    const next64 = (): bigint => {
      if (at + 8 > block.length) {
        block = createHash('sha256').update(`${this.seed}/${epoch}/${counter++}`).digest();
        at = 0;
      }
      const v = block.readBigUInt64LE(at);
      at += 8;
      return v;
    };
    for (let w = 0; w < windows; w++) {
      // 64-bit draw reduced modulo total stake: the bias is below total/2^64, negligible for lamport stakes.
      let pick = next64() % this.total;
      let leader = this.sorted[this.sorted.length - 1].identity;
      for (const n of this.sorted) {
        if (pick < n.stake) {
          leader = n.identity;
          break;
        }
        pick -= n.stake;
      }
      for (let k = 0; k < NUM_CONSECUTIVE_LEADER_SLOTS; k++) out[w * NUM_CONSECUTIVE_LEADER_SLOTS + k] = leader;
    }
    s = Object.freeze(out);
    this.cache.set(epoch, s);
    for (const e of this.cache.keys()) if (e < epoch - 2) this.cache.delete(e);
    return s;
  }

  leaderAt(slot: number): string {
    return this.forEpoch(this.epochOf(slot))[slot % this.slotsPerEpoch];
  }

  /** The first slot after `slot` led by someone else (start of the next leader window with a different leader). */
  nextLeaderChange(slot: number): number {
    const me = this.leaderAt(slot);
    let s = slot - (slot % NUM_CONSECUTIVE_LEADER_SLOTS) + NUM_CONSECUTIVE_LEADER_SLOTS;
    for (let i = 0; i < this.slotsPerEpoch && this.leaderAt(s) === me; i++) s += NUM_CONSECUTIVE_LEADER_SLOTS;
    return s;
  }

  /** Whether the schedule of the epoch containing `slot` is known while the cluster is at `currentSlot`. */
  isKnown(slot: number, currentSlot: number): boolean {
    return this.epochOf(slot) <= this.epochOf(currentSlot) + 1;
  }
}
