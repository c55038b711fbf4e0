// The localnet's bundle engine (localnet process, main thread; submit() per sendBundle, onSlot() once per slot):
// what a Jito block engine plus a Jito-Solana leader do with a bundle. sendBundle checks the bundle (1..5
// transactions, no duplicate signature, a tip of at least MIN_TIP_LAMPORTS to a tip account) and queues it as
// Pending; at the start of the next slot the then-current leader executes every queued bundle, each atomically and
// in order (Bank.executeBundle: one failing transaction and none lands), so a bundle lands within one slot of being
// accepted. Statuses (Pending / Landed / Failed / Invalid for unknown ids) are kept for LOOKBACK_MS, like Jito's
// 5-minute look-back, and at most `maxBundles` of them (oldest forgotten first).
import { createHash } from 'node:crypto';
import { PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import type { BlockProducer } from '../block-producer.js';
import type { TxErrorJson } from '../tx-error.js';
import type { ParsedTx } from '../wire.js';
import { MIN_TIP_LAMPORTS, tipLamports } from './tip-accounts.js';

/** Jito: at most 5 transactions per bundle. */
export const MAX_BUNDLE_TRANSACTIONS = 5;
/** Jito's status look-back. */
export const LOOKBACK_MS = 5 * 60_000;
/** Each tip account's balance at genesis: 0.01 SOL, above the rent-exempt minimum of an empty account (890,880). */
const TIP_ACCOUNT_GENESIS_LAMPORTS = 10_000_000n;

export type BundleState = 'Pending' | 'Landed' | 'Failed';

export interface BundleTx {
  readonly bytes: Uint8Array;
  readonly parsed: ParsedTx;
}

interface BundleEntry {
  readonly id: string;
  readonly signatures: readonly string[];
  /** Dropped once executed. */
  txs: readonly BundleTx[] | null;
  state: BundleState;
  slot: number | null;
  err: TxErrorJson | null;
  readonly acceptedAtMs: number;
}

/** Why a bundle is refused at sendBundle (-32602 on the wire). */
export class BundleRefused extends Error {}

/** Jito's bundle id: SHA-256 of the transactions' first signatures (raw bytes), hex. */
export function bundleId(signatures: readonly string[]): string {
  const h = createHash('sha256');
  for (const s of signatures) h.update(bs58.decode(s));
  return h.digest('hex');
}

export class BundleEngine {
  private readonly bundles = new Map<string, BundleEntry>();
  private queue: BundleEntry[] = [];
  private readonly tipSet: ReadonlySet<string>;
  /** Bundles landed / failed since start (the localnet's own counters, for tests). */
  landed = 0;
  failed = 0;

  constructor(
    private readonly producer: BlockProducer,
    readonly tipAccounts: readonly string[],
    private readonly maxBundles = 10_000,
  ) {
    this.tipSet = new Set(tipAccounts);
    // Tip accounts exist from genesis with a rent-exempt balance (a tip below the rent-exempt minimum to an empty
    // account would fail with InsufficientFundsForRent, which is not what a tip does on mainnet).
    for (const t of tipAccounts) producer.bank.createSystemAccount(new PublicKey(t).toBytes(), TIP_ACCOUNT_GENESIS_LAMPORTS);
  }

  /** Check and queue a bundle; its id. Throws BundleRefused with Jito-like wording. */
  submit(txs: readonly BundleTx[], nowMs: number = Date.now()): string {
    if (txs.length === 0) throw new BundleRefused('bundle must contain at least one transaction');
    if (txs.length > MAX_BUNDLE_TRANSACTIONS) throw new BundleRefused(`bundle contains ${txs.length} transactions, at most ${MAX_BUNDLE_TRANSACTIONS} are allowed`);
    const sigs = txs.map((t) => t.parsed.signatures[0]);
    if (new Set(sigs).size !== sigs.length) throw new BundleRefused('bundle contains duplicate transactions');
    let tip = 0n;
    for (const t of txs) tip += tipLamports(t.parsed, this.tipSet);
    if (tip < MIN_TIP_LAMPORTS) {
      throw new BundleRefused(`bundle must pay a tip of at least ${MIN_TIP_LAMPORTS} lamports to one of the tip accounts (getTipAccounts); it pays ${tip}`);
    }
    const id = bundleId(sigs);
    const known = this.bundles.get(id);
    if (known !== undefined) return id; // a resend of the same bundle: one bundle, one status
    const entry: BundleEntry = { id, signatures: sigs, txs, state: 'Pending', slot: null, err: null, acceptedAtMs: nowMs };
    this.bundles.set(id, entry);
    this.queue.push(entry);
    this.forget(nowMs);
    return id;
  }

  /** Slot start: the new leader executes what was queued, in arrival order. */
  onSlot(slot: number): void {
    if (this.queue.length === 0) return;
    const due = this.queue;
    this.queue = [];
    for (const b of due) {
      const out = this.producer.executeBundle(b.txs!.map((t) => ({ tx: t.bytes, parsed: t.parsed })));
      b.txs = null;
      if (out.landed) {
        b.state = 'Landed';
        b.slot = slot;
        this.landed++;
      } else {
        b.state = 'Failed';
        b.err = out.err;
        this.failed++;
      }
    }
  }

  /** The bundle's state and landed slot, or null (unknown or older than the look-back: Jito's "Invalid"). */
  status(id: string): { readonly state: BundleState; readonly slot: number | null; readonly signatures: readonly string[]; readonly err: TxErrorJson | null } | null {
    const b = this.bundles.get(id);
    if (b === undefined || Date.now() - b.acceptedAtMs > LOOKBACK_MS) return null;
    return b;
  }

  /** Drop statuses past the look-back, and the oldest beyond maxBundles (never one still queued). */
  private forget(nowMs: number): void {
    for (const [id, b] of this.bundles) {
      const tooMany = this.bundles.size > this.maxBundles;
      if (!tooMany && nowMs - b.acceptedAtMs <= LOOKBACK_MS) break;
      if (b.state === 'Pending') break;
      this.bundles.delete(id);
    }
  }
}
