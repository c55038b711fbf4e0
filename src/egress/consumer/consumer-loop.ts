// The ring consumer loop (egress worker, QUIC thread 0; HOT). Attaches to its ring, takes records in order and
// hands each to the record handler (src/egress/contract/send-record.ts, one over the ring's slots), which sends it
// on every route of its mask, maps each route's answer to this worker's counters (single writer), the latency
// histogram, the receipt and the logs, and releases the record once every route answered. Sleeps in
// Atomics.waitAsync when the ring is empty, so the worker's event loop keeps running the routes' I/O. In the QUIC
// thread the same routes and observers also serve the QUIC ingress's local dispatch (./local-dispatch.ts).
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
// Static peers (routes.static.everyTransaction): the front adds the static route to the record's mask when it
// publishes it (src/config/route-policy.ts, src/admission/intake.ts: every intake path), so a reload's change of a key's
// route policy needs nothing here.
import type { ThreadRole } from '../../threads/roles.js';
import { availableParallelism } from 'node:os';
import { createLogger, type Logger } from '../../log/logger.js';
import { followLogLevel } from '../../log/log-level-message.js';
import { LatencyRecorder } from '../../metrics/histogram-merge.js';
import { workerCounterRegion } from '../../shm/counters.js';
import { RingConsumer } from '../../shm/ring.js';
import { JoinSide } from '../../shm/join.js';
import { ringMaskOf } from '../../config/route-plan.js';
import { resolveWaitPolicy } from '../../config/wait-policy.js';
import type { EgressRoute, TxView } from '../contract/route.js';
import { ReceiptWriter } from '../contract/receipt-writer.js';
import { RecordLogs } from '../contract/record-logs.js';
import { SendRecord, type RecordObservers } from '../contract/send-record.js';
import { announceWhenWarm } from '../contract/consumer-ready.js';
import { firstSignatureOffset } from '../../tx/wire-offsets.js';
import { RetryScheduler } from '../rebroadcast/retry-scheduler.js';
import { AccountingLog } from './accounting-log.js';
import { ShutdownReport } from './shutdown-report.js';
import { localDispatcher } from './local-dispatch.js';
import { buildRoutes } from './build-routes.js';
import type { ConsumerDeps, EgressTask } from './egress-task.js';
import { slotMsSource } from '../../telemetry/slot-ms.js';
import { SojournBoard } from '../../shm/sojourn-layout.js';
import { SojournJudge } from './sojourn-judge.js';

export { buildRoutes, type RouteInputs } from './build-routes.js';
export type { ConsumerDeps, EgressTask, EgressTestHooks } from './egress-task.js';

/** Records taken per turn before yielding to I/O while the ring stays non-empty. */
const TAKE_BATCH = 64;
/** Longest sleep before re-checking the STOP word (a safety net: stop also notifies). */
const IDLE_WAIT_MS = 1_000;
/** On stop, how long aborted sends get to report before the loop returns. */
const CLOSE_SETTLE_MS = 1_000;

/** One consumer's parts, built once by setUp() and used by its take loop and its stop path. */
interface Consumer {
  readonly task: EgressTask;
  readonly log: Logger;
  readonly ring: RingConsumer;
  readonly routes: readonly (EgressRoute | null)[];
  readonly observers: RecordObservers;
  readonly retry: RetryScheduler | null;
  readonly accountingLog: AccountingLog | null;
  readonly latency: LatencyRecorder;
  /** The route bits this consumer handles (its family's; the other family's consumer has the rest). */
  readonly ownMask: number;
  /** The record handler over the ring's slots. */
  readonly record: SendRecord;
  /** QUIC thread: the record handler of the local dispatch (src/ingress/local-admission.ts); else null. */
  readonly local: SendRecord | null;
  readonly hasJoin: boolean;
  /** Admission by delay's measuring end (./sojourn-judge.ts); null = task.sojourn absent (tests, benches). */
  readonly judge: SojournJudge | null;
}

export async function runEgressConsumer(task: EgressTask, deps: ConsumerDeps = {}): Promise<void> {
  const c = setUp(task, deps);
  try {
    await takeLoop(c);
  } finally {
    deps.exposeLocal?.(null);
    await stop(c);
  }
}

