// The ring consumer loop (egress worker, HOT). Attaches to its ring, takes records in order, hands each to every
// route in its route mask, counts each route's outcome into this worker's counter region (single writer) and its
// latency into a per-route histogram, and releases the record once every route answered. Sleeps in
// Atomics.waitAsync when the ring is empty, so the worker's event loop keeps running the routes' I/O.
// Runs until the pool sets the ring's STOP word (shutdown) or throws. On a throw it stops releasing records first (a
// replacement consumer resends whatever was taken and not finished), then closes the routes. On a stop it closes the
// routes (their in-flight sends answer dropped:shutdown), waits a moment for those answers, then ends every record
// still in the ring — in flight or never taken — with dropped:shutdown for each route that had not answered, so
// each (record, requested route) still gets exactly one outcome; what the stop left undelivered is logged bounded
// (shutdown-report.ts: the first 100 records with their trace ids, then a summary per route and outcome).
// Just before a record is released, a transaction that asks for rebroadcasts is copied into the retry queue
// (retry-scheduler.ts), and a record some route did not take is noted in the delivery-accounting log: each
// (record, requested route) gets exactly one first-send outcome counted. That log is bounded per combination of
// route outcomes (src/log/summarized-log.ts: the first record at once with its trace id and every route's outcome,
// then a count per 10 s with one example); at log level debug every such record also gets its own line. It writes
// through an asynchronous, bounded destination (accounting-log.ts) so it can never block this thread.
// (Longer than most files: the hot loop and its stop path share the per-slot arrays below.)
// Static peers (routes.static.everyTransaction): the front adds the static route to the record's mask when it
// publishes it (src/config/route-policy.ts, src/admission/intake.ts: every intake path), so a reload's change of a key's
// route policy needs nothing here.
import { newRecordSlots } from './record-slots.js';
import type { MessagePort } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import type { Config } from '../../config/schema.js';
import { createLogger, type Logger } from '../../log/logger.js';
import { SummarizedLog } from '../../log/summarized-log.js';
import { followLogLevel } from '../../log/log-level-message.js';
import { LatencyRecorder } from '../../metrics/histogram-merge.js';
import { workerCounterRegion } from '../../shm/counters.js';
import { EGRESS_OUTCOMES, ROUTE_BY_ID, ROUTE_COUNT, ROUTE_IDS, WORKER_COUNTER, egressCounterIndex, type EgressOutcome } from '../../shm/layout.js';
import { RingConsumer } from '../../shm/ring.js';
import { JOIN_FLAG, JoinSide } from '../../shm/join.js';
import { ringMaskOf, type RouteFamily, type RoutePlan } from '../../config/route-plan.js';
import { resolveWaitPolicy } from '../../config/wait-policy.js';
import { OUTCOME_INDEX, type EgressRoute, type TxView } from '../contract/route.js';
import { firstSignatureOffset } from '../../tx/wire-offsets.js';
import { RpcRoute } from '../worker-routes/rpc-route.js';
import { DiscardRoute } from '../worker-routes/discard-route.js';
import { DirectRoute, createLeaderSource } from '../quic/direct-route.js';
import { StaticRoute } from '../quic/static-route.js';
import { QuicEgress } from '../quic/quic-egress.js';
import { JitoRoute } from '../worker-routes/jito-route.js';
import { RetryScheduler } from '../rebroadcast/retry-scheduler.js';
import { AccountingLog } from './accounting-log.js';
import { ReceiptWriter } from '../contract/receipt-writer.js';
import { ShutdownReport } from './shutdown-report.js';
import { announceWhenWarm } from '../contract/consumer-ready.js';
import type { QuicLink } from '../../shm/quic-link-layout.js';
import { slotMsSource } from '../../telemetry/slot-ms.js';
import { localDispatcher } from './local-dispatch.js';
import type { LocalDispatch } from '../../ingress/local-admission.js';

/** Records taken per turn before yielding to I/O while the ring stays non-empty. */
const TAKE_BATCH = 64;
/** Longest sleep before re-checking the STOP word (a safety net: stop also notifies). */
const IDLE_WAIT_MS = 1_000;
/** On stop, how long aborted sends get to report before the loop returns. */
const CLOSE_SETTLE_MS = 1_000;

