// EgressPool (main thread, cold): creates one ring per egress worker, and supervises a Piscina pool running ONE
// long-lived consumer task per ring (never a task per transaction: pool.run costs ~30-80 us). Piscina runs with
// atomics 'disabled' (its default 'sync' mode parks idle workers in Atomics.wait, which would block their event
// loop) and idleTimeout Infinity. When a ring's task rejects (the consumer threw, or its thread died), the pool logs
// it, counts a restart and runs the task again after a short backoff: Piscina replaces a dead thread, and the new
// consumer resumes at the ring's TAIL, so nothing taken-but-unfinished is lost.
// Latency histograms come back through one MessagePort per task (histogram-merge.ts); counters are read straight
// from the shared counter regions. deliverySummary() totals them for the `relay_stopped` line (accepted = records
// published into the rings; per route, every outcome), once the consumers have stopped.
// A relay identity generated in memory (src/egress/quic/identity.ts) reaches each consumer in its task payload.
// The QUIC thread (route plan quicThread: src/config/route-plan.ts) is a second Piscina pool of size 1 supervised here
// the same way: its own ring (the QUIC routes' records), the last counter region, its own worker file
// (workers/quic-thread.ts). It is the only thread of the process that loads the quiche binding: it owns every QUIC
// connection (direct and static: one per leader per process) and runs the telemetry probe's handshakes (probe()).
// Records of both families are in two rings and joined once (src/shm/join.ts: the join table made here).
// With rings.quicThreads = N > 1 the QUIC pool has N threads: thread 0 runs the QUIC ring's consumer as above, and
// each thread k >= 1 runs a link owner (src/egress/quic/quic-link-owner.ts) with the connections of the targets it owns,
// fed by thread 0 over a pair of message rings made here (src/shm/quic-link-layout.ts); each has its own counter
// region after the rings' and is supervised (restarted, waited for at start and stop) like a ring's consumer.
// drain() counts what a timed-out drain left behind per transaction, not per ring copy: a record asking for routes of
// both families and still in both rings is ONE undelivered transaction (`undelivered`, what the exit code, the
// `relay_stopped` line and an operator's alert read, as `accepted` counts it once). Which thread was behind is in
// `undeliveredByFamily` (workers | quic): copies left per family, so such a record shows in both and the two may sum
// to more than `undelivered`.
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { availableParallelism } from 'node:os';
import { resolveWaitPolicy, type ConsumerKind } from '../../config/wait-policy.js';
import type { ConsumerWaitPolicy } from '../../metrics/egress-metrics.js';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../log/logger.js';
import { LatencyAggregator, isLatencyFinal } from '../../metrics/histogram-merge.js';
import { isConsumerReady } from '../contract/consumer-ready.js';
import { createWorkerCounters, sumWorkerCounters, workerCounterRegion } from '../../shm/counters.js';
import { createRing, requestStop, ringDepth, ringPublished } from '../../shm/ring.js';
import { CONNECTION_STATES, EGRESS_OUTCOMES, QUIC_COUNTER, ROUTE_BY_ID, ROUTE_COUNT, WORKER_COUNTER, egressCounterIndex } from '../../shm/layout.js';
import { renderEgressMetrics } from '../../metrics/egress-metrics.js';
import type { TextBuilder } from '../../metrics/prometheus.js';
import type { EgressTask, EgressTestHooks } from './consumer-loop.js';
import type { RoutePlan } from '../../config/route-plan.js';
import { createJoinTable, joinCapacityFor, joinedUnfinishedByBoth } from '../../shm/join.js';
import { ProbeClient, isProbeAnswer, unmeasured, type Prober } from '../../telemetry/probe-relay.js';
import { isHostAnswer, type HostRequest, type HostedJob } from '../quic/hosted-jobs.js';
import { createMessageRing, messageRingDepth, requestMessageRingStop } from '../../shm/message-ring.js';
import { quicLinkPayloadBytes, type QuicLink } from '../../shm/quic-link-layout.js';
import type { QuicLinkOwnerTask } from '../quic/quic-link-owner.js';
import { isThreadIdMessage, threadCpuSeconds } from '../../metrics/thread-cpu.js';
import { logLevelMessage, type LogLevel } from '../../log/log-level-message.js';

