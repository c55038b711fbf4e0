// SubscribeUpdate bodies built from the localnet's records (localnet process, main thread; per committed
// transaction and per slot status, warm). Shapes are geyser.proto's as proto-loader encodes them
// (src/geyser/proto.ts): uint64 as decimal strings, bytes as Buffer. A transaction's body is built once per commit
// and shared by every stream it matches.
import bs58 from 'bs58';
import type { TxRecord } from '../bank.js';
import type { SlotEvent } from './slot-feed.js';
import { txErrorBincode } from '../../geyser/tx-error-codec.js';
import type { TxFacts } from './tx-filter.js';

const VOTE_PROGRAM = 'Vote111111111111111111111111111111111111111';

export function slotBody(e: SlotEvent): object {
  return { slot: String(e.slot), parent: e.parent === null ? undefined : String(e.parent), status: e.status };
}

export function txFacts(rec: TxRecord): TxFacts {
  const keys = rec.parsed.accountKeys;
  return { signature: rec.signature, isVote: keys.includes(VOTE_PROGRAM), failed: rec.err !== null, accountKeys: keys };
}

/** SubscribeUpdateTransaction: the transaction as solana-storage.proto's ConfirmedBlock.Transaction, a short meta. */
export function txBody(rec: TxRecord, facts: TxFacts): object {
  const p = rec.parsed;
  let roSigned = 0;
  let roUnsigned = 0;
  p.writable.forEach((w, i) => {
    if (!w && i < p.numRequiredSignatures) roSigned++;
    else if (!w) roUnsigned++;
  });
  const err = rec.err === null ? undefined : { err: txErrorBincode(rec.err) };
  return {
    slot: String(rec.slot),
    transaction: {
      signature: Buffer.from(bs58.decode(rec.signature)),
      isVote: facts.isVote,
      index: String(rec.position),
      transaction: {
        signatures: p.signatures.map((s) => Buffer.from(bs58.decode(s))),
        message: {
          header: { numRequiredSignatures: p.numRequiredSignatures, numReadonlySignedAccounts: roSigned, numReadonlyUnsignedAccounts: roUnsigned },
          accountKeys: p.keyBytes.map((k) => Buffer.from(k)),
          recentBlockhash: Buffer.from(bs58.decode(p.recentBlockhash)),
          instructions: p.instructions.map((ix) => ({ programIdIndex: ix.programIdIndex, accounts: Buffer.from(ix.accounts), data: Buffer.from(ix.data) })),
          versioned: p.version !== 'legacy',
          addressTableLookups: p.addressTableLookups.map((l) => ({
            accountKey: Buffer.from(l.accountKey),
            writableIndexes: Buffer.from(l.writableIndexes),
            readonlyIndexes: Buffer.from(l.readonlyIndexes),
          })),
        },
      },
      meta: {
        err,
        fee: String(rec.fee),
        preBalances: rec.preBalances.map(String),
        postBalances: rec.postBalances.map(String),
        logMessages: [...rec.logs],
        logMessagesNone: false,
        innerInstructionsNone: true,
        computeUnitsConsumed: String(rec.computeUnitsConsumed),
      },
    },
  };
}

/** SubscribeUpdateTransactionStatus. */
export function txStatusBody(rec: TxRecord, facts: TxFacts): object {
  return {
    slot: String(rec.slot),
    signature: Buffer.from(bs58.decode(rec.signature)),
    isVote: facts.isVote,
    index: String(rec.position),
    err: rec.err === null ? undefined : { err: txErrorBincode(rec.err) },
  };
}

export interface BlockMetaFacts {
  readonly slot: number;
  readonly blockhash: string;
  readonly parentBlockhash: string;
  readonly blockTime: number;
  readonly executedTransactionCount: number;
}

/** SubscribeUpdateBlockMeta (block height = slot: the localnet skips no slot). */
export function blockMetaBody(b: BlockMetaFacts): object {
  return {
    slot: String(b.slot),
    blockhash: b.blockhash,
    blockTime: { timestamp: String(b.blockTime) },
    blockHeight: { blockHeight: String(b.slot) },
    parentSlot: String(Math.max(0, b.slot - 1)),
    parentBlockhash: b.parentBlockhash,
    executedTransactionCount: String(b.executedTransactionCount),
    entriesCount: '1',
  };
}
