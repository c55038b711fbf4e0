// Facade methods about the cluster itself (localnet process, main thread; cold): slots, block height, epochs,
// leader schedule, cluster nodes with their tpuQuic, vote accounts with stake, blockhashes, health, version,
// genesis hash, getAgGenesisCert (the Alpenglow genesis certificate, null under Tower BFT). Block height is the slot
// minus the skipped slots (Alpenglow skips a slot whose leader missed it; Tower mode never skips).
import { paramsArray, optionalUsize } from '../../jsonrpc/params.js';
import type { MethodHandler } from '../../jsonrpc/dispatch.js';
import {
  LOCALNET_FEATURE_SET,
  LOCALNET_SOLANA_CORE_VERSION,
  commonConfig,
  invalidParams,
  pubkeyParam,
  withContext,
  type FacadeContext,
} from './context.js';
import bs58 from 'bs58';

type H = MethodHandler<FacadeContext>;

/** Agave MAX_GET_SLOT_LEADERS. */
const MAX_GET_SLOT_LEADERS = 5000;

const getSlot: H = (params, ctx) => String(commonConfig(ctx, paramsArray(params, 0, 1)[0]).slot);
const getBlockHeight: H = (params, ctx) => String(ctx.consensus.blockHeight(commonConfig(ctx, paramsArray(params, 0, 1)[0]).slot));

/** Agave 4.3+: the certificate over the first Alpenglow block, null while the cluster runs Tower BFT. No params. */
const getAgGenesisCert: H = (params, ctx) => {
  paramsArray(params, 0, 0);
  return JSON.stringify(ctx.consensus.genesisCert());
};

const getEpochInfo: H = (params, ctx) => {
  const slot = commonConfig(ctx, paramsArray(params, 0, 1)[0]).slot;
  const s = ctx.schedule;
  return JSON.stringify({
    absoluteSlot: slot,
    blockHeight: ctx.consensus.blockHeight(slot),
    epoch: s.epochOf(slot),
    slotIndex: slot % s.slotsPerEpoch,
    slotsInEpoch: s.slotsPerEpoch,
    transactionCount: ctx.bank.transactionCount,
  });
};

const getEpochSchedule: H = (params, ctx) => {
  paramsArray(params, 0, 0);
  const n = ctx.schedule.slotsPerEpoch;
  return JSON.stringify({ slotsPerEpoch: n, leaderScheduleSlotOffset: n, warmup: false, firstNormalEpoch: 0, firstNormalSlot: 0 });
};

const getLeaderSchedule: H = (params, ctx) => {
  const p = paramsArray(params, 0, 2);
  // Agave accepts [slot], [config] or [slot, config]; a config may come first.
  let slotArg: unknown = p[0];
  let cfgArg: unknown = p[1];
  if (slotArg !== null && typeof slotArg === 'object') {
    cfgArg = slotArg;
    slotArg = undefined;
  }
  const cfg = commonConfig(ctx, cfgArg);
  const slot = optionalUsize(slotArg, 'slot') ?? cfg.slot;
  const identity = cfg.raw.identity === undefined ? undefined : pubkeyParam(cfg.raw.identity).text;
  const s = ctx.schedule;
  if (!s.isKnown(slot, ctx.clock.current)) return 'null';
  const leaders = s.forEpoch(s.epochOf(slot));
  const out: Record<string, number[]> = {};
  for (let i = 0; i < leaders.length; i++) {
    const l = leaders[i];
    if (identity !== undefined && l !== identity) continue;
    (out[l] ??= []).push(i);
  }
  return JSON.stringify(out);
};

const getSlotLeaders: H = (params, ctx) => {
  const p = paramsArray(params, 2, 2);
  const start = optionalUsize(p[0], 'start_slot');
  const limit = optionalUsize(p[1], 'limit');
  if (start === undefined || limit === undefined) throw invalidParams('Invalid params: start slot and limit are required');
  if (limit > MAX_GET_SLOT_LEADERS) throw invalidParams(`Invalid limit; max ${MAX_GET_SLOT_LEADERS}`);
  const s = ctx.schedule;
  const last = start + limit - 1;
  if (limit > 0 && !s.isKnown(last, ctx.clock.current)) {
    throw invalidParams(`Invalid slot range: leader schedule for epoch ${s.epochOf(last)} is unavailable`);
  }
  const out: string[] = [];
  for (let slot = start; slot <= last; slot++) out.push(s.leaderAt(slot));
  return JSON.stringify(out);
};

