// `params` of the JSON-RPC methods the relay serves, valid or with one fault, and the outcomes each must get
// (harness process; generation, hot). sendTransaction follows Agave ([tx, {skipPreflight, preflightCommitment,
// encoding, maxRetries, minContextSlot}], unknown config keys ignored); getLeaderSlots is [startSlot, limit?]
// (spec section 4.2). A config field of the wrong type or value must be -32602 naming the field (issue #18).
import { BASE_SLOT } from './fake-upstream.js';
import { fixed, type ErrorRule, type RpcOutcome } from './expectations.js';
import { Raw, oddValue, raw, wrongTyped, type JsonType } from './json-text.js';
import type { KeyProfile } from './keys.js';
import type { Rng } from './rng.js';
import { encodeText, faultyText, type TextEncoding } from './tx-encoding.js';
import { sendOutcomes } from './tx-expect.js';
import { txCase } from './tx-mutations.js';
import type { PoolTx } from './tx-pool.js';

export const DEFAULT_LEADER_LIMIT = 20;
export const LEADER_LIMIT_CAP = 100;
const ABSENT = Symbol('absent');

export interface Params {
  /** The `params` member, or undefined for none. */
  readonly params: unknown;
  readonly outcomes: readonly RpcOutcome[];
  readonly label: string;
}

const err = (rule: ErrorRule): RpcOutcome[] => [{ error: rule }];
const invalid = (extra: Omit<ErrorRule, 'code'>): RpcOutcome[] => err({ code: -32602, ...extra });
const NOT_ARRAY = invalid({ message: '`params` should be an array' });

function countFault(rng: Rng, valid: unknown[]): Params {
  const n = rng.pick([0, 3, 4, 5]);
  const params = n === 0 ? rng.pick<unknown>([[], undefined, null]) : [...valid, ...Array.from({ length: n - valid.length }, () => oddValue(rng))];
  return { params, outcomes: invalid({ message: 'Invalid parameters: Expected from 1 to 2 parameters.', data: { exact: `Got: ${n}` } }), label: `${n} params` };
}

function notArray(rng: Rng): Params {
  let v = oddValue(rng);
  while (v === null || Array.isArray(v) || (v instanceof Raw && (Array.isArray(v.value) || typeof v.value === 'symbol'))) v = oddValue(rng);
  return { params: v, outcomes: NOT_ARRAY, label: 'params not an array' };
}

/**
 * Numbers a usize (maxRetries, minContextSlot) or u64 (getLeaderSlots) field must refuse: negative, fractional, not
 * finite; for usize also 2^53 (the relay takes integers up to 2^53 - 1 there; a u64 slot beyond is just not covered).
 */
function badNumber(rng: Rng, u64 = false): unknown {
  const values: unknown[] = [-1, -42, 1.5, 0.0000001, raw('1e400'), raw('-1e400'), raw('-1.5e3')];
  if (!u64) values.push(2 ** 53);
  return rng.pick(values);
}

type Field = 'skipPreflight' | 'preflightCommitment' | 'encoding' | 'maxRetries' | 'minContextSlot';
const FIELD_TYPES: Readonly<Record<Field, JsonType>> = {
  skipPreflight: 'boolean',
  preflightCommitment: 'string',
  encoding: 'string',
  maxRetries: 'number',
  minContextSlot: 'number',
};

/** sendTransaction params: mostly valid (a real or mutated transaction), else one fault. */
export function sendParams(rng: Rng, key: KeyProfile, pool: readonly PoolTx[]): Params {
  const tx = txCase(rng, pool);
  const encMember = rng.weighted<unknown>([[20, ABSENT], [14, 'base58'], [4, 'binary'], [55, 'base64'], [4, null]]);
  const encoding: TextEncoding = encMember === 'base64' ? 'base64' : 'base58';
  const useFaultyText = rng.chance(0.06) && tx.intact && tx.outcome.kind === 'accept';
  const enc = useFaultyText ? faultyText(rng, tx, encoding) : encodeText(tx, encoding);
  const cfg: Record<string, unknown> = {};
  if (encMember !== ABSENT) cfg.encoding = encMember;
  const skip = rng.weighted<unknown>([[55, true], [25, false], [15, ABSENT], [5, null]]);
  if (skip !== ABSENT) cfg.skipPreflight = skip;
  if (rng.chance(0.4)) cfg.preflightCommitment = rng.chance(0.1) ? null : rng.pick(['processed', 'confirmed', 'finalized']);
  if (rng.chance(0.3)) cfg.maxRetries = rng.chance(0.1) ? null : rng.pick([0, 1, 3, 10, 2 ** 31, 2 ** 53 - 1]);
  const ctxChoice = rng.weighted<'none' | 'reached' | 'unreached'>([[85, 'none'], [9, 'reached'], [6, 'unreached']]);
  if (ctxChoice === 'reached') cfg.minContextSlot = rng.chance(0.2) ? raw('-0') : rng.int(BASE_SLOT - 100);
  if (ctxChoice === 'unreached') cfg.minContextSlot = 1_000_000_000 + rng.int(1_000_000);
  if (rng.chance(0.08)) cfg[rng.pick(['foo', 'skippreflight', 'commitment', 'encoding2', 'constructor'])] = oddValue(rng);

  if (rng.chance(0.15)) return sendFault(rng, enc.text, cfg);

  // No config at all: every default (base58 text, preflight).
  const noConfig = encMember === ABSENT && skip === ABSENT && Object.keys(cfg).length === 0 && rng.chance(0.5);
  const params = noConfig ? (rng.chance(0.8) ? [enc.text] : [enc.text, null]) : [enc.text, cfg];
  const outcomes = sendOutcomes(enc.outcome, { key, preflight: skip !== true, minContextSlot: ctxChoice, intact: tx.intact, simulation: tx.simulation });
  return { params, outcomes, label: `${enc.label}; ${JSON.stringify({ skipPreflight: skip === ABSENT ? 'absent' : skip, minContextSlot: ctxChoice })}` };
}