/** A job hosted by the QUIC thread (hostInQuicThread), until it ends. */
interface HostedRun {
  readonly request: HostRequest;
  readonly transferList: MessagePort[];
  readonly resolve: () => void;
  readonly reject: (err: Error) => void;
  /** Posted to the current QUIC task (its ports moved with it). */
  posted: boolean;
}

/** First restart delay; doubles per consecutive crash of the same ring, up to RESTART_BACKOFF_MAX_MS. */
const RESTART_BACKOFF_MS = 100;
const RESTART_BACKOFF_MAX_MS = 5_000;
/** A task that ran this long before failing resets its ring's backoff. */
const RESTART_STABLE_MS = 10_000;
/** drain(): how often ring depths are polled. */
const DRAIN_POLL_MS = 5;
/** After STOP, how long consumers get to return before the pool is destroyed anyway. */
const STOP_GRACE_MS = 2_000;

export interface EgressPoolOptions {
  readonly config: Config;
  readonly log: Logger;
  /** Compiled worker module; default dist/workers/egress-worker.js next to this file's dist/src/egress/. */
  readonly workerFile?: URL;
  /** Rings made by the caller (createEgressRings); default: made here from config.rings. */
  readonly rings?: readonly SharedArrayBuffer[];
  /** Test-only fault injection, per ring index. */
  readonly testHooks?: Readonly<Record<number, EgressTestHooks>>;
  readonly restartBackoffMs?: number;
  /** The telemetry thread's leader-slot snapshot, handed to every worker (the direct route's leader source). */
  readonly snapshot?: SharedArrayBuffer;
  /** Makes one measurement port per worker task (TelemetryThread.measurementPort). */
  readonly measurementPort?: () => MessagePort;
  /** A generated relay identity's secret, handed to every consumer task (never written to disk). */
  readonly identitySecret?: Uint8Array;
  /** The landing receipts' shared part (src/shm/receipts-layout.ts); absent = receipts off. */
  readonly receipts?: SharedArrayBuffer;
  /** The adaptive routing's widen table (src/shm/widen-layout.ts), for the direct route; absent = routing.adaptive off. */
  readonly widen?: SharedArrayBuffer;
  /**
   * The frozen route plan. With it the workers build only the HTTP routes, and when plan.quicThread the QUIC thread
   * runs (its ring: quicRing). Absent (tests, benches): every worker builds every route, no QUIC thread.
   */
  readonly plan?: RoutePlan;
  /** Compiled QUIC thread module; default dist/workers/quic-thread.js. */
  readonly quicWorkerFile?: URL;
  /** Test-only fault injection for QUIC threads k >= 1, by k (first attempt only). */
  readonly quicLinkTestHooks?: Readonly<Record<number, { readonly crashAfterSends?: number }>>;
}

