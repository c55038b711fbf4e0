// Doctor check `leader-schedule` (cold): the cluster RPC knows who leads now and for at least telemetry.horizonSlots
// ahead (the current epoch's schedule, and the next epoch's when the horizon crosses into it), and, with the direct
// route on, the upcoming leaders publish a TPU QUIC address (getClusterNodes) to send to. The relay reloads the
// schedule per epoch: a node that cannot answer for the next epoch near the boundary leaves it without leaders.
import type { Config } from '../config/schema.js';
import { urlForLog } from '../log/url-for-log.js';
import { fail, pass, skip, type Finding } from './finding.js';
import { rpcCall, RpcCallError } from './rpc.js';

interface EpochInfo {
  readonly absoluteSlot: number;
  readonly epoch: number;
  readonly slotIndex: number;
  readonly slotsInEpoch: number;
}
type Schedule = Record<string, number[]> | null;

/** Upcoming leaders whose TPU address is looked up (the direct route's lookahead at 4 slots per leader). */
const LEADERS_CHECKED = 16;

export async function checkLeaderSchedule(config: Readonly<Config>, clusterUrl: string | undefined, timeoutMs: number): Promise<Finding> {
  const id = 'leader-schedule';
  if (clusterUrl === undefined) return skip(id, 'no upstream.rpcUrl: `start` runs the embedded localnet, which makes its own schedule');
  if (!config.telemetry.enabled && !config.routes.direct.enabled) return skip(id, 'telemetry off and routes.direct off: nothing in this config reads the leader schedule');
  const shown = urlForLog(clusterUrl);
  const call = <T>(method: string, params: unknown[]): Promise<T> => rpcCall<T>(clusterUrl, method, params, timeoutMs).then((a) => a.result);
  try {
    const info = await call<EpochInfo>('getEpochInfo', [{ commitment: 'processed' }]);
    const first = info.absoluteSlot - info.slotIndex;
    const current = await call<Schedule>('getLeaderSchedule', [first, { commitment: 'processed' }]);
    const leaders = new Map<number, string>();
    for (const [identity, offsets] of Object.entries(current ?? {})) for (const o of offsets) leaders.set(first + o, identity);
    const horizon = config.telemetry.horizonSlots;
    const end = info.absoluteSlot + horizon;
    let knownUntil = first + info.slotsInEpoch - 1;
    if (!leaders.has(info.absoluteSlot)) {
      return fail(id, `${shown}: getLeaderSchedule for epoch ${info.epoch} names no leader for the current slot ${info.absoluteSlot}`, 'use an RPC node that serves getLeaderSchedule (a full Agave/Firedancer RPC node; some providers disable it)', { url: shown, epoch: info.epoch });
    }
    if (end > knownUntil) {
      const nextFirst = first + info.slotsInEpoch;
      const next = await call<Schedule>('getLeaderSchedule', [nextFirst, { commitment: 'processed' }]);
      if (next === null) {
        return fail(id, `${shown}: epoch ${info.epoch} ends in ${knownUntil - info.absoluteSlot + 1} slots and the node has no schedule for epoch ${info.epoch + 1}`, 'use an RPC node that is caught up (the next epoch\'s schedule is known a whole epoch ahead)', { url: shown, epoch: info.epoch });
      }
      for (const [identity, offsets] of Object.entries(next)) for (const o of offsets) leaders.set(nextFirst + o, identity);
      knownUntil = nextFirst + info.slotsInEpoch - 1;
    }
    const data: Record<string, unknown> = { url: shown, epoch: info.epoch, slot: info.absoluteSlot, knownSlotsAhead: knownUntil - info.absoluteSlot, horizonSlots: horizon };
    let tpu = '';
    if (config.routes.direct.enabled) {
      const upcoming: string[] = [];
      for (let s = info.absoluteSlot; s <= end && upcoming.length < LEADERS_CHECKED; s++) {
        const l = leaders.get(s);
        if (l !== undefined && !upcoming.includes(l)) upcoming.push(l);
      }
      const nodes = await call<{ pubkey: string; tpuQuic?: string | null }[]>('getClusterNodes', []);
      const withTpu = new Set(nodes.filter((n) => typeof n.tpuQuic === 'string' && n.tpuQuic !== '').map((n) => n.pubkey));
      const reachable = upcoming.filter((l) => withTpu.has(l)).length;
      data.upcomingLeaders = upcoming.length;
      data.upcomingWithTpuQuic = reachable;
      if (reachable === 0) {
        return fail(id, `${shown}: none of the next ${upcoming.length} leaders has a tpuQuic address in getClusterNodes: the direct route has nowhere to send`, 'use an RPC node whose gossip view is complete (getClusterNodes), or turn routes.direct off', data);
      }
      tpu = `; ${reachable} of the next ${upcoming.length} leaders publish a TPU QUIC address`;
    }
    return pass(id, `${shown}: epoch ${info.epoch}, slot ${info.absoluteSlot}: leaders known ${knownUntil - info.absoluteSlot} slots ahead (telemetry.horizonSlots ${horizon})${tpu}`, data);
  } catch (err) {
    if (!(err instanceof RpcCallError)) throw err;
    return fail(id, `cannot read the leader schedule: ${err.message}`, 'make the cluster RPC (telemetry.rpcUrl, default upstream.rpcUrl) reachable: see upstream-rpc', { url: shown });
  }
}
