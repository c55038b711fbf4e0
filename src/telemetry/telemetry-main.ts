// The telemetry thread's body (its own worker_thread, not Piscina; cold: timers, one publish per slot).
// Follows the cluster — slot by slotSubscribe with getSlot polling while the subscription is down, the leader
// schedule of the current and next epoch, cluster nodes (identity -> tpuQuic), stake per identity — takes route
// measurements (egress connection reports via the main thread, and its own QUIC handshake probe of the leaders the
// egress does not measure, within Agave's per-peer connection budget: probe.ts), and on every new slot
// publishes the leader-slot snapshot (rows lookbackSlots before .. horizonSlots after the slot) into shared memory.
// It never publishes without a slot advance: if the cluster or the upstream stalls, the snapshot ages and
// getLeaderSlots fails closed. In a cluster (cluster.url) it also shares its region's measured figures and merges the
// other regions' fresh ones into the rows (src/cluster/telemetry-share.ts).
import { countKinds } from './leader-kind.js';
import { urlForLog } from '../log/url-for-log.js';
import type { ClusterConfig, TelemetryConfig } from '../config/schema.js';
import type { RegionShare, RegionShareFactory, TelemetryShareStatus } from './region-share.js';
import type { SlotSourceStatus as SlotSourceStatusMessage } from './geyser/slot-source.js';
import type { Logger } from '../log/logger.js';
import { ClusterRpc, type EpochInfo } from './cluster-rpc.js';
import { loadLocations, type LocationTable } from './locations.js';
import { MeasurementStore, classify, directKey, isRouteMeasurementBatch, pathKey } from './measurements.js';
import type { OfferedRoutes } from '../config/route-plan.js';
import { txPathSpecs } from '../config/tx-paths.js';
import { ProbePlanner, probeHandshakes, type ProbeTarget } from './probe.js';
import type { Prober } from './probe-relay.js';
import { RouteModel, rowText } from './route-model.js';
import { SnapshotWriter } from './snapshot.js';
import { SlotDurationEstimator } from './slot-duration.js';
import type { LeaderInfo } from './leader-source.js';
import { SlotSubscription } from './ws-slot-client.js';
import { GeyserSlotStream } from './geyser/geyser-slot-stream.js';
import { SlotSourceSelector } from './geyser/slot-source.js';
import { isGeyserWatch, type GeyserDead, type GeyserLanded } from './geyser/geyser-messages.js';
import { SlotStatus } from '../geyser/proto.js';
import type { GeyserSourceConfig } from '../config/schema.js';

export interface TelemetryWorkerData {
  readonly telemetry: TelemetryConfig;
  readonly rpcUrl: string;
  readonly wsUrl: string;
  readonly logLevel: string;
  readonly snapshot: SharedArrayBuffer;
  /** The routes the relay offers (the route plan's, src/config/route-plan.ts): which txPaths rows list. */
  readonly routes: OfferedRoutes;
  /** Tests only: honour {type: 'crash'} messages. */
  readonly allowTestCrash?: boolean;
  /** Set with cluster.url (and cluster.telemetry.enabled): share measurements with the other regions' relays. */
  readonly cluster?: ClusterConfig & { readonly url: string };
  /**
   * Where the probe's handshakes run: 'parent' = asked of the main thread, which has the quic-egress thread run them (the
   * relay: route plan probe 'quic-thread'); absent = in this thread (standalone uses and tests).
   */
  readonly probeVia?: 'parent';
  /** upstream.grpc: slots from a Yellowstone gRPC stream first, PubSub and polling as the fallback (geyser/). */
  readonly grpc?: GeyserSourceConfig;
}

/** How often the slot source status goes to the main thread besides each switch (its behind figure moves). */
const SLOT_SOURCE_STATUS_MS = 1_000;

/**
 * A slot this far below the last one seen means a new cluster, not reordering: the WebSocket and getSlot polling may
 * disagree by a few slots, never by hundreds.
 */
const CLUSTER_RESET_SLOTS = 16;
/** Retry delay for schedule / epoch fetches that failed. */
const RETRY_MS = 500;

interface EpochSchedule {
  readonly first: number;
  readonly length: number;
  /** Leader identity per slot offset. */
  readonly leaders: readonly string[];
}

