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
// Landings by push (issue #43, landing-push.ts): with the upstream's PubSub, each followed signature (up to
// MAX_PUSH_WATCHED) is watched with signatureSubscribe at processed and at finalized; every status seen, from the push,
// the poll or another stream, goes through statusSeen()/apply(): one place decides landed, processedAt, finalizedAt.
// While the socket is up the poll leaves the watched signatures alone (it still concludes, confirms executions and
// asks about the unwatched); while it is down the poll asks about everything, as before.
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
import type { LandingPush } from './landing-push.js';

/** Who told the tracker a receipt landed first. */
export type LandingSource = 'push' | 'poll' | 'stream';
/** The status ranks: a later, lower status (a processed push after the poll saw finalized) does not move it back. */
const RANK: Readonly<Record<string, number>> = { processed: 0, confirmed: 1, finalized: 2 };
import { MAX_WATCHED } from '../telemetry/geyser/geyser-slot-stream.js';

const MAX_CALLS_PER_POLL = 8;
/**
 * While the push is up, a watched receipt not finalized this long after acceptance is polled too: longer than Tower's
 * ~13 s root (the push's finalized notification comes then), so only a lost notification makes the poll ask.
 */
const PUSH_SAFETY_MS = 20_000;

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
  private alpenglow: () => boolean = () => false;
  /** The push source (null: polls only) and the signatures it watches for us -> their receipt. */
  private push: LandingPush | null = null;
  private readonly bySignature = new Map<string, number>();
  /** Tracked since the last flush, to be watched by the push (off the request's path). */
  private toWatch: number[] = [];
  /** Receipts finished by a status outside the poll (finalized by push): removed from pending at the next poll. */
  private finished = new Set<number>();
  /** Landings by who told first. */
  readonly landedBy: Record<LandingSource, number> = { push: 0, poll: 0, stream: 0 };
  private pushQueued = false;
  /** Watched on the Geyser stream: signature -> receipt sequence (empty without streamWatch). */
  private watched = new Map<string, number>();
  private watchKey = '';
  private watchQueued = false;
  /** Statuses of watched signatures the stream delivered, first or not (the push may tell the same landing first). */
  streamStatuses = 0;
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
    this.alpenglow = () => mode() === 'alpenglow';
    this.confirmer.alpenglow = this.alpenglow;
  }

  /** Landings by push from this source (main: the upstream's PubSub); started and stopped with the tracker. */
  setPush(push: LandingPush): void {
    this.push = push;
  }

  get pushSource(): LandingPush | null {
    return this.push;
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
    if (this.push !== null) {
      this.toWatch.push(seq);
      if (!this.pushQueued) {
        // Once per event-loop turn, off the request's path.
        this.pushQueued = true;
        setImmediate(() => this.flushWatch());
      }
    }
  }

  private flushWatch(): void {
    this.pushQueued = false;
    const seqs = this.toWatch;
    this.toWatch = [];
    for (const seq of seqs) {
      if (!this.table.current(seq) || this.table.landingState(seq) === LANDING.notLanded) continue;
      const sig = this.table.signatureOf(seq);
      if (this.push?.watch(sig) === true) this.bySignature.set(sig, seq);
    }
  }

  /**
   * The one hook for a status seen outside the poll (the PubSub push; a Geyser stream the same way): `signature` at
   * `commitment`, the source's slot (processed: the block's slot; finalized: the cluster's slot then), at `atMs`.
   */
  statusSeen(signature: string, commitment: 'processed' | 'confirmed' | 'finalized', slot: number, err: unknown, atMs: number): void {
    const seq = this.bySignature.get(signature);
    if (seq === undefined || !this.table.current(seq)) return;
    if (commitment !== 'processed' && this.table.landingState(seq) !== LANDING.landed) {
      // Finalized before any processed was seen: the notification's slot is the cluster's, not the block's. The next
      // poll asks for the block's slot (no longer watched), and the finalization keeps the time it was told.
      this.earlyFinal.set(seq, { atMs, slot });
      this.bySignature.delete(signature);
      this.push?.unwatch(signature);
      return;
    }
    if (this.apply(seq, commitment, slot, err, atMs, 'push')) this.finish(seq, signature);
  }

  /** Finalizations the push told before the receipt had a block slot (bounded by the watch; applied at the poll). */
  private readonly earlyFinal = new Map<number, { readonly atMs: number; readonly slot: number }>();

  private finish(seq: number, signature: string): void {
    this.finished.add(seq);
    this.bySignature.delete(signature);
    this.push?.unwatch(signature);
  }

  /**
   * A status for receipt `seq` (push or poll): landed on first sight, processedAt/finalizedAt as they come. Returns
   * true when nothing more is waited for (confirmed or finalized, as the poll always ended).
   */
  private apply(seq: number, commitment: string, slot: number, err: unknown, atMs: number, source: LandingSource): boolean {
    const previous = this.table.landingState(seq) === LANDING.landed ? this.table.landingOf(seq) : null;
    const verdict = executionFromStatus(err);
    const early = this.earlyFinal.get(seq);
    if (early !== undefined) this.earlyFinal.delete(seq);
    const finalized = early !== undefined || commitment === 'finalized' || (commitment === 'confirmed' && this.alpenglow());
    if (early !== undefined && (RANK[commitment] ?? -1) < RANK.finalized) commitment = 'finalized';
    const prevRank = previous?.confirmationStatus == null ? -1 : (RANK[previous.confirmationStatus] ?? -1);
    const status = (RANK[commitment] ?? -1) >= prevRank ? commitment : previous!.confirmationStatus;
    // The poll's status carries the block's slot; a finalized push carries the cluster's slot then, not the block's.
    const landedSlot = source === 'poll' || previous === null ? slot : previous.slot;
    this.table.setLanded(seq, {
      slot: landedSlot,
      err: err ?? null,
      confirmationStatus: status,
      observedAtMs: previous?.observedAtMs ?? atMs,
      leader: previous?.leader ?? this.leaders?.leaderAt(landedSlot)?.identity ?? null,
      execution: verdict.execution,
      executionSource: 'status',
      processedAtMs: previous?.processedAtMs ?? atMs,
      finalizedAtMs: previous?.finalizedAtMs ?? (early?.atMs ?? (finalized ? atMs : null)),
      finalizedSlot: previous?.finalizedSlot ?? (early?.slot ?? (finalized ? (source === 'poll' ? (this.leaders?.currentSlot() ?? slot) : slot) : null)),
    });
    if (previous === null) {
      this.landedBy[source]++;
      this.metrics.landed(this.table.firstRoute(seq), this.table.slotsToLand(seq, landedSlot), verdict.execution);
    } else if (previous.execution !== verdict.execution) this.metrics.executionChanged(previous.execution, verdict.execution);
    const done = commitment === 'confirmed' || commitment === 'finalized';
    // getTransaction serves confirmed transactions only: ask it now that the status is confirmed.
    if (done && verdict.confirmWithTransaction && (previous === null || previous.finalizedAtMs == null)) this.confirmer.enqueue(seq);
    return done;
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

  /** A watched signature's status from the stream: landed at processed now (through apply(), as the push's). */
  onStreamStatus(signature: string, slot: number, err: unknown): void {
    const seq = this.watched.get(signature);
    if (seq === undefined || !this.table.current(seq)) return;
    this.streamStatuses++;
    if (this.table.landingState(seq) === LANDING.landed) return; // the push told it first
    this.apply(seq, 'processed', slot, err, Date.now(), 'stream'); // counted in landedBy.stream
  }

  get tracked(): number {
    return this.pending.length - this.head;
  }

  start(): void {
    this.push?.start();
    this.timer = setInterval(() => void this.poll(), this.o.pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.push?.stop();
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
    for (const seq of seqs) {
      const sig = this.table.signatureOf(seq);
      if (this.bySignature.delete(sig)) this.push?.unwatch(sig);
    }
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

  /** Status polls that asked the upstream (while the push is up, only for what it does not watch). */
  polls = 0;

  /** Watched signatures whose receipt was overwritten or followed long enough: unwatched (bounded by the watch). */
  private forgetStale(now: number): void {
    for (const seq of this.earlyFinal.keys()) if (!this.table.current(seq) || now - this.table.acceptedAt(seq) > this.o.trackForMs) this.earlyFinal.delete(seq);
    for (const [sig, seq] of this.bySignature) {
      if (this.table.current(seq) && now - this.table.acceptedAt(seq) <= this.o.trackForMs) continue;
      this.bySignature.delete(sig);
      this.push?.unwatch(sig);
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
    if (this.bySignature.size > 0) this.forgetStale(now);
    if (h > 1024 && h * 2 > p.length) {
      this.pending = p.slice(h);
      h = 0;
    }
    this.head = h;
    // Not landed after trackForMs: why, as far as the relay can know (a blockhash check may ask the upstream).
    if (concluded.length > 0) await this.conclude(concluded);
    const window = this.pending.slice(h, h + ASK_PER_POLL);
    const done = new Set<number>(this.finished);
    this.finished = new Set();
    // While the push is up, the signatures it watches are not asked: their statuses come by push.
    const pushUp = this.push?.up === true;
    // A watched one still unfinished PUSH_SAFETY_MS after acceptance is asked anyway (a notification the node lost).
    const ask = pushUp
      ? window.filter((seq) => !done.has(seq) && (!this.bySignature.has(this.table.signatureOf(seq)) || now - this.table.acceptedAt(seq) > PUSH_SAFETY_MS))
      : window;
    this.updateWatch();
    if (ask.length > 0) this.polls++;
    const answers = ask.length === 0 ? { values: [], failure: null } : await this.asker.ask(ask.map((s) => this.table.signatureOf(s)));
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
      if (this.apply(seq, st.confirmationStatus ?? 'processed', st.slot, st.err, observedAt, 'poll')) {
        done.add(seq);
        const sig = this.table.signatureOf(seq);
        if (this.bySignature.delete(sig)) this.push?.unwatch(sig);
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
