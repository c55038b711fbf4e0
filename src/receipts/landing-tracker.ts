// Landing detection for the receipts (front thread, cold: one timer; the upstream calls are async and never block a
// request, and the status calls run in a status thread when the relay has one: src/rpc/status/). Every pollMs the
// tracker asks the upstream's getSignatureStatuses (256 signatures per call, Agave's
// limit, at most MAX_CALLS_PER_POLL calls) about the receipts still pending, in acceptance order. A status with a
// slot means landed (its err, if any, is the on-chain error); the tracker keeps asking until the status is
// confirmed or finalized so the receipt shows the final confirmation. A receipt older than trackForMs without a
// status is `not_landed` (its blockhash has expired by then). At most maxTracked receipts are followed; beyond that
// new ones are `untracked` (counted), so a flood cannot make the poll unbounded. ms-to-land is measured at the poll
// that first saw the status: its resolution is pollMs (docs/receipts.md). Each landing also says whether the
// transaction was executed (execution-outcome.ts: SIMD-0290 lets a block include one that was not); when the status's
// err cannot tell, the confirmed receipt goes to the ExecutionConfirmer, which asks getTransaction.
// Which consensus the cluster runs (setConsensus) decides what the tracker waits for: under Tower BFT a status goes
// processed -> confirmed -> finalized and the receipt is final at confirmed; under Alpenglow there is no separate
// confirmed stage (a certificate finalizes the block ~150 ms after it), so a receipt is final at finalized (an
// Alpenglow node's `confirmed` is that same event and ends the wait too) and getTransaction is asked at finalized.
// A poll costs O(what it asks), not O(what it follows) (issue #28: this runs on the front thread, which carries the
// transactions; walking 20,000 followed receipts every 200 ms cost ~2 ms per poll, i.e. 1% of requests at p99):
// receipts are followed in acceptance order, so the overwritten and expired ones are at the head and are dropped from
// there, the ones asked about are the first ASK_PER_POLL after it, and the confirmed ones are removed from that window
// only. Same signatures asked, same states as the scan over everything it replaces.
// With a Geyser stream (upstream.grpc, docs/geyser.md) the first MAX_WATCHED receipts not landed yet are also
// watched on it (streamWatch: the whole set, sent when it changes, at the latest one event-loop turn after a track):
// a status from the stream marks the receipt landed (processed) when the transaction executes, without waiting for
// the next poll; the polls go on for confirmation, for what the stream missed, and for everything while it is down.
import type { Logger } from '../log/logger.js';
import { SummarizedLog } from '../log/summarized-log.js';
import type { LeaderSource } from '../telemetry/leader-source.js';
import type { UpstreamRpcClient } from '../rpc/upstream-client.js';
import { LANDING, type ReceiptTable } from './receipt-table.js';
import type { ReceiptMetrics } from './receipt-metrics.js';

/** A blockhash is valid for 150 slots (Agave MAX_PROCESSING_AGE); one more for the slot it was taken in. */
const BLOCKHASH_LIFETIME_SLOTS = 151;
/** Distinct blockhashes asked of isBlockhashValid per poll (cold, bounded). */
const MAX_BLOCKHASH_CHECKS = 16;
import { ExecutionConfirmer } from './execution-confirmer.js';
import { executionFromStatus } from './execution-outcome.js';
import { MAX_SIGNATURES_PER_CALL, upstreamStatusAsker, type SignatureStatusAsker } from '../rpc/status/signature-statuses.js';
import { MAX_WATCHED } from '../telemetry/geyser/geyser-slot-stream.js';

const MAX_CALLS_PER_POLL = 8;

export interface LandingTrackerOptions {
  readonly pollMs: number;
  readonly trackForMs: number;
  readonly maxTracked: number;
  readonly timeoutMs: number;
}

const ASK_PER_POLL = MAX_SIGNATURES_PER_CALL * MAX_CALLS_PER_POLL;