function setUp(task: EgressTask, deps: ConsumerDeps): Consumer {
  // The thread's role (src/threads/roles.ts): this loop runs in an egress thread or in the quic-egress thread.
  const role: ThreadRole = task.family === 'quic' ? 'quic-egress' : 'egress';
  const log = deps.log ?? createLogger(task.config.log.level, role, { worker: task.ringIndex });
  // Injected loggers (tests, benches) get the accounting lines too; the relay's go through the async destination.
  const accountingLog =
    deps.log === undefined ? new AccountingLog({ level: task.config.log.level, bindings: { thread: role, worker: task.ringIndex }, summary: log }) : null;
  const accLog = accountingLog?.log ?? log;
  const logs = new RecordLogs(log, accLog);
  // A reload's log.level (src/log/log-level-message.ts), on the port this task reports latency on.
  if (task.latencyPort !== undefined) followLogLevel(task.latencyPort, accLog === log ? [log] : [log, accLog], () => logs.levelChanged());
  const ownMask = task.plan !== undefined && task.family !== undefined ? ringMaskOf(task.plan, task.family) : -1;
  const ring = new RingConsumer(task.ring);
  const counters = workerCounterRegion(task.counters, task.ringIndex);
  const join = task.join !== undefined ? new JoinSide(task.join) : null;
  const routes = deps.routes ?? buildRoutes(task.config, log, { ...task, quicGauges: counters });
  announceWhenWarm(routes, task.latencyPort);
  const latency = new LatencyRecorder(task.latencyPort ?? null);
  const receipts = task.receipts !== undefined ? new ReceiptWriter(task.receipts) : null;
  const retry =
    deps.retry !== undefined
      ? deps.retry
      : task.config.routes.discard
        ? null
        : new RetryScheduler({ config: task.config, routes, counters, log, receipts, slotMs: slotMsSource(task.snapshot), drops: logs });
  // Admission by delay: every timed route answer is also a sojourn sample (./sojourn-judge.ts); the judge is made
  // below, once the record handlers it asks "anything in flight?" exist.
  let judge: SojournJudge | null = null;
  const timed =
    task.sojourn === undefined
      ? latency
      : {
          record(routeId: number, us: number): void {
            latency.record(routeId, us);
            judge?.sample(routeId, us);
          },
        };
  const observers: RecordObservers = { counters, latency: timed, receipts, retry, logs };
  const record = new SendRecord({
    slots: ring.slotCount,
    routes,
    observers,
    ids: ring,
    viewOf: (slot) => ringView(ring, slot),
    release: (slot) => ring.complete(slot),
    join,
  });
  const local = deps.exposeLocal === undefined ? null : localRecord(task, ownMask, routes, observers, deps.exposeLocal);
  if (task.sojourn !== undefined) {
    const a = task.config.admission;
    // The ring's oldest unreleased record (TAIL; taken or not): the head of line when nothing answers.
    const tailSlot = (): number => (ring.depth() > 0 ? ring.tail() % ring.slotCount : -1);
    const oldest = {
      ageUs: (): number => {
        const slot = tailSlot();
        return slot < 0 ? -1 : (performance.timeOrigin + performance.now() - ring.receivedAtMs(slot)) * 1000;
      },
      routeMask: (): number => {
        const slot = tailSlot();
        return slot < 0 ? 0 : ring.routeMask(slot);
      },
    };
    const busy = (): boolean => record.inFlight > 0 || (local !== null && local.inFlight > 0);
    judge = new SojournJudge(new SojournBoard(task.sojourn), task.ringIndex, a.targetSojournMs, a.intervalMs, busy, oldest);
  }
  return { task, log, ring, routes, observers, retry, accountingLog, latency, ownMask, record, local, hasJoin: join !== null, judge };
}

/** The QUIC ingress's local dispatch over the same routes and observers, handed to the ingress (exposeLocal). */
function localRecord(
  task: EgressTask,
  ownMask: number,
  routes: readonly (EgressRoute | null)[],
  observers: RecordObservers,
  expose: NonNullable<ConsumerDeps['exposeLocal']>,
): SendRecord {
  const hooks = task.attempt === 0 ? task.testHooks : undefined;
  const crashAfterLocal = hooks?.crashAfterLocal ?? -1;
  let localTaken = 0;
  const { dispatch, record } = localDispatcher({
    ownMask,
    routes,
    observers,
    beforeEach: () => {
      if (localTaken++ === crashAfterLocal) crash(hooks?.crashMode ?? 'exit', localTaken);
    },
  });
  expose(dispatch);
  return record;
}

