// Wiring (cold): config -> shared memory rings -> egress pool -> front, the one shutdown path, and SIGHUP's reload
// (src/reload/: keys, route policy and log level in place; anything else refused until a restart).
// With no upstream configured the embedded localnet is started as a child process and becomes the upstream and
// the rpc route's endpoint, so `make start` works on a machine with no network.
import { fileURLToPath } from 'node:url';
import { ensureLocalConfig } from './config/bootstrap-local.js';
import { ConfigError, loadConfig, type FlagOverride } from './config/load.js';
import { missingQuicheThreadCopies } from './quic/quiche-binary.js';
import type { Config } from './config/schema.js';
import { KeyTable, routeMask } from './admission/key-table.js';
import type { FrontDeps } from './front/front-deps.js';
import { FrontServer, type ListenInfo } from './front/front-server.js';
import { Intake } from './admission/intake.js';
import { relayRpcMethods, rpcHostMethods } from './front/method-table.js';
import { createLogger, type Logger } from './log/logger.js';
import { FrontMetrics } from './metrics/front-metrics.js';
import { TextBuilder } from './metrics/prometheus.js';
import { UpstreamRpcClient } from './rpc/upstream-client.js';
import { Receipts } from './receipts/receipts.js';
import { ReceiptStream } from './receipts/receipt-stream.js';
import { createBundles } from './bundles/bundles.js';
import { SnapshotLeaderSource } from './telemetry/snapshot-leader-source.js';
import { createRing, RingProducer } from './shm/ring.js';
import { EgressPool } from './egress/consumer/pool.js';
import { resolveIdentity, type RelayIdentity } from './egress/quic/identity.js';
import { startLocalnetChild, type LocalnetChild } from './localnet-child.js';
import { localnetChildArgs } from './localnet/localnet-args.js';
import { printStartBanner } from './start-banner.js';
import { refuseServedPorts } from './start-ports.js';
import { SnapshotReader } from './telemetry/snapshot.js';
import { renderSlotTime } from './telemetry/slot-time-metrics.js';
import { ThreadMemory } from './metrics/thread-memory.js';
import { renderHealth } from './health/health-metrics.js';
import { KeyUsage } from './admission/key-usage.js';
import { IdentityStake } from './health/identity-stake.js';
import { TelemetryThread } from './telemetry/telemetry-thread.js';
import { isSlotSourceStatus, type SlotSourceStatus } from './telemetry/geyser/slot-source.js';
import { renderSlotSource } from './telemetry/geyser/slot-source-metrics.js';
import { isGeyserDead, isGeyserLanded, type GeyserLanded } from './telemetry/geyser/geyser-messages.js';
import { describeBuild } from './native/uws.js';
import { loadHttpRuntime, renderHttpRuntime } from './http/runtime-info.js';
import { responseOptions } from './http/response.js';
import { addedRouteMasks } from './config/route-policy.js';
import { HealthMonitor } from './health/health-monitor.js';
import { waitForLeaderData } from './health/leader-data-gate.js';

/** How long the start waits for the telemetry thread's first leader data before it starts degraded. */
const LEADER_DATA_WAIT_MS = 10_000;
/** A start that failed waits this long for the localnet child's exit (then SIGKILL). */
const LOCALNET_STOP_WAIT_MS = 3_000;
/** How long the start waits for every ring consumer's routes to be warm (src/egress/contract/consumer-ready.ts). */
const EGRESS_READY_WAIT_MS = 10_000;
import { urlForLog } from './log/url-for-log.js';
import { createPubsub } from './rpc/pubsub/create-pubsub.js';
import { ClusterService, clusterTelemetryOptions } from './cluster/cluster-service.js';
import { buildRoutePlan, type RoutePlan } from './config/route-plan.js';
import { JoinAllocator } from './shm/join.js';
import { QuicIngressService } from './ingress/quic-ingress-service.js';
import { BudgetTable, createBudgetBuffer } from './shm/budget-layout.js';
/** Budget buffer: submit buckets ever made (each plan change makes one) and key ids (config, reloads, engine). */
const BUDGET_SLOTS = 65_536;
const BUDGET_KEYS = 16_384;
import { ReloadService } from './reload/reload-service.js';
import { SighupReload } from './reload/sighup.js';
import { AdminServer } from './status/admin-server.js';
import { AdaptiveRouting } from './receipts/adaptive-routing.js';
import { createWidenBuffer } from './shm/widen-layout.js';
import { createSojournBuffer, SojournBoard } from './shm/sojourn-layout.js';
import { renderAdmissionDelay } from './metrics/admission-delay-metrics.js';
import { StatusCollector } from './status/status-collector.js';
import { LeaderCounters } from './receipts/leader-counters.js';

