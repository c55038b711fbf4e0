// The localnet's consensus (localnet process, main thread; one timer per slot, cold): which slot each commitment
// stands at, which slots are skipped, the block height, and getAgGenesisCert's answer. Two modes:
//   alpenglow (default; mainnet since 2026-10-21, docs/localnet.md "Consensus"): a block is notarized and finalized
//     by certificates `finalityDelayMs` after its slot ends (mainnet ~150 ms); `confirmed` answers what `finalized`
//     does; a slot whose leader misses it (down, or told to miss) gets a skip certificate instead: no block, no
//     transactions, no slot notification, and the block height does not count it.
//   tower (Tower BFT, older clusters): confirmed = `confirmedDepth` slots behind the tip, finalized (root) =
//     `finalizedDepth` behind; no slot is skipped (a down leader's slots stay empty).
// Finality listeners (PubSub) are told whenever the finalized slot advances: at a slot start in tower mode, on the
// certificate's timer in alpenglow mode.
import { createHash } from 'node:crypto';
import type { Commitment } from '../jsonrpc/params.js';
import type { SlotClock } from './slot-clock.js';

export const CONSENSUS_MODES = ['alpenglow', 'tower'] as const;
export type ConsensusMode = (typeof CONSENSUS_MODES)[number];

/** Mainnet's finality under Alpenglow: a certificate ~150 ms after the block (network-2026 notes, Agave 4.4). */
export const DEFAULT_FINALITY_DELAY_MS = 150;
/** Tower BFT: optimistic confirmation ~1 slot behind the tip, root 32 behind (Agave MAX_LOCKOUT_HISTORY). */
export const DEFAULT_CONFIRMED_DEPTH = 1;
export const DEFAULT_FINALIZED_DEPTH = 32;

export interface ConsensusOptions {
  readonly mode: ConsensusMode;
  readonly confirmedDepth: number;
  readonly finalizedDepth: number;
  readonly finalityDelayMs: number;
  /** Whether the leader of `slot` misses it (alpenglow only): down, or told to miss its slots. */
  readonly leaderMisses: (slot: number) => boolean;
  /** Seeds the certificate's block id and signature bytes (stable per localnet seed). */
  readonly seed: string;
  readonly validators: number;
}

/** getAgGenesisCert's object (solana.com RPC docs): the certificate over the first Alpenglow block. */
export interface AgGenesisCert {
  readonly block: { readonly slot: number; readonly blockId: readonly number[] };
  readonly signature: { readonly signature: readonly number[]; readonly bitmap: readonly number[] };
}

/** What getSignatureStatuses says of a transaction committed in a slot. */
export interface SlotCommitment {
  readonly confirmationStatus: Commitment;
  /** Agave: null once rooted (finalized), else slots since (a count, not votes, on the localnet). */
  readonly confirmations: number | null;
}

export type FinalityListener = (finalizedSlot: number) => void;

export class Consensus {
  /**
   * The newest finalized slot; -1 until the first certificate (alpenglow: slot 0's block, which may hold transactions,
   * is certified like any other, finalityDelayMs after it ends). Reads clamp it at 0.
   */
  private finalized = -1;
  /** alpenglow: skipped[s] for every slot reached so far (0 = genesis, never skipped); cumulative skips in `skips`. */
  private readonly skipped: boolean[] = [false];
  private readonly skips: number[] = [0];
  private readonly listeners: FinalityListener[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly cert: AgGenesisCert | null;

  constructor(
    private readonly clock: SlotClock,
    private readonly o: ConsensusOptions,
  ) {
    if (o.mode === 'alpenglow' && !(o.finalityDelayMs >= 0)) throw new RangeError('finalityDelayMs must be >= 0');
    this.cert = o.mode === 'alpenglow' ? genesisCert(o.seed, o.validators) : null;
  }

  get mode(): ConsensusMode {
    return this.o.mode;
  }

  get finalityDelayMs(): number {
    return this.o.finalityDelayMs;
  }

  /** getAgGenesisCert: the certificate in alpenglow mode (the localnet runs Alpenglow from genesis, slot 0), else null. */
  genesisCert(): AgGenesisCert | null {
    return this.cert;
  }

  onFinalized(fn: FinalityListener): void {
    this.listeners.push(fn);
  }

  stop(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  /** Slot listener, registered first: `slot` starts, so `slot - 1` is complete (certified after the delay). */
  onSlot(slot: number): void {
    if (this.o.mode === 'tower') {
      const root = Math.max(0, slot - this.o.finalizedDepth);
      if (root !== this.finalized) {
        this.finalized = root;
        for (const fn of this.listeners) fn(root);
      }
      return;
    }
    this.mark(slot);
    const done = slot - 1;
    if (done < 0 || this.skipped[done]) return; // a skip certificate finalizes nothing new
    // The certificate arrives finalityDelayMs after the block's slot ended, on the monotonic clock (a late slot timer
    // does not push the certificate later than that).
    const dueMs = Number(this.clock.slotStartNs(slot) + BigInt(Math.round(this.o.finalityDelayMs * 1e6)) - process.hrtime.bigint()) / 1e6;
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (done <= this.finalized) return;
      this.finalized = done;
      for (const fn of this.listeners) fn(done);
    }, Math.max(0, Math.ceil(dueMs)));
    this.timers.add(t);
  }

