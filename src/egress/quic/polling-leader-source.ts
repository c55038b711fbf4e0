// PollingLeaderSource: a LeaderSource (src/telemetry/leader-source.ts) inside each egress worker that polls the
// upstream JSON-RPC itself (egress worker; cold timers, HOT reads: currentSlot/leaderAt answer from memory).
// Used only when the telemetry thread is disabled (telemetry.enabled: false); otherwise the workers read the shared
// snapshot (SnapshotLeaderSource). Both implement the same interface: direct-route.ts's factory picks one.
//   getSlot              every slotPollMs (processed commitment); the slot is extrapolated between polls from the
//                        slot duration measured from the polls (src/telemetry/slot-duration.ts; its documented
//                        fallback until then), at most 2 slots ahead of the last answer
//   getSlotLeaders       when fewer than LEADER_AHEAD_MIN slots ahead are known (LEADER_FETCH slots at a time)
//   getClusterNodes      every NODES_REFRESH_MS (identity -> tpuQuic)
//   getVoteAccounts      every NODES_REFRESH_MS (identity -> activated stake)
// Failures are logged once per kind and retried on the next tick; ageMs() grows so the scheduler fails closed.
import type { Logger } from '../../log/logger.js';
import type { LeaderInfo, LeaderSource } from '../../telemetry/leader-source.js';
import { SlotDurationEstimator } from '../../telemetry/slot-duration.js';

/** Slots fetched per getSlotLeaders call (Agave MAX_GET_SLOT_LEADERS is 5000). */
const LEADER_FETCH = 512;
/** Refetch leaders when fewer than this many slots ahead of the current slot are known. */
const LEADER_AHEAD_MIN = 128;
/** Cluster nodes / stakes change rarely: refresh every 30 s. */
const NODES_REFRESH_MS = 30_000;
/** Give up on one RPC call after this long. */
const RPC_TIMEOUT_MS = 2_000;
/** Extrapolate at most this many slots past the last observed one (a stalled upstream must not invent slots). */
const MAX_EXTRAPOLATED_SLOTS = 2;

export interface PollingLeaderSourceOptions {
  readonly rpcUrl: string;
  readonly slotPollMs: number;
  readonly log: Logger;
}

export class PollingLeaderSource implements LeaderSource {
  private slot = -1;
  private slotSeenAtMs = 0;
  /** Slot duration from this source's own getSlot answers (the telemetry thread, which measures it, is off). */
  private readonly slotTime = new SlotDurationEstimator();
  private leadersFrom = 0;
  private leaders: string[] = [];
  private readonly infoByIdentity = new Map<string, LeaderInfo>();
  private nodesAtMs = -Infinity;
  private fetchingLeaders = false;
  private fetchingNodes = false;
  private slotTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly warned = new Set<string>();
  private rpcId = 0;
  private readyResolve!: () => void;
  /** Resolves once a slot, the schedule around it and the cluster nodes are known. */
  readonly ready: Promise<void> = new Promise((r) => (this.readyResolve = r));

  constructor(private readonly o: PollingLeaderSourceOptions) {}

  start(): void {
    if (this.slotTimer !== null || this.closed) return;
    void this.pollSlot();
  }

  close(): void {
    this.closed = true;
    if (this.slotTimer !== null) clearTimeout(this.slotTimer);
    this.slotTimer = null;
  }

  // ---- LeaderSource (hot) ----

  currentSlot(): number {
    if (this.slot < 0) return -1;
    const ahead = Math.floor((Date.now() - this.slotSeenAtMs) / this.slotTime.slotMs);
    return this.slot + (ahead > MAX_EXTRAPOLATED_SLOTS ? MAX_EXTRAPOLATED_SLOTS : ahead < 0 ? 0 : ahead);
  }

  leaderAt(slot: number): LeaderInfo | undefined {
    const i = slot - this.leadersFrom;
    if (i < 0 || i >= this.leaders.length) return undefined;
    const id = this.leaders[i];
    return this.infoByIdentity.get(id) ?? { identity: id, tpuQuic: null, stake: 0 };
  }

