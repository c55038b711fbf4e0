// The TPU gate (localnet process, main thread; HOT: every transaction a validator's TPU listener receives).
// A real validator only executes what reaches it while it is leader; anything else is dropped (Agave forwards
// nothing any more). Here: a transaction reaching the leader of the current slot is executed into that slot; one
// reaching the NEXT leader no more than `graceMs` before its first slot is held and executed when that slot starts
// (a leader buffers what arrives just before its window); anything else is dropped and counted per validator as
// not_leader. Undecodable/insane transactions and those the bank refuses (expired blockhash, duplicate, bad
// signature, no funds for the fee) are counted by reason.
import type { BlockProducer, TpuArrival } from './block-producer.js';
import type { LandingLog } from './landings.js';
import type { LeaderSchedule } from './leader-schedule.js';
import type { SlotClock } from './slot-clock.js';
import { parseWireTransaction, WireError, type ParsedTx } from './wire.js';

export type GateVerdict = 'landed' | 'buffered' | 'not_leader' | 'undecodable' | 'invalid' | 'rejected';

export interface TpuGateOptions {
  /** How long before its first slot the next leader already accepts transactions (ms). */
  readonly graceMs: number;
  readonly maxTransactionBytes: number;
}

interface Held {
  readonly tx: Uint8Array;
  readonly parsed: ParsedTx;
  readonly arrival: TpuArrival;
}

export class TpuGate {
  private readonly held = new Map<number, Held[]>();
  private readonly graceNs: bigint;

  constructor(
    private readonly schedule: LeaderSchedule,
    private readonly clock: SlotClock,
    private readonly producer: BlockProducer,
    private readonly landings: LandingLog,
    private readonly opts: TpuGateOptions,
  ) {
    this.graceNs = BigInt(Math.round(opts.graceMs * 1e6));
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
    for (const [s, list] of this.held) {
      if (s > slot) continue;
      this.held.delete(s);
      for (const h of list) this.run(h.tx, h.parsed, h.arrival);
    }
  }
}