export interface RunOptions {
  readonly configFile?: string;
  readonly flags: readonly FlagOverride[];
  readonly env: NodeJS.ProcessEnv;
}

/**
 * Resolve the relay identity once (generating an unstaked one when none is configured) so every worker shares it.
 * A generated identity stays in memory: its secret reaches the workers in their task, never a file (egress/identity.ts).
 */
function relayIdentity(config: Readonly<Config>, plan: RoutePlan, log: Logger): RelayIdentity | undefined {
  if (!plan.direct && plan.staticPeers.length === 0) return undefined;
  const resolved = resolveIdentity(config.identity.keypairPath, log);
  log.info({ event: 'relay_identity', identity: resolved.identity }, 'relay QUIC identity');
  return resolved;
}

function withLocalnet(config: Readonly<Config>, rpcUrl: string, blockEngineUrl: string, grpcUrl: string | null): Readonly<Config> {
  const endpoints = config.routes.rpc.endpoints.length > 0 ? config.routes.rpc.endpoints : [rpcUrl];
  // The localnet's Yellowstone gRPC (localnet.grpcPort) is the relay's Geyser source unless one is configured.
  const grpc = config.upstream.grpc ?? (grpcUrl === null ? undefined : Object.freeze({ url: grpcUrl, stallSlots: 4, lagSlots: 2 }));
  return Object.freeze({
    ...config,
    upstream: Object.freeze({ ...config.upstream, rpcUrl, grpc }),
    // The localnet's block engine is the bundle service unless one is configured.
    bundles: Object.freeze({ ...config.bundles, url: config.bundles.url ?? (blockEngineUrl === '' ? undefined : blockEngineUrl) }),
    routes: Object.freeze({ ...config.routes, rpc: Object.freeze({ ...config.routes.rpc, endpoints: Object.freeze(endpoints) as string[] }) }),
  });
}

/** The slot source as /health?detail shows it (without the message's type tag); null before the first report. */
function slotSourceHealth(s: SlotSourceStatus | null): Omit<SlotSourceStatus, 'type'> | null {
  if (s === null) return null;
  const { type: _type, ...rest } = s;
  return rest;
}

/** The parts of a running relay that its one shutdown path stops, in order. */
interface RunningRelay {
  readonly log: Logger;
  readonly config: Readonly<Config>;
  readonly sighup: SighupReload;
  readonly healthMonitor: HealthMonitor;
  readonly reloader: ReloadService;
  readonly intake: Intake;
  readonly front: FrontServer;
  readonly admin: AdminServer | null;
  readonly pubsub: ReturnType<typeof createPubsub>;
  readonly quicIngress: QuicIngressService | null;
  readonly pool: EgressPool;
  readonly threadMemory: ThreadMemory;
  readonly identityStake: IdentityStake | null;
  readonly receipts: Receipts | null;
  readonly leaderCounters: LeaderCounters | null;
  readonly bundles: ReturnType<typeof createBundles>;
  readonly telemetry: TelemetryThread | null;
  readonly cluster: ClusterService | null;
  readonly localnet: LocalnetChild | null;
}

/**
 * The one shutdown path (SIGTERM, SIGINT, a part that failed for good): no new requests, drain the rings into the
 * routes (bounded by shutdown.drainTimeoutMs), stop every part, log the run's accounting and exit. Exit codes (README,
 * "Running it under a supervisor"): 0 = every accepted transaction was handed to its routes before the drain timeout;
 * 1 = not, or a part the relay depends on failed for good (relay_fatal), or a runtime failure; 2 = bad usage or
 * configuration (cli.ts).
 */
