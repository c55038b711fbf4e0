// Agave's QoS for one localnet TPU listener (localnet process, main thread; admitConnection is cold, admitStream HOT:
// once per stream). The rules of Agave's streamer (streamer/src/nonblocking/quic.rs, stream_throttle.rs, the
// connection rate limiter), with its defaults:
// - a new connection from a peer that opened maxConnectionsPerIpPerMinute in the last minute (token bucket, burst =
//   the rate, refilled evenly) is closed with code 2 "disallowed";
// - a peer is staked when its certificate key is in the stake table with at least 1/50,000 of the total stake
//   (Agave's min_stake_ratio = 1 / (max_streams_per_ms 500 x 100 ms)); otherwise unstaked;
// - a connection beyond maxConnectionsPerUnstakedPeer (8) / maxConnectionsPerStakedPeer (16) open at once is closed
//   with code 4 "too_many";
// - an unstaked peer's streams are counted per 100 ms window across all its connections; at unstakedStreamsPer100Ms
//   (20: Agave's MAX_UNSTAKED_TPS 200) the listener stops reading that peer's new streams until the window ends:
//   nothing is dropped, the peer runs out of stream credit (128 concurrent streams) and waits. Staked peers are not
//   throttled (Agave throttles them only when the whole validator is near max_streams_per_ms).
// Deviation: Agave keys an unstaked peer by IP. On a localnet every sender is 127.0.0.1 (the relay, the facade's own
// send path, a bench), so a peer here is (IP, certificate key): one identity stands for one host.
import {
  AGAVE_MAX_CONNECTIONS_PER_IPADDR_PER_MINUTE,
  AGAVE_MAX_CONNECTIONS_PER_STAKED_PEER,
  AGAVE_MAX_CONNECTIONS_PER_UNSTAKED_PEER,
  AGAVE_STREAM_THROTTLING_INTERVAL_MS,
  AGAVE_UNSTAKED_STREAMS_PER_THROTTLING_INTERVAL,
  type LocalnetQosOptions,
} from './network-options.js';

/** Agave DEFAULT_MAX_STREAMS_PER_MS x STREAM_THROTTLING_INTERVAL_MS: below 1/this of the total stake is unstaked. */
const MIN_STAKE_RATIO_DIVISOR = 500 * AGAVE_STREAM_THROTTLING_INTERVAL_MS;
/** Peer entries kept before idle ones are swept. */
const MAX_IDLE_PEERS = 10_000;

/** Close codes (Agave ConnectionCloseCode). */
export const QOS_CLOSE = {
  disallowed: { code: 2, reason: 'disallowed' },
  tooMany: { code: 4, reason: 'too_many' },
} as const;

export interface QosPeer {
  readonly id: number;
  readonly remoteAddress: string;
  readonly identity: string | null;
}

export interface TpuQosCounters {
  /** Connections closed with code 2 for the per-peer connection rate. */
  rateLimited: number;
  /** Connections closed with code 4 for the per-peer connection cap. */
  tooMany: number;
  /** Times a peer's stream reads were paused until the end of its 100 ms window. */
  throttled: number;
  stakedConnections: number;
  unstakedConnections: number;
}

interface PeerState {
  readonly staked: boolean;
  open: number;
  /** Connection-rate token bucket. */
  tokens: number;
  refilledMs: number;
  /** Stream throttle window (shared by the peer's connections). */
  windowStartMs: number;
  streams: number;
}

export class TpuQos {
  evict?: (id: number, code: number, reason: string) => void;
  readonly counters: TpuQosCounters = { rateLimited: 0, tooMany: 0, throttled: 0, stakedConnections: 0, unstakedConnections: 0 };
  private readonly peers = new Map<string, PeerState>();
  /** Peer of each admitted connection (by endpoint connection id). */
  private readonly admitted = new Map<number, PeerState>();
  private readonly perMinute: number;
  private readonly maxUnstaked: number;
  private readonly maxStaked: number;
  private readonly unstakedStreams: number;
  private readonly minStake: bigint;

