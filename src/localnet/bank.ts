// The localnet bank: litesvm executes every transaction (localnet process, main thread; HOT for execute(), cold for
// the rest). litesvm's own blockhash check and transaction history are turned off; this module keeps what a
// cluster keeps instead: the blockhashes of the last 150 slots (older -> BlockhashNotFound), the status cache
// (a signature already committed -> AlreadyProcessed) and, per committed transaction, slot/position/err/meta for
// getSignatureStatuses and getTransaction. A transaction is "committed" (lands in a block) when it executed, or
// failed in execution and paid its fee; load-time failures (bad signature, unknown fee payer, no funds for the fee,
// expired blockhash, duplicate) are rejected and leave no trace, as on Agave.
// Memory is bounded at any rate: full records (bytes, logs, balances) are kept for `historySlots` slots but at most
// `maxHistoryRecords` of them (oldest evicted first, a ring); a record evicted by that cap while its slot is still
// inside the blockhash window leaves a light status (slot, err) behind, so AlreadyProcessed and getSignatureStatuses
// keep working for every signature of the last 150 slots (Agave's status cache keeps at least that much), and
// getTransaction for the most recent `maxHistoryRecords`.
// v1 transactions (SIMD-0385) go to litesvm as they are: litesvm 1.5.0 deserializes v1, verifies every signature over
// the v1 message and applies the config (compute-unit limit, loaded-data limit, heap, total priority fee), so the
// bank neither translates nor re-verifies them (docs/localnet-v1.md; test/unit/localnet/bank-v1.test.ts pins it).
import bs58 from 'bs58';
import { Account, FailedTransactionMetadata, LiteSvm, type TransactionMetadata } from 'litesvm/dist/internal.js';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { txErrorJson, type TxErrorJson } from './tx-error.js';
import { parseWireTransaction, transactionFee, type ParsedTx } from './wire.js';

/** Agave MAX_PROCESSING_AGE / MAX_RECENT_BLOCKHASHES: a blockhash is usable for 150 slots after its own. */
export const BLOCKHASH_WINDOW_SLOTS = 150;
/** Default cap on full transaction records: ~2.4 KB of heap each for a SOL transfer (measured), so ~120 MB. */
export const DEFAULT_MAX_HISTORY_RECORDS = 50_000;
/** Faucet balance at genesis: 500M SOL (solana-test-validator's faucet is similarly large). */
const FAUCET_LAMPORTS = 500_000_000n * 1_000_000_000n;

export interface InnerInstructionsJson {
  index: number;
  instructions: { programIdIndex: number; accounts: number[]; data: string; stackHeight: number }[];
}

export interface ReturnDataJson {
  programId: string;
  data: [string, 'base64'];
}

/** One committed transaction: what getSignatureStatuses / getTransaction / landing records need. */
export interface TxRecord {
  readonly signature: string;
  readonly slot: number;
  /** 0-based index among the transactions committed in its slot. */
  readonly position: number;
  readonly blockTime: number;
  readonly err: TxErrorJson | null;
  readonly fee: bigint;
  readonly preBalances: readonly bigint[];
  readonly postBalances: readonly bigint[];
  readonly logs: readonly string[];
  readonly computeUnitsConsumed: bigint;
  readonly returnData: ReturnDataJson | null;
  readonly innerInstructions: readonly InnerInstructionsJson[];
  readonly tx: Uint8Array;
  readonly parsed: ParsedTx;
}

/** What getSignatureStatuses, signatureSubscribe and the status cache need of a committed transaction. */
export interface TxStatus {
  readonly slot: number;
  readonly err: TxErrorJson | null;
}

export type ExecuteOutcome =
  | { readonly landed: true; readonly record: TxRecord }
  | { readonly landed: false; readonly err: TxErrorJson };

export type BundleOutcome =
  | { readonly landed: true; readonly records: readonly TxRecord[] }
  | { readonly landed: false; readonly index: number; readonly err: TxErrorJson };

interface RunResult {
  readonly failed: boolean;
  readonly feeCharged: boolean;
  readonly err: TxErrorJson | null;
  readonly meta: TransactionMetadata;
  readonly pre: bigint[];
  readonly post: bigint[];
}

/** What an account that did not exist is put back as: no lamports, no data, owned by the system program. */
function emptyAccount(): Account {
  return new Account(0n, new Uint8Array(0), new Uint8Array(32), false, 0n);
}