/** Test-only fault injection, passed by the pool in the task payload (never read from the environment). */
export interface EgressTestHooks {
  /** On the first attempt only: crash when taking record number N + 1. */
  readonly crashAfterRecords?: number;
  /** On the first attempt only: crash when dispatching local transaction number N + 1 (QUIC thread, local admission). */
  readonly crashAfterLocal?: number;
  /** 'throw': the task rejects (thread survives); 'exit': process.exit() ends the worker thread. */
  readonly crashMode?: 'throw' | 'exit';
}

/** The Piscina task payload (structured-cloned; SharedArrayBuffers are shared, the port is transferred). */
export interface EgressTask {
  readonly ringIndex: number;
  readonly ring: SharedArrayBuffer;
  readonly counters: SharedArrayBuffer;
  /** The validated config. It travels here, not in workerData; workers/egress-worker.ts deep-freezes the clone. */
  readonly config: Config;
  /** 0 on the first run for this ring, +1 per restart. */
  readonly attempt: number;
  /** Where latency histograms are posted (histogram-merge.ts); absent = not recorded. */
  readonly latencyPort?: MessagePort;
  readonly testHooks?: EgressTestHooks;
  /** The telemetry thread's leader-slot snapshot: the direct route's leader source (one source of truth). */
  readonly snapshot?: SharedArrayBuffer;
  /** Where the QUIC routes report connection measurements (telemetry/measurements.ts). */
  readonly measurementPort?: MessagePort;
  /**
   * The relay identity main generated in memory (64-byte secret; src/egress/quic/identity.ts), for the QUIC routes. Absent
   * when identity.keypairPath names the keypair (loaded from the file, hot-reloaded) or no QUIC route is enabled.
   */
  readonly identitySecret?: Uint8Array;
  /** The landing receipts' shared part (src/shm/receipts-layout.ts); absent = receipts off. */
  readonly receipts?: SharedArrayBuffer;
  /** The adaptive routing's widen table (src/shm/widen-layout.ts); absent = routing.adaptive off. */
  readonly widen?: SharedArrayBuffer;
  /**
   * The frozen route plan (src/config/route-plan.ts) and which family of routes this consumer owns: 'workers' (rpc,
   * jito) in the egress pool, 'quic' (direct, static) in the QUIC thread. Absent (tests, benches): every route here.
   */
  readonly plan?: RoutePlan;
  readonly family?: RouteFamily;
  /** The join table of records published into two rings (src/shm/join.ts); absent = no record has a join entry. */
  readonly join?: SharedArrayBuffer;
  /** QUIC thread only: where the telemetry probe's requests arrive (src/telemetry/probe-relay.ts). */
  readonly probePort?: MessagePort;
  /** QUIC thread only: where jobs it hosts (the QUIC ingress) are asked for (src/egress/quic/hosted-jobs.ts). */
  readonly hostPort?: MessagePort;
  /** QUIC thread 0 of several (rings.quicThreads > 1): its links to threads 1..N-1 (src/shm/quic-link-layout.ts). */
  readonly quicLinks?: readonly QuicLink[];
}

export interface ConsumerDeps {
  /**
   * QUIC thread: receives this loop's local dispatch (src/ingress/local-admission.ts) once the routes are built, and
   * null when the loop ended (the QUIC ingress then sends everything through the front again).
   */
  readonly exposeLocal?: (d: LocalDispatch | null) => void;
  /** Routes by id (index = ROUTE_IDS value); null = not available in this relay. Default: built from config. */
  readonly routes?: readonly (EgressRoute | null)[];
  readonly log?: Logger;
  /** Rebroadcast scheduler (retry-scheduler.ts); null = no rebroadcasts. Default: built from config (none with routes.discard). */
  readonly retry?: RetryScheduler | null;
}

export interface RouteInputs {
  readonly snapshot?: SharedArrayBuffer;
  /** The landing receipts' shared part: routes write there why a transaction was not sent (absent: receipts off). */
  readonly receipts?: SharedArrayBuffer;
  /** The adaptive routing's widen table, for the direct route (absent: routing.adaptive off). */
  readonly widen?: SharedArrayBuffer;
  readonly measurementPort?: MessagePort;
  readonly identitySecret?: Uint8Array;
  /** Build only this family's routes (the others stay null); absent = all. */
  readonly family?: RouteFamily;
  /** The frozen route plan; absent = decided from config as before (tests, benches). */
  readonly plan?: RoutePlan;
  /** This consumer's counter region: the QUIC connection cache writes its gauges there. */
  readonly quicGauges?: Float64Array;
  /** QUIC thread 0 of several: the links to the threads owning the other targets. */
  readonly quicLinks?: readonly QuicLink[];
}

