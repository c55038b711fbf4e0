// getTransaction on the facade (localnet process, main thread; cold). Renders a committed transaction in Agave's
// encodings: json (default), jsonParsed (annotated keys, instructions partially decoded: no program parsers),
// base64, base58; meta with err/status/fee/balances/logMessages/innerInstructions/computeUnitsConsumed/returnData.
// Commitment processed is refused as by Agave; a v0 transaction needs maxSupportedTransactionVersion >= 0, a v1
// transaction >= 1 (-32015). base64/base58/binary return the bytes as received (a v1: message then signatures); json
// renders a v1 message like a legacy one plus `transactionConfig` (camelCase, null for absent values), as Agave's
// UiRawMessage does (docs/localnet-v1.md).
import bs58 from 'bs58';
import { Errors, RelayError } from '../../errors/registry.js';
import type { MethodHandler } from '../../jsonrpc/dispatch.js';
import { optionalUsize, paramsArray } from '../../jsonrpc/params.js';
import { serdeType } from '../../errors/serde-type.js';
import type { TxRecord } from '../bank.js';
import { statusJson } from '../tx-error.js';
import { commonConfig, invalidParams, type FacadeContext } from './context.js';

type H = MethodHandler<FacadeContext>;

export function messageJson(rec: TxRecord, parsedMode: boolean): Record<string, unknown> {
  const p = rec.parsed;
  const keys = p.accountKeys;
  const instructions = p.instructions.map((ix) =>
    parsedMode
      ? { programId: keys[ix.programIdIndex], accounts: Array.from(ix.accounts, (a) => keys[a] ?? ''), data: bs58.encode(ix.data), stackHeight: null }
      : { programIdIndex: ix.programIdIndex, accounts: Array.from(ix.accounts), data: bs58.encode(ix.data), stackHeight: null },
  );
  const msg: Record<string, unknown> = {
    accountKeys: parsedMode
      ? keys.map((k, i) => ({ pubkey: k, writable: p.writable[i], signer: i < p.numRequiredSignatures, source: 'transaction' }))
      : keys,
    recentBlockhash: p.recentBlockhash,
    instructions,
  };
  if (!parsedMode) {
    const ro = p.writable.slice(0, p.numRequiredSignatures).filter((w) => !w).length;
    const ru = p.writable.slice(p.numRequiredSignatures).filter((w) => !w).length;
    msg.header = { numRequiredSignatures: p.numRequiredSignatures, numReadonlySignedAccounts: ro, numReadonlyUnsignedAccounts: ru };
  }
  if (p.version === 1 && p.config !== null) {
    const c = p.config;
    msg.transactionConfig = {
      computeUnitLimit: c.computeUnitLimit,
      heapSize: c.heapSize,
      loadedAccountsDataSizeLimit: c.loadedAccountsDataSizeLimit,
      // A u64: a JSON number like Agave's (exact up to 2^53; beyond it the nearest double).
      priorityFee: c.priorityFeeLamports === null ? null : Number(c.priorityFeeLamports),
    };
  }
  if (p.version === 0) {
    msg.addressTableLookups = p.addressTableLookups.map((l) => ({
      accountKey: bs58.encode(l.accountKey),
      writableIndexes: Array.from(l.writableIndexes),
      readonlyIndexes: Array.from(l.readonlyIndexes),
    }));
  }
  return msg;
}

export function metaJson(rec: TxRecord): Record<string, unknown> {
  const meta: Record<string, unknown> = {
    err: rec.err,
    status: statusJson(rec.err),
    fee: Number(rec.fee),
    preBalances: rec.preBalances.map(Number),
    postBalances: rec.postBalances.map(Number),
    innerInstructions: rec.innerInstructions,
    logMessages: rec.logs,
    preTokenBalances: [],
    postTokenBalances: [],
    rewards: [],
    loadedAddresses: { writable: [], readonly: [] },
    computeUnitsConsumed: Number(rec.computeUnitsConsumed),
  };
  if (rec.returnData !== null) meta.returnData = rec.returnData;
  return meta;
}

/** Agave verify_signature: "Invalid param: WrongSize" (over 88 characters or not 64 bytes) / "Invalid param: Invalid". */
function signatureParam(v: unknown): string {
  if (typeof v !== 'string') throw invalidParams(`Invalid params: invalid type: ${serdeType(v)}, expected a string`);
  if (v.length > 88) throw invalidParams('Invalid param: WrongSize');
  let n: number;
  try {
    n = bs58.decode(v).length;
  } catch {
    throw invalidParams('Invalid param: Invalid');
  }
  if (n !== 64) throw invalidParams('Invalid param: WrongSize');
  return v;
}

const getTransaction: H = (params, ctx) => {
  const p = paramsArray(params, 1, 2);
  // Agave checks the signature before it reads the config (rpc.rs get_transaction).
  const signature = signatureParam(p[0]);
  // Agave accepts a bare encoding string as the second parameter (deprecated form).
  const cfgArg = typeof p[1] === 'string' ? { encoding: p[1] } : p[1];
  const cfg = commonConfig(ctx, cfgArg);
  if (cfg.commitment === 'processed') throw invalidParams('Method does not support commitment below `confirmed`');
  const encoding = cfg.raw.encoding ?? 'json';
  if (!['json', 'jsonParsed', 'base64', 'base58', 'binary'].includes(encoding as string)) {
    throw invalidParams(`Invalid params: unknown variant \`${String(encoding)}\`, expected one of \`binary\`, \`base64\`, \`base58\`, \`json\`, \`jsonParsed\``);
  }
  const maxVersion = optionalUsize(cfg.raw.maxSupportedTransactionVersion, 'maxSupportedTransactionVersion');
  const rec = ctx.bank.record(signature);
  if (rec === undefined || rec.slot > cfg.slot) return 'null';
  const version = rec.parsed.version;
  if (version !== 'legacy' && (maxVersion === undefined || maxVersion < version)) {
    throw new RelayError(
      Errors.UNSUPPORTED_TX_VERSION,
      `Transaction version (${version}) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": ${version}`,
    );
  }
  let transaction: unknown;
  switch (encoding) {
    case 'base64':
      transaction = [Buffer.from(rec.tx).toString('base64'), 'base64'];
      break;
    case 'base58':
      transaction = [bs58.encode(rec.tx), 'base58'];
      break;
    case 'binary':
      transaction = bs58.encode(rec.tx);
      break;
    default:
      transaction = { signatures: rec.parsed.signatures, message: messageJson(rec, encoding === 'jsonParsed') };
  }
  const out: Record<string, unknown> = { slot: rec.slot, blockTime: rec.blockTime, transaction, meta: metaJson(rec) };
  if (maxVersion !== undefined) out.version = rec.parsed.version;
  return JSON.stringify(out);
};

export const getTransactionMethods: ReadonlyArray<readonly [string, H]> = [['getTransaction', getTransaction]];