function sendFault(rng: Rng, text: string, cfg: Record<string, unknown>): Params {
  const fault = rng.pick(['not array', 'count', 'tx type', 'config type', 'field type', 'field type', 'field value', 'field value']);
  if (fault === 'not array') return notArray(rng);
  if (fault === 'count') return countFault(rng, [text, cfg]);
  if (fault === 'tx type') {
    return { params: [wrongTyped(rng, 'string'), cfg], outcomes: invalid({ prefixes: ['Invalid params'] }), label: 'transaction not a string' };
  }
  if (fault === 'config type') {
    return { params: [text, wrongTyped(rng, 'object')], outcomes: invalid({ includes: 'config' }), label: 'config not an object' };
  }
  // One field wrong, every other one valid (the config's other fields are dropped to keep it so).
  const field = rng.pick(Object.keys(FIELD_TYPES) as Field[]);
  const valid: Record<string, unknown> = { skipPreflight: true, encoding: typeof cfg.encoding === 'string' ? cfg.encoding : 'base58' };
  if (fault === 'field type') {
    valid[field] = wrongTyped(rng, FIELD_TYPES[field]);
    return { params: [text, valid], outcomes: invalid({ includes: field }), label: `${field} of the wrong type` };
  }
  if (field === 'encoding') {
    const v = rng.pick(['json', 'jsonParsed', 'hex', 'base-64', 'BASE64', '', 'base64 ', 'ÿ']);
    valid.encoding = v;
    const outcomes = v === 'json' || v === 'jsonParsed'
      ? invalid({ message: `unsupported encoding: ${v}. Supported encodings: base58, base64` })
      : invalid({ prefixes: ['Invalid params'] });
    return { params: [text, valid], outcomes, label: `encoding ${JSON.stringify(v)}` };
  }
  if (field === 'preflightCommitment') {
    valid.preflightCommitment = rng.pick(['recent', 'max', 'root', 'single', 'singleGossip', 'FINALIZED', '', 'processed ', 'finalised', 'é']);
  } else if (field === 'skipPreflight') {
    valid.skipPreflight = rng.pick<unknown>(['true', 0, 1, 'false']);
  } else {
    valid[field] = badNumber(rng);
  }
  return { params: [text, valid], outcomes: invalid({ includes: field }), label: `${field} = ${JSON.stringify(valid[field] instanceof Raw ? (valid[field] as Raw).text : valid[field])}` };
}

/** getLeaderSlots params: [startSlot, limit?], valid or with one fault. */
export function leaderSlotsParams(rng: Rng): Params {
  const start = rng.weighted<unknown>([[80, BASE_SLOT + rng.range(-30, 900)], [4, 0], [2, raw('-0')], [4, 2 ** 53 - 1], [3, raw('18446744073709551615')], [3, raw('1e19')]]);
  const limit = rng.weighted<unknown>([[40, ABSENT], [5, null], [40, rng.range(1, 100)], [10, rng.range(101, 1000)], [5, 2 ** 53 - 1]]);
  const valid = limit === ABSENT ? [start] : [start, limit];
  if (rng.chance(0.75)) {
    const startSlot = Number(start instanceof Raw ? start.value : start);
    const effective = limit === ABSENT || limit === null ? DEFAULT_LEADER_LIMIT : Math.min(LEADER_LIMIT_CAP, limit as number);
    return { params: valid, outcomes: [{ result: 'leaderSlots', startSlot, limit: effective }], label: `getLeaderSlots ${startSlot} limit ${String(limit === ABSENT ? 'absent' : limit)}` };
  }
  const fault = rng.pick(['not array', 'count', 'start type', 'start value', 'limit type', 'limit value', 'limit zero']);
  switch (fault) {
    case 'not array':
      return notArray(rng);
    case 'count':
      return countFault(rng, [start, rng.range(1, 10)]);
    case 'start type':
      return { params: [wrongTyped(rng, 'number'), ...valid.slice(1)], outcomes: invalid({ includes: 'startSlot' }), label: 'startSlot of the wrong type' };
    case 'start value':
      return { params: [badNumber(rng, true), ...valid.slice(1)], outcomes: invalid({ includes: 'startSlot' }), label: 'startSlot not a u64' };
    case 'limit type':
      return { params: [start, wrongTyped(rng, 'number')], outcomes: invalid({ includes: 'limit' }), label: 'limit of the wrong type' };
    case 'limit value':
      return { params: [start, badNumber(rng, true)], outcomes: invalid({ includes: 'limit' }), label: 'limit not a u64' };
    default:
      return { params: [start, rng.chance(0.7) ? 0 : raw('-0')], outcomes: invalid({ includes: 'limit' }), label: 'limit 0' };
  }
}

/**
 * Methods neither host serves (and prototype names a plain-object table would find). getProgramAccounts and
 * requestAirdrop are deliberately off the JSON-RPC host's passthrough list (docs/passthrough.md).
 */
export const UNKNOWN_METHODS = ['getProgramAccounts', 'requestAirdrop', 'sendBundle', '', 'SendTransaction', 'sendTransaction ', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'é'];

export function unknownMethodOutcome(): RpcOutcome[] {
  return err(fixed('method_not_found'));
}
