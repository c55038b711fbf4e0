// JSON-RPC bodies for POST / (JSON-RPC host) and POST /v1/sendTransaction (relay host), with their expected
// answers (harness process; generation, hot). Envelope rules are Agave's (docs/errors.md, the JSON-RPC wire notes):
// the id is echoed with its type, null only when it cannot be read; no `id` member = notification (no reply); a
// batch is answered in order, `[]` is one -32600, over http.maxBatchSize one -32600, one containing getLeaderSlots
// one -32600 (spec 7.2); an id that is a number but not finite once parsed (1e400) is an invalid request (issue #18).
import { anyOf, fixed, rpcError, rpcRateLimited, type Expectation, type JsonRpcId, type RpcElementExp, type RpcOutcome } from './expectations.js';
import { nestedArrays, oddValue, raw, shuffled, toJsonText } from './json-text.js';
import type { KeyProfile } from './keys.js';
import type { Rng } from './rng.js';
import { UNKNOWN_METHODS, leaderSlotsParams, sendParams, unknownMethodOutcome, type Params } from './rpc-params.js';
import { RPC_HOST_ONLY_METHODS, feesFaultParams, simulateFaultParams } from './read-params.js';
import type { PoolTx } from './tx-pool.js';

export interface RpcEnv {
  readonly host: 'rpc' | 'relay';
  readonly key: KeyProfile;
  readonly pool: readonly PoolTx[];
  readonly maxBatchSize: number;
}

export interface Body {
  readonly bytes: Buffer;
  readonly expectation: Expectation;
  readonly label: string;
  /** sendTransaction calls the relay dispatches: at most this many transactions can enter a ring. */
  readonly sends: number;
  /** Of those, notifications: published or not, no answer tells. */
  readonly silentSends: number;
}

interface IdChoice {
  /** The `id` member, or undefined for none (a notification). */
  readonly member: unknown;
  /** What must come back; 'invalid' when the id makes the request invalid. */
  readonly echo: JsonRpcId | 'invalid';
}

function idChoice(rng: Rng): IdChoice {
  switch (rng.weighted<string>([[40, 'int'], [24, 'string'], [8, 'none'], [4, 'null'], [10, 'odd number'], [8, 'odd string'], [6, 'bad type']])) {
    case 'int': {
      const n = rng.int(1_000_000);
      return { member: n, echo: n };
    }
    case 'string': {
      const s = `${rng.u32().toString(16)}-${rng.int(100)}`;
      return { member: s, echo: s };
    }
    case 'none':
      return { member: undefined, echo: null };
    case 'null':
      return { member: null, echo: null };
    case 'odd number': {
      const r = raw(rng.pick(['-0', '1.5', '-7', '1e308', '5e-324', '12345678901234567890', '1e-400', '1E2', '1e400', '-1e400', '9007199254740993']));
      const v = r.value as number;
      return { member: r, echo: Number.isFinite(v) ? v : 'invalid' };
    }
    case 'odd string': {
      const s = rng.pick(['', 'é', '\u0000', '\ud800', '"\\', ' ', 'x'.repeat(rng.range(500, 4000)), String.fromCodePoint(0x1f600)]);
      return { member: s, echo: s };
    }
    default:
      return { member: rng.pick<unknown>([true, false, {}, [], [1], { toString: 1 }, nestedArrays(rng.range(2, 3000))]), echo: 'invalid' };
  }
}

interface Element {
  readonly value: unknown;
  /** null: a notification (nothing comes back for it). */
  readonly exp: RpcElementExp | null;
  readonly leaderSlots: boolean;
  readonly label: string;
  /** A well-formed sendTransaction call (it may put a transaction into a ring). */
  readonly send?: boolean;
}

function call(id: IdChoice, method: unknown, p: Params | null): Record<string, unknown> {
  const m: Record<string, unknown> = { jsonrpc: '2.0', method };
  if (id.member !== undefined) m.id = id.member;
  if (p !== null && p.params !== undefined) m.params = p.params;
  return m;
}