/** A zero-copy view of the record in `slot` (built once per record, when its first route exists). */
function ringView(ring: RingConsumer, slot: number): TxView {
  const off = ring.txOffset(slot);
  const len = ring.txLength(slot);
  const bytes = ring.bytes.subarray(off, off + len);
  return {
    bytes,
    sab: ring.sab,
    byteOffset: off,
    length: len,
    signatureOffset: firstSignatureOffset(bytes, 0, len),
    keyId: ring.keyId(slot),
    maxRetries: ring.maxRetries(slot),
    traceId: ring.traceId(slot),
    receivedAtMs: ring.receivedAtMs(slot),
    receiptSeq: ring.receiptSeq(slot),
  };
}

/** Hot: takes records until the pool sets STOP (or a test hook crashes it), sleeping by the wait policy between. */
async function takeLoop(c: Consumer): Promise<void> {
  const { ring, record, ownMask, task } = c;
  const hooks = task.attempt === 0 ? task.testHooks : undefined;
  const crashAfter = hooks?.crashAfterRecords ?? -1;
  // The wait policy (src/config/wait-policy.ts): park at once, or poll once per loop turn (setImmediate: I/O keeps
  // running) until spinUs after the last record (spin-then-park), or always (spin).
  const wait = resolveWaitPolicy(task.config.rings, task.family === 'quic' ? 'quic-thread' : 'egress-worker', availableParallelism());
  c.log.info({ waitPolicy: wait.policy, spinUs: wait.spinUs, why: wait.reason }, 'egress: ring wait policy');
  const spinForever = wait.policy === 'spin';
  const pollMs = wait.spinUs / 1000;
  let lastRecordAt = -Infinity;
  let taken = 0;
  for (;;) {
    if (ring.stopRequested()) return;
    let batch = 0;
    let slot: number;
    while (batch < TAKE_BATCH && (slot = ring.take()) >= 0) {
      if (taken === crashAfter) crash(hooks?.crashMode ?? 'throw', taken);
      taken++;
      record.took(slot, c.hasJoin ? ring.joinIndex(slot) : 0);
      record.dispatch(slot, ring.routeMask(slot) & ownMask, ring.receiptSeq(slot), ring.receivedAtMs(slot));
      batch++;
    }
    if (batch === TAKE_BATCH || spinForever) {
      await yieldToIo();
    } else if (pollMs > 0) {
      const now = performance.now();
      if (batch > 0) lastRecordAt = now;
      if (now - lastRecordAt < pollMs) await yieldToIo();
      else await ring.waitForRecords(IDLE_WAIT_MS);
    } else {
      await ring.waitForRecords(IDLE_WAIT_MS);
    }
  }
}

/** Records are no longer released: the ring's and the local dispatch's. */
function detach(c: Consumer): void {
  c.ring.detach();
  c.record.detached = true;
  if (c.local !== null) c.local.detached = true;
}

/**
 * The loop ended. A stop (shutdown): nothing will take these records again, so each ends here with its outcomes. A
 * throw (crash): release nothing more, records still in flight stay in the ring for the next consumer (at-least-once).
 */
async function stop(c: Consumer): Promise<void> {
  const { ring, record } = c;
  const shutdown = ring.stopRequested() ? new ShutdownReport(c.log) : null;
  record.stopReport = shutdown;
  if (shutdown === null) detach(c);
  c.retry?.close(); // queued transactions end as dropped:shutdown (counted, logged bounded) before the routes close
  await Promise.all(c.routes.map((r) => r?.close())); // their in-flight sends answer now (dropped:shutdown)
  if (record.inFlight > 0) await settled(record, CLOSE_SETTLE_MS);
  if (shutdown !== null) {
    detach(c); // answers arriving later change nothing: `closed` is set below without yielding
    // In flight: routes that never answered.
    for (let slot = 0; slot < ring.slotCount; slot++) if (record.isPending(slot)) record.endAtStop(slot);
    // Never taken: published before intake closed, still in the ring.
    let slot: number;
    while ((slot = ring.take()) >= 0) {
      record.took(slot, c.hasJoin ? ring.joinIndex(slot) : 0);
      record.endUntaken(slot, ring.routeMask(slot) & c.ownMask, ring.receiptSeq(slot));
    }
    shutdown.finish();
  }
  record.closed = true;
  if (c.local !== null) c.local.closed = true;
  c.observers.logs.close();
  c.latency.close();
  c.judge?.close();
  await c.accountingLog?.close();
}

/** Resolves when every record of `record` settled, or after `ms`. */
function settled(record: SendRecord, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    record.onIdle = () => {
      clearTimeout(t);
      resolve();
    };
  });
}

function yieldToIo(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function crash(mode: 'throw' | 'exit', taken: number): never {
  if (mode === 'exit') process.exit(70);
  throw new Error(`egress test hook: crash after ${taken} records`);
}
