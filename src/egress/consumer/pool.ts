// EgressPool (main thread, cold): makes the rings (one per egress worker, one for the QUIC threads when the route
// plan says quicThread), the counter regions, the join table and the QUIC threads' links, and hands them to the owners
// of its three thread roles, each keeping its tasks running with the common supervisor (src/threads/supervisor.ts):
// the egress workers (./egress-host.ts), QUIC thread 0, the quic-egress thread (./quic-egress-host.ts: the QUIC
// ring's consumer, the probe, hosted jobs such as the QUIC ingress) and the quic-link threads k >= 1
// (./quic-link-host.ts). A consumer that crashed is run again after a backoff and resumes at its ring's TAIL, so
// nothing taken-but-unfinished is lost.
// Latency histograms come back through one MessagePort per task (histogram-merge.ts); counters are read straight
// from the shared counter regions. deliverySummary() totals them for the `relay_stopped` line (accepted = records
// published into the rings; per route, every outcome), once the consumers have stopped.
// A relay identity generated in memory (src/egress/quic/identity.ts) reaches each consumer in its task payload.
// Records of both families are in two rings and joined once (src/shm/join.ts: the join table made here).
// drain() counts what a timed-out drain left behind per transaction, not per ring copy: a record asking for routes of
// both families and still in both rings is ONE undelivered transaction (`undelivered`, what the exit code, the
// `relay_stopped` line and an operator's alert read, as `accepted` counts it once). Which thread was behind is in
// `undeliveredByFamily` (workers | quic): copies left per family, so such a record shows in both and the two may sum
// to more than `undelivered`.
import type { MessagePort } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { resolveWaitPolicy, type ConsumerKind } from '../../config/wait-policy.js';
import type { ConsumerWaitPolicy } from '../../metrics/egress-metrics.js';
import type { Config } from '../../config/schema.js';
import { LatencyAggregator } from '../../metrics/histogram-merge.js';
import { createWorkerCounters, sumWorkerCounters, workerCounterRegion } from '../../shm/counters.js';
import { createRing, requestStop, ringDepth, ringPublished } from '../../shm/ring.js';
import { CONNECTION_STATES, EGRESS_OUTCOMES, QUIC_COUNTER, ROUTE_BY_ID, ROUTE_COUNT, WORKER_COUNTER, egressCounterIndex } from '../../shm/layout.js';
import { renderEgressMetrics } from '../../metrics/egress-metrics.js';
import type { TextBuilder } from '../../metrics/prometheus.js';
import { createJoinTable, joinCapacityFor, joinedUnfinishedByBoth } from '../../shm/join.js';
import { unmeasured, type Prober } from '../../telemetry/probe-relay.js';
import type { HostedJob } from '../quic/hosted-jobs.js';
import { createMessageRing, messageRingDepth, requestMessageRingStop } from '../../shm/message-ring.js';
import { quicLinkPayloadBytes, type QuicLink } from '../../shm/quic-link-layout.js';
import { threadCpuSeconds } from '../../metrics/thread-cpu.js';
import { logLevelMessage, type LogLevel } from '../../log/log-level-message.js';
import { RESTART_POLICIES } from '../../threads/policies.js';
import type { EgressPoolOptions, PoolContext } from './pool-context.js';
import { EgressHost } from './egress-host.js';
import { QuicEgressHost, createQuicPiscina } from './quic-egress-host.js';
import { QuicLinkHost } from './quic-link-host.js';
import type { Piscina } from 'piscina';

export type { EgressPoolOptions };

/** drain(): how often ring depths are polled. */
const DRAIN_POLL_MS = 5;
/** After STOP, how long consumers get to return (past the drain's deadline) before the pools are destroyed anyway. */
const STOP_GRACE_MS = RESTART_POLICIES.egress.stopGraceMs;

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
   * counted once, also a record left in both a worker's ring and the quic-egress thread's.
   */
  readonly undelivered: number;
  /** The same by ring family: copies left in the workers' rings and in the quic-egress thread's (a record in both: in each). */
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