/** One call: a method with params (valid or not), or an envelope fault. */
function element(rng: Rng, env: RpcEnv, inBatch: boolean): Element {
  const id = idChoice(rng);
  const rpcHost = env.host === 'rpc';
  const family = rng.weighted<string>([
    [50, 'send'],
    [inBatch ? 0 : 12, 'leaderSlots'],
    [rpcHost ? 5 : 0, 'simulate fault'],
    [rpcHost ? 4 : 0, 'fees fault'],
    [10, 'unknown method'],
    [12, 'envelope'],
    [inBatch ? 6 : 0, 'not an object'],
  ]);
  if (family === 'not an object') {
    return { value: rng.pick<unknown>([1, 'x', true, null, [], raw('1e400')]), exp: { id: null, outcomes: [{ error: fixed('invalid_request') }] }, leaderSlots: false, label: 'element not an object' };
  }
  let method: string;
  let p: Params;
  if (family === 'leaderSlots') {
    method = 'getLeaderSlots';
    p = leaderSlotsParams(rng);
    if (env.host === 'relay') p = { ...p, outcomes: unknownMethodOutcome() };
  } else if (family === 'simulate fault') {
    method = 'simulateTransaction';
    p = simulateFaultParams(rng, env.pool);
  } else if (family === 'fees fault') {
    method = 'getRecentPrioritizationFees';
    p = feesFaultParams(rng);
  } else if (family === 'unknown method') {
    // The relay host serves sendTransaction alone; the JSON-RPC host also serves reads, simulations and fees.
    method = rng.pick(rpcHost ? UNKNOWN_METHODS : [...UNKNOWN_METHODS, ...RPC_HOST_ONLY_METHODS]);
    p = { params: rng.chance(0.5) ? oddValue(rng) : undefined, outcomes: unknownMethodOutcome(), label: `method ${JSON.stringify(method)}` };
  } else {
    method = 'sendTransaction';
    p = sendParams(rng, env.key, env.pool);
  }
  const members = call(id, method, p);
  if (id.echo === 'invalid') {
    return { value: shuffled(rng, members), exp: { id: null, outcomes: [{ error: fixed('invalid_request') }] }, leaderSlots: false, label: `invalid id; ${p.label}` };
  }
  if (family === 'envelope') return envelopeFault(rng, id, members);
  const exp = id.member === undefined ? null : { id: id.echo, outcomes: p.outcomes };
  return { value: shuffled(rng, members), exp, leaderSlots: method === 'getLeaderSlots', label: p.label, send: method === 'sendTransaction' };
}

function envelopeFault(rng: Rng, id: IdChoice, members: Record<string, unknown>): Element {
  const echo = id.echo === 'invalid' ? null : id.echo;
  const m = { ...members };
  const fault = rng.pick(['jsonrpc missing', 'jsonrpc wrong', 'method missing', 'method type']);
  let outcomes: RpcOutcome[];
  if (fault === 'jsonrpc missing') {
    // docs/protocol-decisions.md (jsonrpc-core): absent or null is "Unsupported JSON-RPC protocol version" with the id
    // kept, and without an id the call is a notification (no answer).
    if (rng.chance(0.5)) delete m.jsonrpc;
    else m.jsonrpc = null;
    const exp = 'id' in m ? { id: echo, outcomes: [{ error: fixed('unsupported_jsonrpc_version') }] } : null;
    return { value: shuffled(rng, m), exp, leaderSlots: false, label: `jsonrpc ${'jsonrpc' in m ? 'null' : 'absent'}` };
  }
  if (fault === 'jsonrpc wrong') {
    // Any other value makes the element invalid: "Invalid request", id kept (always sent with an id here).
    m.jsonrpc = rng.pick<unknown>(['1.0', '2', 2, raw('2.0'), '2.0 ', '', {}, ['2.0'], 'é']);
    if (!('id' in m)) m.id = 0;
    return { value: shuffled(rng, m), exp: { id: 'id' in members ? echo : 0, outcomes: [{ error: fixed('invalid_request') }] }, leaderSlots: false, label: 'jsonrpc wrong' };
  }
  if (fault === 'method missing') {
    delete m.method;
    outcomes = [{ error: fixed('invalid_request') }];
  } else if (fault === 'method missing') {
    delete m.method;
    outcomes = [{ error: fixed('invalid_request') }];
  } else {
    m.method = rng.pick<unknown>([1, null, true, ['sendTransaction'], { name: 'sendTransaction' }, nestedArrays(rng.range(2, 2000))]);
    outcomes = [{ error: fixed('invalid_request') }];
  }
  // An invalid call is answered even without an id (it cannot be known to be a notification).
  return { value: shuffled(rng, m), exp: { id: echo, outcomes }, leaderSlots: false, label: fault };
}

/** A single call's answer: HTTP 200, or 429 + Retry-After when its one error is a rate limit. */
export function singleExpectation(el: RpcElementExp): Expectation {
  const limited = (o: RpcOutcome): boolean => 'error' in o && o.error.data !== undefined && 'shape' in o.error.data && o.error.data.shape.endsWith('rate_limited');
  const normal = el.outcomes.filter((o) => !limited(o));
  const slow = el.outcomes.filter(limited);
  const options: Expectation[] = [];
  if (normal.length > 0) options.push({ kind: 'rpc', status: 200, element: { id: el.id, outcomes: normal } });
  if (slow.length > 0) options.push({ kind: 'rpc', status: 429, element: { id: el.id, outcomes: slow }, retryAfter: true });
  return anyOf(...options);
}

const BAD_JSON = ['', ' ', '{', '{"jsonrpc":"2.0",', "{'jsonrpc':'2.0'}", '{"id":1,}', '[1,]', 'NaN', '{"id":Infinity}', '// c\n{}', '\ufeff{"jsonrpc":"2.0","id":1,"method":"getSlot"}', 'nul', '{"id":1}{"id":2}', '"\\x"', '[' ];

/** Bytes that are not UTF-8 (lone continuation, overlong, truncated sequence, UTF-16 surrogate, 0xff). */
const NOT_UTF8 = [[0x80], [0xc0, 0x80], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xff], [0xf8, 0x88, 0x80, 0x80, 0x80]];