  ageMs(): number {
    return this.slot < 0 ? Infinity : Date.now() - this.slotSeenAtMs;
  }

  // ---- polling (cold) ----

  private readonly pollSlot = async (): Promise<void> => {
    if (this.closed) return;
    try {
      const s = (await this.rpc('getSlot', [{ commitment: 'processed' }])) as number;
      const now = Date.now();
      if (typeof s === 'number' && s > this.slot) {
        this.slotTime.observe(s, now);
        this.slot = s;
        this.slotSeenAtMs = now;
      } else if (s === this.slot) {
        // Same slot: the extrapolation must not run ahead of what upstream says for long.
        const slotMs = this.slotTime.slotMs;
        if (now - this.slotSeenAtMs > slotMs * MAX_EXTRAPOLATED_SLOTS) this.slotSeenAtMs = now - slotMs;
      }
      if (this.slot - this.leadersFrom + LEADER_AHEAD_MIN > this.leaders.length) void this.fetchLeaders();
      if (now - this.nodesAtMs > NODES_REFRESH_MS) void this.fetchNodes();
    } catch (err) {
      this.warnOnce('getSlot', err);
    }
    if (!this.closed) this.slotTimer = setTimeout(this.pollSlot, this.o.slotPollMs);
  };

  private async fetchLeaders(): Promise<void> {
    if (this.fetchingLeaders || this.slot < 0) return;
    this.fetchingLeaders = true;
    try {
      const from = Math.max(0, this.slot - 8);
      const list = (await this.rpc('getSlotLeaders', [from, LEADER_FETCH])) as string[];
      if (Array.isArray(list)) {
        this.leadersFrom = from;
        this.leaders = list;
        this.checkReady();
      }
    } catch (err) {
      this.warnOnce('getSlotLeaders', err);
    } finally {
      this.fetchingLeaders = false;
    }
  }

  private async fetchNodes(): Promise<void> {
    if (this.fetchingNodes) return;
    this.fetchingNodes = true;
    try {
      const [nodes, votes] = await Promise.all([
        this.rpc('getClusterNodes', []) as Promise<{ pubkey: string; tpuQuic?: string | null }[]>,
        (this.rpc('getVoteAccounts', []) as Promise<{ current: { nodePubkey: string; activatedStake: number }[] }>).catch(() => null),
      ]);
      const stake = new Map<string, number>();
      for (const v of votes?.current ?? []) stake.set(v.nodePubkey, (stake.get(v.nodePubkey) ?? 0) + v.activatedStake);
      this.infoByIdentity.clear();
      for (const n of nodes) {
        this.infoByIdentity.set(n.pubkey, Object.freeze({ identity: n.pubkey, tpuQuic: n.tpuQuic ?? null, stake: stake.get(n.pubkey) ?? 0 }));
      }
      this.nodesAtMs = Date.now();
      this.checkReady();
    } catch (err) {
      this.warnOnce('getClusterNodes', err);
    } finally {
      this.fetchingNodes = false;
    }
  }

  private checkReady(): void {
    if (this.leaders.length > 0 && this.nodesAtMs > 0) this.readyResolve();
  }

  private warnOnce(what: string, err: unknown): void {
    if (this.warned.has(what)) return;
    this.warned.add(what);
    this.o.log.warn({ method: what, err: err instanceof Error ? err.message : String(err) }, 'leader source: upstream call failed (retrying)');
  }

  private async rpc(method: string, params: unknown[]): Promise<unknown> {
    const res = await fetch(this.o.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++this.rpcId, method, params }),
      signal: AbortSignal.timeout(RPC_TIMEOUT_MS),
    });
    const doc = (await res.json()) as { result?: unknown; error?: { message?: string } };
    if (doc.error !== undefined) throw new Error(`${method}: ${doc.error.message ?? 'error'}`);
    this.warned.delete(method);
    return doc.result;
  }
}