export class TelemetryFollower {
  private slot = -1;
  /** The cluster's slot duration from the slot advances this thread sees (published in every snapshot). */
  private readonly slotTime = new SlotDurationEstimator();
  private epochs: EpochSchedule[] = [];
  private epochLength = 0;
  private fetchingSchedule = false;
  private nodes = new Map<string, string | null>();
  private identityByTarget = new Map<string, string>();
  /** Static peer "ip:port" -> its txPath provider name. */
  private readonly staticPathByPeer: ReadonlyMap<string, string>;
  private readonly planner: ProbePlanner;
  private stakes = new Map<string, number>();
  private readonly store: MeasurementStore;
  private readonly model: RouteModel;
  private readonly locations: LocationTable;
  private readonly writer: SnapshotWriter;
  private readonly rpc: ClusterRpc;
  private readonly paths: readonly { readonly provider: string; readonly kind: string }[];
  /** Shared telemetry in a cluster; null for a relay alone. */
  private readonly share: RegionShare | null;
  private ws: SlotSubscription | null = null;
  private geyser: GeyserSlotStream | null = null;
  private readonly source: SlotSourceSelector;
  private timers: NodeJS.Timeout[] = [];
  private probing = false;
  /** Probe once as soon as the schedule and nodes are known, then every probe.intervalMs. */
  private firstProbe = false;
  private stopped = false;
  private pollBusy = false;
  private readonly warned = new Set<string>();
  publishes = 0;
  /** Handshakes the probe started (tests: the per-peer budget). */
  probeHandshakes = 0;

  constructor(
    private readonly d: TelemetryWorkerData,
    private readonly log: Logger,
    /** Status messages for the main thread: the region share's and the slot source's. */
    private readonly postStatus: (s: TelemetryShareStatus | SlotSourceStatusMessage | GeyserLanded | GeyserDead) => void = () => undefined,
    /** Runs one probe round's handshakes (src/telemetry/probe-relay.ts); default: in this thread. */
    private readonly prober: Prober = probeHandshakes,
    /** Builds the region share when d.cluster is set (the worker entry hands in src/cluster/telemetry-share.ts). */
    makeShare: RegionShareFactory | null = null,
  ) {
    this.store = new MeasurementStore(d.telemetry.measurementTtlMs);
    this.locations = loadLocations(d.telemetry);
    const t = d.telemetry;
    const paths = txPathSpecs(t, d.routes);
    this.paths = paths;
    this.share = d.cluster === undefined || makeShare === null ? null : makeShare(d.cluster, t.region, t.regions.map((r) => r.name), log, postStatus);
    this.staticPathByPeer = new Map(paths.filter((p) => p.peer !== null).map((p) => [p.peer as string, p.provider]));
    // An unmeasured, unconfigured hop: half the estimated RTT to the peer's location when the dataset has its IP.
    const hopEstimate = (p: { peer: string | null }): number => {
      const loc = p.peer === null ? undefined : this.locations.lookup('', p.peer);
      return this.model.estimateRttMs(t.region, loc) / 2;
    };
    this.model = new RouteModel(t, paths, hopEstimate);
    this.planner = new ProbePlanner(t.probe.perPeerIntervalMs);
    this.writer = new SnapshotWriter(d.snapshot);
    this.rpc = new ClusterRpc(d.rpcUrl, d.telemetry.requestTimeoutMs);
    this.source = new SlotSourceSelector(
      d.grpc !== undefined,
      d.grpc?.lagSlots ?? 2,
      (from, to, reason) => {
        // One line per switch, never the endpoint's token (urlForLog keeps origin and path).
        const grpcUrl = d.grpc === undefined ? undefined : urlForLog(d.grpc.url);
        const fields = { event: 'slot_source_switched', from, to, reason, grpcUrl };
        if (to === 'grpc' || d.grpc === undefined) this.log.info(fields, `slot source: ${to}`);
        else this.log.warn(fields, `slot source: ${to} (${reason ?? 'grpc unavailable'})`);
        this.postStatus(this.source.status());
      },
      () => this.geyser?.updates ?? 0,
    );
  }

