// PubSub method parameters checked as Agave's rpc_pubsub does, BEFORE anything goes upstream (front thread; per
// subscribe, cold). Each subscribe is turned into its canonical upstream form — defaults written out, unknown config
// members dropped — which is also what identical subscriptions are shared by (subscription-hub.ts).
// Agave's wording: jsonrpc-derive's param count errors (src/jsonrpc/params.ts); serde's type errors as jsonrpc-core's
// Params::parse words them, "Invalid params: <serde error>." with its trailing period; rpc_pubsub's param()
// for strings that do not parse: "Invalid Request: Invalid pubkey provided" / "... signature provided" (-32602);
// a method without params given some: "Invalid parameters: No parameters were expected"; an unknown subscription id:
// "Invalid subscription id." (-32602).
import { Errors, Failure, RelayError } from '../../errors/registry.js';
import { configObject, optionalBoolean, optionalCommitment, optionalUsize, paramsArray } from '../../jsonrpc/params.js';
import { serdeType } from '../../errors/serde-type.js';
import { decodeBase58Into, Base58DecodeError } from '../../tx/base58.js';
import type { SubscribeRequest } from './subscription-hub.js';

const ACCOUNT_ENCODINGS = ['binary', 'base58', 'base64', 'jsonParsed', 'base64+zstd'] as const;
/** Agave MAX_BASE58_SIGNATURE_LEN / Pubkey's MAX_BASE58_LEN: longer strings are refused before decoding. */
const MAX_BASE58_SIGNATURE_LEN = 88;
const MAX_BASE58_PUBKEY_LEN = 44;

const scratch = new Uint8Array(128);

function invalid(message: string): RelayError {
  return new RelayError(Errors.INVALID_PARAMS, message);
}

export const INVALID_SUBSCRIPTION_ID = Object.freeze(new Failure(Errors.INVALID_PARAMS, 'Invalid subscription id.'));

/** Decodes to exactly `bytes` bytes of base58 within `maxLen` characters. */
function isBase58Of(v: string, bytes: number, maxLen: number): boolean {
  if (v.length > maxLen) return false;
  try {
    return decodeBase58Into(scratch, v, scratch.length) === bytes;
  } catch (err) {
    if (err instanceof Base58DecodeError) return false;
    throw err;
  }
}

function stringParam(v: unknown, thing: string, bytes: number, maxLen: number): string {
  if (typeof v !== 'string') throw invalid(`Invalid params: invalid type: ${serdeType(v)}, expected a string.`);
  if (!isBase58Of(v, bytes, maxLen)) throw invalid(`Invalid Request: Invalid ${thing} provided`);
  return v;
}

/** jsonrpc-core's expect_no_params: absent, null or [] only. */
function noParams(params: unknown): void {
  if (params === undefined || params === null || (Array.isArray(params) && params.length === 0)) return;
  throw invalid('Invalid parameters: No parameters were expected');
}

export function slotSubscribeRequest(params: unknown): SubscribeRequest {
  noParams(params);
  return { method: 'slotSubscribe', paramsJson: '[]', oneShot: false };
}

export function rootSubscribeRequest(params: unknown): SubscribeRequest {
  noParams(params);
  return { method: 'rootSubscribe', paramsJson: '[]', oneShot: false };
}

/** Agave's slotsUpdatesSubscribe (no params): createdBank, frozen, optimisticConfirmation, root, ... per slot. */
export function slotsUpdatesSubscribeRequest(params: unknown): SubscribeRequest {
  noParams(params);
  return { method: 'slotsUpdatesSubscribe', paramsJson: '[]', oneShot: false };
}

/** [signature, {commitment?, enableReceivedNotification?}]; commitment defaults to finalized (Agave). */
export function signatureSubscribeRequest(params: unknown): SubscribeRequest {
  const p = paramsArray(params, 1, 2);
  const signature = stringParam(p[0], 'signature', 64, MAX_BASE58_SIGNATURE_LEN);
  const cfg = configObject(p[1]) ?? {};
  const commitment = optionalCommitment(cfg.commitment, 'commitment') ?? 'finalized';
  const received = optionalBoolean(cfg.enableReceivedNotification, 'enableReceivedNotification') ?? false;
  return {
    method: 'signatureSubscribe',
    paramsJson: JSON.stringify([signature, { commitment, enableReceivedNotification: received }]),
    oneShot: true,
  };
}

/** [pubkey, {commitment?, encoding?, dataSlice?, minContextSlot? (ignored, as Agave)}]; encoding defaults to binary. */
export function accountSubscribeRequest(params: unknown): SubscribeRequest {
  const p = paramsArray(params, 1, 2);
  const pubkey = stringParam(p[0], 'pubkey', 32, MAX_BASE58_PUBKEY_LEN);
  const cfg = configObject(p[1]) ?? {};
  const encoding = cfg.encoding ?? 'binary';
  if (typeof encoding !== 'string' || !(ACCOUNT_ENCODINGS as readonly string[]).includes(encoding)) {
    const what = typeof encoding === 'string' ? `unknown variant \`${encoding}\`` : `invalid type: ${serdeType(encoding)}`;
    throw invalid(`Invalid params: ${what}, expected one of \`binary\`, \`base58\`, \`base64\`, \`jsonParsed\`, \`base64+zstd\`.`);
  }
  const commitment = optionalCommitment(cfg.commitment, 'commitment') ?? 'finalized';
  optionalUsize(cfg.minContextSlot, 'minContextSlot');
  const config: Record<string, unknown> = { commitment, encoding };
  const slice = configObject(cfg.dataSlice);
  if (slice !== undefined) {
    const offset = optionalUsize(slice.offset, 'offset');
    const length = optionalUsize(slice.length, 'length');
    if (offset === undefined || length === undefined) throw invalid(`Invalid params: missing field \`${offset === undefined ? 'offset' : 'length'}\``);
    config.dataSlice = { offset, length };
  }
  return { method: 'accountSubscribe', paramsJson: JSON.stringify([pubkey, config]), oneShot: false };
}

/**
 * receiptSubscribe (the relay's own, docs/receipts.md): [signature] -> that signature; no params, [] or
 * [{"all": true}] -> every receipt of the key (null).
 */
export function receiptSubscribeSignature(params: unknown): string | null {
  if (params === undefined || params === null || (Array.isArray(params) && params.length === 0)) return null;
  const p = paramsArray(params, 1, 1);
  if (typeof p[0] === 'string') return stringParam(p[0], 'signature', 64, MAX_BASE58_SIGNATURE_LEN);
  const cfg = configObject(p[0]);
  if (cfg !== undefined && cfg.all === true && Object.keys(cfg).length === 1) return null;
  throw invalid('Invalid params: expected [signature], [] or [{"all": true}].');
}

/** [subscription id]: a u64. */
export function unsubscribeId(params: unknown): number {
  const p = paramsArray(params, 1, 1);
  const id = p[0];
  if (typeof id !== 'number' || !Number.isInteger(id) || id < 0) throw invalid(`Invalid params: invalid type: ${serdeType(id)}, expected u64.`);
  return id;
}