async function stopRelay(p: RunningRelay, signal: string, failedFor: string | null): Promise<void> {
  if (p.sighup.shuttingDown) return;
  p.sighup.shuttingDown = true;
  const { log, config } = p;
  log.info({ signal }, 'shutting down: no new requests; draining rings into the routes');
  p.healthMonitor.markShuttingDown();
  p.reloader.removeFiles(); // a SIGHUP from now on is ignored (src/reload/sighup.ts), never fatal
  p.intake.close();
  p.front.stopListening();
  p.admin?.stop();
  p.pubsub?.close();
  await p.quicIngress?.stop();
  const drained = await p.pool.drain(config.shutdown.drainTimeoutMs);
  if (drained.undelivered > 0) {
    log.error(
      { records: drained.undelivered, drainTimeoutMs: config.shutdown.drainTimeoutMs },
      'drain timed out: records left in the rings end as dropped:shutdown (shutdown_undelivered lines)',
    );
  }
  p.healthMonitor.stop();
  p.threadMemory.close();
  p.identityStake?.stop();
  p.leaderCounters?.stop();
  await p.receipts?.stop();
  p.bundles?.close();
  await p.telemetry?.stop();
  await p.cluster?.stop();
  p.localnet?.stop();
  const exitCode = drained.undelivered > 0 || failedFor !== null ? 1 : 0;
  // The accounting of the whole run: accepted = each route's outcomes summed (sent + failed + dropped:*).
  log.info({ event: 'relay_stopped', ...drained, exitCode, ...p.pool.deliverySummary(p.intake.joinedRecords, p.quicIngress?.metrics.localAdmitted() ?? 0) }, 'slotrelay stopped');
  process.exit(exitCode);
}