/**
 * A valid body made invalid UTF-8 inside a string (docs/protocol-decisions.md: not JSON, -32700 / 400 parse_error,
 * never decoded with replacement characters).
 */
export function notUtf8(rng: Rng, valid: string): Buffer {
  const quote = valid.indexOf('"', rng.int(valid.length));
  const at = quote < 0 ? valid.length : quote + 1;
  return Buffer.concat([Buffer.from(valid.slice(0, at)), Buffer.from(rng.pick(NOT_UTF8)), Buffer.from(valid.slice(at))]);
}

function badJson(rng: Rng, valid: string): string {
  switch (rng.int(3)) {
    case 0:
      return rng.pick(BAD_JSON);
    case 1:
      return valid.slice(0, rng.int(valid.length)); // an object or array cut short is never valid JSON
    default:
      return valid + rng.pick(['x', '}', ',', '{}', ']']);
  }
}

/** A JSON-RPC body (one call, a batch, or broken JSON) and the answer it must get from a key with a profile. */
export function rpcBody(rng: Rng, env: RpcEnv): Body {
  const kind = rng.weighted<string>([[68, 'single'], [18, 'batch'], [5, 'bad json'], [1, 'not utf-8'], [1, 'not an object'], [2, 'empty batch'], [2, 'batch too large'], [3, 'batch with getLeaderSlots']]);
  let text: string;
  let expectation: Expectation;
  let label: string;
  let rateLimitId: JsonRpcId = null;
  let dispatched: Element[] = [];
  let bytes: Buffer | null = null;
  if (kind === 'single' || kind === 'bad json' || kind === 'not utf-8') {
    const el = element(rng, env, false);
    text = toJsonText(el.value);
    expectation = el.exp === null ? { kind: 'empty' } : singleExpectation(el.exp);
    rateLimitId = el.exp?.id ?? null;
    label = `single: ${el.label}`;
    dispatched = [el];
    if (kind === 'bad json' || kind === 'not utf-8') {
      dispatched = [];
      if (kind === 'bad json') text = badJson(rng, text);
      else bytes = notUtf8(rng, text);
      expectation = rpcError(null, fixed('parse_error'));
      rateLimitId = null;
      label = kind === 'bad json' ? 'bad JSON' : 'body not UTF-8';
    }
  } else if (kind === 'not an object') {
    text = rng.pick(['5', '"sendTransaction"', 'true', 'null', '1e400', '-0']);
    expectation = rpcError(null, fixed('invalid_request'));
    label = `body ${text}`;
  } else if (kind === 'empty batch') {
    text = '[]';
    expectation = rpcError(null, fixed('invalid_request'));
    label = 'empty batch';
  } else if (kind === 'batch too large') {
    const n = env.maxBatchSize + rng.range(1, 10);
    text = toJsonText(Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'getSlot' })));
    expectation = rpcError(null, fixed('batch_too_large'));
    label = `batch of ${n}`;
  } else {
    const n = rng.weighted<number>([[6, rng.range(1, 4)], [3, rng.range(5, 12)], [1, rng.range(13, env.maxBatchSize)]]);
    const els = Array.from({ length: n }, () => element(rng, env, true));
    // The batch refusal is not sent when nothing in the batch asks for a reply (every element a notification, the
    // getLeaderSlots one included): docs/errors.md, src/front/json-rpc-endpoint.ts refuseSilently.
    let leaderSlotsNotification = false;
    if (kind === 'batch with getLeaderSlots') {
      const at = rng.int(n + 1);
      const p = leaderSlotsParams(rng);
      const member = rng.chance(0.8) ? at : undefined;
      leaderSlotsNotification = member === undefined;
      els.splice(at, 0, { value: call({ member, echo: at }, 'getLeaderSlots', p), exp: null, leaderSlots: true, label: 'getLeaderSlots' });
    }
    text = toJsonText(els.map((e) => e.value));
    const answered = els.filter((e) => e.exp !== null).map((e) => e.exp as RpcElementExp);
    if (els.length > env.maxBatchSize) expectation = rpcError(null, fixed('batch_too_large'));
    else if (els.some((e) => e.leaderSlots)) {
      expectation = leaderSlotsNotification && els.every((e) => e.exp === null) ? { kind: 'empty' } : rpcError(null, fixed('leader_slots_in_batch'));
    }
    else {
      expectation = answered.length === 0 ? { kind: 'empty' } : { kind: 'rpcBatch', elements: answered };
      dispatched = els;
    }
    label = `batch of ${els.length}: ${els.map((e) => e.label).join(' | ')}`;
  }
  if (rng.chance(0.05) && kind !== 'bad json' && kind !== 'not utf-8') text = rng.pick([' ', '\n', '\t', '\r\n']) + text + rng.pick(['', ' ', '\n']);
  // The tight key's buckets refuse most requests (a batch counts every element): 429 with the single call's id.
  if (env.key.tight) expectation = anyOf(expectation, rpcRateLimited(rateLimitId));
  const sends = dispatched.filter((e) => e.send === true);
  return { bytes: bytes ?? Buffer.from(text, 'utf8'), expectation, label, sends: sends.length, silentSends: sends.filter((e) => e.exp === null).length };
}

