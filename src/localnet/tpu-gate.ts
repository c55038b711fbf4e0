// The TPU gate (localnet process, main thread; HOT: every transaction a validator's TPU listener receives).
// A real validator only executes what reaches it while it is leader; anything else is dropped (Agave forwards
// nothing any more). Here: a transaction reaching the leader of the current slot is executed into that slot; one
// reaching the NEXT leader no more than `graceMs` before its first slot is held and executed when that slot starts
// (a leader buffers what arrives just before its window); anything else is dropped and counted per validator as
// not_leader. Undecodable/insane transactions and those the bank refuses (expired blockhash, duplicate, bad
// signature, no funds for the fee) are counted by reason.
// With `blockCapacity` (transactions per slot) the leader is a congested one: what reaches it waits in a queue and is
// executed on banking ticks (TICKS_PER_SLOT per slot), highest compute-unit price first, at most the slot's capacity
// spread evenly over its ticks (what a tick leaves unused rolls to the next); what is still queued when the leader's
// window ends is dropped as block_full (Agave's scheduler also takes by priority and drops what its leader slots had
// no room for). Without it every transaction is executed on arrival, as before.
// Under Alpenglow a leader that misses its slot gets a skip certificate (src/localnet/consensus.ts): what reaches it
// in that slot, or was held for it, is dropped as `skipped` (there is no block to put it in).
import type { BlockProducer, TpuArrival } from './block-producer.js';
import type { LandingLog } from './landings.js';
import type { LeaderSchedule } from './leader-schedule.js';
import type { SlotClock } from './slot-clock.js';
import { parseWireTransaction, WireError, type ParsedTx } from './wire.js';

export type GateVerdict = 'landed' | 'buffered' | 'not_leader' | 'undecodable' | 'invalid' | 'rejected' | 'block_full' | 'skipped';

export interface TpuGateOptions {
  /** How long before its first slot the next leader already accepts transactions (ms). */
  readonly graceMs: number;
  readonly maxTransactionBytes: number;
  /** Transactions a leader executes per slot; absent = no limit (executed on arrival). */
  readonly blockCapacity?: number;
  /** The slot time (ms), for the banking ticks; needed with blockCapacity. */
  readonly slotMs?: number;
  /** Whether `slot` is skipped (its leader missed it: Alpenglow's skip certificate); absent = never. */
  readonly isSkipped?: (slot: number) => boolean;
}

/** Banking ticks per slot with blockCapacity. */
const TICKS_PER_SLOT = 8;

interface Held {
  readonly tx: Uint8Array;
  readonly parsed: ParsedTx;
  readonly arrival: TpuArrival;
}

