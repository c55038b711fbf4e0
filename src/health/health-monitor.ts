// What the relay can deliver right now (main/front thread, cold: one evaluation per health.probeIntervalMs, never on a
// request's path). Inputs: the telemetry snapshot's age (leader data), reachability probes of the upstream and the
// rpc route's endpoints, each route's outcomes over health.failingWindowMs (shared worker counters), and the embedded
// localnet's supervisor state; which consensus the cluster runs (getAgGenesisCert at start and after each reconnect,
// src/telemetry/consensus-probe.ts). Outputs: the mask of routes that can deliver, pushed to intake (a transaction with
// none of them is refused with 503 routes_unavailable), the GET /health status and its JSON detail (docs/health.md).
// Transitions are logged once each (warn when something breaks, info when it recovers), never per request.
// A route found failing every send stays closed to live traffic until one of its sends succeeds: each tick it is
// granted a trickle of one transaction (onTrickle), whose outcome is the probe. Letting it back in wholesale once its
// failures aged out of the window dropped a whole tick of traffic every few seconds (issue #30 item 10).
import type { Config } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import { ROUTE_BY_ID, ROUTE_COUNT } from '../shm/layout.js';
import type { SnapshotReader } from '../telemetry/snapshot.js';
import { slotMsMeasured, slotMsOf } from '../telemetry/slot-ms.js';
import { ConsensusProbe, type ConsensusReport } from '../telemetry/consensus-probe.js';
import { EndpointProbe } from './endpoint-probe.js';
import { RouteOutcomeWindow } from './route-outcome-window.js';
import type { SlotSourceStatus } from '../telemetry/geyser/slot-source.js';

/** The embedded localnet child's state, as its supervisor (src/localnet-child.ts) reports it. */
export type LocalnetState = 'running' | 'restarting' | 'failed' | 'stopped';

export type HealthStatus = 'ok' | 'degraded' | 'unhealthy' | 'shutting_down';

/** Why a route cannot deliver; stable labels (docs/health.md). */
export type RouteUnavailableReason = 'endpoint_unreachable' | 'no_fresh_leader_data' | 'route_failing' | 'route_probing';

export interface RouteHealth {
  readonly deliverable: boolean;
  readonly reason: RouteUnavailableReason | null;
  /** Outcomes over the failing window. */
  readonly window: { readonly sent: number; readonly notDelivered: number };
}

export interface HealthReport {
  readonly status: HealthStatus;
  /** Every problem found, as stable labels (empty when ok). */
  readonly reasons: readonly string[];
  readonly routes: Readonly<Record<string, RouteHealth>>;
  readonly upstream: { readonly configured: boolean; readonly reachable: boolean; readonly lastAnswerAgoMs: number | null; readonly error: string | null };
  readonly localnet: { readonly state: LocalnetState; readonly restarts: number } | null;
  /** The cluster's consensus (alpenglow | tower | unknown) from the telemetry RPC's getAgGenesisCert; null: no upstream. */
  readonly consensus: ConsensusReport | null;
  readonly leaderData: {
    readonly fresh: boolean;
    readonly slot: number | null;
    readonly ageMs: number | null;
    /** The cluster's slot duration as the telemetry thread measured it (the fallback while slotMsMeasured is false). */
    readonly slotMs: number;
    readonly slotMsMeasured: boolean;
    /** Whole slots the snapshot's slot is behind the cluster's now, at slotMs (null: no snapshot). */
    readonly behindSlots: number | null;
  } | null;
  /** Where the telemetry thread takes slots from (upstream.grpc, PubSub, polling; docs/geyser.md); set by main. */
  readonly slotSource?: Omit<SlotSourceStatus, 'type'> | null;
}

export interface HealthMonitorOptions {
  readonly config: Readonly<Config>;
  /** Routes this relay is configured to deliver by (ROUTE_IDS bits). */
  readonly availableRouteMask: number;
  /** Summed egress worker counters (EgressPool.summedCounters). */
  readonly counters: () => Float64Array;
  /** The telemetry snapshot the direct route takes its leaders from; null when telemetry is off. */
  readonly snapshot: SnapshotReader | null;
  readonly localnet: { state(): LocalnetState; restarts(): number } | null;
  /** Told whenever the deliverable mask changes. */
  readonly onDeliverable: (mask: number, refusalData: unknown) => void;
  /** Told every tick which routes, closed for failing, may take one transaction each until the next tick. */
  readonly onTrickle?: (mask: number) => void;
  readonly log: Logger;
  readonly now?: () => number;
}

