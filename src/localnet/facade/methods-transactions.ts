// Facade methods about transactions (localnet process, main thread; per call, cold except sendTransaction):
// sendTransaction (decode, optional preflight, then the TPU path a plain RPC node uses), simulateTransaction,
// getSignatureStatuses, getRecentPrioritizationFees. getTransaction lives in get-transaction.ts.
import bs58 from 'bs58';
import { Errors, RelayError } from '../../errors/registry.js';
import type { MethodHandler } from '../../jsonrpc/dispatch.js';
import { configObject, optionalBoolean, optionalCommitment, optionalUsize, paramsArray } from '../../jsonrpc/params.js';
import { transactionErrorText } from '../../rpc/transaction-error-text.js';
import { simulate } from '../simulate.js';
import { statusJson } from '../tx-error.js';
import { commonConfig, invalidParams, pubkeyParam, withContext, type FacadeContext } from './context.js';
import { decodeTxParam, txEncoding, type DecodedTx } from './tx-param.js';

type H = MethodHandler<FacadeContext>;

/** Agave MAX_GET_SIGNATURE_STATUSES_QUERY_ITEMS / the prioritization-fee query's address cap. */
const MAX_SIGNATURE_STATUSES = 256;
const MAX_PRIORITIZATION_FEE_ADDRESSES = 128;

function simulateValue(ctx: FacadeContext, d: DecodedTx, sigVerify: boolean, replace: boolean, accounts: string[] | null, inner: boolean): Record<string, unknown> {
  return simulate(ctx.bank, d.bytes, d.parsed, { sigVerify, replaceRecentBlockhash: replace, accounts, innerInstructions: inner });
}

const sendTransaction: H = (params, ctx) => {
  const p = paramsArray(params, 1, 2);
  const cfg = configObject(p[1]) ?? {};
  const encoding = txEncoding(cfg.encoding);
  const skipPreflight = optionalBoolean(cfg.skipPreflight, 'skipPreflight') ?? false;
  optionalCommitment(cfg.preflightCommitment, 'preflightCommitment');
  const maxRetries = optionalUsize(cfg.maxRetries, 'maxRetries');
  commonConfig(ctx, { minContextSlot: cfg.minContextSlot, commitment: 'processed' });
  const d = decodeTxParam(p[0], encoding, ctx.maxTransactionBytes);
  const signature = d.parsed.signatures[0];
  if (!skipPreflight) {
    const value = simulateValue(ctx, d, true, false, null, false);
    if (value.err === 'SignatureFailure') throw new RelayError(Errors.SIGNATURE_VERIFICATION_FAILED);
    if (value.err !== null) {
      throw new RelayError(Errors.PREFLIGHT_FAILED, `Transaction simulation failed: ${transactionErrorText(value.err)}`, value);
    }
  }
  return ctx.sendToTpu(d.bytes, signature, maxRetries).then(() => JSON.stringify(signature));
};

const simulateTransaction: H = (params, ctx) => {
  const p = paramsArray(params, 1, 2);
  const cfg = commonConfig(ctx, p[1]);
  const raw = cfg.raw;
  const sigVerify = optionalBoolean(raw.sigVerify, 'sigVerify') ?? false;
  const replace = optionalBoolean(raw.replaceRecentBlockhash, 'replaceRecentBlockhash') ?? false;
  const inner = optionalBoolean(raw.innerInstructions, 'innerInstructions') ?? false;
  if (sigVerify && replace) throw invalidParams('sigVerify may not be used with replaceRecentBlockhash');
  const encoding = txEncoding(raw.encoding);
  let accounts: string[] | null = null;
  const acc = configObject(raw.accounts);
  if (acc !== undefined) {
    const enc = acc.encoding ?? 'base64';
    if (enc === 'base58' || enc === 'binary') throw invalidParams('base58 encoding not supported');
    if (enc !== 'base64' && enc !== 'jsonParsed' && enc !== 'base64+zstd') throw invalidParams(`Invalid params: unknown variant \`${String(enc)}\``);
    if (!Array.isArray(acc.addresses)) throw invalidParams('Invalid params: missing field `addresses`');
    accounts = acc.addresses as string[];
  }
  const d = decodeTxParam(p[0], encoding, ctx.maxTransactionBytes);
  if (accounts !== null) {
    // Agave: at most as many addresses as the transaction has account keys (static + loaded; the localnet has no lookups).
    const max = d.parsed.accountKeys.length;
    if (accounts.length > max) throw invalidParams(`Too many accounts provided; max ${max}`);
    accounts = accounts.map((a) => pubkeyParam(a).text);
  }
  // Agave (rpc.rs simulate_transaction): a signature that does not verify is a normal result with err
  // "SignatureFailure", not an RPC error (sendTransaction's preflight is what answers -32003).
  const value = simulateValue(ctx, d, sigVerify, replace, accounts, inner);
  return withContext(ctx.clock.current, value);
};

function signatureParam(v: unknown): string {
  if (typeof v !== 'string') throw invalidParams('Invalid params: invalid type: expected a string');
  let n: number;
  try {
    n = bs58.decode(v).length;
  } catch {
    throw invalidParams('Invalid param: Invalid');
  }
  if (n !== 64) throw invalidParams('Invalid param: WrongSize');
  return v;
}

/** Agave's status entry for a committed transaction, as of the current slot. */
export function statusOf(ctx: FacadeContext, slot: number, err: unknown): Record<string, unknown> {
  // Under Alpenglow processed -> finalized (confirmed is the same thing); under Tower processed -> confirmed -> finalized.
  const c = ctx.consensus.statusOf(slot);
  return { slot, confirmations: c.confirmations, err, status: statusJson(err as never), confirmationStatus: c.confirmationStatus };
}

const getSignatureStatuses: H = (params, ctx) => {
  const p = paramsArray(params, 1, 2);
  configObject(p[1]);
  if (!Array.isArray(p[0])) throw invalidParams('Invalid params: invalid type: expected a sequence');
  if (p[0].length > MAX_SIGNATURE_STATUSES) throw invalidParams(`Too many inputs provided; max ${MAX_SIGNATURE_STATUSES}`);
  const out = p[0].map((s) => {
    const rec = ctx.bank.status(signatureParam(s));
    return rec === undefined ? null : statusOf(ctx, rec.slot, rec.err);
  });
  return withContext(ctx.consensus.processedSlot(), out);
};

const getRecentPrioritizationFees: H = (params, ctx) => {
  const p = paramsArray(params, 0, 1);
  const list = p[0] ?? [];
  if (!Array.isArray(list)) throw invalidParams('Invalid params: invalid type: expected a sequence');
  if (list.length > MAX_PRIORITIZATION_FEE_ADDRESSES) throw invalidParams(`Too many inputs provided; max ${MAX_PRIORITIZATION_FEE_ADDRESSES}`);
  const keys = list.map((a) => pubkeyParam(a).text);
  return JSON.stringify(ctx.fees.query(ctx.clock.current, keys));
};

export const transactionMethods: ReadonlyArray<readonly [string, H]> = [
  ['sendTransaction', sendTransaction],
  ['simulateTransaction', simulateTransaction],
  ['getSignatureStatuses', getSignatureStatuses],
  ['getRecentPrioritizationFees', getRecentPrioritizationFees],
];
