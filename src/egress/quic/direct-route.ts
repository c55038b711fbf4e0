// The direct route (QUIC thread, HOT): each transaction goes over QUIC straight to the TPUs of the leaders the
// scheduler picks (current leader, plus the next ones by the fanout policy), on connections the scheduler keeps warm
// for the next `lookahead` leader windows. Outcome (closed set, src/shm/layout.ts):
//   sent                    written (data + FIN, datagram with the kernel) on at least one leader's connection
//   dropped:no_leader       no fresh slot / schedule, or no leader advertises a tpuQuic
//   dropped:no_connection   every target was connecting-and-failed, retrying with backoff, or closing
//   dropped:queue_full      every target's stream-credit queue was full
//   dropped:stale           queued (handshake, stream credit, congestion room) longer than routes.direct.staleAfterMs
//   failed                  quiche refused the write (unexpected)
//   dropped:shutdown        the worker stopped before the transaction could be written
// The answer carries the targets, the slot whose leader comes first and the cause (fanout.ts); the record handler
// (src/egress/contract/send-record.ts) logs drops bounded (drop-log.ts) and writes the landing receipt.
// Leader data: the telemetry thread's snapshot (SnapshotLeaderSource); PollingLeaderSource (polls upstream.rpcUrl)
// only when the telemetry thread is disabled. See createLeaderSource() below. Connection measurements reach the
// telemetry thread by target address (src/telemetry/measurements.ts); the label is the validator identity, for logs.
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../log/logger.js';
import { ROUTE_IDS } from '../../shm/layout.js';
import type { LeaderSource } from '../../telemetry/leader-source.js';
import { SnapshotLeaderSource } from '../../telemetry/snapshot-leader-source.js';
import { PollingLeaderSource } from './polling-leader-source.js';
import { fanout, shutdownAware } from './fanout.js';
import type { QuicEgress } from './quic-egress.js';
import { ownAnswer, sendResult, type EgressRoute, type MutableSendResult, type RouteAnswer, type TxView } from '../contract/route.js';
import { Scheduler } from './scheduler.js';
import { WidenReader } from '../../shm/widen-layout.js';
import type { TargetSender } from './connections.js';

/** How often the pre-warm set is re-checked (ms); it changes once per 4-slot leader window. */
const PREWARM_CHECK_MS = 50;

/** The one line that decides where leader data comes from. */
export function createLeaderSource(
  config: Readonly<Config>,
  log: Logger,
  snapshot?: SharedArrayBuffer,
): (LeaderSource & { start(): void; close(): void }) | null {
  if (snapshot !== undefined) {
    // The telemetry thread's snapshot: the same data getLeaderSlots serves; stale beyond maxSnapshotAgeMs.
    const source = new SnapshotLeaderSource(snapshot, { maxAgeMs: config.telemetry.maxSnapshotAgeMs });
    return Object.assign(source, { start: () => undefined, close: () => undefined });
  }
  const rpcUrl = config.upstream.rpcUrl;
  if (rpcUrl === undefined) return null;
  return new PollingLeaderSource({ rpcUrl, slotPollMs: config.routes.direct.slotPollMs, log });
}

export class DirectRoute implements EgressRoute {
  readonly id = ROUTE_IDS.direct;
  readonly name = 'direct' as const;
  readonly scheduler: Scheduler;
  private readonly timer: NodeJS.Timeout;
  /** close() began: late failures count as dropped:shutdown. */
  closed = false;
  private readonly workers: (TargetSender | null)[] = [];
  /** The synchronous answer, reused (send() is hot; the caller reads it before the next send). */
  private readonly result: MutableSendResult = { ...sendResult('sent') };

  constructor(
    private readonly quic: QuicEgress,
    private readonly source: LeaderSource & { start?(): void; close?(): void },
    opts: Config['routes']['direct'],
    /** The adaptive routing's widen table (src/shm/widen-layout.ts); absent = the fanout policy alone. */
    widen?: SharedArrayBuffer,
  ) {
    this.scheduler = new Scheduler(source, {
      fanout: opts.fanout,
      producers: opts.producers,
      leaders: opts.leaders,
      windowTailSlots: opts.windowTailSlots,
      lookahead: opts.lookahead,
      staleLeaderMs: opts.staleLeaderMs,
      widen: widen === undefined ? undefined : new WidenReader(widen),
    });
    source.start?.();
    this.timer = setInterval(this.prewarm, PREWARM_CHECK_MS);
  }

  /** Ready once the connection layer is loaded (leaders' connections are prewarmed as their slots come near). */
  async warm(): Promise<void> {
    await this.quic.ready.catch(() => null);
  }

  send(tx: TxView): RouteAnswer | Promise<RouteAnswer> {
    if (this.closed) return 'dropped:shutdown';
    const cache = this.quic.connections;
    if (cache === null) {
      // The connection layer is still loading (the first sends after start): send once it is, aiming anew then. The
      // answer outlives this call, so it is not the reused result.
      return this.quic.ready.then(() => ownAnswer(this.send(tx)), () => 'failed' as const);
    }
    const targets = this.scheduler.targets();
    if (targets.length === 0) return 'dropped:no_leader';
    // For the landing receipt (src/egress/contract/receipt-writer.ts): how many leaders, and the slot whose leader comes first.
    const out = this.result;
    out.targets = targets.length;
    out.targetSlot = this.scheduler.currentSlot;
    const ws = this.workers;
    ws.length = targets.length;
    for (let i = 0; i < targets.length; i++) ws[i] = cache.get(targets[i].target, targets[i].identity);
    return shutdownAware(fanout(ws, tx.bytes, out, tx.rebroadcast === true), this);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.source.close?.();
    await this.quic.close();
  }

  private readonly prewarm = (): void => {
    const cache = this.quic.connections;
    if (cache === null || this.closed) return;
    const warm = this.scheduler.prewarmTargets();
    if (warm === null) return;
    cache.prewarm(warm.map((t) => ({ target: t.target, label: t.identity })));
  };
}
