// The few cluster JSON-RPC calls the telemetry thread makes (telemetry thread; cold: per poll / per refresh).
// getSlot (polling fallback), getEpochInfo, getLeaderSchedule (current and next epoch), getClusterNodes (tpuQuic),
// getVoteAccounts (activated stake per node identity). getClusterNodes also keeps each node's kind (its version).
import { leaderKindOfVersion } from './leader-kind.js';
import type { LeaderKind } from '../shm/layout.js';

export class ClusterRpcError extends Error {}

export interface EpochInfo {
  readonly absoluteSlot: number;
  readonly epoch: number;
  readonly slotIndex: number;
  readonly slotsInEpoch: number;
}

export class ClusterRpc {
  private id = 0;

  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  async call<T>(method: string, params: unknown[] = []): Promise<T> {
    const res = await fetch(this.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++this.id, method, params }),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    if (res.status !== 200) throw new ClusterRpcError(`${method}: HTTP ${res.status}`);
    const body = (await res.json()) as { result?: T; error?: { code: number; message: string } };
    if (body.error !== undefined) throw new ClusterRpcError(`${method}: ${body.error.code} ${body.error.message}`);
    return body.result as T;
  }

  getSlot(): Promise<number> {
    return this.call<number>('getSlot', [{ commitment: 'processed' }]);
  }

  getEpochInfo(): Promise<EpochInfo> {
    return this.call<EpochInfo>('getEpochInfo', [{ commitment: 'processed' }]);
  }

  /** identity -> slot offsets within the epoch containing `slot`; null when the cluster does not know it yet. */
  getLeaderSchedule(slot: number): Promise<Record<string, number[]> | null> {
    return this.call<Record<string, number[]> | null>('getLeaderSchedule', [slot, { commitment: 'processed' }]);
  }

  /** identity -> leader kind from each node's `version`, as of the last getClusterNodes (leader-kind.ts). */
  kinds: ReadonlyMap<string, LeaderKind> = new Map();

  async getClusterNodes(): Promise<Map<string, string | null>> {
    const nodes = await this.call<{ pubkey: string; tpuQuic?: string | null; version?: string | null }[]>('getClusterNodes');
    this.kinds = new Map(nodes.map((n) => [n.pubkey, leaderKindOfVersion(n.version)]));
    return new Map(nodes.map((n) => [n.pubkey, n.tpuQuic ?? null]));
  }

  /** node identity -> activated stake (lamports), current and delinquent vote accounts summed per node. */
  async getStakes(): Promise<Map<string, number>> {
    type V = { nodePubkey: string; activatedStake: number };
    const r = await this.call<{ current: V[]; delinquent: V[] }>('getVoteAccounts', [{ commitment: 'processed' }]);
    const out = new Map<string, number>();
    for (const v of [...r.current, ...r.delinquent]) out.set(v.nodePubkey, (out.get(v.nodePubkey) ?? 0) + v.activatedStake);
    return out;
  }
}