export interface BankOptions {
  /** Slots a blockhash stays valid after the slot that issued it (Agave: 150). */
  readonly blockhashWindowSlots?: number;
  /** Slots of committed-transaction history kept for getTransaction/getSignatureStatuses (>= the window). */
  readonly historySlots?: number;
  /** At most this many full records (default 50,000); older ones keep only a status while inside the window. */
  readonly maxHistoryRecords?: number;
  /** Unix time (s) of slot 0, for blockTime. */
  readonly genesisUnixTime?: number;
  readonly slotMs?: number;
}

export function returnDataJson(meta: TransactionMetadata): ReturnDataJson | null {
  const rd = meta.returnData();
  const data = rd.data();
  const pid = rd.programId();
  if (data.length === 0 && pid.every((b) => b === 0)) return null;
  return { programId: bs58.encode(pid), data: [Buffer.from(data).toString('base64'), 'base64'] };
}

export function innerInstructionsJson(meta: TransactionMetadata): InnerInstructionsJson[] {
  const out: InnerInstructionsJson[] = [];
  meta.innerInstructions().forEach((list, index) => {
    if (list.length === 0) return;
    out.push({
      index,
      instructions: list.map((ii) => {
        const ci = ii.instruction();
        return { programIdIndex: ci.programIdIndex(), accounts: Array.from(ci.accounts()), data: bs58.encode(ci.data()), stackHeight: ii.stackHeight() };
      }),
    });
  });
  return out;
}

export class Bank {
  readonly svm: LiteSvm;
  readonly windowSlots: number;
  private readonly historySlots: number;
  private readonly genesisUnixTime: number;
  private readonly slotMs: number;
  private currentSlot = 0;
  /** Committed transactions since genesis (getEpochInfo.transactionCount). */
  transactionCount = 0;
  private positionInSlot = 0;
  /** blockhash -> slot that issued it; pruned past the window. */
  private readonly blockhashSlots = new Map<string, number>();
  /** Issued blockhashes in slot order (ring of the window). */
  private readonly recentHashes: { slot: number; hash: string }[] = [];
  /** signature -> full record; pruned past historySlots and beyond maxHistoryRecords (see `order`). */
  private readonly records = new Map<string, TxRecord>();
  /** The same records in commit (= slot) order: a fixed-capacity ring, oldest at `head`. */
  private readonly order: (TxRecord | undefined)[];
  private head = 0;
  private kept = 0;
  /** signature -> status of records evicted by the count cap while still inside the blockhash window; slot order. */
  private readonly statuses = new Map<string, TxStatus>();
  private readonly faucet = Keypair.generate();
  readonly genesisHash: string;

  constructor(opts: BankOptions = {}) {
    this.windowSlots = opts.blockhashWindowSlots ?? BLOCKHASH_WINDOW_SLOTS;
    this.historySlots = Math.max(opts.historySlots ?? 3_000, this.windowSlots + 1);
    const maxRecords = opts.maxHistoryRecords ?? DEFAULT_MAX_HISTORY_RECORDS;
    if (!(Number.isSafeInteger(maxRecords) && maxRecords >= 1)) throw new RangeError('maxHistoryRecords must be a positive integer');
    this.order = new Array<TxRecord | undefined>(maxRecords);
    this.genesisUnixTime = opts.genesisUnixTime ?? Math.floor(Date.now() / 1000);
    this.slotMs = opts.slotMs ?? 400;
    this.svm = new LiteSvm();
    this.svm.setBlockhashCheck(false);
    this.svm.setTransactionHistory(0n);
    this.svm.setSigverify(true);
    this.genesisHash = this.svm.latestBlockhash();
    // Genesis account (litesvm's own airdrop account holds less than this faucet).
    this.svm.setAccount(this.faucet.publicKey.toBytes(), new Account(FAUCET_LAMPORTS, new Uint8Array(0), new Uint8Array(32), false, 0n));
    this.issueBlockhash(0);
  }

  get slot(): number {
    return this.currentSlot;
  }

  private issueBlockhash(slot: number): void {
    this.svm.warpToSlot(BigInt(slot));
    this.svm.expireBlockhash();
    const hash = this.svm.latestBlockhash();
    this.blockhashSlots.set(hash, slot);
    this.recentHashes.push({ slot, hash });
    while (this.recentHashes.length > 0 && this.recentHashes[0].slot < slot - this.windowSlots) {
      this.blockhashSlots.delete(this.recentHashes.shift()!.hash);
    }
  }

