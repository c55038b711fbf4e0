// getBlock on the facade (localnet process, main thread; cold), following the consensus: a slot above the requested
// commitment's slot (default finalized; processed refused as by Agave) is -32004 "Block not available", a skipped slot
// (Alpenglow: its leader missed it) -32007 "Slot N was skipped", one older than the kept history -32009. The block's
// transactions come from a per-slot index of committed signatures (fed by the block producer, the last
// HISTORY_SLOTS slots); transactionDetails full (json, jsonParsed, base64, base58) | signatures | none, rewards [].
import { Errors, RelayError, type ErrorSpec } from '../../errors/registry.js';
import type { MethodHandler } from '../../jsonrpc/dispatch.js';
import { optionalUsize, paramsArray } from '../../jsonrpc/params.js';
import bs58 from 'bs58';
import type { TxRecord } from '../bank.js';
import { commonConfig, invalidParams, type FacadeContext } from './context.js';
import { messageJson, metaJson } from './get-transaction.js';

/** Slots of block index kept (the bank keeps full records for 3,000 slots). */
const HISTORY_SLOTS = 3_000;

const spec = (id: number, reason: string, rpcCode: number, message: string): ErrorSpec =>
  Object.freeze({ id, reason, rpcCode, rpcHttpStatus: 200, restHttpStatus: 400, message });
const BLOCK_NOT_AVAILABLE = spec(1004, 'block_not_available', -32004, 'Block not available for slot');
const SLOT_SKIPPED = spec(1007, 'slot_skipped', -32007, 'Slot was skipped');
const LEDGER_JUMP = spec(1009, 'slot_not_in_history', -32009, 'Slot was skipped, or missing in long-term storage');

/** slot -> the signatures committed in it, in order (the producer's commit listener feeds it). */
export class BlockIndex {
  private readonly bySlot = new Map<number, string[]>();

  onCommit(rec: TxRecord): void {
    let list = this.bySlot.get(rec.slot);
    if (list === undefined) {
      this.bySlot.set(rec.slot, (list = []));
      for (const s of this.bySlot.keys()) {
        if (s >= rec.slot - HISTORY_SLOTS) break;
        this.bySlot.delete(s);
      }
    }
    list.push(rec.signature);
  }

  signatures(slot: number): readonly string[] {
    return this.bySlot.get(slot) ?? [];
  }
}

type H = MethodHandler<FacadeContext>;

const getBlock: H = (params, ctx) => {
  const p = paramsArray(params, 1, 2);
  const slot = optionalUsize(p[0], 'slot');
  if (slot === undefined) throw invalidParams('Invalid params: invalid type: null, expected u64');
  const cfgArg = typeof p[1] === 'string' ? { encoding: p[1] } : p[1];
  const cfg = commonConfig(ctx, cfgArg);
  if (cfg.commitment === 'processed') throw invalidParams('Method does not support commitment below `confirmed`');
  const encoding = (cfg.raw.encoding ?? 'json') as string;
  if (!['json', 'jsonParsed', 'base64', 'base58'].includes(encoding)) throw invalidParams(`Invalid params: unknown variant \`${encoding}\``);
  const details = (cfg.raw.transactionDetails ?? 'full') as string;
  if (!['full', 'signatures', 'none'].includes(details)) throw invalidParams(`Invalid params: unknown variant \`${details}\``);
  const maxVersion = optionalUsize(cfg.raw.maxSupportedTransactionVersion, 'maxSupportedTransactionVersion');
  const cons = ctx.consensus;
  if (slot > cfg.slot) throw new RelayError(BLOCK_NOT_AVAILABLE, `Block not available for slot ${slot}`);
  if (cons.isSkipped(slot)) throw new RelayError(SLOT_SKIPPED, `Slot ${slot} was skipped, or missing due to ledger jump to recent snapshot`);
  if (slot < ctx.clock.current - HISTORY_SLOTS || slot < ctx.clock.current - ctx.bank.windowSlots) {
    throw new RelayError(LEDGER_JUMP, `Slot ${slot} was skipped, or missing in long-term storage`);
  }
  let parent = slot - 1;
  while (parent > 0 && cons.isSkipped(parent)) parent--;
  const records = (ctx.blocks?.signatures(slot) ?? []).map((s) => ctx.bank.record(s)).filter((r): r is TxRecord => r !== undefined);
  const out: Record<string, unknown> = {
    blockhash: ctx.bank.blockhashAt(slot).blockhash,
    previousBlockhash: ctx.bank.blockhashAt(Math.max(0, parent)).blockhash,
    parentSlot: Math.max(0, parent),
    blockTime: ctx.bank.blockTime(slot),
    blockHeight: cons.blockHeight(slot),
  };
  if (details === 'signatures') out.signatures = records.map((r) => r.signature);
  if (details === 'full') {
    out.transactions = records.map((rec) => {
      const v = rec.parsed.version;
      if (v !== 'legacy' && (maxVersion === undefined || maxVersion < v)) {
        throw new RelayError(Errors.UNSUPPORTED_TX_VERSION, `Transaction version (${v}) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": ${v}`);
      }
      const transaction =
        encoding === 'base64' ? [Buffer.from(rec.tx).toString('base64'), 'base64'] : encoding === 'base58' ? [bs58.encode(rec.tx), 'base58'] : { signatures: rec.parsed.signatures, message: messageJson(rec, encoding === 'jsonParsed') };
      return { transaction, meta: metaJson(rec), ...(maxVersion !== undefined ? { version: v } : {}) };
    });
  }
  if (cfg.raw.rewards !== false) out.rewards = [];
  return JSON.stringify(out);
};

export const getBlockMethods: ReadonlyArray<readonly [string, H]> = [['getBlock', getBlock]];
