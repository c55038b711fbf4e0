// Bodies for the relay host's REST paths, POST /v1/submit (JSON) and POST /v1/transactions (raw bytes or text),
// with their expected answers (harness process; generation, hot). docs/relay-api.md: /v1/submit checks, in order,
// the JSON, `transaction`, `encoding` (absent or null: base64), `routes` (bad shape -> 400 unknown_route naming
// `routes`, no allowed route -> 403), `maxRetries`, then the transaction; /v1/transactions uses the key's default
// routes, `?maxRetries=` (digits only) and, for text, `?encoding=`.
import { anyOf, restError, restRateLimited, type Expectation } from './expectations.js';
import { nestedArrays, oddValue, raw, shuffled, toJsonText, wrongTyped } from './json-text.js';
import type { KeyProfile } from './keys.js';
import type { Rng } from './rng.js';
import { encodeText, faultyText, rawOutcome, type EncodedTx, type TextEncoding } from './tx-encoding.js';
import { restTxExpectation } from './tx-expect.js';
import { TX_TYPE, txCase, type TxCase } from './tx-mutations.js';
import { notUtf8 } from './cases-rpc.js';
import type { PoolTx } from './tx-pool.js';

export interface RestEnv {
  readonly key: KeyProfile;
  readonly pool: readonly PoolTx[];
}

export interface RestCase {
  readonly body: Buffer;
  /** A content type the path accepts for this body. */
  readonly contentType: string;
  /** Query parameters (besides a key). */
  readonly query: readonly (readonly [string, string])[];
  readonly expectation: Expectation;
  readonly label: string;
}

const ABSENT = Symbol('absent');
const BAD_ROUTES: readonly unknown[] = [5, 'rpc', true, {}, [], [5], [['rpc']], ['RPC'], ['x'], [null], ['rpc', 7], ['rpc', 'x'], '', 'DEFAULT', { toString: 1 }, raw('1e400')];
const UNAVAILABLE_ROUTES: readonly unknown[] = [['direct'], ['jito'], ['static'], ['direct', 'jito', 'static']];

function textFor(rng: Rng, tx: TxCase, encoding: TextEncoding): EncodedTx {
  return rng.chance(0.06) && tx.intact && tx.outcome.kind === 'accept' ? faultyText(rng, tx, encoding) : encodeText(tx, encoding);
}

function tightened(key: KeyProfile, e: Expectation): Expectation {
  return key.tight ? anyOf(e, restRateLimited()) : e;
}

/**
 * No route to send by (the fuzz relay runs only rpc): the key's policy decides first (none of the routes asked is
 * allowed: 403 route_not_allowed), then the relay (some are allowed, none runs: 400 route_not_configured, naming
 * what it runs). The noroute key allows direct and jito; the others every route. "default" asks for the key's
 * defaults, none of which the noroute key is allowed.
 */
function noRouteExpectation(requested: unknown, key: RestEnv['key']): Expectation {
  const asked = Array.isArray(requested) ? (requested as unknown[]) : [];
  const allowed = key.rpcRoute ? asked : asked.filter((r) => r === 'direct' || r === 'jito');
  return allowed.length === 0
    ? restError('route_not_allowed', { includes: 'routes' })
    : restError('route_not_configured', { includes: 'routes', data: { exact: { reason: 'route_not_configured', configured: ['rpc'] } } });
}

const JSON_TYPES = ['application/json', 'application/json; charset=utf-8', 'Application/JSON', 'application/json;charset=UTF-8'];