  /** Start a new slot: a new blockhash, position 0, history pruned. Called by the slot clock. */
  advanceToSlot(slot: number): void {
    if (slot <= this.currentSlot) return;
    this.currentSlot = slot;
    this.positionInSlot = 0;
    this.issueBlockhash(slot);
    const oldest = slot - this.historySlots;
    while (this.kept > 0 && this.order[this.head]!.slot < oldest) this.evictOldest();
    const oldestStatus = slot - this.windowSlots;
    for (const [sig, st] of this.statuses) {
      if (st.slot >= oldestStatus) break;
      this.statuses.delete(sig);
    }
  }

  /** Drop the oldest full record; keep its status if a duplicate of it could still be submitted (inside the window). */
  private evictOldest(): void {
    const rec = this.order[this.head]!;
    this.order[this.head] = undefined;
    this.head = (this.head + 1) % this.order.length;
    this.kept--;
    this.records.delete(rec.signature);
    if (rec.slot >= this.currentSlot - this.windowSlots) this.statuses.set(rec.signature, { slot: rec.slot, err: rec.err });
  }

  /** Full records and evicted statuses currently kept (for tests and memory checks). */
  get historySize(): { records: number; statuses: number } {
    return { records: this.records.size, statuses: this.statuses.size };
  }

  /** The blockhash issued at `slot` (or the latest one at or before it still in the window). */
  blockhashAt(slot: number): { blockhash: string; slot: number } {
    for (let i = this.recentHashes.length - 1; i >= 0; i--) {
      const h = this.recentHashes[i];
      if (h.slot <= slot) return { blockhash: h.hash, slot: h.slot };
    }
    const h = this.recentHashes[0];
    return { blockhash: h.hash, slot: h.slot };
  }

  /** Slot that issued a blockhash still in the window, or undefined (expired or unknown). */
  blockhashSlot(hash: string): number | undefined {
    const s = this.blockhashSlots.get(hash);
    return s !== undefined && this.currentSlot - s <= this.windowSlots ? s : undefined;
  }

  blockTime(slot: number): number {
    return this.genesisUnixTime + Math.floor((slot * this.slotMs) / 1000);
  }

  /** The full record (getTransaction): recent signatures only, see the header. */
  record(signature: string): TxRecord | undefined {
    return this.records.get(signature);
  }

  /** Slot and error of a committed signature (status cache): every signature of the blockhash window at least. */
  status(signature: string): TxStatus | undefined {
    return this.records.get(signature) ?? this.statuses.get(signature);
  }

  balance(address: Uint8Array): bigint {
    return this.svm.getBalance(address) ?? 0n;
  }

  /**
   * Execute a transaction into the current slot. The bank keeps `tx` (and `parsed`, which views it) in its history:
   * the caller must not reuse the buffer.
   */
  execute(tx: Uint8Array, parsed: ParsedTx = parseWireTransaction(tx)): ExecuteOutcome {
    const refused = this.loadCheck(parsed);
    if (refused !== null) return { landed: false, err: refused };
    const run = this.run(tx, parsed);
    if (run.failed && !run.feeCharged) return { landed: false, err: run.err! };
    return { landed: true, record: this.commit(tx, parsed, run) };
  }

  /**
   * Execute a bundle into the current slot: every transaction in order, all or nothing (Jito's rule). Any
   * transaction refused or failing (even one that would pay its fee) rolls back every account the bundle wrote and
   * commits nothing; `index` names the first that failed. The bank keeps the buffers of a committed bundle.
   */
  executeBundle(items: readonly { readonly tx: Uint8Array; readonly parsed: ParsedTx }[]): BundleOutcome {
    const seen = new Set<string>();
    for (let i = 0; i < items.length; i++) {
      const refused = this.loadCheck(items[i].parsed);
      if (refused !== null) return { landed: false, index: i, err: refused };
      if (seen.has(items[i].parsed.signatures[0])) return { landed: false, index: i, err: 'AlreadyProcessed' };
      seen.add(items[i].parsed.signatures[0]);
    }
    // Only writable accounts can change: keep them to put back on failure (an absent one comes back as empty).
    const saved = new Map<string, { key: Uint8Array; account: Account | null }>();
    for (const { parsed } of items) {
      for (let k = 0; k < parsed.keyBytes.length; k++) {
        if (parsed.writable[k] && !saved.has(parsed.accountKeys[k])) saved.set(parsed.accountKeys[k], { key: parsed.keyBytes[k], account: this.svm.getAccount(parsed.keyBytes[k]) });
      }
    }
    const runs: RunResult[] = [];
    for (let i = 0; i < items.length; i++) {
      const run = this.run(items[i].tx, items[i].parsed);
      if (run.failed) {
        for (const { key, account } of saved.values()) this.svm.setAccount(key, account ?? emptyAccount());
        return { landed: false, index: i, err: run.err! };
      }
      runs.push(run);
    }
    return { landed: true, records: items.map((it, i) => this.commit(it.tx, it.parsed, runs[i])) };
  }