export function buildRoutes(config: Config, log: Logger, telemetry: RouteInputs = {}): (EgressRoute | null)[] {
  const routes: (EgressRoute | null)[] = new Array(ROUTE_COUNT).fill(null);
  const family = telemetry.family;
  const plan = telemetry.plan;
  if (config.routes.discard) return family === 'quic' ? routes : routes.map((_, id) => new DiscardRoute(id));
  const http = family !== 'quic';
  const quicFamily = family !== 'workers';
  const receipts = telemetry.receipts !== undefined ? new ReceiptWriter(telemetry.receipts) : null;
  if (http && (plan === undefined || plan.rpc)) {
    const rpc = new RpcRoute(config.routes.rpc, log, receipts);
    routes[rpc.id] = rpc;
  }
  // direct + static share one identity certificate and one QUIC connection cache (the QUIC thread's: one connection
  // per leader per process). Leaders come from the telemetry snapshot when the pool passes one, else from polling
  // upstream.rpcUrl (createLeaderSource).
  const wantDirect =
    quicFamily && (plan !== undefined ? plan.direct : config.routes.direct.enabled && (telemetry.snapshot !== undefined || config.upstream.rpcUrl !== undefined));
  const wantStatic = quicFamily && (plan !== undefined ? plan.staticPeers.length > 0 : config.routes.static.peers.length > 0);
  const slotMs = slotMsSource(telemetry.snapshot);
  const quic = wantDirect || wantStatic ? new QuicEgress(config, log, { identitySecret: telemetry.identitySecret, gauges: telemetry.quicGauges, links: telemetry.quicLinks, slotMs }) : null;
  if (quic !== null && wantDirect) {
    const source = createLeaderSource(config, log, telemetry.snapshot);
    if (source !== null) routes[ROUTE_IDS.direct] = new DirectRoute(quic, source, config.routes.direct, log, receipts, telemetry.widen);
  }
  if (quic !== null && telemetry.measurementPort !== undefined) quic.reportMeasurementsTo(telemetry.measurementPort);
  if (quic !== null && wantStatic) routes[ROUTE_IDS.static] = new StaticRoute(quic, config.routes.static.peers, log, receipts);
  if (http && config.routes.jito !== undefined && (plan === undefined || plan.jito)) routes[ROUTE_IDS.jito] = new JitoRoute(config.routes.jito, log, receipts);
  return routes;
}

function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

