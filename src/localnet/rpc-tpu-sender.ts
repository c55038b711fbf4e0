// The facade's send-transaction path (localnet process, main thread; per sendTransaction): what a plain RPC node
// does with a transaction it accepted: QUIC to the TPU of the current leader, and also to the next leader when the
// current slot is the last of the current leader's 4-slot window (Yellowstone Jet's "SmartFanout" rule), using an
// unstaked identity of its own. One connection per validator, opened on first use and kept (like a connection
// cache); a closed connection is reopened on the next send. The transaction then goes through the listener and
// the TPU gate like any other: the facade never executes it directly.
import { QuicClientConnection, createRandomIdentityCertificate, type IdentityCertificate } from '../quic/index.js';
import { Errors, RelayError } from '../errors/registry.js';
import { NUM_CONSECUTIVE_LEADER_SLOTS, type LeaderSchedule } from './leader-schedule.js';
import type { SlotClock } from './slot-clock.js';

export interface TpuTarget {
  readonly identity: string;
  readonly host: string;
  readonly port: number;
}

export class RpcTpuSender {
  private readonly connections = new Map<string, Promise<QuicClientConnection>>();
  private identity: IdentityCertificate | null = null;
  private stopped = false;

  constructor(
    private readonly targets: ReadonlyMap<string, TpuTarget>,
    private readonly schedule: LeaderSchedule,
    private readonly clock: SlotClock,
    private readonly maxTransactionBytes: number,
  ) {}

  private connection(t: TpuTarget): Promise<QuicClientConnection> {
    let c = this.connections.get(t.identity);
    if (c === undefined) {
      c = (async () => {
        this.identity ??= await createRandomIdentityCertificate();
        const conn = await QuicClientConnection.connect({ host: t.host, port: t.port, identity: this.identity, maxTransactionBytes: this.maxTransactionBytes });
        void conn.closed.then(() => {
          if (this.connections.get(t.identity) === c) this.connections.delete(t.identity);
        });
        return conn;
      })();
      c.catch(() => this.connections.delete(t.identity));
      this.connections.set(t.identity, c);
    }
    return c;
  }

  /** Leaders to send to now: the current one, plus the next one in the last slot of the window. */
  leadersNow(): string[] {
    const slot = this.clock.current;
    const out = [this.schedule.leaderAt(slot)];
    if (slot % NUM_CONSECUTIVE_LEADER_SLOTS === NUM_CONSECUTIVE_LEADER_SLOTS - 1) {
      const next = this.schedule.leaderAt(this.schedule.nextLeaderChange(slot));
      if (next !== out[0]) out.push(next);
    }
    return out;
  }

  /** Resolves once the transaction was handed to at least one leader's QUIC connection (fail closed otherwise). */
  readonly send = async (tx: Uint8Array): Promise<void> => {
    if (this.stopped) throw new RelayError(Errors.SHUTTING_DOWN);
    let handed = 0;
    for (const leader of this.leadersNow()) {
      const t = this.targets.get(leader);
      if (t === undefined) continue;
      try {
        const conn = await this.connection(t);
        if (conn.trySendTransaction(tx) !== false) handed++;
      } catch {
        // connection failed: try the other leader, fail closed below if none took it
      }
    }
    if (handed === 0) throw new RelayError(Errors.OVERLOADED, 'Node is unhealthy: no leader TPU connection accepted the transaction');
  };

  async stop(): Promise<void> {
    this.stopped = true;
    for (const c of this.connections.values()) {
      try {
        (await c).close();
      } catch {
        // never connected
      }
    }
    this.connections.clear();
  }
}