  /** Agave's load-time refusals that this bank checks itself: an expired blockhash, a signature already committed. */
  private loadCheck(parsed: ParsedTx): TxErrorJson | null {
    if (this.blockhashSlot(parsed.recentBlockhash) === undefined) return 'BlockhashNotFound';
    const sig = parsed.signatures[0];
    if (this.records.has(sig) || this.statuses.has(sig)) return 'AlreadyProcessed';
    return null;
  }

  /** litesvm runs the transaction; balances of its static keys before and after. */
  private run(tx: Uint8Array, parsed: ParsedTx): RunResult {
    const keys = parsed.keyBytes;
    const pre = new Array<bigint>(keys.length);
    for (let i = 0; i < keys.length; i++) pre[i] = this.svm.getBalance(keys[i]) ?? 0n;
    const result = this.svm.sendVersionedTransaction(tx);
    const post = new Array<bigint>(keys.length);
    for (let i = 0; i < keys.length; i++) post[i] = this.svm.getBalance(keys[i]) ?? 0n;
    const failed = result instanceof FailedTransactionMetadata;
    const err = failed ? txErrorJson(result.err()) : null;
    const meta = failed ? result.meta() : (result as TransactionMetadata);
    // Fee charged <=> the fee payer's balance moved: the transaction was committed (possibly failed).
    return { failed, feeCharged: pre[0] !== post[0], err, meta, pre, post };
  }

  /** Record a transaction that ran into the current slot (history ring, counters). */
  private commit(tx: Uint8Array, parsed: ParsedTx, run: RunResult): TxRecord {
    const record: TxRecord = {
      signature: parsed.signatures[0],
      slot: this.currentSlot,
      position: this.positionInSlot++,
      blockTime: this.blockTime(this.currentSlot),
      err: run.err,
      fee: transactionFee(parsed),
      preBalances: run.pre,
      postBalances: run.post,
      logs: run.meta.logs(),
      computeUnitsConsumed: run.meta.computeUnitsConsumed(),
      returnData: returnDataJson(run.meta),
      innerInstructions: innerInstructionsJson(run.meta),
      tx,
      parsed,
    };
    if (this.kept === this.order.length) this.evictOldest();
    this.order[(this.head + this.kept) % this.order.length] = record;
    this.kept++;
    this.records.set(record.signature, record);
    this.transactionCount++;
    return record;
  }

  /** Airdrop from the faucet: a real transfer, signed with the current blockhash, committed in this slot. */
  airdrop(to: PublicKey, lamports: bigint): ExecuteOutcome {
    const tx = new Transaction({ feePayer: this.faucet.publicKey, blockhash: this.svm.latestBlockhash(), lastValidBlockHeight: this.currentSlot + this.windowSlots });
    tx.add(SystemProgram.transfer({ fromPubkey: this.faucet.publicKey, toPubkey: to, lamports }));
    tx.sign(this.faucet);
    return this.execute(tx.serialize());
  }

  /** A system account with `lamports` at genesis (the block engine's tip accounts: rent-exempt, like Jito's). */
  createSystemAccount(address: Uint8Array, lamports: bigint): void {
    this.svm.setAccount(address, new Account(lamports, new Uint8Array(0), new Uint8Array(32), false, 0n));
  }

  /** Toggle litesvm's signature verification around a call (simulateTransaction with sigVerify false). */
  withSigverify<T>(on: boolean, fn: () => T): T {
    this.svm.setSigverify(on);
    try {
      return fn();
    } finally {
      this.svm.setSigverify(true);
    }
  }
}
