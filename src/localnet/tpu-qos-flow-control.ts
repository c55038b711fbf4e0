// Agave's stake-weighted QoS by QUIC flow control, for one localnet TPU listener (localnet process, main thread;
// admitConnection is cold, admitStream HOT: once per stream). The model of agave PR #10666
// (streamer/src/nonblocking/swqos_max_streams.rs, load_debt_tracker.rs), with its defaults:
// - saturation: one load-debt token bucket per listener (the leader's capacity, max_streams_per_ms x 1000 streams/s,
//   burst a tenth of a second of it, refilled continuously); every stream read takes a token and the bucket may go
//   into debt. Saturated when the bucket reaches 0, recovered only at 90% of the burst (hysteresis: credit already
//   granted cannot be taken back);
// - a peer is staked when its certificate key has at least 1 / (max_streams_per_ms x 100) of the total stake,
//   otherwise unstaked (Agave demotes smaller stakes);
// - MAX_STREAMS of a connection, from its RTT clamped to 1..200 ms: not saturated, base x RTT / 100 ms (base 2048
//   staked, 20 unstaked; at least 1); saturated, unstaked 0 ("parked"), staked capacity x stake share x RTT divided
//   by the peer's open connections (at least 1, at most the unsaturated figure);
// - a peer opening more than maxConnectionsPerIpPerMinute connections a minute is closed with code 2 (the rate
//   limiter quic.rs runs in front of either QoS, as in tpu-qos.ts);
// - connections: at most 16 per staked peer and 8 per unstaked peer (code 4 "too_many" beyond), at most
//   maxStakedConnections / maxUnstakedConnections in all. A full unstaked table drops its oldest connections down to
//   90% (code 1 "dropped") to make room; a full staked table takes the newcomer into the unstaked table instead
//   (Agave's fallback); maxUnstakedConnections 0 refuses unstaked peers with code 2 "disallowed".
// The gap with Agave (docs/landing.md "QoS models"): Agave calls quinn's set_max_concurrent_uni_streams(n) on each
// connection; the quiche binding we run (@matrixai/quic) exposes only the initial limit (initial_max_streams_uni, one
// value for the whole listener, sent before the client's certificate is known) and returns a stream's credit by
// itself once the stream is read to its end. So MAX_STREAMS = n is modelled by what it yields: a connection gets n
// stream credits per RTT (n in flight, each returned one RTT after it was read), i.e. its streams are read at most at
// n / RTT per second (a token bucket of n refilled at n per RTT); a stream over that is left unread, so the peer's
// credit is not returned and its client sees peerStreamsLeftUni() reach 0 exactly as under a real MAX_STREAMS. A
// parked connection's streams stay unread until the listener recovers (re-checked every PARK_RECHECK_MS). The RTT is
// the listener's modelled path RTT (2 x its one-way delay), not quiche's measured one: on one host the measured RTT
// is ~0.1 ms, which Agave would clamp to 1 ms anyway; the modelled delay is what a scenario means by distance.
import type { LocalnetQosOptions } from './network-options.js';
import type { QosPeer } from './tpu-qos.js';

/** Agave swqos_max_streams.rs figures. */
export const SWQOS_REFERENCE_RTT_MS = 100;
export const SWQOS_MIN_RTT_MS = 1;
export const SWQOS_MAX_RTT_MS = 200;
export const SWQOS_BASE_MAX_STREAMS_STAKED = 2048;
export const SWQOS_BASE_MAX_STREAMS_UNSTAKED = 20;
/** DEFAULT_MAX_STREAMS_PER_MS (streamer/src/quic.rs): a leader's capacity is 500,000 streams per second. */
export const AGAVE_MAX_STREAMS_PER_MS = 500;
export const AGAVE_MAX_STAKED_CONNECTIONS = 2_000;
export const AGAVE_MAX_UNSTAKED_CONNECTIONS = 500;
/** How often a parked connection asks again (our choice: Agave re-checks at the top of its connection loop). */
export const PARK_RECHECK_MS = 20;

const CLOSE_DROPPED = { code: 1, reason: 'dropped' } as const;
const CLOSE_DISALLOWED = { code: 2, reason: 'disallowed' } as const;
const CLOSE_TOO_MANY = { code: 4, reason: 'too_many' } as const;

