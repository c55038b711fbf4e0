// Localnet-only facade methods for benchmark harnesses (localnet process, main thread; cold).
//
// localnet_getLandings [{from?: number, limit?: number}] -> {total, first, next, landings: [...]}
//   Landing records in landing order, starting at index `from` (default 0), at most `limit` (default and max 10000).
//   Poll with from = previous `next`. Each record: {signature, slot, position, validator, sender, arrivalNs,
//   executedNs, err}. `arrivalNs`/`executedNs` are decimal strings of process.hrtime.bigint() (CLOCK_MONOTONIC ns,
//   comparable with process.hrtime.bigint() in any process on the same host; strings because they can exceed 2^53).
//   `validator` is the identity whose TPU listener received the transaction, `sender` the client certificate's
//   identity (null if none), `position` the 0-based index in the slot. Only transactions that came in through a TPU
//   listener (or the facade's own sendTransaction, which uses the TPU path) are recorded; airdrops are not.
// localnet_getCounters [] -> {slot, totalLandings, validators: {identity: {received, landed, buffered, dropped:
//   {not_leader, undecodable, invalid, rejected}, rejectedBy: {BlockhashNotFound: n, ...}}}}
//   Per-validator TPU gate counters: what reached each validator and why it did or did not land (block_full: the
//   leader's block capacity was used up, localnet.blockCapacity).
// localnet_getSlotLoad [{from?: number, limit?: number}] -> {slots: [{slot, leader, received, blockFull, saturated}]}
//   Per ended slot: its leader, the transactions that leader's TPU listener read during it, those it dropped as
//   block_full, and whether its flow-control QoS was saturated at the end of it (src/localnet/slot-load.ts).
// localnet_getArrivals [{from?: number, limit?: number}] -> {total, first, next, sig8: [...], arrivalNs: [...]}
//   Every transaction any TPU listener read (before the leader gate), when the localnet runs with arrivalLog > 0
//   (else error -32601-like "arrival log is off"): the first 8 bytes of its first signature (hex) and its arrival
//   on CLOCK_MONOTONIC (decimal ns string), same order and paging as localnet_getLandings (src/localnet/arrival-log.ts).
import { Errors, RelayError } from '../../errors/registry.js';
import type { MethodHandler } from '../../jsonrpc/dispatch.js';
import { configObject, optionalUsize, paramsArray } from '../../jsonrpc/params.js';
import type { FacadeContext } from './context.js';

type H = MethodHandler<FacadeContext>;

export const MAX_LANDINGS_PER_CALL = 10_000;

const getLandings: H = (params, ctx) => {
  const p = paramsArray(params, 0, 1);
  const cfg = configObject(p[0]) ?? {};
  const from = optionalUsize(cfg.from, 'from') ?? 0;
  const limit = Math.min(optionalUsize(cfg.limit, 'limit') ?? MAX_LANDINGS_PER_CALL, MAX_LANDINGS_PER_CALL);
  const page = ctx.landings.page(from, limit);
  return JSON.stringify({
    total: ctx.landings.total,
    first: page.first,
    next: page.next,
    landings: page.records.map((r) => ({
      signature: r.signature,
      slot: r.slot,
      position: r.position,
      validator: r.validator,
      sender: r.sender,
      arrivalNs: r.arrivalNs.toString(),
      executedNs: r.executedNs.toString(),
      err: r.err,
    })),
  });
};

const getCounters: H = (params, ctx) => {
  paramsArray(params, 0, 0);
  return JSON.stringify({ slot: ctx.clock.current, totalLandings: ctx.landings.total, validators: Object.fromEntries(ctx.landings.counters) });
};

const getArrivals: H = (params, ctx) => {
  const p = paramsArray(params, 0, 1);
  const cfg = configObject(p[0]) ?? {};
  const from = optionalUsize(cfg.from, 'from') ?? 0;
  const limit = Math.min(optionalUsize(cfg.limit, 'limit') ?? MAX_ARRIVALS_PER_CALL, MAX_ARRIVALS_PER_CALL);
  if (ctx.arrivals === null) throw new RelayError(Errors.INVALID_REQUEST, 'localnet_getArrivals: the arrival log is off (localnet.arrivalLog: 0)');
  const page = ctx.arrivals.page(from, limit);
  return JSON.stringify({ total: ctx.arrivals.total, ...page });
};

export const MAX_ARRIVALS_PER_CALL = 50_000;

const getSlotLoad: H = (params, ctx) => {
  const p = paramsArray(params, 0, 1);
  const cfg = configObject(p[0]) ?? {};
  const from = optionalUsize(cfg.from, 'from') ?? 0;
  const limit = Math.min(optionalUsize(cfg.limit, 'limit') ?? MAX_LANDINGS_PER_CALL, MAX_LANDINGS_PER_CALL);
  return JSON.stringify({ slots: ctx.slotLoad?.since(from, limit) ?? [] });
};

export const localnetMethods: ReadonlyArray<readonly [string, H]> = [
  ['localnet_getLandings', getLandings],
  ['localnet_getCounters', getCounters],
  ['localnet_getArrivals', getArrivals],
  ['localnet_getSlotLoad', getSlotLoad],
];