  start(): void {
    const t = this.d.telemetry;
    // Origin + path only: the URLs may carry a provider's API key in their query.
    this.log.info(
      { event: 'telemetry_started', rpcUrl: urlForLog(this.d.rpcUrl), wsUrl: urlForLog(this.d.wsUrl), locations: this.locations.size, generation: this.writer.generation },
      'telemetry thread started',
    );
    this.ws = new SlotSubscription({
      url: this.d.wsUrl,
      onSlot: (s) => {
        this.source.pubsubSlotSeen(s);
        this.onSlot(s);
      },
      onState: (up) => {
        this.log.info({ event: up ? 'slot_subscription_up' : 'slot_subscription_down' }, up ? 'slot subscription active' : 'slot subscription lost: polling getSlot');
        this.source.pubsubStateChanged(up);
      },
    });
    this.ws.start();
    const g = this.d.grpc;
    if (g !== undefined) {
      this.geyser = new GeyserSlotStream({
        url: g.url,
        xToken: g.xToken,
        // Every status counts: the earliest a slot has (first shred received) is the one that advances it.
        onSlot: (slot, status) => {
          // A dead slot (skipped) goes to the receipts' skip detector on the main thread (docs/receipts.md).
          if (status === SlotStatus.DEAD) this.postStatus({ type: 'geyser-dead', slot });
          this.source.grpcSlotSeen(slot);
          this.onSlot(slot);
        },
        onState: (s) => {
          if (s.kind === 'stalled') this.log.warn({ event: 'grpc_stream_stalled', silentMs: s.silentMs, grpcUrl: urlForLog(g.url) }, 'gRPC stream stalled: reopening it');
          this.source.grpcStateChanged(s.kind);
        },
        stallMs: () => g.stallSlots * this.slotTime.slotMs,
        // The landing tracker's signatures (main thread): their statuses go straight back to it.
        onTxStatus: (signature, slot, err) => this.postStatus({ type: 'geyser-landed', signature, slot, err }),
      });
      this.geyser.start();
    }
    this.every(SLOT_SOURCE_STATUS_MS, () => this.postStatus(this.source.status()));
    this.share?.start();
    this.every(t.slotPollIntervalMs, () => this.poll());
    this.every(t.clusterRefreshMs, () => void this.refreshCluster());
    if (t.probe.enabled) this.every(t.probe.intervalMs, () => void this.probe());
    this.firstProbe = t.probe.enabled;
    this.every(Math.min(t.measurementTtlMs, 10_000), () => {
      this.store.prune(Date.now());
      this.planner.prune(Date.now());
    });
    void this.refreshCluster();
    this.poll();
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.ws?.close();
    this.geyser?.close();
    void this.share?.stop();
  }

  /** A batch from an egress worker (relayed by the main thread): filed by the roles of each connection's address. */
  onMessage(m: unknown): void {
    if (isGeyserWatch(m)) {
      this.geyser?.watch(m.signatures);
      return;
    }
    if (!isRouteMeasurementBatch(m)) return;
    const now = Date.now();
    const lookup = {
      identityOfTarget: (target: string) => this.identityByTarget.get(target),
      staticPathOfPeer: (target: string) => this.staticPathByPeer.get(target),
    };
    for (const it of m.items) {
      if (typeof it !== 'object' || it === null) continue;
      for (const key of classify(it, lookup)) this.store.add(key, it, now);
      // A live egress connection: the probe leaves that validator alone (its budget is the egress's).
      if (it.provider === undefined && typeof it.target === 'string') this.planner.noteEgress(it.target, now);
    }
  }

  private every(ms: number, fn: () => void): void {
    const t = setInterval(fn, ms);
    this.timers.push(t);
  }

  private warnOnce(kind: string, err: unknown): void {
    if (this.warned.has(kind)) return;
    this.warned.add(kind);
    this.log.warn({ err: (err as Error).message ?? String(err), kind }, 'telemetry input failed; retrying');
  }

  private poll(): void {
    if (this.stopped || this.pollBusy || this.ws?.isSubscribed || this.source.current === 'grpc') return;
    this.pollBusy = true;
    this.rpc.getSlot().then(
      (s) => {
        this.pollBusy = false;
        this.warned.delete('getSlot');
        this.onSlot(s);
      },
      (err: unknown) => {
        this.pollBusy = false;
        this.warnOnce('getSlot', err);
      },
    );
  }

