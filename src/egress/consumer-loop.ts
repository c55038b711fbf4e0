// The ring consumer loop (egress worker, HOT). Attaches to its ring, takes records in order, hands each to every
// route in its route mask, counts each route's outcome into this worker's counter region (single writer) and its
// latency into a per-route histogram, and releases the record once every route answered. Sleeps in
// Atomics.waitAsync when the ring is empty, so the worker's event loop keeps running the routes' I/O.
// Runs until the pool sets the ring's STOP word; on stop or on a throw it stops releasing records first (a
// replacement consumer resends whatever was taken and not finished), then closes the routes.
// Just before a record is released, a transaction that asks for rebroadcasts is copied into the retry queue
// (retry-scheduler.ts), and a record some route did not take gets one accounting log line (trace id, every route's
// outcome): each (record, requested route) gets exactly one first-send outcome counted. Those lines go through an
// asynchronous, bounded log destination (accounting-log.ts) so a flood of them can never block this thread.
// Static peers (routes.static.everyTransaction): the static route is added here to every record whose key allows it,
// one precomputed mask per key id (src/config/route-policy.ts), so every intake path (JSON-RPC, /v1/submit,
// /v1/transactions) is covered.
import type { MessagePort } from 'node:worker_threads';
import { addedRouteMasks } from '../config/route-policy.js';
import type { Config } from '../config/schema.js';
import { createLogger, type Logger } from '../log/logger.js';
import { LatencyRecorder } from '../metrics/histogram-merge.js';
import { workerCounterRegion } from '../metrics/worker-counters.js';
import { EGRESS_OUTCOMES, ROUTE_BY_ID, ROUTE_COUNT, ROUTE_IDS, WORKER_COUNTER, egressCounterIndex, type EgressOutcome } from '../shm/layout.js';
import { RingConsumer } from '../shm/ring.js';
import { OUTCOME_INDEX, firstSignatureOffset, type EgressRoute, type TxView } from './route.js';
import { RpcRoute } from './rpc-route.js';
import { DiscardRoute } from './discard-route.js';
import { DirectRoute, createLeaderSource } from './direct-route.js';
import { StaticRoute } from './static-route.js';
import { QuicEgress } from './quic-egress.js';
import { JitoRoute } from './jito-route.js';
import { RetryScheduler } from './retry-scheduler.js';
import { AccountingLog } from './accounting-log.js';

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
}

export interface ConsumerDeps {
  /** Routes by id (index = ROUTE_IDS value); null = not available in this relay. Default: built from config. */
  readonly routes?: readonly (EgressRoute | null)[];
  readonly log?: Logger;
  /** Rebroadcast scheduler (retry-scheduler.ts); null = no rebroadcasts. Default: built from config (none with routes.discard). */
  readonly retry?: RetryScheduler | null;
}