export class LandingTracker {
  /**
   * Receipts being followed, in acceptance order (landed-but-not-confirmed ones stay until confirmed): the live ones
   * are pending[head..]; the array is compacted when the dropped head is the larger part.
   */
  private pending: number[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  private readonly failures: SummarizedLog;
  private readonly confirmer: ExecutionConfirmer;
  /** Watched on the Geyser stream: signature -> receipt sequence (empty without streamWatch). */
  private watched = new Map<string, number>();
  private watchKey = '';
  private watchQueued = false;
  /** Receipts whose landing the stream told first (the polls told the others). */
  streamLandings = 0;
  /** Where the watched set goes (the telemetry thread's Geyser stream); null without upstream.grpc. */
  private streamWatch: ((signatures: readonly string[]) => void) | null = null;

  constructor(
    private readonly table: ReceiptTable,
    private readonly upstream: UpstreamRpcClient,
    private readonly leaders: LeaderSource | null,
    private readonly metrics: ReceiptMetrics,
    private readonly o: LandingTrackerOptions,
    log: Logger,
    /**
     * Who makes the getSignatureStatuses calls (src/rpc/status/; default: `upstream`, from this thread). isBlockhashValid
     * and getTransaction stay on `upstream`: a few per poll at most, for receipts that concluded or confirmed.
     */
    private readonly asker: SignatureStatusAsker = upstreamStatusAsker(upstream, o.timeoutMs),
  ) {
    this.failures = new SummarizedLog(log);
    this.confirmer = new ExecutionConfirmer(table, upstream, metrics, { trackForMs: o.trackForMs, timeoutMs: o.timeoutMs });
  }

  /** The cluster's consensus, as the health monitor learned it from getAgGenesisCert ('unknown' until it answers). */
  setConsensus(mode: () => 'alpenglow' | 'tower' | 'unknown'): void {
    this.confirmer.alpenglow = () => mode() === 'alpenglow';
  }

  /** HOT (after accept): follow this receipt, if there is room. */
  track(seq: number): void {
    if (this.pending.length - this.head >= this.o.maxTracked) {
      this.table.setLandingState(seq, LANDING.untracked);
      this.metrics.untracked++;
      return;
    }
    this.pending.push(seq);
    if (this.streamWatch !== null && !this.watchQueued) {
      // Once per event-loop turn, off the request's path.
      this.watchQueued = true;
      setImmediate(() => {
        this.watchQueued = false;
        this.updateWatch();
      });
    }
  }

  /** Watch the pending receipts' signatures on a Geyser stream (upstream.grpc). */
  setStreamWatch(fn: (signatures: readonly string[]) => void): void {
    this.streamWatch = fn;
  }

  /** The first MAX_WATCHED receipts not landed yet, in acceptance order; sent when the set changed. */
  private updateWatch(): void {
    if (this.streamWatch === null) return;
    const next = new Map<string, number>();
    const p = this.pending;
    for (let i = this.head; i < p.length && next.size < MAX_WATCHED; i++) {
      const seq = p[i];
      if (!this.table.current(seq) || this.table.landingState(seq) === LANDING.landed) continue;
      next.set(this.table.signatureOf(seq), seq);
    }
    this.watched = next;
    const key = [...next.keys()].join(',');
    if (key === this.watchKey) return;
    this.watchKey = key;
    this.streamWatch([...next.keys()]);
  }

  /** A watched signature's status from the stream: landed at processed now (the polls confirm it later). */
  onStreamStatus(signature: string, slot: number, err: unknown): void {
    const seq = this.watched.get(signature);
    if (seq === undefined || !this.table.current(seq) || this.table.landingState(seq) === LANDING.landed) return;
    const verdict = executionFromStatus(err);
    this.table.setLanded(seq, {
      slot,
      err: err ?? null,
      confirmationStatus: 'processed',
      observedAtMs: Date.now(),
      leader: this.leaders?.leaderAt(slot)?.identity ?? null,
      execution: verdict.execution,
      executionSource: 'status',
    });
    this.metrics.landed(this.table.firstRoute(seq), this.table.slotsToLand(seq, slot), verdict.execution);
    this.streamLandings++;
  }

  get tracked(): number {
    return this.pending.length - this.head;
  }

  start(): void {
    this.timer = setInterval(() => void this.poll(), this.o.pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.failures.close();
  }

  /** One round (exported for tests through start()). Never overlaps itself. */
  async poll(): Promise<void> {
    if (this.polling || (this.tracked === 0 && this.confirmer.size === 0)) return;
    this.polling = true;
    try {
      await this.pollStatuses();
      await this.confirmer.run(Date.now());
    } finally {
      this.polling = false;
    }
  }

  /**
   * Receipts without a status after trackForMs: not landed, and why (src/receipts/not-landed-reason.ts). For one
   * that was sent, whether its blockhash expired: surely so when the cluster is more than a blockhash lifetime past
   * the slot it was accepted in (its blockhash can only be older), else as the upstream's isBlockhashValid says (at
   * most MAX_BLOCKHASH_CHECKS distinct blockhashes per poll; the others stay unknown).
   */
  private async conclude(seqs: readonly number[]): Promise<void> {
    const slot = this.leaders?.currentSlot() ?? -1;
    const valid = new Map<string, boolean | null>();
    for (const seq of seqs) {
      if (!this.table.current(seq)) continue;
      let expired: boolean | null = null;
      const accepted = this.table.acceptedSlotOf(seq);
      if (slot >= 0 && accepted >= 0 && slot - accepted > BLOCKHASH_LIFETIME_SLOTS) expired = true;
      else {
        const hash = this.table.blockhashOf(seq);
        if (hash !== null) {
          if (!valid.has(hash) && valid.size < MAX_BLOCKHASH_CHECKS) valid.set(hash, await this.blockhashValid(hash));
          const v = valid.get(hash);
          expired = v === undefined || v === null ? null : !v;
        }
      }
      this.table.setBlockhashExpired(seq, expired);
      this.table.setLandingState(seq, LANDING.notLanded);
      this.metrics.notLanded++;
      const r = this.table.reasonOf(seq);
      if (r !== null) this.metrics.notLandedReason(r.code, r.sent);
    }
  }

  /** isBlockhashValid at processed commitment; null when the upstream cannot say. */
  private async blockhashValid(hash: string): Promise<boolean | null> {
    try {
      const r = await this.upstream.call<{ value?: unknown }>('isBlockhashValid', [hash, { commitment: 'processed' }], this.o.timeoutMs);
      return typeof r?.value === 'boolean' ? r.value : null;
    } catch {
      return null;
    }
  }

  private async pollStatuses(): Promise<void> {
    if (this.tracked === 0) return;
    const now = Date.now();
    const p = this.pending;
    const concluded: number[] = [];
    // Drop the head: overwritten by newer receipts, or followed long enough (not_landed unless it landed).
    let h = this.head;
    for (; h < p.length; h++) {
      const seq = p[h];
      if (!this.table.current(seq)) continue;
      if (now - this.table.acceptedAt(seq) <= this.o.trackForMs) break;
      if (this.table.landingState(seq) !== LANDING.landed) {
        concluded.push(seq);
      }
    }
    if (h > 1024 && h * 2 > p.length) {
      this.pending = p.slice(h);
      h = 0;
    }
    this.head = h;
    // Not landed after trackForMs: why, as far as the relay can know (a blockhash check may ask the upstream).
    if (concluded.length > 0) await this.conclude(concluded);
    const ask = this.pending.slice(h, h + ASK_PER_POLL);
    this.updateWatch();
    const done = new Set<number>();
    const answers = await this.asker.ask(ask.map((s) => this.table.signatureOf(s)));
    if (answers.failure !== null) {
      this.failures.note('warn', 'status_poll', { err: answers.failure }, 'receipts: getSignatureStatuses failed; landing detection retries next poll');
    }
    const observedAt = Date.now();
    const values = answers.values;
    for (let k = 0; k < values.length && k < ask.length; k++) {
      const st = values[k];
      if (st === null || typeof st.slot !== 'number') continue; // a status without a slot says nothing
      const seq = ask[k];
      if (!this.table.current(seq)) continue;
      const first = this.table.landingState(seq) !== LANDING.landed;
      const previous = first ? null : this.table.toJson(seq).landed;
      const verdict = executionFromStatus(st.err);
      this.table.setLanded(seq, {
        slot: st.slot,
        err: st.err ?? null,
        confirmationStatus: st.confirmationStatus ?? null,
        observedAtMs: previous === null ? observedAt : this.table.acceptedAt(seq) + previous.msToLand,
        leader: previous?.leader ?? this.leaders?.leaderAt(st.slot)?.identity ?? null,
        execution: verdict.execution,
        executionSource: 'status',
      });
      if (first) this.metrics.landed(this.table.firstRoute(seq), this.table.slotsToLand(seq, st.slot), verdict.execution);
      else if (previous !== null && previous.execution !== verdict.execution) this.metrics.executionChanged(previous.execution, verdict.execution);
      if (st.confirmationStatus === 'confirmed' || st.confirmationStatus === 'finalized') {
        done.add(seq);
        // getTransaction serves confirmed transactions only: ask it now that the status is confirmed.
        if (verdict.confirmWithTransaction) this.confirmer.enqueue(seq);
      }
    }
    if (done.size > 0) {
      // The confirmed ones are among those asked: compact that window only (track() may have appended meanwhile).
      const q = this.pending;
      let w = this.head;
      const end = Math.min(q.length, this.head + ASK_PER_POLL);
      for (let r = this.head; r < end; r++) if (!done.has(q[r])) q[w++] = q[r];
      if (w < end) q.splice(w, end - w);
    }
  }
}