  /** Record whether slots up to `slot` are skipped (alpenglow), once each, in order. */
  private mark(slot: number): void {
    for (let s = this.skipped.length; s <= slot; s++) {
      const skip = this.o.leaderMisses(s);
      this.skipped.push(skip);
      this.skips.push(this.skips[s - 1] + (skip ? 1 : 0));
    }
  }

  /** Whether `slot` got a skip certificate (or will: the current slot's leader is missing it). */
  isSkipped(slot: number): boolean {
    if (this.o.mode === 'tower' || slot <= 0) return false;
    if (slot >= this.skipped.length) return this.o.leaderMisses(slot);
    return this.skipped[slot];
  }

  /** The newest slot with a block at or below `slot` (processed never points at a skipped slot). */
  private blockAtOrBelow(slot: number): number {
    let s = slot;
    while (s > 0 && this.isSkipped(s)) s--;
    return s;
  }

  processedSlot(): number {
    return this.blockAtOrBelow(this.clock.current);
  }

  confirmedSlot(): number {
    if (this.o.mode === 'alpenglow') return Math.max(0, this.finalized);
    return Math.max(0, this.clock.current - this.o.confirmedDepth);
  }

  finalizedSlot(): number {
    if (this.o.mode === 'alpenglow') return Math.max(0, this.finalized);
    return Math.max(0, this.clock.current - this.o.finalizedDepth);
  }

  /** The slot a read at `commitment` sees (Agave's default commitment: finalized). */
  slotAt(commitment: Commitment | undefined): number {
    switch (commitment ?? 'finalized') {
      case 'processed':
        return this.processedSlot();
      case 'confirmed':
        return this.confirmedSlot();
      default:
        return this.finalizedSlot();
    }
  }

  /** Whether a transaction committed in `slot` has reached `commitment`. */
  reached(slot: number, commitment: Commitment): boolean {
    if (commitment === 'processed') return slot <= this.processedSlot();
    if (this.o.mode === 'alpenglow') return slot <= this.finalized; // unclamped: nothing is final before a certificate
    // Tower: by depth behind the tip, not by the clamped read slot (at tip 0 confirmedSlot() is 0, yet a transaction
    // of slot 0 is not confirmed until the tip is confirmedDepth past it).
    return this.clock.current - slot >= (commitment === 'confirmed' ? this.o.confirmedDepth : this.o.finalizedDepth);
  }

  /** getSignatureStatuses' view of a transaction committed in `slot`. */
  statusOf(slot: number): SlotCommitment {
    if (this.reached(slot, 'finalized')) return { confirmationStatus: 'finalized', confirmations: null };
    const depth = Math.max(0, this.clock.current - slot);
    return { confirmationStatus: this.reached(slot, 'confirmed') ? 'confirmed' : 'processed', confirmations: depth };
  }

  /** Blocks from genesis to `slot`: the slot minus the skipped slots up to it (tower: the slot). */
  blockHeight(slot: number): number {
    if (this.o.mode === 'tower' || slot <= 0) return Math.max(0, slot);
    this.mark(Math.min(slot, this.clock.current));
    const known = Math.min(slot, this.skips.length - 1);
    return slot - this.skips[known];
  }
}

/**
 * A stand-in certificate with the real shape: a 32-byte block id and a 192-byte aggregate signature derived from the
 * seed (not a BLS signature: nothing on the localnet verifies it), and a bitmap with every validator's bit set.
 */
function genesisCert(seed: string, validators: number): AgGenesisCert {
  const bytes = (label: string, n: number): number[] => {
    const out: number[] = [];
    for (let i = 0; out.length < n; i++) out.push(...createHash('sha256').update(`slotrelay-localnet/${seed}/${label}/${i}`).digest());
    return out.slice(0, n);
  };
  const bitmap = new Array<number>(Math.ceil(validators / 8)).fill(0);
  for (let v = 0; v < validators; v++) bitmap[v >> 3] |= 1 << (v & 7);
  return { block: { slot: 0, blockId: bytes('ag-genesis-block', 32) }, signature: { signature: bytes('ag-genesis-signature', 192), bitmap } };
}