const getClusterNodes: H = (params, ctx) => {
  paramsArray(params, 0, 0);
  return JSON.stringify(
    ctx.validators.map((v, i) => ({
      pubkey: v.identity,
      gossip: null,
      tpu: v.tpu ?? null,
      tpuQuic: v.tpuQuic,
      tpuForwards: null,
      tpuForwardsQuic: null,
      tpuVote: null,
      serveRepair: null,
      // The facade answers for the first validator (it is "its" RPC node).
      rpc: i === 0 ? ctx.rpcAddress : null,
      pubsub: i === 0 ? ctx.pubsubAddress : null,
      // Agave 2.x or Firedancer 0.x: how a sender tells the leaders' kinds apart (docs/localnet.md).
      version: v.version ?? LOCALNET_SOLANA_CORE_VERSION,
      featureSet: LOCALNET_FEATURE_SET,
      shredVersion: 1,
    })),
  );
};

const getVoteAccounts: H = (params, ctx) => {
  const cfg = commonConfig(ctx, paramsArray(params, 0, 1)[0]);
  const votePubkey = cfg.raw.votePubkey === undefined ? undefined : pubkeyParam(cfg.raw.votePubkey).text;
  const epoch = ctx.schedule.epochOf(cfg.slot);
  const current = ctx.validators
    .filter((v) => votePubkey === undefined || v.votePubkey === votePubkey)
    .map((v) => ({
      votePubkey: v.votePubkey,
      nodePubkey: v.identity,
      activatedStake: Number(v.stake),
      epochVoteAccount: true,
      commission: 0,
      lastVote: ctx.clock.current,
      epochCredits: [[epoch, cfg.slot, Math.max(0, cfg.slot - 1)]],
      rootSlot: ctx.consensus.finalizedSlot(),
    }));
  return JSON.stringify({ current, delinquent: [] });
};

const getLatestBlockhash: H = (params, ctx) => {
  const cfg = commonConfig(ctx, paramsArray(params, 0, 1)[0]);
  const h = ctx.bank.blockhashAt(cfg.slot);
  return withContext(cfg.slot, { blockhash: h.blockhash, lastValidBlockHeight: h.slot + ctx.bank.windowSlots });
};

const isBlockhashValid: H = (params, ctx) => {
  const p = paramsArray(params, 1, 2);
  const cfg = commonConfig(ctx, p[1]);
  if (typeof p[0] !== 'string') throw invalidParams('Invalid params: invalid type: expected a string');
  let size = 0;
  try {
    size = bs58.decode(p[0]).length;
  } catch {
    throw invalidParams('Invalid');
  }
  if (size !== 32) throw invalidParams('WrongSize');
  // Valid in the bank at the commitment: issued at or before its slot, still inside the window.
  const issued = ctx.bank.blockhashSlot(p[0]);
  return withContext(cfg.slot, issued !== undefined && issued <= cfg.slot);
};

const getHealth: H = (params) => {
  paramsArray(params, 0, 0);
  return '"ok"';
};

const getVersion: H = (params) => {
  paramsArray(params, 0, 0);
  return JSON.stringify({ 'solana-core': LOCALNET_SOLANA_CORE_VERSION, 'feature-set': LOCALNET_FEATURE_SET });
};

const getGenesisHash: H = (params, ctx) => {
  paramsArray(params, 0, 0);
  return JSON.stringify(ctx.bank.genesisHash);
};

const getIdentity: H = (params, ctx) => {
  paramsArray(params, 0, 0);
  return JSON.stringify({ identity: ctx.validators[0].identity });
};

export const clusterMethods: ReadonlyArray<readonly [string, H]> = [
  ['getSlot', getSlot],
  ['getBlockHeight', getBlockHeight],
  ['getEpochInfo', getEpochInfo],
  ['getEpochSchedule', getEpochSchedule],
  ['getLeaderSchedule', getLeaderSchedule],
  ['getSlotLeaders', getSlotLeaders],
  ['getClusterNodes', getClusterNodes],
  ['getVoteAccounts', getVoteAccounts],
  ['getLatestBlockhash', getLatestBlockhash],
  ['isBlockhashValid', isBlockhashValid],
  ['getHealth', getHealth],
  ['getVersion', getVersion],
  ['getGenesisHash', getGenesisHash],
  ['getIdentity', getIdentity],
  ['getAgGenesisCert', getAgGenesisCert],
];