/** Totals of the egress counters (the `relay_stopped` line): what was accepted and how each route ended it. */
export interface DeliverySummary {
  /** Records published into the rings by the front (accepted transactions). */
  readonly accepted: number;
  readonly records: { readonly consumed: number; readonly released: number; readonly undelivered: number; readonly shutdown: number };
  /** route -> outcome -> first-send count, non-zero entries only (each route's row sums to its transactions). */
  readonly outcomes: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

export interface DrainResult {
  /** Every ring reached TAIL == HEAD before the timeout. */
  readonly drained: boolean;
  /**
   * Transactions still in the rings (published, not released) when the consumers were stopped: not delivered. Each
   * counted once, also a record left in both a worker's ring and the QUIC thread's.
   */
  readonly undelivered: number;
  /** The same by ring family: copies left in the workers' rings and in the QUIC thread's (a record in both: in each). */
  readonly undeliveredByFamily: { readonly workers: number; readonly quic: number };
}

/** One ring per egress worker, sized from config (rings.slotsPerRing x transactions.maxTransactionBytes). */
export function createEgressRings(config: Config): SharedArrayBuffer[] {
  const rings: SharedArrayBuffer[] = [];
  for (let i = 0; i < config.rings.workers; i++) {
    rings.push(createRing(config.rings.slotsPerRing, config.transactions.maxTransactionBytes));
  }
  return rings;
}

interface RingState {
  /** The QUIC thread's ring (last index), or an egress worker's. */
  readonly quic: boolean;
  /** A QUIC thread k >= 1 (its link, not a ring): k - 1 in quicLinks; -1 for a ring's consumer. */
  readonly link: number;
  attempt: number;
  consecutiveFailures: number;
  task: Promise<void> | null;
  /** Resolves when the current task's consumer sent its last latency histogram. */
  final: Promise<void> | null;
  timer: NodeJS.Timeout | null;
  /** A consumer task of this ring reported its routes warm (consumer-ready.ts); stays true across restarts. */
  ready: boolean;
  /** Main's end of the current task's port (latency / ready): a reload's log.level goes down it. */
  control: MessagePort | null;
}

export class EgressPool {
  /** The egress workers' rings; the front thread attaches exactly one RingProducer to each. */
  readonly rings: readonly SharedArrayBuffer[];
  /** The QUIC thread's ring (the front attaches one RingProducer), null when no QUIC thread runs. */
  readonly quicRing: SharedArrayBuffer | null;
  /** Links from QUIC thread 0 to threads 1..N-1 (rings.quicThreads > 1), else empty. */
  readonly quicLinks: readonly QuicLink[];
  /** The join table of records published into two rings (the front allocates entries), null without a QUIC ring. */
  readonly join: SharedArrayBuffer | null;
  /** Per-worker counter regions (metrics/worker-counters.ts). */
  readonly counters: SharedArrayBuffer;
  readonly latency = new LatencyAggregator();
  private readonly piscina: Piscina;
  private readonly quicPiscina: Piscina | null;
  private readonly state: RingState[];
  /** Every ring, the QUIC ring last (index = counter region). */
  private readonly allRings: readonly SharedArrayBuffer[];
  /** Probe requests to the current QUIC thread task (null while none runs). */
  private probes: ProbeClient | null = null;
  /** The current QUIC task's host port (main's end), null while none runs. */
  private hostPort: MessagePort | null = null;
  private readonly hosted = new Map<number, HostedRun>();
  private nextHostId = 1;
  private readonly backoffMs: number;
  private restarts = 0;
  private started = false;
  private stopping = false;
  /** Waiters of whenReady(), told when the last ring turns ready. */
  private readyWaiters: (() => void)[] = [];
  private config: Config;

  constructor(private readonly options: EgressPoolOptions) {
    const config = options.config;
    this.config = config;
    this.rings = options.rings ?? createEgressRings(config);
    if (this.rings.length !== config.rings.workers) {
      throw new Error(`egress pool: ${this.rings.length} rings for ${config.rings.workers} workers`);
    }
    const plan = options.plan;
    this.quicRing = plan?.quicThread === true ? createRing(config.rings.slotsPerRing, config.transactions.maxTransactionBytes) : null;
    this.allRings = this.quicRing === null ? this.rings : [...this.rings, this.quicRing];
    // Only records with a route of each family get an entry; capacity from every ring's slots (src/shm/join.ts).
    this.join = this.quicRing !== null && plan !== undefined && plan.quicRing !== 0 ? createJoinTable(joinCapacityFor(this.allRings.length * config.rings.slotsPerRing)) : null;
    const quicThreads = this.quicRing === null ? 0 : Math.max(plan?.quicThreads ?? 1, 1);
    const linkSlots = config.rings.slotsPerRing;
    this.quicLinks = Array.from({ length: Math.max(quicThreads - 1, 0) }, () => ({
      requests: createMessageRing(linkSlots, quicLinkPayloadBytes(config.transactions.maxTransactionBytes)),
      answers: createMessageRing(linkSlots, 0),
    }));
    this.counters = createWorkerCounters(this.allRings.length + this.quicLinks.length);
    const fresh = { attempt: 0, consecutiveFailures: 0, task: null, final: null, timer: null, ready: false, control: null };
    this.state = [
      ...this.allRings.map((r) => ({ ...fresh, quic: r === this.quicRing, link: -1 })),
      ...this.quicLinks.map((_, k) => ({ ...fresh, quic: false, link: k })),
    ];
    this.backoffMs = options.restartBackoffMs ?? RESTART_BACKOFF_MS;
    const workerFile = options.workerFile ?? new URL('../../../workers/egress-worker.js', import.meta.url);
    this.piscina = new Piscina({
      filename: workerFile.href,
      minThreads: config.rings.workers,
      maxThreads: config.rings.workers,
      idleTimeout: Infinity,
      atomics: 'disabled',
      concurrentTasksPerWorker: 1,
    });
    // Piscina reports worker-level errors here too; the task rejection drives the restart.
    this.piscina.on('error', (err: unknown) => this.options.log.error({ err: errMessage(err) }, 'egress pool: worker error'));
    this.quicPiscina =
      this.quicRing === null
        ? null
        : new Piscina({
            filename: (options.quicWorkerFile ?? new URL('../../../workers/quic-thread.js', import.meta.url)).href,
            // One QUIC thread (rings.quicThreads: N), every QUIC socket of the process in them, one connection per
            // leader per process.
            minThreads: quicThreads,
            maxThreads: quicThreads,
            idleTimeout: Infinity,
            atomics: 'disabled',
            concurrentTasksPerWorker: 1,
          });
    this.quicPiscina?.on('error', (err: unknown) => this.options.log.error({ err: errMessage(err) }, 'egress pool: QUIC thread error'));
  }