  private onSlot(s: number): void {
    if (this.stopped) return;
    if (this.slot >= 0 && s < this.slot - CLUSTER_RESET_SLOTS) this.resetCluster(s);
    if (s <= this.slot) return;
    // performance.now(): a wall clock stepped by NTP must not read as a slow or fast slot.
    this.slotTime.observe(s, performance.now());
    this.slot = s;
    if (this.needSchedule()) void this.fetchSchedule();
    this.publish();
  }

  /**
   * The cluster's slot went far back: the upstream is a new cluster (the embedded localnet restarted, or the operator
   * pointed the same URL at another one). Its schedule, nodes and TPU ports are not the old ones: forget them and load
   * them again, instead of ignoring every slot until the new cluster passes the old one's.
   */
  private resetCluster(s: number): void {
    this.log.warn({ event: 'cluster_reset', fromSlot: this.slot, toSlot: s }, 'the upstream cluster restarted: reloading its schedule and nodes');
    this.slot = -1;
    this.source.reset();
    this.slotTime.reset(); // a new cluster may run at another slot time (the localnet restarted with --slot-ms)
    this.epochs = [];
    this.epochLength = 0;
    void this.refreshCluster();
  }

  /** True when the slot's epoch or the next one is not loaded. */
  private needSchedule(): boolean {
    const e = this.epochOf(this.slot);
    if (e === undefined) return true;
    return this.epochs.indexOf(e) === this.epochs.length - 1; // no next epoch yet
  }

  private epochOf(slot: number): EpochSchedule | undefined {
    for (const e of this.epochs) if (slot >= e.first && slot < e.first + e.length) return e;
    return undefined;
  }

  private async fetchSchedule(): Promise<void> {
    if (this.fetchingSchedule || this.stopped) return;
    this.fetchingSchedule = true;
    try {
      let cur = this.epochOf(this.slot);
      if (cur === undefined) {
        const info: EpochInfo = await this.rpc.getEpochInfo();
        const first = info.absoluteSlot - info.slotIndex;
        this.epochLength = info.slotsInEpoch;
        cur = await this.loadEpoch(first, info.slotsInEpoch);
        if (cur === undefined) return;
      }
      const nextFirst = cur.first + cur.length;
      if (this.epochOf(nextFirst) === undefined) await this.loadEpoch(nextFirst, this.epochLength || cur.length);
      this.epochs = this.epochs.filter((e) => e.first + e.length > this.slot - this.d.telemetry.lookbackSlots - this.epochLength);
      this.warned.delete('getLeaderSchedule');
    } catch (err) {
      this.warnOnce('getLeaderSchedule', err);
      setTimeout(() => this.needSchedule() && void this.fetchSchedule(), RETRY_MS).unref();
    } finally {
      this.fetchingSchedule = false;
    }
  }

  private async loadEpoch(first: number, length: number): Promise<EpochSchedule | undefined> {
    const sched = await this.rpc.getLeaderSchedule(first);
    if (sched === null) return undefined; // not known yet (the next epoch early on): retried on a later slot
    const leaders = new Array<string>(length);
    for (const [identity, offsets] of Object.entries(sched)) for (const o of offsets) if (o < length) leaders[o] = identity;
    const e: EpochSchedule = { first, length, leaders };
    this.epochs.push(e);
    this.epochs.sort((a, b) => a.first - b.first);
    this.log.info({ event: 'leader_schedule_loaded', firstSlot: first, slots: length, leaders: Object.keys(sched).length }, 'leader schedule loaded');
    this.publish();
    return e;
  }

  private kindsLogged = '';

  private async refreshCluster(): Promise<void> {
    try {
      const [nodes, stakes] = await Promise.all([this.rpc.getClusterNodes(), this.rpc.getStakes()]);
      this.nodes = nodes;
      this.stakes = stakes;
      // What the cluster says each node is (a 0.x version: Firedancer); logged when the mix changes.
      const kinds = countKinds(this.rpc.kinds);
      if (JSON.stringify(kinds) !== this.kindsLogged) {
        this.kindsLogged = JSON.stringify(kinds);
        this.log.info({ event: 'cluster_leader_kinds', ...kinds }, 'cluster nodes by TPU kind (getClusterNodes version)');
      }
      this.identityByTarget = new Map([...nodes].filter(([, t]) => t !== null).map(([id, t]) => [t as string, id]));
      this.warned.delete('cluster');
    } catch (err) {
      this.warnOnce('cluster', err);
      if (!this.stopped) setTimeout(() => void this.refreshCluster(), RETRY_MS * 4).unref();
    }
  }