const DIRECT = ROUTE_BY_ID.indexOf('direct');
const RPC = ROUTE_BY_ID.indexOf('rpc');

export class HealthMonitor {
  private readonly window: RouteOutcomeWindow;
  private readonly upstream: EndpointProbe | null;
  private readonly rpcEndpoints: EndpointProbe[];
  /** Asks the cluster RPC (telemetry.rpcUrl, else upstream.rpcUrl) which consensus it runs. */
  private readonly consensus: ConsensusProbe | null;
  private lastRestarts = 0;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;
  private shuttingDown = false;
  private report: HealthReport;
  private deliverableMask = -1;
  private lastReasons = '';
  /** Routes found failing every send and not seen sending since: closed to all but the trickle (bit per route). */
  private tripped = 0;

  constructor(private readonly o: HealthMonitorOptions) {
    const h = o.config.health;
    this.now = o.now ?? Date.now;
    this.window = new RouteOutcomeWindow(h.failingWindowMs);
    const upstreamUrl = o.config.upstream.rpcUrl;
    this.upstream = upstreamUrl === undefined ? null : new EndpointProbe(upstreamUrl, h.probeTimeoutMs);
    // Discard mode (benchmarks) sends nothing, so there is nothing to probe on the rpc route.
    const clusterUrl = o.config.telemetry.rpcUrl ?? upstreamUrl;
    this.consensus = clusterUrl === undefined ? null : new ConsensusProbe(clusterUrl, h.probeTimeoutMs);
    this.rpcEndpoints = o.config.routes.discard ? [] : o.config.routes.rpc.endpoints.map((u) => (u === upstreamUrl && this.upstream ? this.upstream : new EndpointProbe(u, h.probeTimeoutMs)));
    this.report = this.evaluate();
  }