export class EgressPool {
  /** The egress workers' rings; the front thread attaches exactly one RingProducer to each. */
  readonly rings: readonly SharedArrayBuffer[];
  /** The quic-egress thread's ring (the front attaches one RingProducer), null when no QUIC thread runs. */
  readonly quicRing: SharedArrayBuffer | null;
  /** Links from QUIC thread 0 to threads 1..N-1 (rings.quicThreads > 1), else empty. */
  readonly quicLinks: readonly QuicLink[];
  /** The join table of records published into two rings (the front allocates entries), null without a QUIC ring. */
  readonly join: SharedArrayBuffer | null;
  /** Per-worker counter regions (metrics/worker-counters.ts). */
  readonly counters: SharedArrayBuffer;
  readonly latency = new LatencyAggregator();
  /** Every ring, the QUIC ring last (index = counter region). */
  private readonly allRings: readonly SharedArrayBuffer[];
  private readonly egress: EgressHost;
  private readonly quicPiscina: Piscina | null;
  private readonly quicEgress: QuicEgressHost | null;
  private readonly quicLink: QuicLinkHost | null;
  /** Per slot (each ring, then each link): its thread reported its routes warm; stays true across restarts. */
  private readonly ready: boolean[];
  /** Kernel thread id of each QUIC thread (index = QUIC thread), as each reported it at start; 0 = not yet. */
  private readonly quicTids: number[] = [];
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
    this.ready = Array.from({ length: this.allRings.length + this.quicLinks.length }, () => false);
    const ctx: PoolContext = {
      options,
      allRings: this.allRings,
      counters: this.counters,
      join: this.join,
      quicLinks: this.quicLinks,
      latency: this.latency,
      config: () => this.config,
      markReady: (index) => this.markReady(index),
      setQuicTid: (thread, tid) => {
        this.quicTids[thread] = tid;
      },
      restartFields: (index) => ({ ring: this.ringLabels()[index], depth: this.depths()[index] }),
    };
    this.egress = new EgressHost(ctx, config.rings.workers);
    // One QUIC pool of rings.quicThreads threads: every QUIC socket of the process in them, one connection per leader
    // per process.
    this.quicPiscina = this.quicRing === null ? null : createQuicPiscina(options.quicWorkerFile ?? new URL('../../../workers/quic-threads.js', import.meta.url), quicThreads, options.log);
    this.quicEgress = this.quicPiscina === null ? null : new QuicEgressHost(ctx, this.quicPiscina, this.allRings.length - 1);
    this.quicLink = this.quicPiscina === null || this.quicLinks.length === 0 ? null : new QuicLinkHost(ctx, this.quicPiscina, this.allRings.length);
  }

  /**
   * One probe round's handshakes, run by the quic-egress thread (src/telemetry/probe-relay.ts). Cold. Every target
   * unmeasured when no QUIC thread task runs.
   */
  readonly probe: Prober = (targets, timeoutMs) => (this.quicEgress === null ? Promise.resolve(unmeasured(targets)) : this.quicEgress.probe(targets, timeoutMs));

  /**
   * Runs a job in the quic-egress thread (the QUIC ingress: src/ingress/ingress-task-runner.ts hands its task here
   * instead of to a thread of its own), like Piscina.run: resolves when the job returns, rejects when it throws or the
   * thread's task ended under it (the caller restarts it; it then goes to the replacement task). Cold.
   */
  readonly hostInQuicThread = (job: HostedJob, task: unknown, transferList: MessagePort[]): Promise<void> => {
    if (this.quicEgress === null) return Promise.reject(new Error('no QUIC thread in this relay'));
    if (this.stopping) return Promise.reject(new Error('egress pool stopping'));
    return this.quicEgress.host(job, task, transferList);
  };

  /** Start one consumer task per ring and one link task per quic-link thread. */
  start(): void {
    if (this.started) throw new Error('egress pool already started');
    this.started = true;
    this.egress.start();
    this.quicEgress?.start();
    this.quicLink?.start();
  }

  /**
   * Start-up readiness: resolves once every ring's consumer reported its routes warm (consumer-ready.ts), or after
   * `timeoutMs`, with the labels of the rings still not ready (empty = all). Cold, awaited once before relay_ready.
   */
  whenReady(timeoutMs: number): Promise<string[]> {
    const notReady = (): string[] => this.ringLabels().filter((_, i) => !this.ready[i]);
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
    if (this.ready[index]) return;
    this.ready[index] = true;
    if (this.ready.every((r) => r)) for (const w of [...this.readyWaiters]) w();
  }

  /**
   * Records published and not yet released, per ring (gauge), the quic-egress thread's ring last; then, per QUIC thread
   * k >= 1, the sends handed over its link and not yet taken.
   */
  depths(): number[] {
    return [...this.allRings.map(ringDepth), ...this.quicLinks.map((l) => messageRingDepth(l.requests))];
  }

  /** The rings' metric labels, as depths(): "0".."N-1", then "quic", then "quic1".."quic<N-1>" (QUIC threads' links). */
  ringLabels(): string[] {
    return [...this.allRings.map((r, i) => (r === this.quicRing ? 'quic' : String(i))), ...this.quicLinks.map((_, k) => `quic${k + 1}`)];
  }

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
    return this.egress.restarts + (this.quicEgress?.restarts ?? 0) + (this.quicLink?.restarts ?? 0);
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
    for (const r of this.allRings) requestStop(r);
    for (const l of this.quicLinks) requestMessageRingStop(l.requests);
    // Each task gets what is left of the drain's time plus the grace to return; the supervisors restart none of them.
    const grace = Math.max(deadline - Date.now(), 0) + STOP_GRACE_MS;
    await Promise.all([this.egress.stop(grace), this.quicEgress?.stop(grace), this.quicLink?.stop(grace)]);
    // Their last latency histograms travel on another channel than the result.
    await Promise.race([Promise.all([...this.egress.finals(), ...(this.quicEgress?.finals() ?? [])]), sleep(200)]);
    await Promise.all([this.egress.destroy(), this.quicPiscina?.destroy()]);
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
  /** `localAdmitted`: transactions the quic-egress thread admitted and sent without a ring (src/ingress/local-admission.ts). */
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
    const controls = [...this.egress.controls(), ...(this.quicEgress?.controls() ?? []), ...(this.quicLink?.controls() ?? [])];
    for (const port of controls) port.postMessage(logLevelMessage(level));
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

