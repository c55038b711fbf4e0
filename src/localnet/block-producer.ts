// The block producer (localnet process, main thread; execute() is HOT). Owns what happens when a transaction is
// executed into the current slot: the bank runs it, a committed transaction feeds the prioritization-fee cache, a
// landing record when it came through a TPU listener, and the commit listeners (signatureSubscribe). At each slot
// start the bank gets its new blockhash before anything is executed in that slot.
import type { Bank, BundleOutcome, ExecuteOutcome, TxRecord } from './bank.js';
import type { LandingLog } from './landings.js';
import type { PrioritizationFees } from './prioritization-fees.js';
import type { ParsedTx } from './wire.js';

/** How a transaction reached a validator's TPU (the listener's onTransaction info). */
export interface TpuArrival {
  readonly validatorIdentity: string;
  readonly senderIdentity: string | null;
  readonly arrivalNs: bigint;
}

export type CommitListener = (rec: TxRecord) => void;

export class BlockProducer {
  private readonly commitListeners: CommitListener[] = [];

  constructor(
    readonly bank: Bank,
    private readonly fees: PrioritizationFees,
    private readonly landings: LandingLog,
  ) {}

  onCommit(fn: CommitListener): void {
    this.commitListeners.push(fn);
  }

  startSlot(slot: number): void {
    this.bank.advanceToSlot(slot);
    this.fees.openSlot(slot);
  }

  private committed(rec: TxRecord): void {
    // Agave's PrioritizationFeeCache::update skips a transaction with a zero compute-unit limit (a v1 without one):
    // its price says nothing.
    if (rec.parsed.computeUnitLimit > 0) this.fees.record(rec.slot, rec.parsed.computeUnitPrice, rec.parsed.accountKeys, rec.parsed.writable);
    for (const fn of this.commitListeners) fn(rec);
  }

  /** Execute into the current slot. `arrival` is set for transactions that came through a TPU listener. */
  execute(tx: Uint8Array, parsed: ParsedTx, arrival: TpuArrival | null): ExecuteOutcome {
    const out = this.bank.execute(tx, parsed);
    if (!out.landed) return out;
    const rec = out.record;
    if (arrival !== null) {
      this.landings.add({
        signature: rec.signature,
        slot: rec.slot,
        position: rec.position,
        validator: arrival.validatorIdentity,
        sender: arrival.senderIdentity,
        arrivalNs: arrival.arrivalNs,
        executedNs: process.hrtime.bigint(),
        err: rec.err,
      });
    }
    this.committed(rec);
    return out;
  }

  /** A bundle from the block engine (src/localnet/block-engine/): all of it into the current slot, in order, or nothing. */
  executeBundle(items: Parameters<Bank['executeBundle']>[0]): BundleOutcome {
    const out = this.bank.executeBundle(items);
    if (out.landed) for (const rec of out.records) this.committed(rec);
    return out;
  }

  /** Airdrops bypass the TPU (the faucet is part of the bank) but are committed like any transaction. */
  airdrop(...args: Parameters<Bank['airdrop']>): ExecuteOutcome {
    const out = this.bank.airdrop(...args);
    if (out.landed) this.committed(out.record);
    return out;
  }
}