  constructor(
    opts: LocalnetQosOptions,
    private readonly stakes: ReadonlyMap<string, bigint>,
  ) {
    this.perMinute = opts.maxConnectionsPerIpPerMinute ?? AGAVE_MAX_CONNECTIONS_PER_IPADDR_PER_MINUTE;
    this.maxUnstaked = opts.maxConnectionsPerUnstakedPeer ?? AGAVE_MAX_CONNECTIONS_PER_UNSTAKED_PEER;
    this.maxStaked = opts.maxConnectionsPerStakedPeer ?? AGAVE_MAX_CONNECTIONS_PER_STAKED_PEER;
    this.unstakedStreams = opts.unstakedStreamsPer100Ms ?? AGAVE_UNSTAKED_STREAMS_PER_THROTTLING_INTERVAL;
    let total = 0n;
    for (const s of stakes.values()) total += s;
    // stake / total < 1 / divisor  <=>  stake * divisor < total
    this.minStake = total;
  }

  isStaked(identity: string | null): boolean {
    if (identity === null) return false;
    const s = this.stakes.get(identity);
    return s !== undefined && s > 0n && s * BigInt(MIN_STAKE_RATIO_DIVISOR) >= this.minStake;
  }

  /** After the handshake: null = admitted (counted until connectionClosed), else the close to send. */
  admitConnection(peer: QosPeer, nowMs: number = performance.now()): { code: number; reason: string } | null {
    const key = `${peer.remoteAddress}/${peer.identity ?? ''}`;
    let p = this.peers.get(key);
    if (p === undefined) {
      if (this.peers.size >= MAX_IDLE_PEERS) this.sweep(nowMs);
      p = { staked: this.isStaked(peer.identity), open: 0, tokens: this.perMinute, refilledMs: nowMs, windowStartMs: nowMs, streams: 0 };
      this.peers.set(key, p);
    }
    // Token bucket: perMinute tokens at most, one back every 60 s / perMinute.
    p.tokens = Math.min(this.perMinute, p.tokens + ((nowMs - p.refilledMs) * this.perMinute) / 60_000);
    p.refilledMs = nowMs;
    if (p.tokens < 1) {
      this.counters.rateLimited++;
      return QOS_CLOSE.disallowed;
    }
    p.tokens -= 1;
    if (p.open >= (p.staked ? this.maxStaked : this.maxUnstaked)) {
      this.counters.tooMany++;
      return QOS_CLOSE.tooMany;
    }
    p.open++;
    if (p.staked) this.counters.stakedConnections++;
    else this.counters.unstakedConnections++;
    this.admitted.set(peer.id, p);
    return null;
  }

  /** Forget peers with no connection whose connection-rate bucket is full again (bounded memory under churn). */
  private sweep(nowMs: number): void {
    for (const [k, p] of this.peers) {
      if (p.open === 0 && p.tokens + ((nowMs - p.refilledMs) * this.perMinute) / 60_000 >= this.perMinute) this.peers.delete(k);
    }
  }

  connectionClosed(peer: QosPeer): void {
    const p = this.admitted.get(peer.id);
    if (p === undefined) return;
    this.admitted.delete(peer.id);
    p.open--;
    if (p.staked) this.counters.stakedConnections--;
    else this.counters.unstakedConnections--;
    // Keep the entry while its connection-rate bucket is not full again (a reconnect must not reset it).
  }

  /** Before reading a new stream: 0 = read it now (counted), else ms until this peer's window ends. */
  admitStream(peer: QosPeer, nowMs: number = performance.now()): number {
    const p = this.admitted.get(peer.id);
    if (p === undefined || p.staked) return 0;
    const elapsed = nowMs - p.windowStartMs;
    if (elapsed > AGAVE_STREAM_THROTTLING_INTERVAL_MS) {
      p.windowStartMs = nowMs;
      p.streams = 0;
    } else if (p.streams >= this.unstakedStreams) {
      this.counters.throttled++;
      return Math.max(1, AGAVE_STREAM_THROTTLING_INTERVAL_MS - elapsed);
    }
    p.streams++;
    return 0;
  }
}