export interface FlowControlCounters {
  /** Connections closed with code 2 for the per-peer connection rate (quic.rs's rate limiter, both models). */
  rateLimited: number;
  /** Connections closed with code 4 (per-peer cap). */
  tooMany: number;
  /** Connections refused with code 2 (no unstaked connections allowed). */
  disallowed: number;
  /** Unstaked connections dropped (code 1) to make room in a full unstaked table. */
  evicted: number;
  /** Times a stream was left unread because its connection had used its credit for this RTT. */
  throttled: number;
  /** Times a stream was left unread because its unstaked connection is parked (MAX_STREAMS 0). */
  parked: number;
  /** Entries into saturation (as of the last stream read). */
  saturations: number;
  /** Streams read while saturated (staked peers' quota). */
  saturatedStreams: number;
  stakedConnections: number;
  unstakedConnections: number;
}

/** The load-debt estimator (load_debt_tracker.rs): streams per second, burst, 90% recovery. Time in ms. */
export class LoadDebt {
  private bucket: number;
  private lastMs: number;
  saturated = false;
  /** Times it entered saturation. */
  entries = 0;
  private readonly recovery: number;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    nowMs: number,
  ) {
    this.bucket = burst;
    this.lastMs = nowMs;
    this.recovery = (burst * 9) / 10;
  }

  private refill(nowMs: number): void {
    const dt = nowMs - this.lastMs;
    if (dt <= 0) return;
    this.lastMs = nowMs;
    this.bucket = Math.min(this.burst, this.bucket + (this.perSecond * dt) / 1000);
    this.settle();
  }

  private settle(): void {
    if (!this.saturated && this.bucket <= 0) {
      this.saturated = true;
      this.entries++;
    } else if (this.saturated && this.bucket >= this.recovery) this.saturated = false;
  }

  /** One stream read (the bucket may go into debt). */
  acquire(nowMs: number): void {
    this.refill(nowMs);
    this.bucket -= 1;
    this.settle();
  }

  isSaturated(nowMs: number): boolean {
    this.refill(nowMs);
    return this.saturated;
  }

  get level(): number {
    return this.bucket;
  }
}

interface Peer {
  /** Stake in lamports when staked, null when unstaked (or demoted). */
  readonly stake: bigint | null;
  open: number;
  /** Connection-rate token bucket (connection_rate_limiter.rs, in front of every QoS). */
  tokens: number;
  refilledMs: number;
}

interface Conn {
  readonly id: number;
  readonly peer: Peer;
  /** In the staked table (false: an unstaked peer, or a staked one that fell back to the unstaked table). */
  readonly stakedTable: boolean;
  readonly openedMs: number;
  /** Stream credit left this RTT (a token bucket of MAX_STREAMS refilled at MAX_STREAMS per RTT). */
  credit: number;
  creditMs: number;
}

/** What a listener needs from its QoS (both models). */
export interface ListenerQos {
  admitConnection(peer: QosPeer, nowMs?: number): { code: number; reason: string } | null;
  connectionClosed(peer: QosPeer): void;
  admitStream(peer: QosPeer, nowMs?: number): number;
  /** Set by the listener: close another connection (eviction). */
  evict?: (id: number, code: number, reason: string) => void;
}

export class FlowControlQos implements ListenerQos {
  readonly counters: FlowControlCounters = {
    rateLimited: 0,
    tooMany: 0,
    disallowed: 0,
    evicted: 0,
    throttled: 0,
    parked: 0,
    saturations: 0,
    saturatedStreams: 0,
    stakedConnections: 0,
    unstakedConnections: 0,
  };
  evict?: (id: number, code: number, reason: string) => void;
  readonly load: LoadDebt;
  private readonly capacityTps: number;
  private readonly totalStake: bigint;
  private readonly minStakeDivisor: bigint;
  private readonly rttMs: number;
  private readonly baseStaked: number;
  private readonly baseUnstaked: number;
  private readonly maxPerStaked: number;
  private readonly maxPerUnstaked: number;
  private readonly maxStakedConns: number;
  private readonly maxUnstakedConns: number;
  private readonly perMinute: number;
  private readonly peers = new Map<string, Peer>();
  private readonly conns = new Map<number, Conn>();
  private sawSaturated = false;
  /** Unstaked-table connections in admission order (oldest first) for pruning. */
  private readonly unstakedOrder: number[] = [];

