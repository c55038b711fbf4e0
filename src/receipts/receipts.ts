// Landing receipts as one part of the relay (front thread; accept() HOT, the rest cold): the table, the landing
// tracker and the metrics, built once from config.receipts by main.ts. Intake calls accept() for every transaction
// it publishes; the relay host's GET /v1/transactions/{signature} and the JSON-RPC host's getTransactionReceipt
// read them. docs/receipts.md.
import type { Config } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import type { TextBuilder } from '../metrics/prometheus.js';
import type { UpstreamRpcClient } from '../rpc/upstream-client.js';
import type { LeaderSource } from '../telemetry/leader-source.js';
import type { AcceptedTransaction, ReceiptSink } from '../admission/receipt-sink.js';
import { LandingTracker } from './landing-tracker.js';
import { ReceiptMetrics, type LandingCounts } from './receipt-metrics.js';
import { LANDING, ReceiptTable, type ReceiptJson } from './receipt-table.js';
import { upstreamStatusAsker } from '../rpc/status/signature-statuses.js';
import { StatusThread } from '../rpc/status/status-thread.js';
import { LandingPush } from './landing-push.js';
import { upstreamWsUrl } from '../rpc/pubsub/upstream-ws-url.js';
import { SkippedSlots } from './skipped-slots.js';
import { TargetSkips } from './target-skips.js';

/** Where landings come from now (GET /health?detail `landing`): the push, or the poll while it is off or down. */
export interface LandingSourceReport {
  readonly source: 'push' | 'poll';
  readonly push: 'off' | 'up' | 'down';
  /** Since when (unix ms) the current source holds (null: the push is off). */
  readonly since: number | null;
  readonly switchesToPoll: number;
  readonly watched: number;
}

export type { AcceptedTransaction };

export class Receipts implements ReceiptSink {
  readonly table: ReceiptTable;
  private readonly tracker: LandingTracker | null;
  private readonly metrics = new ReceiptMetrics();

  /** The thread that makes the tracker's status calls (null: they run on this thread). */
  private readonly statusThread: StatusThread | null;
  /**
   * Skipped slots (from the push socket's slot subscriptions and, with upstream.grpc, the Geyser stream's SLOT_DEAD)
   * and the receipts told their direct target slot was skipped; null without a skip source.
   */
  private readonly skipped: SkippedSlots | null = null;
  private readonly targetSkips: TargetSkips | null = null;

  constructor(
    config: Readonly<Config>,
    upstream: UpstreamRpcClient | null,
    private readonly leaders: LeaderSource | null,
    log: Logger,
    /** `statusThread`: the tracker's getSignatureStatuses calls run in their own thread (the relay's front: main.ts). */
    options: { readonly statusThread?: boolean } = {},
  ) {
    const o = config.receipts;
    const timeoutMs = config.upstream.requestTimeoutMs;
    this.table = new ReceiptTable({ capacity: o.capacity, ttlMs: o.ttlMs });
    if (upstream === null) {
      this.statusThread = null;
      this.tracker = null;
      return;
    }
    // The front's own asker: the tracker's while the status thread is off or down.
    const here = upstreamStatusAsker(upstream, timeoutMs);
    this.statusThread = options.statusThread === true ? new StatusThread({ role: 'receipt-status', url: upstream.url, timeoutMs, log, fallback: here }) : null;
    const tracking = { pollMs: o.pollMs, trackForMs: o.trackForMs, maxTracked: o.maxTracked, timeoutMs };
    this.tracker = new LandingTracker(this.table, upstream, leaders, this.metrics, tracking, log, this.statusThread ?? here);
    if (o.push || config.upstream.grpc !== undefined) {
      const targetSkips = new TargetSkips(this.table, o.pollMs);
      this.targetSkips = targetSkips;
      this.skipped = new SkippedSlots((slot) => targetSkips.onSkipped(slot, Date.now()));
    }
    if (o.push) {
      const url = upstreamWsUrl(upstream.url, config.upstream.wsUrl);
      const tracker = this.tracker;
      const skipped = this.skipped!;
      // With a Geyser stream (upstream.grpc) the push still watches processed: the stream's signature filter reaches
      // the endpoint after the transaction left (front -> telemetry thread -> gRPC write), and a transaction executed
      // before its filter arrived is never streamed; whichever tells first wins (statusSeen/apply keep the earliest).
      // Skips come from the Geyser stream's SLOT_DEAD with upstream.grpc (onSlotDead: no filter to wait for, and it
      // runs ahead of PubSub), else from this socket's slot subscriptions (docs/receipts.md "Skipped target slots").
      const slots =
        config.upstream.grpc === undefined ? { bank: (slot: number, parent: number | null) => skipped.bank(slot, parent, 'pubsub'), dead: (slot: number) => skipped.dead(slot, 'pubsub') } : null;
      tracker.setPush(new LandingPush(url, (sig, c, slot, err, at) => tracker.statusSeen(sig, c, slot, err, at), log, slots));
    }
  }

