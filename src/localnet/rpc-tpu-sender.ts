// The facade's send-transaction service (localnet process, main thread; send() per sendTransaction, onSlot once per
// slot). What an Agave RPC node's send-transaction-service does with a transaction it accepted:
// - forward it at once over QUIC to the TPUs of the next `leaderForwardCount` DISTINCT leaders starting with the
//   current slot's (Agave DEFAULT_LEADER_FORWARD_COUNT = 2: the current leader and the one after it), with an
//   unstaked identity of its own;
// - keep it in a retry pool (at most 10,000, Agave's MAX_TRANSACTION_RETRY_POOL_SIZE) and resend it to the then
//   current leaders every `retryRateMs` (Agave 2,000 ms) until it landed, its blockhash expired, or it was resent
//   maxRetries times (the request's maxRetries, else `defaultMaxRetries`, else no limit but the blockhash).
// One connection per validator, opened on first use and kept (like a connection cache); a closed connection is
// reopened on the next send. Each is the relay's own egress connection worker (src/egress/quic/connection-worker.ts,
// without its reconnect: the next send opens a new one), which owns the one bounded queue of transactions waiting
// for the handshake or stream credit. The transaction then goes through the listener (with that validator's link:
// delay, loss, QoS) and the TPU gate like any other: the facade never executes it directly. The node's distance from
// its clients (rpc.oneWayDelayMs) is applied by the facade server before send() is called.
import { ConnectionWorker } from '../egress/quic/connection-worker.js';
import { createLogger } from '../log/logger.js';
import { KEEP_ALIVE_MS, MAX_IDLE_TIMEOUT_MS, createIdentityCertificate, createRandomIdentityCertificate, type IdentityCertificate } from '../quic/index.js';
import { Errors, RelayError } from '../errors/registry.js';
import type { Bank } from './bank.js';
import { NUM_CONSECUTIVE_LEADER_SLOTS, type LeaderSchedule } from './leader-schedule.js';
import { AGAVE_STS_LEADER_FORWARD_COUNT, AGAVE_STS_RETRY_POOL_SIZE, AGAVE_STS_RETRY_RATE_MS, type LocalnetRpcOptions } from './network-options.js';
import type { SlotClock } from './slot-clock.js';
import { parseWireTransaction } from './wire.js';

export interface TpuTarget {
  readonly identity: string;
  readonly host: string;
  readonly port: number;
}

/** Per leader connection: transactions waiting for the handshake or stream credit (the old client queue's bound). */
const MAX_QUEUED = 4096;
/** A handshake that has not completed by then failed (the QUIC client's default). */
const CONNECT_TIMEOUT_MS = 5_000;
/**
 * A queued transaction not written within this long is dropped (the retry pool resends it anyway). Longer than the
 * connect timeout, so one given during the handshake waits for its outcome; a silent leader cannot hold it forever.
 */
const STALE_AFTER_MS = 10_000;

interface Pending {
  readonly tx: Uint8Array;
  readonly blockhash: string;
  /** Resends left (Infinity = until the blockhash expires). */
  retriesLeft: number;
  nextMs: number;
}

export interface RpcSendCounters {
  /** Transactions accepted by send(). */
  sent: number;
  /** Resends from the retry pool. */
  resent: number;
  /** Left the pool because they landed / their blockhash expired / their retries ran out / the pool was full. */
  landed: number;
  expired: number;
  retriesExhausted: number;
  poolFull: number;
}

/**
 * Did the leader take `tx`? Written now, or queued on an established connection (written when credit comes back,
 * like a node's TPU client): yes at once. Queued while the handshake runs: the answer is whether it got written
 * (a down leader's handshake fails after the connect timeout). Refused (queue full, closed, too large): no.
 */
function took(w: ConnectionWorker, tx: Uint8Array): boolean | Promise<boolean> {
  const wasActive = w.state === 'active';
  const r = w.send(tx);
  if (typeof r === 'string') return r === 'sent';
  return wasActive ? true : r.then((o) => o === 'sent');
}

export class RpcTpuSender {
  readonly counters: RpcSendCounters = { sent: 0, resent: 0, landed: 0, expired: 0, retriesExhausted: 0, poolFull: 0 };
  private readonly connections = new Map<string, ConnectionWorker>();
  private readonly pool = new Map<string, Pending>();
  private identity: Promise<IdentityCertificate> | null = null;
  // Connection failures are this simulation's business (a down validator), not worth a log line per attempt.
  private readonly log = createLogger('silent', 'localnet-rpc');
  private stopped = false;
  private readonly leaderCount: number;
  private readonly retryRateMs: number;
  private readonly defaultMaxRetries: number;

  constructor(
    private readonly targets: ReadonlyMap<string, TpuTarget>,
    private readonly schedule: LeaderSchedule,
    private readonly clock: SlotClock,
    private readonly bank: Bank,
    private readonly maxTransactionBytes: number,
    opts: LocalnetRpcOptions = {},
    /** The node's QUIC identity (a 32-byte seed), e.g. a staked one; default a random (unstaked) identity. */
    private readonly identitySeed?: Uint8Array,
  ) {
    this.leaderCount = Math.max(1, opts.leaderForwardCount ?? AGAVE_STS_LEADER_FORWARD_COUNT);
    this.retryRateMs = opts.retryRateMs ?? AGAVE_STS_RETRY_RATE_MS;
    this.defaultMaxRetries = opts.defaultMaxRetries ?? Infinity;
  }