  constructor(
    opts: LocalnetQosOptions,
    private readonly stakes: ReadonlyMap<string, bigint>,
    /** The listener's path RTT (ms), before Agave's clamp. */
    pathRttMs: number,
    nowMs: number = performance.now(),
  ) {
    const perMs = opts.maxStreamsPerMs ?? AGAVE_MAX_STREAMS_PER_MS;
    this.capacityTps = opts.capacityTps ?? perMs * 1000;
    // Agave: burst = a tenth of a second of capacity.
    this.load = new LoadDebt(this.capacityTps, Math.max(1, this.capacityTps / 10), nowMs);
    let total = 0n;
    for (const s of stakes.values()) total += s;
    this.totalStake = total;
    this.minStakeDivisor = BigInt(Math.max(1, Math.round(perMs * 100)));
    this.rttMs = Math.min(SWQOS_MAX_RTT_MS, Math.max(SWQOS_MIN_RTT_MS, pathRttMs));
    this.baseStaked = opts.baseMaxStreamsStaked ?? SWQOS_BASE_MAX_STREAMS_STAKED;
    this.baseUnstaked = opts.baseMaxStreamsUnstaked ?? SWQOS_BASE_MAX_STREAMS_UNSTAKED;
    this.maxPerStaked = opts.maxConnectionsPerStakedPeer ?? 16;
    this.maxPerUnstaked = opts.maxConnectionsPerUnstakedPeer ?? 8;
    this.maxStakedConns = opts.maxStakedConnections ?? AGAVE_MAX_STAKED_CONNECTIONS;
    this.maxUnstakedConns = opts.maxUnstakedConnections ?? AGAVE_MAX_UNSTAKED_CONNECTIONS;
    this.perMinute = opts.maxConnectionsPerIpPerMinute ?? 8;
  }

  /** The stake a peer is counted with, or null: unknown, or below 1 / (max_streams_per_ms x 100) of the total. */
  stakeOf(identity: string | null): bigint | null {
    if (identity === null) return null;
    const s = this.stakes.get(identity);
    if (s === undefined || s <= 0n || s * this.minStakeDivisor < this.totalStake) return null;
    return s;
  }

  /**
   * compute_max_streams_for_rtt: the MAX_STREAMS of a connection of a peer with `stake` (null: unstaked) and
   * `connections` open, at `rttMs` (clamped), saturated or not. 0 = parked.
   */
  maxStreams(stake: bigint | null, connections: number, saturated: boolean, rttMs: number = this.rttMs): number {
    const rtt = Math.min(SWQOS_MAX_RTT_MS, Math.max(SWQOS_MIN_RTT_MS, rttMs));
    const scale = rtt / SWQOS_REFERENCE_RTT_MS;
    const stakedUnsat = Math.trunc(this.baseStaked * scale);
    const unstakedUnsat = Math.trunc(this.baseUnstaked * scale);
    if (!saturated) return Math.max(1, stake === null ? unstakedUnsat : stakedUnsat);
    if (stake === null) return 0;
    const shareTps = this.totalStake === 0n ? 0 : Number((BigInt(Math.round(this.capacityTps)) * stake) / this.totalStake);
    const quota = Math.trunc((shareTps * rtt) / 1000);
    const perConn = Math.max(1, Math.trunc(quota / Math.max(1, connections)));
    return Math.min(perConn, Math.max(1, stakedUnsat));
  }

