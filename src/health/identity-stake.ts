// Whether the relay's QUIC identity is staked (main/front thread, cold: one getVoteAccounts per IDENTITY_STAKE_POLL_MS,
// never on a request's path). Validators grant QUIC QoS by the stake of the identity a connection presents
// (src/egress/quic/identity.ts): unstaked, direct sends get the smallest share of a leader's streams. Agave counts the
// activated stake of vote accounts whose node is that identity, so that is what is summed here (getVoteAccounts,
// current and delinquent, as the telemetry thread does). Rendered on /metrics as slotrelay_identity_staked and
// slotrelay_identity_stake_lamports once the first answer came (nothing before: an alert must not fire on "unknown").
// A configured keypair file is re-read at each poll, since the egress workers hot-reload it (a changed identity is seen
// at the next poll).
import { base58Encode } from '../quic/base58.js';
import { readKeypairFile } from '../egress/quic/identity.js';
import { ClusterRpc } from '../telemetry/cluster-rpc.js';
import type { Logger } from '../log/logger.js';
import type { TextBuilder } from '../metrics/prometheus.js';

/** Stake changes at epoch boundaries (~2 days on mainnet); 5 min sees a deactivated stake well within an alert's `for`. */
export const IDENTITY_STAKE_POLL_MS = 300_000;
/** After a failed read: try again sooner (a restarting RPC node), still far from a per-request rate. */
const RETRY_AFTER_FAILURE_MS = 30_000;

export interface IdentityStakeOptions {
  /** The identity as resolved at start (base58). */
  readonly identity: string;
  /** The keypair file the workers hot-reload; undefined for an identity generated in memory. */
  readonly keypairPath?: string;
  /** Cluster JSON-RPC (telemetry.rpcUrl ?? upstream.rpcUrl). */
  readonly rpcUrl: string;
  readonly timeoutMs: number;
  readonly log: Logger;
  readonly pollMs?: number;
}

export class IdentityStake {
  private readonly rpc: ClusterRpc;
  private identity: string;
  /** Lamports of activated stake; null until the first answer. */
  private stake: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private failing = false;

  constructor(private readonly o: IdentityStakeOptions) {
    this.rpc = new ClusterRpc(o.rpcUrl, o.timeoutMs);
    this.identity = o.identity;
  }

  start(): void {
    void this.poll();
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private async poll(): Promise<void> {
    let next = this.o.pollMs ?? IDENTITY_STAKE_POLL_MS;
    try {
      if (this.o.keypairPath !== undefined) this.identity = base58Encode(readKeypairFile(this.o.keypairPath).subarray(32));
      const stakes = await this.rpc.getStakes();
      const stake = stakes.get(this.identity) ?? 0;
      if (stake !== this.stake) {
        this.o.log.info({ event: 'identity_stake', identity: this.identity, stakeLamports: stake }, stake > 0 ? 'relay QUIC identity is staked' : 'relay QUIC identity is UNSTAKED');
      }
      this.stake = stake;
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.o.log.warn({ event: 'identity_stake_unknown', err: (err as Error).message }, 'could not read the relay identity\'s stake (getVoteAccounts); keeping the last known');
      this.failing = true;
      next = Math.min(next, RETRY_AFTER_FAILURE_MS);
    }
    this.timer = setTimeout(() => void this.poll(), next);
    this.timer.unref();
  }

  render(tb: TextBuilder): void {
    if (this.stake === null) return;
    tb.declare('slotrelay_identity_staked', 'gauge', '1 when the relay\'s QUIC identity has activated stake (validators give it staked QoS), 0 when unstaked.');
    tb.sample('slotrelay_identity_staked', { identity: this.identity }, this.stake > 0 ? 1 : 0);
    tb.declare('slotrelay_identity_stake_lamports', 'gauge', 'Activated stake of the vote accounts whose node is the relay\'s QUIC identity (getVoteAccounts).');
    tb.sample('slotrelay_identity_stake_lamports', { identity: this.identity }, this.stake);
  }
}