  /** Which consensus the cluster runs (main.ts hands in the health monitor's): what landing waits for. */
  setConsensus(mode: () => 'alpenglow' | 'tower' | 'unknown'): void {
    this.tracker?.setConsensus(mode);
  }

  /** Resolves once the landing tracker's status thread is ready (true at once without one), false after `ms`. */
  statusThreadReady(ms: number): Promise<boolean> {
    return this.statusThread === null ? Promise.resolve(true) : this.statusThread.whenReady(ms);
  }

  /** The buffer the egress workers write route outcomes into. */
  get sab(): SharedArrayBuffer {
    return this.table.sab;
  }

  /** HOT: a receipt for a transaction being published; returns the sequence number its ring record carries. */
  accept(signature: string, t: AcceptedTransaction, routeMask: number, bytes?: Uint8Array, blockhashAt = -1): number {
    const slot = this.leaders?.currentSlot() ?? -1;
    const seq = this.table.accept(signature, t.keyId, routeMask, t.traceId, t.receivedAtMs, slot);
    if (bytes !== undefined && blockhashAt >= 0) this.table.setBlockhash(seq, bytes, blockhashAt);
    if (this.tracker !== null) this.tracker.track(seq);
    else this.table.setLandingState(seq, LANDING.untracked);
    return seq;
  }

  /** The front's half of a receipt the quic-egress thread reserved (src/ingress/local-admission.ts); blockhash at 0 of `bytes`. */
  acceptReserved(seq: number, signature: string, t: AcceptedTransaction, routeMask: number, bytes?: Uint8Array, blockhashAt = -1): void {
    const slot = this.leaders?.currentSlot() ?? -1;
    this.table.acceptReserved(seq, signature, t.keyId, routeMask, t.traceId, t.receivedAtMs, slot);
    if (!this.table.current(seq)) return;
    if (bytes !== undefined && blockhashAt >= 0) this.table.setBlockhash(seq, bytes, blockhashAt);
    if (this.tracker !== null) this.tracker.track(seq);
    else this.table.setLandingState(seq, LANDING.untracked);
  }

  /** Receipts for the transactions of a bundle the bundle service accepted (cold: sendBundle), landing followed. */
  acceptBundle(signatures: readonly string[], bundleId: string, t: AcceptedTransaction): void {
    for (let i = 0; i < signatures.length; i++) {
      const seq = this.accept(signatures[i], t, 0);
      this.table.setBundle(seq, bundleId, i);
    }
  }

  /** The receipt of `signature` as `keyId` may see it, or null (unknown, another key's, or expired). */
  lookup(signature: string, keyId: number): ReceiptJson | null {
    const seq = this.table.find(signature, keyId, Date.now());
    return seq < 0 ? null : this.table.toJson(seq);
  }

  /** Watch pending signatures on the Geyser stream (upstream.grpc): `fn` gets the whole set when it changes. */
  setStreamWatch(fn: (signatures: readonly string[]) => void): void {
    this.tracker?.setStreamWatch(fn);
  }

  /** A watched signature's status from the Geyser stream (the telemetry thread's message). */
  onStreamStatus(signature: string, slot: number, err: unknown): void {
    this.tracker?.onStreamStatus(signature, slot, err);
  }

  /** A slot the Geyser stream called dead (SLOT_DEAD; the telemetry thread's message, upstream.grpc). */
  onSlotDead(slot: number): void {
    this.skipped?.dead(slot, 'grpc');
  }

  start(): void {
    this.statusThread?.start();
    this.tracker?.start();
    this.targetSkips?.start();
  }

  async stop(): Promise<void> {
    this.targetSkips?.stop();
    this.tracker?.stop();
    await this.statusThread?.stop();
  }

  /** Cold (GET /health?detail): where landings come from now; null without a tracker. */
  landingSource(): LandingSourceReport | null {
    const t = this.tracker;
    if (t === null) return null;
    const p = t.pushSource;
    if (p === null) return { source: 'poll', push: 'off', since: null, switchesToPoll: 0, watched: 0 };
    return { source: p.up ? 'push' : 'poll', push: p.up ? 'up' : 'down', since: p.since, switchesToPoll: p.switches.poll, watched: p.size };
  }

  /** Cold (status page): landing counts since start. */
  landingCounts(): LandingCounts {
    return this.metrics.landingCounts();
  }