  /**
   * One probe round's handshakes, run by the QUIC thread (src/telemetry/probe-relay.ts). Cold. Every target
   * unmeasured when no QUIC thread task runs.
   */
  readonly probe: Prober = (targets, timeoutMs) => (this.probes === null ? Promise.resolve(unmeasured(targets)) : this.probes.probe(targets, timeoutMs));

  /**
   * Runs a job in the QUIC thread (the QUIC ingress: src/ingress/ingress-task-runner.ts hands its task here instead of
   * to a thread of its own), like Piscina.run: resolves when the job returns, rejects when it throws or the QUIC
   * thread's task ended under it (the caller restarts it; it then goes to the replacement task). Cold.
   */
  readonly hostInQuicThread = (job: HostedJob, task: unknown, transferList: MessagePort[]): Promise<void> => {
    if (this.quicRing === null) return Promise.reject(new Error('no QUIC thread in this relay'));
    if (this.stopping) return Promise.reject(new Error('egress pool stopping'));
    const id = this.nextHostId++;
    return new Promise<void>((resolve, reject) => {
      const run: HostedRun = { request: { type: 'host', id, job, task }, transferList, resolve, reject, posted: false };
      this.hosted.set(id, run);
      this.postHosted();
    });
  };

  /** Posts the jobs not yet posted to the current QUIC task. */
  private postHosted(): void {
    const port = this.hostPort;
    if (port === null) return;
    for (const run of this.hosted.values()) {
      if (run.posted) continue;
      run.posted = true;
      port.postMessage(run.request, run.transferList);
    }
  }

  /** The QUIC task ended: the jobs it ran ended with it (their owners restart them). */
  private failHosted(reason: string): void {
    this.hostPort?.close();
    this.hostPort = null;
    for (const [id, run] of this.hosted) {
      if (!run.posted) continue;
      this.hosted.delete(id);
      run.reject(new Error(reason));
    }
  }

  /** Start one consumer task per ring. */
  start(): void {
    if (this.started) throw new Error('egress pool already started');
    this.started = true;
    for (let i = 0; i < this.state.length; i++) this.runRing(i);
  }