export function buildRoutes(
  config: Config,
  log: Logger,
  telemetry: { readonly snapshot?: SharedArrayBuffer; readonly measurementPort?: MessagePort } = {},
): (EgressRoute | null)[] {
  const routes: (EgressRoute | null)[] = new Array(ROUTE_COUNT).fill(null);
  if (config.routes.discard) return routes.map((_, id) => new DiscardRoute(id));
  const rpc = new RpcRoute(config.routes.rpc, log);
  routes[rpc.id] = rpc;
  // direct + static share one identity certificate and one QUIC connection cache per worker. Leaders come from the
  // telemetry snapshot when the pool passes one, else from polling upstream.rpcUrl (createLeaderSource).
  const wantDirect = config.routes.direct.enabled && (telemetry.snapshot !== undefined || config.upstream.rpcUrl !== undefined);
  const wantStatic = config.routes.static.peers.length > 0;
  const quic = wantDirect || wantStatic ? new QuicEgress(config, log) : null;
  if (quic !== null && wantDirect) {
    const source = createLeaderSource(config, log, telemetry.snapshot);
    if (source !== null) routes[ROUTE_IDS.direct] = new DirectRoute(quic, source, config.routes.direct, log);
  }
  if (quic !== null && telemetry.measurementPort !== undefined) quic.reportMeasurementsTo(telemetry.measurementPort);
  if (quic !== null && wantStatic) routes[ROUTE_IDS.static] = new StaticRoute(quic, config.routes.static.peers, log);
  if (config.routes.jito !== undefined) routes[ROUTE_IDS.jito] = new JitoRoute(config.routes.jito, log);
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
  const extraMasks = addedRouteMasks(task.config);
  const consumer = new RingConsumer(task.ring);
  const counters = workerCounterRegion(task.counters, task.ringIndex);
  const routes = deps.routes ?? buildRoutes(task.config, log, task);
  const latency = new LatencyRecorder(task.latencyPort ?? null);
  const retry =
    deps.retry !== undefined ? deps.retry : task.config.routes.discard ? null : new RetryScheduler({ config: task.config, routes, counters, log });
  const hooks = task.attempt === 0 ? task.testHooks : undefined;
  const crashAfter = hooks?.crashAfterRecords ?? -1;

  const slotCount = consumer.slotCount;
  /** Routes still working on the record in this slot (+1 while dispatch is running). */
  const pending = new Int32Array(slotCount);
  /** 1 once any route reported `sent` for the record in this slot. */
  const delivered = new Uint8Array(slotCount);
  /** The record's view (built when a route exists), for the retry queue's copy at release. */
  const views: (TxView | null)[] = new Array(slotCount).fill(null);
  /** The record's effective route mask (its own | the key's extra routes). */
  const masks = new Uint32Array(slotCount);
  /** Outcome index + 1 per (slot, route), read only for records where some route did not send (`troubled`). */
  const outcomes = new Uint8Array(slotCount * ROUTE_COUNT);
  /** 1 once a route answered anything but `sent` (or the benchmark's dropped:discarded) for the record. */
  const troubled = new Uint8Array(slotCount);
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
      log.error({ route: routeId, outcome: String(o) }, 'egress: route returned an unknown outcome; counted as failed');
      idx = OUTCOME_INDEX.failed;
    } else if (idx === OUTCOME_INDEX.sent) {
      delivered[slot] = 1;
    }
    outcomes[slot * ROUTE_COUNT + routeId] = idx + 1;
    if (idx !== OUTCOME_INDEX.sent && idx !== OUTCOME_INDEX['dropped:discarded']) troubled[slot] = 1;
    counters[egressCounterIndex(routeId, idx)]++;
    if (timed) latency.record(routeId, (nowMs() - receivedAtMs) * 1000);
  };

  const settle = (slot: number): void => {
    if (--pending[slot] !== 0) return;
    inFlight--;
    if (!detached) {
      counters[WORKER_COUNTER.released]++;
      if (delivered[slot] === 0) counters[WORKER_COUNTER.undelivered]++;
      // The ring slot is still ours: the retry queue copies what it keeps before the slot is released.
      const view = views[slot];
      const queued = retry !== null && view !== null ? retry.admit(view, masks[slot], delivered[slot] === 1) : null;
      if (troubled[slot] === 1) account(slot, queued);
    }
    views[slot] = null;
    consumer.complete(slot); // no-op once detached
    if (inFlight === 0 && settledWaiter !== null) settledWaiter();
  };

  /** Delivery accounting: one log line per record that some route did not take, with every route's outcome. */
  const account = (slot: number, retry: string | null): void => {
    const byRoute: Record<string, string> = {};
    for (let id = 0; id < ROUTE_COUNT; id++) {
      const o = outcomes[slot * ROUTE_COUNT + id];
      if (o !== 0) byRoute[ROUTE_BY_ID[id]] = EGRESS_OUTCOMES[o - 1];
    }
    const fields = { traceId: consumer.traceId(slot), keyId: consumer.keyId(slot), outcomes: byRoute, retry: retry ?? 'none' };
    if (delivered[slot] === 1) accLog.info(fields, 'egress: delivered, but not by every requested route');
    else accLog.warn(fields, 'egress: transaction not delivered by any route');
  };

  const routeError = (slot: number, routeId: number, receivedAtMs: number, traceId: string, err: unknown): void => {
    log.error({ traceId, route: routeId, err: err instanceof Error ? err.message : String(err) }, 'egress: route threw');
    outcome(slot, routeId, 'failed', receivedAtMs, true);
  };

  const dispatch = (slot: number): void => {
    const keyId = consumer.keyId(slot);
    const mask = consumer.routeMask(slot) | (keyId < extraMasks.length ? extraMasks[keyId] : 0);
    masks[slot] = mask;
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
        };
        views[slot] = view;
      }
      let r: Promise<EgressOutcome> | EgressOutcome;
      try {
        r = route.send(view);
      } catch (err) {
        routeError(slot, id, receivedAtMs, view.traceId, err);
        continue;
      }
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

  // Adaptive polling (rings.pollBeforeParkUs): poll once per loop turn until this long after the last record.
  const pollMs = task.config.rings.pollBeforeParkUs / 1000;
  let lastRecordAt = -Infinity;
  try {
    for (;;) {
      if (consumer.stopRequested()) break;
      let batch = 0;
      let slot: number;
      while (batch < TAKE_BATCH && (slot = consumer.take()) >= 0) {
        if (taken === crashAfter) crash(hooks?.crashMode ?? 'throw', taken);
        taken++;
        counters[WORKER_COUNTER.consumed]++;
        dispatch(slot);
        batch++;
      }
      if (batch === TAKE_BATCH) {
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
    // Release nothing more: records still in flight stay in the ring for the next consumer (at-least-once).
    consumer.detach();
    detached = true;
    retry?.close(); // queued transactions end as dropped:shutdown (counted, logged) before the routes close
    await Promise.all(routes.map((r) => r?.close()));
    if (inFlight > 0) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, CLOSE_SETTLE_MS);
        settledWaiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
    closed = true;
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