/** POST /v1/submit. */
export function submitCase(rng: Rng, env: RestEnv): RestCase {
  const contentType = rng.pick(JSON_TYPES);
  const tx = txCase(rng, env.pool);
  const encMember = rng.weighted<unknown>([[40, ABSENT], [25, 'base64'], [8, null], [15, 'base58'], [2, 'binary']]);
  const enc = textFor(rng, tx, encMember === 'base58' || encMember === 'binary' ? 'base58' : 'base64');
  const body: Record<string, unknown> = { transaction: enc.text };
  if (encMember !== ABSENT) body.encoding = encMember;
  const routes = rng.weighted<unknown>([[35, ABSENT], [5, null], [10, 'default'], [25, ['rpc']], [8, ['rpc', 'direct']], [4, ['jito', 'rpc', 'rpc']], [3, ['static', 'rpc']]]);
  if (routes !== ABSENT) body.routes = routes;
  const maxRetries = rng.weighted<unknown>([[60, ABSENT], [5, null], [30, rng.int(100)], [5, 2 ** 53 - 1]]);
  if (maxRetries !== ABSENT) body.maxRetries = maxRetries;
  if (rng.chance(0.08)) body[rng.pick(['foo', 'Transaction', 'route', 'skipPreflight'])] = oddValue(rng);

  const fault = rng.chance(0.2) ? rng.pick(['not json', 'not an object', 'transaction', 'encoding type', 'encoding value', 'routes shape', 'routes shape', 'routes unavailable', 'maxRetries']) : 'none';
  let label = `${enc.label}; routes ${JSON.stringify(routes === ABSENT ? 'absent' : routes)}`;
  // Checks in the relay's order; the first one that fails decides.
  let expectation: Expectation | null = null;
  if (fault === 'not json') {
    // Cut short, trailing garbage, or not UTF-8 (docs/protocol-decisions.md: not JSON either).
    const text = toJsonText(body);
    const how = rng.int(3);
    const bytes = how === 0 ? Buffer.from(text.slice(0, rng.int(text.length))) : how === 1 ? Buffer.from(text + ',') : notUtf8(rng, text);
    return { body: bytes, contentType, query: [], expectation: tightened(env.key, restError('parse_error', { prefixes: ['Parse error'] })), label: how === 2 ? 'body not UTF-8' : 'body not JSON' };
  }
  if (fault === 'not an object') {
    const text = rng.pick(['[]', `[${toJsonText(body)}]`, '5', '"x"', 'null', 'true', '1e400']);
    return { body: Buffer.from(text), contentType, query: [], expectation: tightened(env.key, restError('invalid_params', { prefixes: ['Invalid params'] })), label: `body ${text.slice(0, 20)}` };
  }
  if (fault === 'transaction') {
    if (rng.chance(0.3)) delete body.transaction;
    else body.transaction = wrongTyped(rng, 'string');
    expectation = restError('invalid_params', { includes: 'transaction' });
    label = 'transaction missing or not a string';
  } else if (fault === 'encoding type') {
    body.encoding = wrongTyped(rng, 'string');
    expectation = restError('invalid_params', { includes: 'encoding' });
    label = 'encoding of the wrong type';
  } else if (fault === 'encoding value') {
    const v = rng.pick(['json', 'jsonParsed', 'hex', '', 'BASE64', 'base64 ']);
    body.encoding = v;
    expectation = v.startsWith('json')
      ? restError('tx_unsupported_encoding', { message: `unsupported encoding: ${v}. Supported encodings: base58, base64` })
      : restError('invalid_params', { prefixes: ['Invalid params'] });
    label = `encoding ${JSON.stringify(v)}`;
  } else if (fault === 'routes shape') {
    body.routes = rng.chance(0.15) ? nestedArrays(rng.weighted<number>([[3, rng.range(2, 100)], [2, rng.range(1000, 5000)], [1, rng.range(10_000, 25_000)]]), rng.chance(0.5) ? '"rpc"' : '') : rng.pick(BAD_ROUTES);
    expectation = restError('unknown_route', { includes: 'routes' });
    label = 'routes of a bad shape';
  } else if (fault === 'routes unavailable') {
    body.routes = rng.pick(UNAVAILABLE_ROUTES);
    expectation = noRouteExpectation(body.routes, env.key);
    label = `routes ${JSON.stringify(body.routes)}`;
  } else if (!env.key.rpcRoute) {
    expectation = noRouteExpectation(routes === ABSENT || routes === null ? 'default' : routes, env.key);
    label += '; key without the rpc route';
  } else if (fault === 'maxRetries') {
    body.maxRetries = rng.chance(0.5) ? wrongTyped(rng, 'number') : rng.pick<unknown>([-1, 1.5, 2 ** 53, raw('1e400'), raw('-1e400')]);
    expectation = restError('invalid_params', { includes: 'maxRetries' });
    label = 'maxRetries not a non-negative integer';
  }
  expectation ??= restTxExpectation(enc.outcome, env.key, tx.intact);
  return { body: Buffer.from(toJsonText(shuffled(rng, body))), contentType, query: [], expectation: tightened(env.key, expectation), label };
}

