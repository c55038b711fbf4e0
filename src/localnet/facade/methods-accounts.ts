// Facade methods about accounts (localnet process, main thread; cold): getBalance, getAccountInfo,
// getMinimumBalanceForRentExemption, requestAirdrop (a real faucet transfer committed in the current slot).
import { PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import { Errors, RelayError } from '../../errors/registry.js';
import type { MethodHandler } from '../../jsonrpc/dispatch.js';
import { configObject, optionalUsize, paramsArray } from '../../jsonrpc/params.js';
import { commonConfig, invalidParams, pubkeyParam, withContext, type FacadeContext } from './context.js';

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
  const encoding = cfg.raw.encoding ?? 'binary';
  const a = ctx.bank.svm.getAccount(key.bytes);
  if (a === null) return withContext(cfg.slot, null);
  let data: Uint8Array = a.data();
  const slice = configObject(cfg.raw.dataSlice);
  if (slice !== undefined) {
    const offset = optionalUsize(slice.offset, 'offset') ?? 0;
    const length = optionalUsize(slice.length, 'length') ?? 0;
    data = data.subarray(offset, offset + length);
  }
  let dataJson: unknown;
  switch (encoding) {
    case 'binary':
      dataJson = bs58.encode(data);
      break;
    case 'base58':
      if (data.length > 128) throw invalidParams('Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.');
      dataJson = [bs58.encode(data), 'base58'];
      break;
    case 'base64':
    case 'jsonParsed': // no parser here: Agave falls back to base64 for accounts it cannot parse
      dataJson = [Buffer.from(data).toString('base64'), 'base64'];
      break;
    default:
      throw invalidParams(`Invalid params: unknown variant \`${String(encoding)}\`, expected one of \`binary\`, \`base58\`, \`base64\`, \`jsonParsed\`, \`base64+zstd\``);
  }
  const rentEpoch = a.rentEpoch();
  return withContext(cfg.slot, {
    data: dataJson,
    executable: a.executable(),
    lamports: Number(a.lamports()),
    owner: bs58.encode(a.owner()),
    rentEpoch: rentEpoch >= 2n ** 64n - 1n ? 18446744073709551615 : Number(rentEpoch),
    space: a.data().length,
  });
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
  ['getMinimumBalanceForRentExemption', getMinimumBalanceForRentExemption],
  ['requestAirdrop', requestAirdrop],
];