export class TpuGate {
  private readonly held = new Map<number, Held[]>();
  private readonly graceNs: bigint;
  /** blockCapacity: arrivals for the current leader not executed yet. */
  private queue: Held[] = [];
  private readonly queuedSigs = new Set<string>();
  private used = 0;
  private ticks = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly schedule: LeaderSchedule,
    private readonly clock: SlotClock,
    private readonly producer: BlockProducer,
    private readonly landings: LandingLog,
    private readonly opts: TpuGateOptions,
  ) {
    this.graceNs = BigInt(Math.round(opts.graceMs * 1e6));
    if (opts.blockCapacity !== undefined) {
      if (!(opts.blockCapacity >= 1) || opts.slotMs === undefined) throw new RangeError('blockCapacity needs a positive capacity and slotMs');
      this.timer = setInterval(() => this.tick(), Math.max(1, opts.slotMs / TICKS_PER_SLOT));
      this.timer.unref();
    }
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Transactions waiting in the leader's queue (blockCapacity only). */
  get queued(): number {
    return this.queue.length;
  }

  /** A banking tick: execute the queue by priority, up to this tick's share of the slot's capacity. */
  private tick(): void {
    if (this.opts.isSkipped?.(this.clock.current) === true) return; // no block this slot: the queue waits
    if (this.ticks < TICKS_PER_SLOT) this.ticks++;
    const cap = this.opts.blockCapacity!;
    const budget = Math.floor((cap * this.ticks) / TICKS_PER_SLOT) - this.used;
    if (budget <= 0 || this.queue.length === 0) return;
    // Highest compute-unit price first; arrival order among equals (a stable sort).
    this.queue.sort((a, b) => (a.parsed.computeUnitPrice === b.parsed.computeUnitPrice ? 0 : a.parsed.computeUnitPrice > b.parsed.computeUnitPrice ? -1 : 1));
    const take = this.queue.splice(0, budget);
    for (const h of take) this.queuedSigs.delete(h.parsed.signatures[0]);
    // Block space goes to what executes: a duplicate or an expired transaction is refused before it takes any.
    for (const h of take) if (this.run(h.tx, h.parsed, h.arrival) === 'landed') this.used++;
  }

  /**
   * The listeners' onTransaction (listeners run with copy: false). `view` may be a view the caller reuses once this
   * returns: it is copied exactly once, after the leader and size checks (a not_leader drop costs no copy).
   */
  submit(view: Uint8Array, arrival: TpuArrival): GateVerdict {
    const c = this.landings.countersOf(arrival.validatorIdentity);
    c.received++;
    const slot = this.clock.current;
    const leader = this.schedule.leaderAt(slot);
    let holdUntil = -1;
    if (leader !== arrival.validatorIdentity) {
      const next = this.schedule.nextLeaderChange(slot);
      const early = this.clock.slotStartNs(next) - process.hrtime.bigint();
      if (this.schedule.leaderAt(next) !== arrival.validatorIdentity || early > this.graceNs) {
        c.dropped.not_leader++;
        return 'not_leader';
      }
      holdUntil = next;
    } else if (this.opts.isSkipped?.(slot) === true) {
      c.dropped.skipped++;
      return 'skipped';
    }
    let parsed: ParsedTx;
    let tx: Uint8Array;
    try {
      if (view.length === 0 || view.length > this.opts.maxTransactionBytes) throw new WireError('undecodable', 'bad size');
      // The one copy (a memcpy; Uint8Array.from would iterate): the bank keeps these bytes and `parsed` views them.
      tx = new Uint8Array(view);
      parsed = parseWireTransaction(tx);
    } catch (err) {
      const kind = err instanceof WireError ? err.kind : 'undecodable';
      c.dropped[kind]++;
      return kind;
    }
    if (holdUntil >= 0) {
      const list = this.held.get(holdUntil);
      const h: Held = { tx, parsed, arrival };
      if (list === undefined) this.held.set(holdUntil, [h]);
      else list.push(h);
      c.buffered++;
      return 'buffered';
    }
    if (this.timer !== null) {
      // A copy of what is queued or already executed takes no room (Agave's sigverify dedup and status-cache check
      // drop duplicates before the scheduler): counted as the bank would refuse it, AlreadyProcessed.
      const sig = parsed.signatures[0];
      if (this.queuedSigs.has(sig) || this.producer.bank.status(sig) !== undefined) {
        c.dropped.rejected++;
        c.rejectedBy.AlreadyProcessed = (c.rejectedBy.AlreadyProcessed ?? 0) + 1;
        return 'rejected';
      }
      // Bounded: four slots' worth of capacity waits at most; beyond it the arrival is dropped (no room).
      if (this.queue.length >= this.opts.blockCapacity! * 4) {
        c.dropped.block_full++;
        return 'block_full';
      }
      this.queue.push({ tx, parsed, arrival });
      this.queuedSigs.add(sig);
      c.buffered++;
      return 'buffered';
    }
    return this.run(tx, parsed, arrival);
  }

  private run(tx: Uint8Array, parsed: ParsedTx, arrival: TpuArrival): GateVerdict {
    const c = this.landings.countersOf(arrival.validatorIdentity);
    const out = this.producer.execute(tx, parsed, arrival);
    if (out.landed) {
      c.landed++;
      return 'landed';
    }
    c.dropped.rejected++;
    const reason = typeof out.err === 'string' ? out.err : Object.keys(out.err)[0] ?? 'unknown';
    c.rejectedBy[reason] = (c.rejectedBy[reason] ?? 0) + 1;
    return 'rejected';
  }

  /** Slot listener (after the bank advanced): execute what the new leader held for this slot. */
  onSlot(slot: number): void {
    if (this.timer !== null) {
      // A new block: its capacity is whole again. What the previous leader could not fit is dropped when its window
      // ended; its own next slot keeps it queued.
      this.used = 0;
      this.ticks = 0;
      const leader = this.schedule.leaderAt(slot);
      if (this.queue.length > 0) {
        const keep: Held[] = [];
        for (const h of this.queue) {
          if (h.arrival.validatorIdentity === leader) keep.push(h);
          else {
            this.queuedSigs.delete(h.parsed.signatures[0]);
            this.landings.countersOf(h.arrival.validatorIdentity).dropped.block_full++;
          }
        }
        this.queue = keep;
      }
    }
    for (const [s, list] of this.held) {
      if (s > slot) continue;
      this.held.delete(s);
      if (this.opts.isSkipped?.(slot) === true) {
        for (const h of list) this.landings.countersOf(h.arrival.validatorIdentity).dropped.skipped++;
        continue;
      }
      if (this.timer !== null) {
        for (const h of list) {
          const sig = h.parsed.signatures[0];
          if (this.queuedSigs.has(sig)) continue; // a copy: no room taken
          this.queuedSigs.add(sig);
          this.queue.push(h);
        }
      }
      else for (const h of list) this.run(h.tx, h.parsed, h.arrival);
    }
  }
}
