// Doctor check `identity-stake` (cold): whether the relay's QUIC identity (identity.keypairPath) is staked, from
// getVoteAccounts on the cluster RPC. Leaders give QUIC connections stream capacity by the stake of the certificate's
// key (Agave stake-weighted QoS); an unstaked identity shares the small unstaked pool (docs/tpu-quic.md: ~200 tx/s
// per source IP, 8 new connections a minute) and is parked first under load. A warning, not a failure: sending
// direct unstaked works, it just lands less.
import { existsSync } from 'node:fs';
import type { Config } from '../config/schema.js';
import { readKeypairFile } from '../egress/quic/identity.js';
import { base58Encode } from '../quic/base58.js';
import { fail, pass, skip, warn, type Finding } from './finding.js';
import { rpcCall, RpcCallError } from './rpc.js';

const LAMPORTS_PER_SOL = 1_000_000_000;
const STAKE_FIX = 'use a staked validator identity as identity.keypairPath (the keypair whose node has activated stake), or send through a staked partner (routes.static peers that forward with their stake, routes.jito)';

interface VoteAccount {
  readonly nodePubkey: string;
  readonly activatedStake: number;
}

export async function checkIdentityStake(config: Readonly<Config>, clusterUrl: string | undefined, timeoutMs: number): Promise<Finding> {
  const id = 'identity-stake';
  if (!config.routes.direct.enabled) return skip(id, 'routes.direct is off: no connection to leaders presents the identity');
  const path = config.identity.keypairPath;
  if (path === undefined) return warn(id, 'no identity.keypairPath: `start` generates a new UNSTAKED identity in memory at every start', STAKE_FIX);
  if (!existsSync(path)) return warn(id, `${path} does not exist: the first start writes a new UNSTAKED keypair there`, STAKE_FIX, { keypairPath: path });
  let identity: string;
  try {
    identity = base58Encode(readKeypairFile(path).subarray(32));
  } catch (err) {
    return fail(id, `${(err as Error).message}: the relay would not start`, `write a solana-keygen keypair (a JSON array of 64 bytes) to ${path}, readable by the relay's user`, { keypairPath: path });
  }
  if (clusterUrl === undefined) return skip(id, `identity ${identity}: no upstream.rpcUrl, so no cluster to look its stake up in (the embedded localnet)`, { identity });
  try {
    const votes = (await rpcCall<{ current: VoteAccount[]; delinquent: VoteAccount[] }>(clusterUrl, 'getVoteAccounts', [{ commitment: 'processed' }], timeoutMs)).result;
    let stake = 0;
    let total = 0;
    for (const v of [...votes.current, ...votes.delinquent]) {
      total += v.activatedStake;
      if (v.nodePubkey === identity) stake += v.activatedStake;
    }
    const data = { identity, activatedStakeLamports: stake, clusterStakeLamports: total };
    if (stake > 0) {
      const share = total > 0 ? ` (${((100 * stake) / total).toPrecision(3)}% of the cluster's)` : '';
      return pass(id, `identity ${identity} is staked: ${(stake / LAMPORTS_PER_SOL).toFixed(0)} SOL${share}; leaders give its QUIC connections stream capacity in proportion`, data);
    }
    return warn(id, `identity ${identity} has no activated stake: direct sends share the leaders' unstaked QUIC pool (~200 tx/s per IP, 8 new connections a minute) and are dropped first under load`, STAKE_FIX, data);
  } catch (err) {
    if (!(err instanceof RpcCallError)) throw err;
    return fail(id, `identity ${identity}: cannot read the stakes: ${err.message}`, 'make the cluster RPC (telemetry.rpcUrl, default upstream.rpcUrl) reachable: see upstream-rpc', { identity });
  }
}