export async function runEgressConsumer(task: EgressTask, deps: ConsumerDeps = {}): Promise<void> {
  const log = deps.log ?? createLogger(task.config.log.level, 'egress', { worker: task.ringIndex });
  // Injected loggers (tests, benches) get the accounting lines too; the relay's go through the async destination.
  const accountingLog =
    deps.log === undefined ? new AccountingLog({ level: task.config.log.level, bindings: { thread: 'egress', worker: task.ringIndex }, summary: log }) : null;
  const accLog = accountingLog?.log ?? log;
  /** Accounting lines, bounded per combination of route outcomes. */
  const accSummary = new SummarizedLog(accLog);
  let accDebug = accLog.isLevelEnabled('debug');
  // A reload's log.level (src/log/log-level-message.ts), on the port this task reports latency on.
  if (task.latencyPort !== undefined) followLogLevel(task.latencyPort, accLog === log ? [log] : [log, accLog], () => (accDebug = accLog.isLevelEnabled('debug')));
  /** Per-transaction failure lines of this loop (a route that threw, an unknown outcome). */
  const failures = new SummarizedLog(log);
  /** Set when a stop was asked for: records not taken by every route from then on are reported by it. */
  let shutdown: ShutdownReport | null = null;
  /** The route bits this consumer handles (its family's; the other family's consumer has the rest). */
  const ownMask = task.plan !== undefined && task.family !== undefined ? ringMaskOf(task.plan, task.family) : -1;
  const consumer = new RingConsumer(task.ring);
  const counters = workerCounterRegion(task.counters, task.ringIndex);
  const join = task.join !== undefined ? new JoinSide(task.join) : null;
  const routes = deps.routes ?? buildRoutes(task.config, log, { ...task, quicGauges: counters });
  announceWhenWarm(routes, task.latencyPort);
  const latency = new LatencyRecorder(task.latencyPort ?? null);
  const receipts = task.receipts !== undefined ? new ReceiptWriter(task.receipts) : null;
  const retry =
    deps.retry !== undefined ? deps.retry : task.config.routes.discard ? null : new RetryScheduler({ config: task.config, routes, counters, log, receipts, slotMs: slotMsSource(task.snapshot) });
  const hooks = task.attempt === 0 ? task.testHooks : undefined;
  const crashAfter = hooks?.crashAfterRecords ?? -1;
  const crashAfterLocal = hooks?.crashAfterLocal ?? -1;
  let localTaken = 0;

  const slotCount = consumer.slotCount;
  // The per-slot state, named in ./record-slots.ts; locals here because the closures below index them per record.
  const { pending, delivered, views, masks, outcomes, troubled, seqs, routeTargets, routeTargetSlots, joins } = newRecordSlots(slotCount);
  let inFlight = 0;
  let taken = 0;
  /** Set once the loop ended and the routes were closed: later outcomes are not this region's writer's anymore. */
  let closed = false;
  /** Set when the loop ended: records are no longer released (nor counted as released). */
  let detached = false;
  let settledWaiter: (() => void) | null = null;

  const outcome = (slot: number, routeId: number, o: EgressOutcome, receivedAtMs: number, timed: boolean): void => {
    if (closed) return;
    let idx = OUTCOME_INDEX[o];
    if (idx === undefined) {
      failures.note('error', 'unknown_outcome', { route: routeId, outcome: String(o) }, 'egress: route returned an unknown outcome; counted as failed');
      idx = OUTCOME_INDEX.failed;
    } else if (idx === OUTCOME_INDEX.sent) {
      delivered[slot] = 1;
    }
    outcomes[slot * ROUTE_COUNT + routeId] = idx + 1;
    if (receipts !== null) {
      const i = slot * ROUTE_COUNT + routeId;
      receipts.routeOutcome(seqs[slot], routeId, idx, routeTargets[i], routeTargetSlots[i], nowMs());
    }
    if (idx !== OUTCOME_INDEX.sent && idx !== OUTCOME_INDEX['dropped:discarded']) troubled[slot] = 1;
    counters[egressCounterIndex(routeId, idx)]++;
    if (timed) latency.record(routeId, (nowMs() - receivedAtMs) * 1000);
  };

  /**
   * This side of a record in two rings is done: hands its outcomes to the join entry. When the other side already
   * answered, merges its outcomes and flags into this slot's and returns the joined flags; else -1.
   */
  const joinFinish = (slot: number, extraFlags: number): number => {
    const flags = extraFlags | (delivered[slot] === 1 ? JOIN_FLAG.delivered : 0) | (troubled[slot] === 1 ? JOIN_FLAG.troubled : 0);
    const joined = join!.finish(joins[slot], outcomes, slot * ROUTE_COUNT, flags);
    if (joined < 0) return -1;
    if (joined & JOIN_FLAG.delivered) delivered[slot] = 1;
    if (joined & JOIN_FLAG.troubled) troubled[slot] = 1;
    return joined;
  };

  const settle = (slot: number): void => {
    if (--pending[slot] !== 0) return;
    inFlight--;
    if (!detached) {
      // The ring slot is still ours: the retry queue copies what it keeps before the slot is released (this side's
      // routes: a record in two rings is rebroadcast by each side on its own routes).
      const view = views[slot];
      const queued = retry !== null && view !== null ? retry.admit(view, masks[slot], delivered[slot] === 1) : null;
      // A record in two rings is accounted once, by the side that answers last, with both sides' outcomes.
      const joined = joins[slot] === 0 ? 0 : joinFinish(slot, 0);
      if (joined >= 0) {
        counters[joined & JOIN_FLAG.stopped ? WORKER_COUNTER.shutdown : WORKER_COUNTER.released]++;
        if (delivered[slot] === 0) counters[WORKER_COUNTER.undelivered]++;
        if (troubled[slot] === 1) account(slot, queued);
      }
    }
    views[slot] = null;
    consumer.complete(slot); // no-op once detached
    if (inFlight === 0 && settledWaiter !== null) settledWaiter();
  };

  /** Every route's outcome for the record in `slot`, by route name; `key` gets the same as text (the summary key). */
  const outcomesOf = (slot: number): { byRoute: Record<string, string>; key: string } => {
    const byRoute: Record<string, string> = {};
    let key = delivered[slot] === 1 ? 'partial' : 'undelivered';
    for (let id = 0; id < ROUTE_COUNT; id++) {
      const o = outcomes[slot * ROUTE_COUNT + id];
      if (o === 0) continue;
      byRoute[ROUTE_BY_ID[id]] = EGRESS_OUTCOMES[o - 1];
      key += ' ' + ROUTE_BY_ID[id] + '=' + EGRESS_OUTCOMES[o - 1];
    }
    return { byRoute, key };
  };

  /** Delivery accounting for a record that some route did not take: bounded lines with every route's outcome. */
  const account = (slot: number, retry: string | null): void => {
    if (shutdown !== null) {
      shutdown.note(consumer.traceId(slot), consumer.keyId(slot), outcomesOf(slot).byRoute, delivered[slot] === 1);
      return;
    }
    const partial = delivered[slot] === 1;
    if (!accDebug && !accSummary.enabled(partial ? 'info' : 'warn')) return;
    const { byRoute, key } = outcomesOf(slot);
    const fields = { traceId: consumer.traceId(slot), keyId: consumer.keyId(slot), outcomes: byRoute, retry: retry ?? 'none' };
    if (accDebug) accLog.debug(fields, 'egress: record not taken by every route');
    if (partial) accSummary.note('info', key, fields, 'egress: delivered, but not by every requested route');
    else accSummary.note('warn', key, fields, 'egress: transaction not delivered by any route');
  };

  const routeError = (slot: number, routeId: number, receivedAtMs: number, traceId: string, err: unknown): void => {
    failures.note('error', 'threw ' + routeId, { traceId, route: routeId, err: err instanceof Error ? err.message : String(err) }, 'egress: route threw');
    outcome(slot, routeId, 'failed', receivedAtMs, true);
  };

  /**
   * A stop ends the record in `slot` without releasing it: every requested route that has not answered gets
   * dropped:shutdown (dropped:route_unavailable when this relay has no such route, as dispatch would have said).
   */
  const endAtStop = (slot: number): void => {
    const mask = masks[slot];
    for (let id = 0; id < ROUTE_COUNT; id++) {
      if ((mask & (1 << id)) === 0 || outcomes[slot * ROUTE_COUNT + id] !== 0) continue;
      const route = routes[id];
      outcome(slot, id, route === null || route === undefined ? 'dropped:route_unavailable' : 'dropped:shutdown', 0, false);
    }
    if (joins[slot] !== 0 && joinFinish(slot, JOIN_FLAG.stopped) < 0) return; // the other side accounts for it
    counters[WORKER_COUNTER.shutdown]++;
    if (delivered[slot] === 0) counters[WORKER_COUNTER.undelivered]++;
    account(slot, null);
  };

  /** Counts a record taken; one in two rings counts once, by the side that takes it first. */
  const took = (slot: number): void => {
    const j = join === null ? 0 : consumer.joinIndex(slot);
    joins[slot] = j;
    if (j === 0 || join!.take(j)) counters[WORKER_COUNTER.consumed]++;
  };

  const dispatch = (slot: number): void => {
    const keyId = consumer.keyId(slot);
    const mask = consumer.routeMask(slot) & ownMask;
    masks[slot] = mask;
    seqs[slot] = consumer.receiptSeq(slot);
    routeTargets.fill(0, slot * ROUTE_COUNT, slot * ROUTE_COUNT + ROUTE_COUNT);
    routeTargetSlots.fill(-1, slot * ROUTE_COUNT, slot * ROUTE_COUNT + ROUTE_COUNT);
    const receivedAtMs = consumer.receivedAtMs(slot);
    delivered[slot] = 0;
    troubled[slot] = 0;
    outcomes.fill(0, slot * ROUTE_COUNT, slot * ROUTE_COUNT + ROUTE_COUNT);
    pending[slot] = 1; // dispatch guard: synchronous outcomes cannot release the record early
    inFlight++;
    let view: TxView | null = null;
    for (let id = 0; id < ROUTE_COUNT; id++) {
      if ((mask & (1 << id)) === 0) continue;
      const route = routes[id];
      if (route === null || route === undefined) {
        outcome(slot, id, 'dropped:route_unavailable', receivedAtMs, false);
        continue;
      }
      if (view === null) {
        const off = consumer.txOffset(slot);
        const len = consumer.txLength(slot);
        const bytes = consumer.bytes.subarray(off, off + len);
        view = {
          bytes,
          sab: consumer.sab,
          byteOffset: off,
          length: len,
          signatureOffset: firstSignatureOffset(bytes, 0, len),
          keyId,
          maxRetries: consumer.maxRetries(slot),
          traceId: consumer.traceId(slot),
          receivedAtMs,
          receiptSeq: seqs[slot],
          targets: 0,
          targetSlot: -1,
        };
        views[slot] = view;
      }
      let r: Promise<EgressOutcome> | EgressOutcome;
      view.targets = 0;
      view.targetSlot = -1;
      try {
        r = route.send(view);
      } catch (err) {
        routeError(slot, id, receivedAtMs, view.traceId, err);
        continue;
      }
      // What the route aimed at, read now: the next route's send() resets the view's fields.
      routeTargets[slot * ROUTE_COUNT + id] = view.targets ?? 0;
      routeTargetSlots[slot * ROUTE_COUNT + id] = view.targetSlot ?? -1;
      if (typeof r === 'string') {
        outcome(slot, id, r, receivedAtMs, true);
      } else {
        pending[slot]++;
        const traceId = view.traceId;
        r.then(
          (o) => {
            outcome(slot, id, o, receivedAtMs, true);
            settle(slot);
          },
          (err: unknown) => {
            routeError(slot, id, receivedAtMs, traceId, err);
            settle(slot);
          },
        );
      }
    }
    settle(slot);
  };

  const dispatchLocal = localDispatcher({
    ownMask,
    routes,
    counters,
    receipts,
    latency,
    retry,
    accSummary,
    failures,
    isClosed: () => closed,
    isDetached: () => detached,
    beforeEach: () => {
      if (localTaken++ === crashAfterLocal) crash(hooks?.crashMode ?? 'exit', localTaken);
    },
  });
  deps.exposeLocal?.(dispatchLocal);


  // The wait policy (src/config/wait-policy.ts): park at once, or poll once per loop turn (setImmediate: I/O keeps
  // running) until spinUs after the last record (spin-then-park), or always (spin).
  const wait = resolveWaitPolicy(task.config.rings, task.family === 'quic' ? 'quic-thread' : 'egress-worker', availableParallelism());
  log.info({ waitPolicy: wait.policy, spinUs: wait.spinUs, why: wait.reason }, 'egress: ring wait policy');
  const spinForever = wait.policy === 'spin';
  const pollMs = wait.spinUs / 1000;
  let lastRecordAt = -Infinity;
  try {
    for (;;) {
      if (consumer.stopRequested()) break;
      let batch = 0;
      let slot: number;
      while (batch < TAKE_BATCH && (slot = consumer.take()) >= 0) {
        if (taken === crashAfter) crash(hooks?.crashMode ?? 'throw', taken);
        taken++;
        took(slot);
        dispatch(slot);
        batch++;
      }
      if (batch === TAKE_BATCH || spinForever) {
        await yieldToIo();
      } else if (pollMs > 0) {
        const now = performance.now();
        if (batch > 0) lastRecordAt = now;
        if (now - lastRecordAt < pollMs) await yieldToIo();
        else await consumer.waitForRecords(IDLE_WAIT_MS);
      } else {
        await consumer.waitForRecords(IDLE_WAIT_MS);
      }
    }
  } finally {
    deps.exposeLocal?.(null);
    // A stop (shutdown): nothing will take these records again, so each ends here with its outcomes. A throw (crash):
    // release nothing more, records still in flight stay in the ring for the next consumer (at-least-once).
    if (consumer.stopRequested()) shutdown = new ShutdownReport(log);
    else {
      consumer.detach();
      detached = true;
    }
    retry?.close(); // queued transactions end as dropped:shutdown (counted, logged bounded) before the routes close
    await Promise.all(routes.map((r) => r?.close())); // their in-flight sends answer now (dropped:shutdown)
    if (inFlight > 0) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, CLOSE_SETTLE_MS);
        settledWaiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
    if (shutdown !== null) {
      consumer.detach();
      detached = true; // answers arriving later change nothing: `closed` is set below without yielding
      // In flight: routes that never answered.
      for (let slot = 0; slot < slotCount; slot++) if (pending[slot] > 0) endAtStop(slot);
      // Never taken: published before intake closed, still in the ring.
      let slot: number;
      while ((slot = consumer.take()) >= 0) {
        took(slot);
        masks[slot] = consumer.routeMask(slot) & ownMask;
        delivered[slot] = 0;
        outcomes.fill(0, slot * ROUTE_COUNT, slot * ROUTE_COUNT + ROUTE_COUNT);
        endAtStop(slot);
      }
      shutdown.finish();
    }
    closed = true;
    failures.close();
    accSummary.close();
    latency.close();
    await accountingLog?.close();
  }
}

function yieldToIo(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function crash(mode: 'throw' | 'exit', taken: number): never {
  if (mode === 'exit') process.exit(70);
  throw new Error(`egress test hook: crash after ${taken} records`);
}