export async function runRelay(opts: RunOptions): Promise<void> {
  let configFile = opts.configFile;
  let newKey: string | undefined;
  if (configFile === undefined) {
    const boot = ensureLocalConfig(process.cwd());
    configFile = boot.configPath;
    newKey = boot.newKey;
  }
  let config = loadConfig({ file: configFile, env: opts.env, flags: opts.flags });
  // What a reload compares the file with (src/reload/): the config as loaded, before the localnet's URLs go in.
  const loaded = config;
  // rings.quicThreads > 1: the build's per-thread copies of the quiche binding must exist (nothing is written at run time).
  const missingCopies = config.rings.quicThreads > 1 ? missingQuicheThreadCopies(config.rings.quicThreads) : null;
  if (missingCopies !== null) throw new ConfigError(missingCopies);
  const log = createLogger(config.log.level, 'front');
  // Every thread's heap, for /metrics (src/metrics/thread-memory.ts). Listening before any thread starts: a thread
  // reports at its start and then every 5 s, and a report sent before this exists is lost.
  const threadMemory = new ThreadMemory();
  // SIGHUP reloads (src/reload/); until the relay is ready it is logged and ignored rather than killing the process.
  const sighup = new SighupReload(log);
  // The HTTP runtime first (src/native/uws.ts): where no uWS build loads, stop before anything else is started.
  const { uwsRuntime, httpRuntime } = loadHttpRuntime(config.http, log);
  // A fixed port something already serves stops the start here, before the localnet and the threads (src/start-ports.ts).
  await refuseServedPorts(config);

  let localnet: LocalnetChild | null = null;
  // Set when the relay must stop because a part it depends on failed for good (exit code 1).
  let fatal: ((reason: string) => void) | null = null;
  if (config.upstream.rpcUrl === undefined) {
    const cli = fileURLToPath(new URL('./cli.js', import.meta.url));
    localnet = await startLocalnetChild(cli, log, { extraArgs: localnetChildArgs(config.localnet), onGiveUp: (reason) => fatal?.(`embedded localnet: ${reason}`) });
    config = withLocalnet(config, localnet.rpcUrl, localnet.blockEngineUrl, localnet.grpcUrl);
  }

  // Which routes exist and which thread owns each: decided once, here, and handed to every thread.
  const plan = buildRoutePlan(config);
  const identity = relayIdentity(config, plan, log);
  const identitySecret = identity?.secret;

  // Telemetry thread: follows the cluster and publishes the leader-slot snapshot (getLeaderSlots; egress leaders).
  const telemetryRpcUrl = config.telemetry.rpcUrl ?? config.upstream.rpcUrl;
  // Several relays as one service (cluster.url; docs/multi-region.md): null for a relay alone. Set below, once the keys exist.
  let cluster: ClusterService | null = null;
  // The telemetry thread's slot source (upstream.grpc, PubSub, polling), as it last reported it: /health?detail.
  let slotSource: SlotSourceStatus | null = null;
  // Landing statuses from the Geyser stream, for the receipts (set once they exist, below).
  let streamLanded: ((m: GeyserLanded) => void) | null = null;
  let streamDead: ((slot: number) => void) | null = null;
  const telemetry =
    config.telemetry.enabled && telemetryRpcUrl !== undefined
      ? new TelemetryThread({
          telemetry: config.telemetry,
          rpcUrl: telemetryRpcUrl,
          routes: { direct: plan.direct, staticPeers: plan.staticPeers, jito: plan.jito },
          logLevel: config.log.level,
          log,
          cluster: clusterTelemetryOptions(config),
          onClusterStatus: (m) => {
            if (isSlotSourceStatus(m)) slotSource = m;
            else if (isGeyserLanded(m)) streamLanded?.(m);
            else if (isGeyserDead(m)) streamDead?.(m.slot);
            else cluster?.onTelemetryStatus(m);
          },
          grpc: config.upstream.grpc,
          probeInQuicThread: plan.probe === 'quic-thread',
        })
      : null;
  telemetry?.start();
  // Whether that identity is staked (/metrics; the identity-unstaked alert): cold, one getVoteAccounts per 5 min.
  const identityStake =
    identity !== undefined && telemetryRpcUrl !== undefined
      ? new IdentityStake({ identity: identity.identity, keypairPath: identity.keypairPath, rpcUrl: telemetryRpcUrl, timeoutMs: config.telemetry.requestTimeoutMs, log })
      : null;
  identityStake?.start();

  const rings = Array.from({ length: config.rings.workers }, () =>
    createRing(config.rings.slotsPerRing, config.transactions.maxTransactionBytes),
  );
  const producers = rings.map((r) => new RingProducer(r, { coalesceWakeups: true }));
  // Landing receipts (docs/receipts.md): workers write each route's outcome into the table's shared buffer.
  const receipts = config.receipts.enabled
    ? new Receipts(
        config,
        config.upstream.rpcUrl ? new UpstreamRpcClient(config.upstream.rpcUrl, config.upstream.requestTimeoutMs) : null,
        telemetry ? new SnapshotLeaderSource(telemetry.snapshot, { maxAgeMs: config.telemetry.maxSnapshotAgeMs }) : null,
        log,
        { statusThread: config.receipts.statusThread }, // the tracker's status calls off the front (src/rpc/status/status-thread.ts)
      )
    : null;
  // With upstream.grpc the landing tracker watches its pending signatures on the telemetry thread's Geyser stream.
  if (receipts !== null && telemetry !== null && config.upstream.grpc !== undefined) {
    receipts.setStreamWatch((signatures) => telemetry.watchSignatures(signatures));
    streamLanded = (m) => receipts.onStreamStatus(m.signature, m.slot, m.err);
    streamDead = (slot) => receipts.onSlotDead(slot);
  }
  // Adaptive routing (docs/adaptive-routing.md): the front's scoreboard needs the receipts, leader data and the direct route.
  const adaptiveOn = config.routing.adaptive.enabled && receipts !== null && telemetry !== null && plan.direct;
  const widen = adaptiveOn ? createWidenBuffer() : undefined;
  // Admission by delay (docs/relay-api.md): one row per ring consumer, the worker rings then the QUIC ring (index =
  // config.rings.workers, as the counter regions).
  const sojourn = createSojournBuffer(config.rings.workers + 1);
  const sojournBoard = new SojournBoard(sojourn);
  const pool = new EgressPool({
    config,
    rings,
    widen,
    sojourn,
    log,
    snapshot: telemetry?.snapshot,
    measurementPort: telemetry ? () => telemetry.measurementPort() : undefined,
    identitySecret,
    receipts: receipts?.sab,
    plan,
  });
  pool.start();
  telemetry?.setProber(pool.probe);

  // Submit budgets in shared memory when the quic-egress thread admits locally (relayHost.quic.localAdmission): one budget
  // per key across HTTP and QUIC (src/shm/budget-layout.ts). Room for every key a reload or the engine may add.
  const budgets = config.relayHost.quic.localAdmission && plan.ingress && plan.quicRing !== 0 ? new BudgetTable(createBudgetBuffer(BUDGET_SLOTS, BUDGET_KEYS)) : null;
  const keys = new KeyTable(config.keys, config.routes.defaultRoutes, Date.now(), budgets);
  if (keys.entries.length === 0) log.warn('no API keys configured: every request will be refused with 401');
  cluster = ClusterService.create(config, keys, log);
  cluster?.start();
  const addedRoutes = addedRouteMasks(config);
  const quicRing =
    pool.quicRing !== null && pool.join !== null
      ? { producer: new RingProducer(pool.quicRing, { coalesceWakeups: true }), mask: plan.quicRing, join: new JoinAllocator(pool.join) }
      : null;
  const keyUsage = new KeyUsage(keys);
  const adaptive =
    widen !== undefined && receipts !== null && telemetry !== null
      ? new AdaptiveRouting({
          config: config.routing.adaptive,
          table: receipts.table,
          leaders: new SnapshotLeaderSource(telemetry.snapshot, { maxAgeMs: config.telemetry.maxSnapshotAgeMs }),
          keys,
          available: plan.available,
          widen,
          judgeAfterMs: config.routing.adaptive.judgeAfterMs,
        })
      : null;
  adaptive?.start();
  const sojournReader = {
    words: sojournBoard.words,
    workerOver: Int32Array.from(producers, (_, i) => sojournBoard.overIndex(i)),
    quicOver: quicRing === null ? -1 : sojournBoard.overIndex(config.rings.workers),
  };
  const intake = new Intake(producers, config.transactions.maxTransactionBytes, addedRoutes, receipts, quicRing, keyUsage, adaptive, sojournReader);
  receipts?.start();
  // Per-leader counters (docs/leader-counters.md): read from the receipts and the leader data, nothing on the hot path.
  const leaderCounters =
    receipts !== null && telemetry !== null
      ? new LeaderCounters(receipts.table, new SnapshotLeaderSource(telemetry.snapshot, { maxAgeMs: config.telemetry.maxSnapshotAgeMs }), {
          slots: config.receipts.leaderSlots,
        })
      : null;
  leaderCounters?.start();
  const upstream = config.upstream.rpcUrl ? new UpstreamRpcClient(config.upstream.rpcUrl, config.upstream.preflightTimeoutMs) : null;
  // The front thread's readers of the telemetry snapshot.
  const leaderSnapshot = telemetry ? new SnapshotReader(telemetry.snapshot) : null;
  // The full reader serves getLeaderSlots and the status page, which need the rows. What on the front needs only the
  // header (the slot and its age, the slot time: the health monitor's tick, sendTransaction's minContextSlot,
  // getRecentPrioritizationFees, /metrics) reads a leaders-only copy: the first read of each generation (every slot)
  // copies ~120 KB instead of ~530 KB at mainnet size, p50 80 us instead of 2.0 ms (bench/results/snapshot-read.json).
  const slotSnapshot = telemetry ? new SnapshotReader(telemetry.snapshot, { rows: false }) : null;
  // Bundles (docs/bundles.md): forwarded to the configured bundle service, or the embedded localnet's block engine.
  const bundles = createBundles(config, intake, receipts);
  const rpcTable = rpcHostMethods({ config, intake, upstream, availableRouteMask: plan.available, receipts, bundles: bundles?.table ?? null, adaptive }, leaderSnapshot, slotSnapshot);
  const relayTable = relayRpcMethods({ config, intake, upstream, availableRouteMask: plan.available }, slotSnapshot);
  // The QUIC ingress (docs/quic-ingress.md): in the quic-egress thread; null when relayHost.quicPort is 0. Set once listening.
  let quicIngress: QuicIngressService | null = null;
  const availableRouteMask = plan.available;
  const healthMonitor = new HealthMonitor({
    config,
    availableRouteMask,
    counters: () => pool.summedCounters(),
    snapshot: slotSnapshot,
    localnet,
    onDeliverable: (mask, data) => intake.setDeliverable(mask, data),
    onTrickle: (mask) => intake.setTrickle(mask),
    log,
  });
  healthMonitor.start();
  // Landing waits for finalized under Alpenglow, confirmed under Tower (getAgGenesisCert, src/telemetry/consensus-probe.ts).
  receipts?.setConsensus(() => healthMonitor.consensusMode());
  // Ready means deliverable: every ring's consumer runs with its routes warm (the quic-egress thread: connection layer
  // loaded, static peers' first handshakes ended), bounded. Awaited below, alongside the leader data.
  const egressReady = pool.whenReady(EGRESS_READY_WAIT_MS);
  // And the receipts' status thread ready, so that the landing polls of the first transactions are its, not the front's.
  const receiptsReady = receipts?.statusThreadReady(EGRESS_READY_WAIT_MS) ?? Promise.resolve(true);
  // With the direct route offered, wait (bounded) for the first fresh leader data.
  if (slotSnapshot !== null && (availableRouteMask & routeMask(['direct'])) !== 0) {
    const fresh = await waitForLeaderData(slotSnapshot, config.telemetry.maxSnapshotAgeMs, LEADER_DATA_WAIT_MS);
    if (!fresh) log.warn({ event: 'leader_data_late', waitedMs: LEADER_DATA_WAIT_MS }, 'no fresh leader data yet: starting degraded (direct refused until it comes, /health says why)');
    healthMonitor.refreshNow();
  }
  const lateRings = await egressReady;
  if (!(await receiptsReady)) log.warn({ event: 'receipt_status_late', waitedMs: EGRESS_READY_WAIT_MS }, 'receipts status thread not ready yet: starting anyway (the front polls landings until it is)');
  if (lateRings.length > 0)
    log.warn({ event: 'egress_late', rings: lateRings, waitedMs: EGRESS_READY_WAIT_MS }, 'egress consumers not warm yet: starting anyway (early transactions wait in their ring)');
  const deps: FrontDeps = {
    config,
    keys,
    intake,
    upstream,
    // Every method either table serves gets its own label; anything else a client sends is "unknown".
    metrics: new FrontMetrics([...rpcTable.keys(), ...relayTable.keys()]),
    keyUsage,
    log,
    availableRouteMask,
    addedRouteMasks: addedRoutes,
    responseOptions: responseOptions(config.http.corsAllowOrigin, uwsRuntime.idleTimeoutSeconds),
    renderMetrics: () => {
      const tb = new TextBuilder();
      threadMemory.render(tb);
      deps.metrics.render(tb);
      renderHttpRuntime(tb, httpRuntime);
      pool.renderMetrics(tb);
      renderAdmissionDelay(tb, intake, sojournBoard, pool.ringLabels());
      renderSlotTime(tb, slotSnapshot);
      renderSlotSource(tb, slotSource);
      renderHealth(tb, deps.health());
      identityStake?.render(tb);
      keyUsage.render(tb);
      pubsub?.render(tb);
      cluster?.render(tb);
      receipts?.render(tb);
      adaptive?.render(tb);
      bundles?.render(tb);
      quicIngress?.render(tb);
      sighup.reloader?.render(tb);
      return tb.text();
    },
    health: () => {
      const c = cluster === null ? healthMonitor.current() : cluster.health(healthMonitor.current());
      // The direct route's status says which leaders park it (additive: docs/adaptive-routing.md).
      const direct = c.routes.direct;
      const r = adaptive === null || direct === undefined ? c : { ...c, routes: { ...c.routes, direct: { ...direct, adaptive: adaptive.status() } } };
      // Where receipts learn landings (push, or the poll while the upstream PubSub is down: docs/receipts.md).
      const landing = receipts?.landingSource() ?? null;
      const withSource = { ...r, slotSource: slotSourceHealth(slotSource), ...(landing === null ? {} : { landing }) };
      return sighup.reloader === null ? withSource : { ...withSource, config: sighup.reloader.health() };
    },
    receipts,
    leaderCounters,
    httpRuntime,
  };
  // The JSON-RPC host's PubSub WebSocket (docs/pubsub.md), relayed to the upstream's.
  // receiptSubscribe on it (docs/receipts.md "The receipt stream"): the receipts table's one observer.
  const receiptStream = receipts === null ? null : (nextId: () => number) => new ReceiptStream(receipts.table, config.jsonRpc.pubsub.receiptSubscriptionsPerKey, nextId);
  const pubsub = createPubsub(config, keys, log, deps, receiptStream);
  const front = new FrontServer(uwsRuntime.uws, deps, rpcTable, relayTable, pubsub, bundles?.table);
  let listeners: ListenInfo[];
  let admin: AdminServer | null = null;
  try {
    listeners = await front.start();
    // In the one QUIC thread (src/config/route-plan.ts), next to the egress connections and the probe.
    const host = plan.ingress && pool.quicRing !== null ? (t: object, tl: import('node:worker_threads').MessagePort[]) => pool.hostInQuicThread('quic-ingress', t, tl) : undefined;
    const local = budgets !== null && host !== undefined ? { budgets, quicMask: plan.quicRing, sojourn, sojournWriter: config.rings.workers } : undefined;
    quicIngress = await QuicIngressService.start({ config, configFile, keys, intake, availableRouteMask, addedRouteMasks: addedRoutes, log, keyUsage, host, receipts, local });
    if (quicIngress !== null) listeners.push({ name: 'quic', host: quicIngress.address.host, port: quicIngress.address.port });
    // The status page (docs/status-page.md): its own uWS App in this thread. Like every listener, one that cannot
    // listen stops the start (several relays on one host need one admin.port each: docs/deployment.md).
    if (config.admin.enabled) {
      const collector = new StatusCollector({
        health: deps.health,
        counters: () => pool.summedCounters(),
        ringDepths: () => ({ labels: pool.ringLabels(), depths: pool.depths() }),
        quicThreadConnections: () => pool.quicThreadConnections(),
        quicIngress: () => quicIngress?.live() ?? null,
        snapshot: leaderSnapshot,
        keys,
        receipts: receipts === null ? null : { landingCounts: () => receipts.landingCounts(), recentFailures: (floor, scan, limit) => receipts.table.recentFailures(floor, scan, limit) },
        leaderCounters: leaderCounters === null ? null : () => leaderCounters.report(null),
        routeMask: availableRouteMask | addedRoutes.reduce((m, x) => m | x, 0),
      });
      admin = new AdminServer(uwsRuntime.uws, config, collector, log);
      const at = await admin.start();
      listeners.push({ name: 'admin', host: at.host, port: at.port });
    }
  } catch (err) {
    // A listener that cannot be opened (ListenFailure) or any other failure here: stop what was started, the localnet
    // child included (waited for), and let the CLI exit with the start-failure code (src/cli.ts).
    front.stopListening();
    admin?.stop();
    await quicIngress?.stop();
    pubsub?.close();
    healthMonitor.stop();
    adaptive?.stop();
    leaderCounters?.stop();
    await pool.drain(1000);
    await receipts?.stop();
    await telemetry?.stop();
    await cluster?.stop();
    identityStake?.stop();
    threadMemory.close();
    await localnet?.stopAndWait(LOCALNET_STOP_WAIT_MS);
    throw err;
  }
  const reloader = new ReloadService({
    configFile,
    flags: opts.flags,
    env: opts.env,
    running: loaded,
    keys,
    addedRouteMasks: addedRoutes,
    log,
    onKeysChanged: (changes) => cluster?.onConfigKeysChanged(changes),
    onLogLevel: (level) => {
      pool.setLogLevel(level);
      telemetry?.setLogLevel(level);
    },
  });
  reloader.writePidFile();
  sighup.reloader = reloader;

  const parts: RunningRelay = { log, config, sighup, healthMonitor, reloader, intake, front, admin, pubsub, quicIngress, pool, threadMemory, identityStake, receipts, leaderCounters, bundles, telemetry, cluster, localnet };
  // A dependency that failed for good (the localnet supervisor gave up): stop, exit 1, so a supervisor restarts us.
  let failedFor: string | null = null;
  const shutdown = (signal: string): Promise<void> => stopRelay(parts, signal, failedFor);
  fatal = (reason: string): void => {
    failedFor = reason;
    log.error({ event: 'relay_fatal', reason }, 'a part the relay depends on failed for good: stopping');
    void shutdown('fatal');
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  // The ready line is a contract with supervisors and tests (one JSON line on stdout), printed whatever the log level,
  // and only now: a SIGTERM that follows it at once must find the drain's handler installed (before it, Node's default
  // action kills the process with no drain).
  process.stdout.write(
    JSON.stringify({ event: 'relay_ready', listeners, upstream: config.upstream.rpcUrl === undefined ? null : urlForLog(config.upstream.rpcUrl), workers: config.rings.workers, http: httpRuntime }) + '\n',
  );
  printStartBanner({ listeners, config, configFile, newKey, localnet, httpRuntime: describeBuild(uwsRuntime.build) });
}

export type { Logger };
