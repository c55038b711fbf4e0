// Facade methods about accounts (localnet process, main thread; cold): getBalance, getAccountInfo,
// getMultipleAccounts (at most 100, Agave's MAX_MULTIPLE_ACCOUNTS; rendering in account-encoding.ts),
// getMinimumBalanceForRentExemption, requestAirdrop (a real faucet transfer committed in the current slot).
import { PublicKey } from '@solana/web3.js';
import { Errors, RelayError } from '../../errors/registry.js';
import type { MethodHandler } from '../../jsonrpc/dispatch.js';
import { optionalUsize, paramsArray } from '../../jsonrpc/params.js';
import { serdeType } from '../../errors/serde-type.js';
import { accountRender, accountsJson, uiAccount } from './account-encoding.js';
import { API_VERSION, commonConfig, invalidParams, pubkeyParam, withContext, type FacadeContext } from './context.js';

type H = MethodHandler<FacadeContext>;

const getBalance: H = (params, ctx) => {
  const p = paramsArray(params, 1, 2);
  const key = pubkeyParam(p[0]);
  const cfg = commonConfig(ctx, p[1]);
  return withContext(cfg.slot, Number(ctx.bank.balance(key.bytes)));
};

const getAccountInfo: H = (params, ctx) => {
  const p = paramsArray(params, 1, 2);
  const key = pubkeyParam(p[0]);
  const cfg = commonConfig(ctx, p[1]);
  const render = accountRender(cfg.raw, 'binary');
  const a = ctx.bank.svm.getAccount(key.bytes);
  return accountsJson({ context: { apiVersion: API_VERSION, slot: cfg.slot }, value: a === null ? null : uiAccount(a, render) });
};

/** Agave MAX_MULTIPLE_ACCOUNTS. */
const MAX_MULTIPLE_ACCOUNTS = 100;

const getMultipleAccounts: H = (params, ctx) => {
  const p = paramsArray(params, 1, 2);
  if (!Array.isArray(p[0])) throw invalidParams(`Invalid params: invalid type: ${serdeType(p[0])}, expected a sequence`);
  if (p[0].length > MAX_MULTIPLE_ACCOUNTS) throw invalidParams(`Too many inputs provided; max ${MAX_MULTIPLE_ACCOUNTS}`);
  const keys = p[0].map((k) => pubkeyParam(k));
  const cfg = commonConfig(ctx, p[1]);
  const render = accountRender(cfg.raw, 'base64');
  const value = keys.map((k) => {
    const a = ctx.bank.svm.getAccount(k.bytes);
    return a === null ? null : uiAccount(a, render);
  });
  return accountsJson({ context: { apiVersion: API_VERSION, slot: cfg.slot }, value });
};

const getMinimumBalanceForRentExemption: H = (params, ctx) => {
  const p = paramsArray(params, 1, 2);
  const len = optionalUsize(p[0], 'data_len') ?? 0;
  commonConfig(ctx, p[1]);
  return String(ctx.bank.svm.minimumBalanceForRentExemption(BigInt(len)));
};

const requestAirdrop: H = (params, ctx) => {
  const p = paramsArray(params, 2, 3);
  const key = pubkeyParam(p[0]);
  const lamports = optionalUsize(p[1], 'lamports');
  if (lamports === undefined) throw invalidParams('Invalid params: invalid type: null, expected u64');
  commonConfig(ctx, p[2]);
  const out = ctx.producer.airdrop(new PublicKey(key.bytes), BigInt(lamports));
  if (!out.landed) throw new RelayError(Errors.INTERNAL_ERROR, `Internal error: airdrop failed: ${JSON.stringify(out.err)}`);
  return JSON.stringify(out.record.signature);
};

export const accountMethods: ReadonlyArray<readonly [string, H]> = [
  ['getBalance', getBalance],
  ['getAccountInfo', getAccountInfo],
  ['getMultipleAccounts', getMultipleAccounts],
  ['getMinimumBalanceForRentExemption', getMinimumBalanceForRentExemption],
  ['requestAirdrop', requestAirdrop],
];