  leaderAt(slot: number): string | undefined {
    const e = this.epochOf(slot);
    return e === undefined ? undefined : e.leaders[slot - e.first];
  }

  private async probe(): Promise<void> {
    if (this.probing || this.slot < 0) return;
    this.probing = true;
    try {
      const candidates: ProbeTarget[] = [];
      const seen = new Set<string>();
      const p = this.d.telemetry.probe;
      for (let s = this.slot; s < this.slot + this.d.telemetry.horizonSlots && candidates.length < p.leaders; s++) {
        const id = this.leaderAt(s);
        if (id === undefined) break;
        const tpu = this.nodes.get(id);
        if (seen.has(id) || tpu == null) continue;
        seen.add(id);
        candidates.push({ identity: id, tpuQuic: tpu });
      }
      const targets = this.planner.plan(candidates, Date.now());
      this.probeHandshakes += targets.length;
      const results = await this.prober(targets, p.timeoutMs);
      const now = Date.now();
      for (const r of results) if (r.rttMs !== null) this.store.add(directKey(r.identity), { handshakeRttMs: r.rttMs }, now);
    } catch (err) {
      this.warnOnce('probe', err);
    } finally {
      this.probing = false;
    }
  }

  /** Measured one-way hops of the static / partner paths, in hundredths of a ms (shared in a cluster). */
  private measuredHops(now: number): Record<string, number> {
    const out: Record<string, number> = {};
    for (const p of this.paths) {
      if (p.kind === 'direct') continue;
      const m = this.store.get(pathKey(p.provider), now);
      if (m !== undefined) out[p.provider] = Math.round((m.handshakeRttMs / 2 + (Number.isNaN(m.sendLatencyMs) ? 0 : m.sendLatencyMs)) * 100);
    }
    return out;
  }

  /** Build and publish the snapshot for the current slot (no-op until the slot's schedule is known). */
  publish(): void {
    const t = this.d.telemetry;
    if (this.stopped || this.slot < 0 || this.leaderAt(this.slot) === undefined) return;
    let first = Math.max(0, this.slot - t.lookbackSlots);
    while (this.leaderAt(first) === undefined) first++;
    const now = Date.now();
    const leaders: LeaderInfo[] = [];
    const indexOf = new Map<string, number>();
    const tails: string[] = [];
    const rows: string[] = [];
    const leaderIndex: number[] = [];
    const share = this.share;
    // This region's measured figures per leader, for the other regions' relays (cluster only).
    const ownFigures: Record<string, [number, number, number]> = {};
    for (let s = first; s < this.slot + t.horizonSlots; s++) {
      const id = this.leaderAt(s);
      if (id === undefined) break;
      let li = indexOf.get(id);
      if (li === undefined) {
        li = leaders.length;
        indexOf.set(id, li);
        const tpuQuic = this.nodes.get(id) ?? null;
        const stake = this.stakes.get(id) ?? 0;
        leaders.push({ identity: id, tpuQuic, stake });
        tails.push(
          this.model.tail({
            identity: id,
            stake,
            tpuQuic,
            location: this.locations.lookup(id, tpuQuic),
            direct: this.store.get(directKey(id), now),
            hop: (provider) => this.store.get(pathKey(provider), now),
            remote: share === null ? undefined : (region) => share.figures(region, id, now),
          }, share === null ? undefined : (f) => (ownFigures[id] = [f.pingH, f.txH, f.atMs])),
        );
      }
      leaderIndex.push(li);
      rows.push(rowText(s, tails[li]));
    }
    try {
      this.writer.publish({
        schemaVersion: t.publishSchemaVersion,
        firstSlot: first,
        snapshotSlot: this.slot,
        generatedAtUnixMs: now,
        slotMs: this.slotTime.slotMs,
        slotMsSamples: this.slotTime.samples,
        leaders,
        leaderIndex,
        rows,
      });
      this.publishes++;
      if (share !== null) share.setOwn(this.slot, ownFigures, this.measuredHops(now));
      if (this.firstProbe && this.nodes.size > 0) {
        this.firstProbe = false;
        void this.probe();
      }
    } catch (err) {
      this.warnOnce('publish', err);
    }
  }
}