  start(): void {
    this.tick();
    this.timer = setInterval(() => this.tick(), this.o.config.health.probeIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** The relay stops accepting: /health says so at once. */
  markShuttingDown(): void {
    this.shuttingDown = true;
    this.report = this.evaluate();
  }

  current(): HealthReport {
    return this.report;
  }

  /** Which consensus the cluster runs, for the relay's own waits (receipts): 'unknown' until the first answer. */
  consensusMode(): ConsensusReport['mode'] {
    return this.consensus?.current().mode ?? 'unknown';
  }

  /** Evaluate now instead of at the next tick (start-up, once leader data arrived). */
  refreshNow(): void {
    this.refresh();
  }

  private tick(): void {
    this.window.sample(this.o.counters(), this.now());
    const settle = (): void => this.refresh();
    // getAgGenesisCert at start and after every reconnect: the upstream lost, or the embedded localnet restarted (a
    // new cluster that may run the other consensus).
    const restarts = this.o.localnet?.restarts() ?? 0;
    if (restarts !== this.lastRestarts || this.upstream?.current().reachable === false || this.o.localnet?.state() === 'restarting') this.consensus?.lost();
    this.lastRestarts = restarts;
    if (this.upstream?.current().reachable !== false && this.o.localnet?.state() !== 'restarting') this.consensus?.tick(settle);
    this.upstream?.probe(settle);
    for (const p of this.rpcEndpoints) if (p !== this.upstream) p.probe(settle);
    this.refresh();
    this.o.onTrickle?.(this.tripped);
  }

  private refresh(): void {
    this.report = this.evaluate();
    const reasons = this.report.reasons.join(',');
    if (reasons !== this.lastReasons) {
      if (reasons === '') this.o.log.info({ event: 'health_changed', status: this.report.status }, 'relay health: ok');
      else this.o.log.warn({ event: 'health_changed', status: this.report.status, reasons: this.report.reasons }, `relay health: ${this.report.status}`);
      this.lastReasons = reasons;
    }
    let mask = 0;
    const why: Record<string, string> = {};
    for (const [name, r] of Object.entries(this.report.routes)) {
      if (r.deliverable) mask |= 1 << ROUTE_BY_ID.indexOf(name as (typeof ROUTE_BY_ID)[number]);
      else if (r.reason !== null) why[name] = r.reason;
    }
    if (mask !== this.deliverableMask) {
      this.deliverableMask = mask;
      this.o.onDeliverable(mask, Object.freeze({ reason: 'routes_unavailable', routes: Object.freeze(why) }));
    }
  }

  private evaluate(): HealthReport {
    const cfg = this.o.config;
    const now = this.now();
    const reasons: string[] = [];

    let leaderData: HealthReport['leaderData'] = null;
    if (this.o.snapshot !== null) {
      const view = this.o.snapshot.current();
      const ageMs = view === null ? null : Math.max(0, now - view.generatedAtUnixMs);
      // The freshness bound stays telemetry.maxSnapshotAgeMs (the getLeaderSlots stale rule, in ms: how long the relay
      // tolerates not hearing the cluster); behindSlots says what that age means at the measured slot time.
      const fresh = ageMs !== null && ageMs <= cfg.telemetry.maxSnapshotAgeMs;
      const slotMs = slotMsOf(view);
      const behindSlots = ageMs === null ? null : Math.floor(ageMs / slotMs);
      leaderData = { fresh, slot: view?.snapshotSlot ?? null, ageMs, slotMs: Math.round(slotMs * 10) / 10, slotMsMeasured: slotMsMeasured(view), behindSlots };
      if (!fresh) reasons.push('no_fresh_leader_data');
    }

    const up = this.upstream?.current() ?? null;
    const upstream: HealthReport['upstream'] = {
      configured: this.upstream !== null,
      reachable: up?.reachable ?? false,
      lastAnswerAgoMs: up !== null && up.lastAnswerAtMs > 0 ? now - up.lastAnswerAtMs : null,
      error: up?.lastError ?? null,
    };
    if (up !== null && !up.reachable) reasons.push('upstream_unreachable');

    const ln = this.o.localnet;
    const localnet = ln === null ? null : { state: ln.state(), restarts: ln.restarts() };
    if (localnet !== null && localnet.state !== 'running') reasons.push(`localnet_${localnet.state}`);

    const routes: Record<string, RouteHealth> = {};
    let deliverable = 0;
    let configured = 0;
    for (let r = 0; r < ROUTE_COUNT; r++) {
      if ((this.o.availableRouteMask & (1 << r)) === 0) continue;
      configured++;
      const w = this.window.delta(r);
      let reason: RouteUnavailableReason | null = null;
      if (r === RPC && this.rpcEndpoints.length > 0 && !this.rpcEndpoints.some((p) => p.current().reachable)) reason = 'endpoint_unreachable';
      else if (r === DIRECT && leaderData !== null && !leaderData.fresh) reason = 'no_fresh_leader_data';
      else if (w.sent === 0 && w.notDelivered >= cfg.health.failingMinOutcomes) reason = 'route_failing';
      // Tripped by failing, cleared by a send. Once the failures age out the route is probing: the relay may still
      // be able to deliver by it (so it counts for the status), but only the trickle is let in until one is sent.
      const bit = 1 << r;
      if (reason === 'route_failing') this.tripped |= bit;
      else if (w.sent > 0) this.tripped &= ~bit;
      if (reason === null && (this.tripped & bit) !== 0) reason = 'route_probing';
      if (reason === null || reason === 'route_probing') deliverable++;
      if (reason !== null) reasons.push(`${ROUTE_BY_ID[r]}:${reason}`);
      routes[ROUTE_BY_ID[r]] = { deliverable: reason === null, reason, window: w };
    }

    let status: HealthStatus;
    if (this.shuttingDown) status = 'shutting_down';
    else if (configured > 0 && deliverable === 0) status = 'unhealthy';
    else status = reasons.length === 0 ? 'ok' : 'degraded';
    return { status, reasons, routes, upstream, localnet, consensus: this.consensus?.current() ?? null, leaderData };
  }
}