  admitConnection(peer: QosPeer, nowMs: number = performance.now()): { code: number; reason: string } | null {
    const key = `${peer.remoteAddress}/${peer.identity ?? ''}`;
    let p = this.peers.get(key);
    if (p === undefined) {
      p = { stake: this.stakeOf(peer.identity), open: 0, tokens: this.perMinute, refilledMs: nowMs };
      this.peers.set(key, p);
    }
    p.tokens = Math.min(this.perMinute, p.tokens + ((nowMs - p.refilledMs) * this.perMinute) / 60_000);
    p.refilledMs = nowMs;
    if (p.tokens < 1) {
      this.counters.rateLimited++;
      return CLOSE_DISALLOWED;
    }
    p.tokens -= 1;
    if (p.open >= (p.stake !== null ? this.maxPerStaked : this.maxPerUnstaked)) {
      this.counters.tooMany++;
      return CLOSE_TOO_MANY;
    }
    let stakedTable = false;
    if (p.stake !== null && this.counters.stakedConnections < this.maxStakedConns) stakedTable = true;
    if (!stakedTable) {
      // Unstaked table (or a staked peer's fallback into it).
      if (this.maxUnstakedConns === 0) {
        this.counters.disallowed++;
        return CLOSE_DISALLOWED;
      }
      if (this.counters.unstakedConnections >= this.maxUnstakedConns) this.pruneUnstaked();
    }
    p.open++;
    if (stakedTable) this.counters.stakedConnections++;
    else {
      this.counters.unstakedConnections++;
      this.unstakedOrder.push(peer.id);
    }
    this.conns.set(peer.id, { id: peer.id, peer: p, stakedTable, openedMs: nowMs, credit: -1, creditMs: nowMs });
    return null;
  }

  /** prune_oldest down to 90% of the unstaked table (Agave PRUNE_TABLE_TO_PERCENTAGE). */
  private pruneUnstaked(): void {
    const keep = Math.floor((this.maxUnstakedConns * 9) / 10);
    while (this.counters.unstakedConnections > keep && this.unstakedOrder.length > 0) {
      const id = this.unstakedOrder.shift()!;
      const c = this.conns.get(id);
      if (c === undefined) continue;
      this.forget(c);
      this.counters.evicted++;
      this.evict?.(id, CLOSE_DROPPED.code, CLOSE_DROPPED.reason);
    }
  }

  private forget(c: Conn): void {
    this.conns.delete(c.id);
    c.peer.open--;
    if (c.stakedTable) this.counters.stakedConnections--;
    else {
      this.counters.unstakedConnections--;
      const i = this.unstakedOrder.indexOf(c.id);
      if (i >= 0) this.unstakedOrder.splice(i, 1);
    }
  }

  connectionClosed(peer: QosPeer): void {
    const c = this.conns.get(peer.id);
    if (c !== undefined) this.forget(c);
  }

  /** Before reading a new stream: 0 = read it now (a token taken), else ms until this connection may have credit. */
  admitStream(peer: QosPeer, nowMs: number = performance.now()): number {
    const c = this.conns.get(peer.id);
    if (c === undefined) return 0;
    const saturated = this.load.isSaturated(nowMs);
    if (saturated) this.sawSaturated = true;
    const n = this.maxStreams(c.peer.stake, c.peer.open, saturated);
    if (n === 0) {
      this.counters.parked++;
      return PARK_RECHECK_MS;
    }
    // n credits per RTT: refill, capped at n (the window a MAX_STREAMS of n allows in flight).
    if (c.credit < 0) c.credit = n;
    else c.credit = Math.min(n, c.credit + ((nowMs - c.creditMs) * n) / this.rttMs);
    c.creditMs = nowMs;
    if (c.credit < 1) {
      this.counters.throttled++;
      return Math.max(1, Math.ceil(((1 - c.credit) * this.rttMs) / n));
    }
    c.credit -= 1;
    this.load.acquire(nowMs);
    if (this.load.saturated) this.sawSaturated = true;
    this.counters.saturations = this.load.entries;
    if (saturated) this.counters.saturatedStreams++;
    return 0;
  }

  /** Whether the listener is saturated now. */
  saturated(nowMs: number = performance.now()): boolean {
    return this.load.isSaturated(nowMs);
  }

  /** Whether it was saturated at any moment since the last call (the bench's per-slot load bands). */
  saturatedSinceLastAsked(nowMs: number = performance.now()): boolean {
    const was = this.sawSaturated || this.load.isSaturated(nowMs);
    this.sawSaturated = false;
    return was;
  }
}