const RAW_TYPES = ['application/octet-stream', 'application/octet-stream; charset=binary', 'APPLICATION/OCTET-STREAM'];
const TEXT_TYPES = ['text/plain', 'text/plain; charset=utf-8', 'Text/Plain;charset=US-ASCII'];
const WHITESPACE = ['', '', ' ', '\n', '\r\n', '\t ', '  \n'];

/** POST /v1/transactions. */
export function transactionsCase(rng: Rng, env: RestEnv): RestCase {
  const tx = txCase(rng, env.pool);
  const mode = rng.weighted<'raw' | TextEncoding>([[45, 'raw'], [40, 'base64'], [15, 'base58']]);
  const query: [string, string][] = [];
  const maxRetries = rng.weighted<string | null>([[70, null], [25, rng.pick(['0', '5', '007', String(rng.int(1_000_000)), '123456789012345'])], [5, 'bad']]);
  const badRetries = maxRetries === 'bad' ? rng.pick(['', '-1', '1.5', '0x10', '1e3', ' 5', '+5', 'five', '5 ']) : null;
  if (maxRetries !== null) query.push(['maxRetries', badRetries ?? maxRetries]);
  let expectation: Expectation;
  let label: string;
  let body: Buffer;
  let contentType: string;
  if (mode === 'raw') {
    contentType = rng.pick(RAW_TYPES);
    if (rng.chance(0.2)) query.push(['encoding', rng.pick(['base58', 'json', 'hex'])]); // not read for raw bytes
    const empty = rng.chance(0.03) || tx.bytes.length === 0;
    body = empty ? Buffer.alloc(0) : tx.bytes;
    label = empty ? 'empty body' : `${tx.label} as bytes`;
    expectation = empty
      ? restError('tx_undecodable', { message: `failed to deserialize ${TX_TYPE}: empty body` })
      : restTxExpectation(rawOutcome(tx), env.key, tx.intact);
  } else {
    contentType = rng.pick(TEXT_TYPES);
    const enc = textFor(rng, tx, mode);
    const param = mode === 'base64' ? rng.pick([null, null, 'base64']) : rng.pick(['base58', 'base58', 'binary']);
    const badParam = rng.chance(0.05) ? rng.pick(['json', 'jsonParsed', 'hex', '', 'BASE58']) : null;
    if (badParam !== null) query.push(['encoding', badParam]);
    else if (param !== null) query.push(['encoding', param]);
    body = Buffer.from(rng.pick(WHITESPACE) + enc.text + rng.pick(WHITESPACE), 'latin1');
    label = `${enc.label} as text${badParam === null ? '' : `, ?encoding=${badParam}`}`;
    if (badParam === null) expectation = restTxExpectation(enc.outcome, env.key, tx.intact);
    else if (badParam.startsWith('json')) expectation = restError('tx_unsupported_encoding', { message: `unsupported encoding: ${badParam}. Supported encodings: base58, base64` });
    else expectation = restError('invalid_params', { prefixes: ['Invalid params'] });
  }
  // Earlier checks: the key's routes, then ?maxRetries.
  if (badRetries !== null) {
    expectation = restError('invalid_params', { includes: 'maxRetries' });
    label += `; ?maxRetries=${JSON.stringify(badRetries)}`;
  }
  if (!env.key.rpcRoute) {
    expectation = restError('route_not_allowed');
    label += '; key without the rpc route';
  }
  for (let i = query.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [query[i], query[j]] = [query[j], query[i]];
  }
  return { body, contentType, query, expectation: tightened(env.key, expectation), label };
}
