// The localnet block engine's JSON-RPC methods (localnet process, main thread; per call), Jito's names and shapes:
// on /api/v1/bundles sendBundle, getBundleStatuses, getInflightBundleStatuses, getTipAccounts; on
// /api/v1/transactions sendTransaction (what the relay's `jito` route calls: the transaction goes to the current
// leader's TPU like an RPC node's send). Refusals are -32602 with a message that names the rule.
import { Errors, RelayError } from '../../errors/registry.js';
import type { MethodHandler, MethodTable } from '../../jsonrpc/dispatch.js';
import { paramsArray, configObject } from '../../jsonrpc/params.js';
import type { BlockProducer } from '../block-producer.js';
import type { Consensus } from '../consensus.js';
import type { SlotClock } from '../slot-clock.js';
import type { TpuSender } from '../facade/context.js';
import { decodeTxParam, txEncoding } from '../facade/tx-param.js';
import { BundleEngine, BundleRefused, MAX_BUNDLE_TRANSACTIONS } from './bundle-engine.js';

/** Jito answers at most 5 ids per status call. */
export const MAX_STATUS_IDS = 5;

export interface BlockEngineContext {
  readonly engine: BundleEngine;
  readonly producer: BlockProducer;
  readonly clock: SlotClock;
  /** Commitments follow the localnet's consensus (Alpenglow: processed then finalized). */
  readonly consensus: Consensus;
  readonly maxTransactionBytes: number;
  readonly sendToTpu: TpuSender;
}

type H = MethodHandler<BlockEngineContext>;

function invalid(message: string): RelayError {
  return new RelayError(Errors.INVALID_PARAMS, message);
}

/** Jito's encoding option: base58 when absent. */
function encodingOf(cfg: unknown): 'base58' | 'base64' {
  return txEncoding(configObject(cfg)?.encoding);
}

function idList(params: unknown): string[] {
  const p = paramsArray(params, 1, 1);
  const ids = p[0];
  if (!Array.isArray(ids) || ids.some((x) => typeof x !== 'string')) throw invalid('Invalid params: expected an array of bundle ids (strings)');
  if (ids.length === 0) throw invalid('Invalid params: at least one bundle id is required');
  if (ids.length > MAX_STATUS_IDS) throw invalid(`Invalid params: at most ${MAX_STATUS_IDS} bundle ids per request`);
  return ids as string[];
}

const sendBundle: H = (params, ctx) => {
  const p = paramsArray(params, 1, 2);
  const list = p[0];
  if (!Array.isArray(list)) throw invalid('Invalid params: expected an array of transactions');
  if (list.length === 0) throw invalid('bundle must contain at least one transaction');
  if (list.length > MAX_BUNDLE_TRANSACTIONS) throw invalid(`bundle contains ${list.length} transactions, at most ${MAX_BUNDLE_TRANSACTIONS} are allowed`);
  const encoding = encodingOf(p[1]);
  const txs = list.map((v) => {
    const d = decodeTxParam(v, encoding, ctx.maxTransactionBytes);
    return { bytes: d.bytes, parsed: d.parsed };
  });
  try {
    return JSON.stringify(ctx.engine.submit(txs));
  } catch (err) {
    if (err instanceof BundleRefused) throw invalid(err.message);
    throw err;
  }
};

function confirmation(ctx: BlockEngineContext, slot: number): string {
  return ctx.consensus.statusOf(slot).confirmationStatus;
}

const getBundleStatuses: H = (params, ctx) => {
  const value = idList(params).map((id) => {
    const s = ctx.engine.status(id);
    if (s === null || s.state !== 'Landed') return null; // Jito: null until the bundle has landed
    return { bundle_id: id, transactions: s.signatures, slot: s.slot, confirmation_status: confirmation(ctx, s.slot!), err: { Ok: null } };
  });
  return JSON.stringify({ context: { slot: ctx.clock.current }, value });
};

const getInflightBundleStatuses: H = (params, ctx) => {
  const value = idList(params).map((id) => {
    const s = ctx.engine.status(id);
    return { bundle_id: id, status: s === null ? 'Invalid' : s.state, landed_slot: s?.state === 'Landed' ? s.slot : null };
  });
  return JSON.stringify({ context: { slot: ctx.clock.current }, value });
};

const getTipAccounts: H = (params, ctx) => {
  paramsArray(params ?? [], 0, 0);
  return JSON.stringify(ctx.engine.tipAccounts);
};

/** sendTransaction [tx, {encoding}]: Jito always skips preflight; the result is the signature. */
const sendTransaction: H = (params, ctx) => {
  const p = paramsArray(params, 1, 2);
  const d = decodeTxParam(p[0], encodingOf(p[1]), ctx.maxTransactionBytes);
  const signature = d.parsed.signatures[0];
  return ctx.sendToTpu(d.bytes, signature).then(() => JSON.stringify(signature));
};

export const bundleMethods: MethodTable<BlockEngineContext> = new Map<string, H>([
  ['sendBundle', sendBundle],
  ['getBundleStatuses', getBundleStatuses],
  ['getInflightBundleStatuses', getInflightBundleStatuses],
  ['getTipAccounts', getTipAccounts],
]);

export const transactionMethods: MethodTable<BlockEngineContext> = new Map<string, H>([['sendTransaction', sendTransaction]]);