  render(tb: TextBuilder): void {
    this.metrics.render(tb, this.tracker?.tracked ?? 0, this.table.size);
    if (this.tracker !== null) {
      this.renderLandingSource(tb, this.tracker);
      tb.declare('slotrelay_receipts_stream_landings_total', 'counter', 'Receipts whose landing the Geyser stream told first (upstream.grpc; the PubSub push or the status polls told the others)');
      tb.sample('slotrelay_receipts_stream_landings_total', {}, this.tracker.landedBy.stream);
      tb.declare('slotrelay_receipts_stream_statuses_total', 'counter', 'Statuses of watched signatures the Geyser stream delivered, whether or not it told the landing first (upstream.grpc)');
      tb.sample('slotrelay_receipts_stream_statuses_total', {}, this.tracker.streamStatuses);
    }
    if (this.skipped !== null && this.targetSkips !== null) {
      tb.declare('slotrelay_receipts_skipped_slots_total', 'counter', 'Skipped slots the relay learnt of, by the source that told it first (pubsub: slot gaps or slotsUpdates dead; grpc: SLOT_DEAD)');
      tb.sample('slotrelay_receipts_skipped_slots_total', { source: 'pubsub' }, this.skipped.counts.pubsub);
      tb.sample('slotrelay_receipts_skipped_slots_total', { source: 'grpc' }, this.skipped.counts.grpc);
      tb.declare('slotrelay_receipts_target_skipped_total', 'counter', "Receipts told that their direct route's target slot was skipped (a `skipped` event) before they landed");
      tb.sample('slotrelay_receipts_target_skipped_total', {}, this.targetSkips.told);
    }

    const t = this.statusThread;
    if (t === null) return;
    tb.declare('slotrelay_receipts_status_polls_total', 'counter', "The landing tracker's status polls, by the thread whose getSignatureStatuses calls answered them (front: while the status thread was down)");
    tb.sample('slotrelay_receipts_status_polls_total', { thread: 'status_thread' }, t.polls.status_thread);
    tb.sample('slotrelay_receipts_status_polls_total', { thread: 'front' }, t.polls.caller);
    tb.declare('slotrelay_receipts_status_thread_restarts_total', 'counter', 'Times the receipts status thread ended unasked and was started again');
    tb.sample('slotrelay_receipts_status_thread_restarts_total', {}, t.restarts);
    tb.declare('slotrelay_receipts_status_thread_up', 'gauge', '1 while the receipts status thread runs');
    tb.sample('slotrelay_receipts_status_thread_up', {}, t.running ? 1 : 0);
  }

  private renderLandingSource(tb: TextBuilder, t: LandingTracker): void {
    tb.declare('slotrelay_receipts_landings_by_source_total', 'counter', 'Receipts by who told their landing first: the PubSub push, the getSignatureStatuses poll or the Geyser stream');
    tb.sample('slotrelay_receipts_landings_by_source_total', { source: 'push' }, t.landedBy.push);
    tb.sample('slotrelay_receipts_landings_by_source_total', { source: 'poll' }, t.landedBy.poll);
    tb.sample('slotrelay_receipts_landings_by_source_total', { source: 'stream' }, t.landedBy.stream);
    tb.declare('slotrelay_receipts_status_polls_asked_total', 'counter', 'Landing polls that asked the upstream getSignatureStatuses (while the push is up: only for signatures it does not watch)');
    tb.sample('slotrelay_receipts_status_polls_asked_total', {}, t.polls);
    const p = t.pushSource;
    if (p === null) return;
    tb.declare('slotrelay_receipts_push_up', 'gauge', "1 while the landing tracker's upstream PubSub socket is open (0: landings by poll)");
    tb.sample('slotrelay_receipts_push_up', {}, p.up ? 1 : 0);
    tb.declare('slotrelay_receipts_landing_source_switches_total', 'counter', 'Switches of the landing source: to poll when the upstream PubSub socket drops, to push when it opens');
    tb.sample('slotrelay_receipts_landing_source_switches_total', { to: 'poll' }, p.switches.poll);
    tb.sample('slotrelay_receipts_landing_source_switches_total', { to: 'push' }, p.switches.push);
    tb.declare('slotrelay_receipts_push_watched', 'gauge', 'Signatures watched on the upstream PubSub (two subscriptions each)');
    tb.sample('slotrelay_receipts_push_watched', {}, p.size);
    tb.declare('slotrelay_receipts_push_notifications_total', 'counter', 'signatureNotification messages handled by the landing tracker, by commitment');
    tb.sample('slotrelay_receipts_push_notifications_total', { commitment: 'processed' }, p.notifications.processed);
    tb.sample('slotrelay_receipts_push_notifications_total', { commitment: 'finalized' }, p.notifications.finalized);
  }
}