  /**
   * Start-up readiness: resolves once every ring's consumer reported its routes warm (consumer-ready.ts), or after
   * `timeoutMs`, with the labels of the rings still not ready (empty = all). Cold, awaited once before relay_ready.
   */
  whenReady(timeoutMs: number): Promise<string[]> {
    const notReady = (): string[] => this.ringLabels().filter((_, i) => !this.state[i].ready);
    if (notReady().length === 0) return Promise.resolve([]);
    return new Promise<string[]>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.readyWaiters = this.readyWaiters.filter((w) => w !== done);
        resolve(notReady());
      };
      const timer = setTimeout(done, timeoutMs);
      this.readyWaiters.push(done);
    });
  }

  private markReady(index: number): void {
    if (this.state[index].ready) return;
    this.state[index].ready = true;
    if (this.state.every((st) => st.ready)) for (const w of [...this.readyWaiters]) w();
  }

  private runRing(index: number): void {
    const st = this.state[index];
    st.timer = null;
    if (this.stopping) return;
    if (st.link >= 0) {
      this.runLinkOwner(index);
      return;
    }
    const { port1, port2 } = new MessageChannel();
    st.control = port1;
    st.final = new Promise<void>((resolve) => {
      port1.on('message', (m: unknown) => {
        if (isLatencyFinal(m)) resolve();
        else if (isConsumerReady(m)) this.markReady(index);
        else if (isThreadIdMessage(m)) this.quicTids[0] = m.tid;
        else this.latency.accept(m);
      });
    });
    port1.unref();
    const plan = this.options.plan;
    let probePort: MessagePort | undefined;
    let hostPort: MessagePort | undefined;
    if (st.quic) {
      // Probe requests to this task; answers come back on the same channel (a restart gets a new one).
      const probe = new MessageChannel();
      this.probes?.close();
      const client = new ProbeClient((m) => probe.port1.postMessage(m));
      probe.port1.on('message', (m: unknown) => {
        if (isProbeAnswer(m)) client.accept(m);
      });
      probe.port1.unref();
      this.probes = client;
      probePort = probe.port2;
      // Hosted jobs (the QUIC ingress) start in this task; answers come back on the same channel.
      const host = new MessageChannel();
      host.port1.on('message', (m: unknown) => {
        if (!isHostAnswer(m)) return;
        const run = this.hosted.get(m.id);
        if (run === undefined) return;
        this.hosted.delete(m.id);
        if (m.error === null) run.resolve();
        else run.reject(new Error(m.error));
      });
      host.port1.unref();
      this.hostPort = host.port1;
      hostPort = host.port2;
    }
    const task: EgressTask = {
      ringIndex: index,
      ring: this.allRings[index],
      counters: this.counters,
      config: this.config, // cloned into the worker (frozen again there: workers/egress-worker.ts); not workerData
      attempt: st.attempt,
      latencyPort: port2,
      testHooks: this.options.testHooks?.[index],
      snapshot: this.options.snapshot,
      measurementPort: this.options.measurementPort?.(),
      identitySecret: this.options.identitySecret,
      receipts: this.options.receipts,
      widen: this.options.widen,
      plan,
      family: plan === undefined ? undefined : st.quic ? 'quic' : 'workers',
      join: this.join ?? undefined,
      probePort,
      hostPort,
      quicLinks: st.quic && this.quicLinks.length > 0 ? this.quicLinks : undefined,
    };
    const startedAt = Date.now();
    const transferList: MessagePort[] = task.measurementPort ? [port2, task.measurementPort] : [port2];
    if (probePort !== undefined) transferList.push(probePort);
    if (hostPort !== undefined) transferList.push(hostPort);
    const run = (st.quic ? this.quicPiscina! : this.piscina).run(task, { transferList });
    st.task = run.then(
      () => this.ended(index, startedAt, null),
      (err: unknown) => this.ended(index, startedAt, err),
    );
    // Let the last histogram flush arrive before the port goes away.
    void st.task.then(() => setTimeout(() => port1.close(), 100).unref());
    if (st.quic) this.postHosted();
  }

  /** QUIC thread k >= 1: the connections of the targets it owns, fed by thread 0 over its link. */
  private runLinkOwner(index: number): void {
    const st = this.state[index];
    const { port1, port2 } = new MessageChannel();
    st.control = port1;
    port1.on('message', (m: unknown) => {
      if (isConsumerReady(m)) this.markReady(index);
      else if (isThreadIdMessage(m)) this.quicTids[st.link + 1] = m.tid;
    });
    port1.unref();
    st.final = Promise.resolve();
    const task: QuicLinkOwnerTask = {
      kind: 'quic-link-owner',
      thread: st.link + 1,
      link: this.quicLinks[st.link],
      config: this.config,
      plan: this.options.plan!,
      counters: this.counters,
      counterRegion: index,
      readyPort: port2,
      measurementPort: this.options.measurementPort?.(),
      identitySecret: this.options.identitySecret,
      snapshot: this.options.snapshot,
      testHooks: st.attempt === 0 ? this.options.quicLinkTestHooks?.[st.link + 1] : undefined,
    };
    const transferList: MessagePort[] = task.measurementPort ? [port2, task.measurementPort] : [port2];
    const startedAt = Date.now();
    st.task = this.quicPiscina!.run(task, { transferList }).then(
      () => this.ended(index, startedAt, null),
      (err: unknown) => this.ended(index, startedAt, err),
    );
    void st.task.then(() => port1.close());
  }

  private ended(index: number, startedAt: number, err: unknown): void {
    const st = this.state[index];
    if (st.quic) this.failHosted(this.stopping ? 'QUIC thread stopped' : 'QUIC thread task ended');
    if (this.stopping) return;
    // A consumer only returns when asked to stop: returning or throwing earlier is a crash either way.
    this.restarts++;
    st.attempt++;
    st.consecutiveFailures = Date.now() - startedAt >= RESTART_STABLE_MS ? 1 : st.consecutiveFailures + 1;
    const delay = Math.min(this.backoffMs * 2 ** (st.consecutiveFailures - 1), RESTART_BACKOFF_MAX_MS);
    this.options.log.error(
      { ring: this.ringLabels()[index], attempt: st.attempt, restartInMs: delay, depth: this.depths()[index], err: err === null ? 'returned' : errMessage(err) },
      st.link >= 0
        ? 'QUIC thread ended unexpectedly; restarting it on the same link'
        : st.quic
          ? 'QUIC thread consumer ended unexpectedly; restarting it on the same ring'
          : 'egress consumer ended unexpectedly; restarting it on the same ring',
    );
    st.timer = setTimeout(() => this.runRing(index), delay);
  }

  /**
   * Records published and not yet released, per ring (gauge), the QUIC thread's ring last; then, per QUIC thread
   * k >= 1, the sends handed over its link and not yet taken.
   */
  depths(): number[] {
    return [...this.allRings.map(ringDepth), ...this.quicLinks.map((l) => messageRingDepth(l.requests))];
  }

  /** The rings' metric labels, as depths(): "0".."N-1", then "quic", then "quic1".."quic<N-1>" (QUIC threads' links). */
  ringLabels(): string[] {
    return [...this.allRings.map((r, i) => (r === this.quicRing ? 'quic' : String(i))), ...this.quicLinks.map((_, k) => `quic${k + 1}`)];
  }

  /** Kernel thread id of each QUIC thread (index = QUIC thread), as each reported it at start; 0 = not yet. */
  private readonly quicTids: number[] = [];

  /**
   * CPU seconds (user + system) each QUIC thread used, thread 0 first, by its kernel thread id (src/metrics/thread-cpu.ts;
   * a restarted thread's count starts again). Empty without a QUIC thread or off Linux. Cold: per scrape.
   */
  quicThreadCpuSeconds(): number[] {
    if (this.quicRing === null) return [];
    const n = 1 + this.quicLinks.length;
    const out: number[] = [];
    for (let t = 0; t < n; t++) {
      const tid = this.quicTids[t];
      const s = tid === undefined || tid === 0 ? null : threadCpuSeconds(tid);
      if (s === null) return [];
      out.push(s);
    }
    return out;
  }

  /** The wait policy each kind of ring consumer runs (src/config/wait-policy.ts), as each resolves it. Cold: per scrape. */
  waitPolicies(): ConsumerWaitPolicy[] {
    const cores = availableParallelism();
    const rings = this.options.config.rings;
    const kinds: ConsumerKind[] = this.quicRing === null ? ['egress-worker'] : ['quic-thread', 'egress-worker'];
    return kinds.map((consumer) => ({ consumer, ...resolveWaitPolicy(rings, consumer, cores) }));
  }

  /** Open QUIC connections per QUIC thread (thread 0: the QUIC ring's consumer; then 1..N-1), from their gauges. */
  quicThreadConnections(): number[] {
    if (this.quicRing === null) return [];
    const regions = [this.allRings.length - 1, ...this.quicLinks.map((_, k) => this.allRings.length + k)];
    return regions.map((r) => {
      const region = workerCounterRegion(this.counters, r);
      let open = 0;
      for (let i = 0; i < CONNECTION_STATES.length; i++) if (CONNECTION_STATES[i] !== 'closed') open += region[QUIC_COUNTER.stateBase + i];
      return open;
    });
  }

  /** Consumer restarts since start (crashes and unexpected returns). */
  get restartCount(): number {
    return this.restarts;
  }

  /** Worker counters summed over every ring's region (index with WORKER_COUNTER / egressCounterIndex). */
  summedCounters(): Float64Array {
    return sumWorkerCounters(this.counters);
  }

  /**
   * Wait until every ring is empty (TAIL == HEAD) or `timeoutMs` passes, then stop the consumers and destroy the
   * pool. The caller stops publishing first (Intake.close()). Records left after the timeout are not sent.
   */
  async drain(timeoutMs: number): Promise<DrainResult> {
    const deadline = Date.now() + timeoutMs;
    let remaining = this.totalDepth();
    while (remaining > 0 && this.started && Date.now() < deadline) {
      await sleep(DRAIN_POLL_MS);
      remaining = this.totalDepth();
    }
    const left = this.leftInRings();
    this.stopping = true;
    for (const st of this.state) {
      if (st.timer !== null) clearTimeout(st.timer);
      st.timer = null;
    }
    for (const r of this.allRings) requestStop(r);
    for (const l of this.quicLinks) requestMessageRingStop(l.requests);
    const tasks = this.state.map((s) => s.task).filter((t): t is Promise<void> => t !== null);
    let grace: NodeJS.Timeout | undefined;
    const finals = this.state.map((s) => s.final).filter((f): f is Promise<void> => f !== null);
    await Promise.race([
      // Tasks settled and their last latency histograms arrived (they travel on another channel than the result).
      Promise.allSettled(tasks).then(() => Promise.race([Promise.all(finals), sleep(200)])),
      new Promise<void>((resolve) => {
        grace = setTimeout(resolve, Math.max(deadline - Date.now(), 0) + STOP_GRACE_MS);
      }),
    ]);
    clearTimeout(grace);
    this.probes?.close();
    await Promise.all([this.piscina.destroy(), this.quicPiscina?.destroy()]);
    return { drained: remaining === 0, undelivered: left.transactions, undeliveredByFamily: left.byFamily };
  }

  /**
   * What is still in the rings, per transaction and per family. The ring depths count a record published into two
   * rings twice; the join table says how many are unfinished on both sides (src/shm/join.ts). Cold.
   */
  private leftInRings(): { transactions: number; byFamily: { workers: number; quic: number } } {
    let workers = 0;
    for (const r of this.rings) workers += ringDepth(r);
    const quic = this.quicRing === null ? 0 : ringDepth(this.quicRing);
    const inBoth = this.join === null || workers === 0 || quic === 0 ? 0 : joinedUnfinishedByBoth(this.join);
    return { transactions: workers + quic - Math.min(inBoth, workers, quic), byFamily: { workers, quic } };
  }

  /** Totals of the counters; exact once the consumers stopped (after drain()). */
  /** `localAdmitted`: transactions the QUIC thread admitted and sent without a ring (src/ingress/local-admission.ts). */
  deliverySummary(joinedRecords = 0, localAdmitted = 0): DeliverySummary {
    const c = this.summedCounters();
    const outcomes: Record<string, Record<string, number>> = {};
    for (let r = 0; r < ROUTE_COUNT; r++) {
      for (let o = 0; o < EGRESS_OUTCOMES.length; o++) {
        const v = c[egressCounterIndex(r, o)];
        if (v !== 0) (outcomes[ROUTE_BY_ID[r]] ??= {})[EGRESS_OUTCOMES[o]] = v;
      }
    }
    // A record in two rings is one accepted transaction (the front counts those: Intake.joinedRecords).
    let accepted = localAdmitted - joinedRecords;
    for (const r of this.allRings) accepted += ringPublished(r);
    return {
      accepted,
      records: {
        consumed: c[WORKER_COUNTER.consumed],
        released: c[WORKER_COUNTER.released],
        undelivered: c[WORKER_COUNTER.undelivered],
        shutdown: c[WORKER_COUNTER.shutdown],
      },
      outcomes,
    };
  }

  /** Append the egress metrics (outcomes, ring depths, restarts, ring->route latency) to the /metrics text. */
  /**
   * A reload's log.level (cold): every running task's loggers now (src/log/log-level-message.ts), and tasks restarted
   * later start with it. Nothing else of a task's config changes at run time.
   */
  setLogLevel(level: LogLevel): void {
    this.config = { ...this.config, log: { ...this.config.log, level } };
    for (const st of this.state) st.control?.postMessage(logLevelMessage(level));
  }

  renderMetrics(tb: TextBuilder): void {
    renderEgressMetrics(tb, this);
  }

  private totalDepth(): number {
    let n = 0;
    for (const r of this.allRings) n += ringDepth(r);
    return n;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