  /** The leader's connection worker; a new one (a new connection) when there is none or the last one ended. */
  private async connection(t: TpuTarget): Promise<ConnectionWorker> {
    this.identity ??= this.identitySeed !== undefined ? createIdentityCertificate(this.identitySeed) : createRandomIdentityCertificate();
    const identity = await this.identity;
    // From here to the return nothing awaits: concurrent sends share one worker.
    let w = this.connections.get(t.identity);
    if (w === undefined || w.state === 'closed') {
      w = new ConnectionWorker({
        host: t.host,
        port: t.port,
        label: t.identity,
        identity,
        maxIdleTimeoutMs: MAX_IDLE_TIMEOUT_MS,
        keepAliveMs: KEEP_ALIVE_MS,
        connectTimeoutMs: CONNECT_TIMEOUT_MS,
        reconnect: false,
        retryMinMs: 0,
        retryMaxMs: 0,
        maxQueued: MAX_QUEUED,
        staleAfterMs: STALE_AFTER_MS,
        maxTransactionBytes: this.maxTransactionBytes,
        log: this.log,
      });
      this.connections.set(t.identity, w);
    }
    return w;
  }

  /** Leaders to send to now: the next leaderForwardCount distinct leaders from the current slot on. */
  leadersNow(): string[] {
    let slot = this.clock.current;
    const out = [this.schedule.leaderAt(slot)];
    // Walk leader windows (bounded: a schedule with fewer distinct leaders than asked stops after a few windows).
    for (let w = 0; out.length < this.leaderCount && w < this.leaderCount * 8; w++) {
      slot = slot - (slot % NUM_CONSECUTIVE_LEADER_SLOTS) + NUM_CONSECUTIVE_LEADER_SLOTS;
      const l = this.schedule.leaderAt(slot);
      if (!out.includes(l)) out.push(l);
    }
    return out;
  }

  /**
   * Hand `tx` to each current leader's connection. Resolves true as soon as one leader took it (a down leader's
   * handshake, which never completes, must not hold the answer), false once every leader failed.
   */
  private forward(tx: Uint8Array): Promise<boolean> {
    const leaders = this.leadersNow();
    return new Promise((resolve) => {
      let left = leaders.length;
      const done = (ok: boolean): void => {
        left--;
        if (ok) resolve(true);
        else if (left === 0) resolve(false);
      };
      for (const leader of leaders) {
        const t = this.targets.get(leader);
        if (t === undefined) {
          done(false);
          continue;
        }
        this.connection(t)
          .then((w) => took(w, tx))
          .then(done, () => done(false)); // no connection: the other leaders may take it
      }
    });
  }

  /**
   * Resolves once the transaction was handed to at least one leader's QUIC connection (fail closed otherwise, as
   * a node whose TPU client cannot reach any leader), and keeps it for resends.
   */
  readonly send = async (tx: Uint8Array, signature: string, maxRetries?: number): Promise<void> => {
    if (this.stopped) throw new RelayError(Errors.SHUTTING_DOWN);
    this.counters.sent++;
    const retries = maxRetries ?? this.defaultMaxRetries;
    if (this.retryRateMs > 0 && retries > 0 && !this.pool.has(signature)) {
      if (this.pool.size >= AGAVE_STS_RETRY_POOL_SIZE) this.counters.poolFull++;
      else {
        const blockhash = parseWireTransaction(tx).recentBlockhash;
        this.pool.set(signature, { tx: new Uint8Array(tx), blockhash, retriesLeft: retries, nextMs: performance.now() + this.retryRateMs });
      }
    }
    if (!(await this.forward(tx))) throw new RelayError(Errors.OVERLOADED, 'Node is unhealthy: no leader TPU connection accepted the transaction');
  };

  /** Slot listener: resend what is due, drop what landed or expired. */
  onSlot(_slot: number): void {
    if (this.pool.size === 0 || this.stopped) return;
    const now = performance.now();
    for (const [sig, p] of this.pool) {
      if (this.bank.status(sig) !== undefined) {
        this.pool.delete(sig);
        this.counters.landed++;
      } else if (this.bank.blockhashSlot(p.blockhash) === undefined) {
        this.pool.delete(sig);
        this.counters.expired++;
      } else if (now >= p.nextMs) {
        if (p.retriesLeft <= 0) {
          this.pool.delete(sig);
          this.counters.retriesExhausted++;
          continue;
        }
        p.retriesLeft--;
        p.nextMs = now + this.retryRateMs;
        this.counters.resent++;
        void this.forward(p.tx);
      }
    }
  }

  /** Transactions waiting for a resend. */
  get pending(): number {
    return this.pool.size;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.pool.clear();
    await Promise.all([...this.connections.values()].map((w) => w.close(0)));
    this.connections.clear();
  }
}
