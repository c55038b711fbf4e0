// A transaction the QUIC ingress admitted in the QUIC thread (src/ingress/local-admission.ts), dispatched without the
// ring (QUIC thread; HOT: one call per locally admitted transaction): the same routes, outcome counters, receipt
// writes, latency and rebroadcast admission as a ring record of the consumer loop (./consumer-loop.ts), which makes
// one of these over its own parts. `done` is called once every route answered (the bytes may be reused then).
// Counted consumed/released like a record.
import type { LocalDispatch } from '../../ingress/local-admission.js';
import type { SummarizedLog } from '../../log/summarized-log.js';
import type { LatencyRecorder } from '../../metrics/histogram-merge.js';
import { EGRESS_OUTCOMES, ROUTE_BY_ID, ROUTE_COUNT, WORKER_COUNTER, egressCounterIndex, type EgressOutcome } from '../../shm/layout.js';
import { firstSignatureOffset } from '../../tx/wire-offsets.js';
import { OUTCOME_INDEX, type EgressRoute, type TxView } from '../contract/route.js';
import type { ReceiptWriter } from '../contract/receipt-writer.js';
import type { RetryScheduler } from '../rebroadcast/retry-scheduler.js';

/** The consumer loop's parts a local dispatch shares. */
export interface LocalDispatchParts {
  /** The route bits this consumer handles. */
  readonly ownMask: number;
  readonly routes: readonly (EgressRoute | null | undefined)[];
  /** This consumer's counter region. */
  readonly counters: Float64Array;
  readonly receipts: ReceiptWriter | null;
  readonly latency: LatencyRecorder;
  readonly retry: RetryScheduler | null;
  readonly accSummary: SummarizedLog;
  readonly failures: SummarizedLog;
  /** The loop ended and its routes closed: later outcomes are no longer this region's writer's. */
  readonly isClosed: () => boolean;
  /** The loop crashed (not stopped): a transaction in flight stays in its slab slot for the next loop's replay. */
  readonly isDetached: () => boolean;
  /** Before each dispatch (the test hook that crashes the thread after N local sends). */
  readonly beforeEach: () => void;
}

function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

export function localDispatcher(c: LocalDispatchParts): LocalDispatch {
  const { ownMask, routes, counters, receipts, latency, retry, accSummary, failures } = c;
  return (sab, byteOffset, length, keyId, routeMask, receivedAtMs, traceId, seq, done) => {
    c.beforeEach();
    const mask = routeMask & ownMask;
    counters[WORKER_COUNTER.consumed]++;
    const bytes = Buffer.from(sab, byteOffset, length);
    const view: TxView = { bytes, sab, byteOffset, length, signatureOffset: firstSignatureOffset(bytes, 0, length), keyId, maxRetries: -1, traceId, receivedAtMs, receiptSeq: seq, targets: 0, targetSlot: -1 };
    let pendingRoutes = 1;
    let sent = false;
    let troubles: Record<string, string> | null = null;
    const answer = (id: number, o: EgressOutcome, targets: number, targetSlot: number): void => {
      if (c.isClosed()) return;
      let idx = OUTCOME_INDEX[o];
      if (idx === undefined) idx = OUTCOME_INDEX.failed;
      if (idx === OUTCOME_INDEX.sent) sent = true;
      else if (idx !== OUTCOME_INDEX['dropped:discarded']) (troubles ??= {})[ROUTE_BY_ID[id]] = EGRESS_OUTCOMES[idx];
      if (receipts !== null && seq !== 0) receipts.routeOutcome(seq, id, idx, targets, targetSlot, nowMs());
      counters[egressCounterIndex(id, idx)]++;
      latency.record(id, (nowMs() - receivedAtMs) * 1000);
    };
    const finish = (): void => {
      if (--pendingRoutes !== 0) return;
      // A crash (not a stop): the slot stays in flight for the next loop's replay, as a ring record stays in its ring.
      if (c.isDetached()) return;
      if (retry !== null && !c.isClosed()) retry.admit(view, mask, sent);
      counters[WORKER_COUNTER.released]++;
      if (!sent) counters[WORKER_COUNTER.undelivered]++;
      if (troubles !== null && accSummary.enabled(sent ? 'info' : 'warn')) {
        const fields = { traceId, keyId, outcomes: troubles, retry: 'none' };
        if (sent) accSummary.note('info', 'local partial', fields, 'egress: delivered, but not by every requested route');
        else accSummary.note('warn', 'local undelivered', fields, 'egress: transaction not delivered by any route');
      }
      done();
    };
    for (let id = 0; id < ROUTE_COUNT; id++) {
      if ((mask & (1 << id)) === 0) continue;
      const route = routes[id];
      if (route === null || route === undefined) {
        answer(id, 'dropped:route_unavailable', 0, -1);
        continue;
      }
      view.targets = 0;
      view.targetSlot = -1;
      let r: Promise<EgressOutcome> | EgressOutcome;
      try {
        r = route.send(view);
      } catch (err) {
        failures.note('error', 'threw ' + id, { traceId, route: id, err: err instanceof Error ? err.message : String(err) }, 'egress: route threw');
        answer(id, 'failed', 0, -1);
        continue;
      }
      const targets = view.targets ?? 0;
      const targetSlot = view.targetSlot ?? -1;
      if (typeof r === 'string') {
        answer(id, r, targets, targetSlot);
        continue;
      }
      pendingRoutes++;
      r.then(
        (o) => {
          answer(id, o, targets, targetSlot);
          finish();
        },
        () => {
          answer(id, 'failed', targets, targetSlot);
          finish();
        },
      );
    }
    finish();
  };
}
