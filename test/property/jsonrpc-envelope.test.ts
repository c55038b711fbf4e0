// Property tests of the JSON-RPC envelope (src/jsonrpc/envelope.ts parseJsonRpcBody, src/jsonrpc/dispatch.ts,
// src/jsonrpc/response.ts): for arbitrary body text, ids, methods and params, the answer is the one the JSON-RPC 2.0
// rules, docs/errors.md and /work/shared/notes/json-rpc-wire.md specify — parse error -32700 id null; non-object
// elements -32600 id null; `jsonrpc` other than "2.0" -32600 with the registry's two messages; ids echoed with their
// type (null only when unreadable: not a string, a finite number or null); notifications unanswered; batch order
// kept; every answer text valid JSON in the envelope shape; `data` never null.
// Seeded: FC_SEED / FC_PATH / FC_RUNS_SCALE (test/property/fc-params.ts).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Errors, RelayError } from '../../src/errors/registry.js';
import { dispatchJsonRpc, type MethodHandler, type MethodTable } from '../../src/jsonrpc/dispatch.js';
import { parseJsonRpcBody } from '../../src/jsonrpc/envelope.js';
import { batchJson, errorJson, resultJson } from '../../src/jsonrpc/response.js';
import { fcParams } from './fc-params.js';

const SEED = 0x5eed_0001;
const MAX_BATCH = 5;

// ---- the method table the dispatcher is driven with ----

const FAIL_MESSAGE = 'Invalid params: property-test refusal';

function echoText(params: unknown): string {
  return JSON.stringify(params === undefined ? null : params);
}

/**
 * data the `fail` method attaches: the first positional param, when there is one and it is not null (a RelayError
 * carrying data null has its own property below, so that finding does not hide everything else this one checks).
 */
function failData(params: unknown): unknown {
  return Array.isArray(params) && params.length > 0 && params[0] !== null ? (params[0] as unknown) : undefined;
}

const table: MethodTable<null> = new Map<string, MethodHandler<null>>([
  ['echo', (p) => echoText(p)],
  ['later', (p) => Promise.resolve(echoText(p))],
  ['fail', (p) => {
    throw new RelayError(Errors.INVALID_PARAMS, FAIL_MESSAGE, failData(p));
  }],
  ['failLater', (p) => Promise.reject(new RelayError(Errors.INVALID_PARAMS, FAIL_MESSAGE, failData(p)))],
  ['boom', () => {
    throw new TypeError('a bug');
  }],
  ['boomLater', () => Promise.reject(new Error('an async bug'))],
]);
const METHOD_NAMES = [...table.keys()];

// ---- the specified answer, computed from the parsed body ----

type Id = string | number | null;
interface ExpectedError {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}
interface ExpectedAnswer {
  readonly id: Id;
  readonly result?: unknown;
  readonly error?: ExpectedError;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A readable id: a string, a finite number or null (JSON has no other number, and Infinity is no JSON). */
function readableId(v: unknown): v is Id {
  return v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}

const invalidRequest = (id: Id): ExpectedAnswer => ({ id, error: { code: -32600, message: 'Invalid request' } });
/** Placeholder message: either "Invalid request" or "Unsupported JSON-RPC protocol version" is accepted. */
const VERSION_MESSAGE = '<either version message>';
const VERSION_MESSAGES = ['Invalid request', 'Unsupported JSON-RPC protocol version'];

/** The answer one batch element (or a single body) must get; null = no answer (a notification). */
function expectedElement(v: unknown): ExpectedAnswer | null {
  if (!isObject(v)) return invalidRequest(null);
  const hasId = Object.prototype.hasOwnProperty.call(v, 'id');
  if (hasId && !readableId(v.id)) return invalidRequest(null);
  const id: Id = hasId ? (v.id as Id) : null;
  if (v.jsonrpc !== '2.0') {
    // jsonrpc-core (the property below pins the messages): absent/null with a method is a call of no version —
    // unanswered without an id; anything else is -32600 with one of the registry's two messages.
    const absent = v.jsonrpc === undefined || v.jsonrpc === null;
    if (absent && typeof v.method === 'string' && !hasId) return null;
    return { id, error: { code: -32600, message: VERSION_MESSAGE } };
  }
  if (typeof v.method !== 'string') return invalidRequest(id);
  if (!hasId) return null; // a notification: executed, never answered
  const params = v.params;
  switch (v.method) {
    case 'echo':
    case 'later':
      return { id, result: params === undefined ? null : params };
    case 'fail':
    case 'failLater': {
      const data = failData(params);
      return { id, error: data === undefined ? { code: -32602, message: FAIL_MESSAGE } : { code: -32602, message: FAIL_MESSAGE, data } };
    }
    case 'boom':
    case 'boomLater':
      return { id, error: { code: -32603, message: 'Internal error' } };
    default:
      return { id, error: { code: -32601, message: 'Method not found' } };
  }
}

/** The whole answer: one answer, an array of them, or null (nothing to send). */
function expectedBody(text: string): ExpectedAnswer | ExpectedAnswer[] | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { id: null, error: { code: -32700, message: 'Parse error' } };
  }
  if (!Array.isArray(v)) return expectedElement(v);
  if (v.length === 0) return invalidRequest(null);
  if (v.length > MAX_BATCH) return { id: null, error: { code: -32600, message: 'Invalid request: batch too large' } };
  const answers = v.map(expectedElement).filter((a): a is ExpectedAnswer => a !== null);
  return answers.length === 0 ? null : answers;
}

/** Envelope shape of one answer object: exactly jsonrpc + (result | error) + id; error {code, message, data?}. */
function checkEnvelopeShape(a: unknown): void {
  expect(isObject(a), `answer element is an object: ${JSON.stringify(a)}`).toBe(true);
  const o = a as Record<string, unknown>;
  const keys = Object.keys(o).sort();
  expect(keys.join(',') === 'id,jsonrpc,result' || keys.join(',') === 'error,id,jsonrpc', `members ${keys.join(',')}`).toBe(true);
  expect(o.jsonrpc).toBe('2.0');
  expect(readableId(o.id), `id ${String(o.id)}`).toBe(true);
  if ('error' in o) {
    const e = o.error as Record<string, unknown>;
    expect(isObject(e)).toBe(true);
    expect(Number.isInteger(e.code)).toBe(true);
    expect(typeof e.message).toBe('string');
    for (const k of Object.keys(e)) expect(['code', 'message', 'data']).toContain(k);
    if ('data' in e) expect(e.data, '`data` is omitted when there is none, never null').not.toBeNull();
  }
}

/** Numbers compared by value (-0 and 0 are one JSON number), everything else structurally. */
function sameJson(actual: unknown, expected: unknown): boolean {
  if (typeof actual === 'number' && typeof expected === 'number') return actual === expected;
  if (Array.isArray(actual) && Array.isArray(expected)) {
    return actual.length === expected.length && actual.every((x, i) => sameJson(x, expected[i]));
  }
  if (isObject(actual) && isObject(expected)) {
    const ka = Object.keys(actual).sort();
    const ke = Object.keys(expected).sort();
    return ka.length === ke.length && ka.every((k, i) => k === ke[i] && sameJson(actual[k], expected[k]));
  }
  return Object.is(actual, expected);
}

function checkAnswer(actual: unknown, expected: ExpectedAnswer): void {
  checkEnvelopeShape(actual);
  const o = actual as Record<string, unknown>;
  const want: Record<string, unknown> = { jsonrpc: '2.0', id: expected.id };
  if (expected.error !== undefined && expected.error.message === VERSION_MESSAGE) {
    const e = o.error as { message?: unknown } | undefined;
    const message = typeof e?.message === 'string' && VERSION_MESSAGES.includes(e.message) ? e.message : VERSION_MESSAGES.join(' | ');
    want.error = { ...expected.error, message };
  } else if (expected.error !== undefined) want.error = expected.error;
  else want.result = expected.result;
  expect(sameJson(o, want), `answer ${JSON.stringify(o)}\nexpected ${JSON.stringify(want)}`).toBe(true);
  // "echoed with its type": a string id stays a string, a number a number.
  expect(typeof o.id).toBe(typeof expected.id);
}

async function answerText(text: string): Promise<{ out: string | null; internal: number }> {
  let internal = 0;
  const hooks = { onInternalError: (): void => void internal++ };
  const out = await dispatchJsonRpc(parseJsonRpcBody(text, MAX_BATCH), table, null, hooks);
  return { out, internal };
}

async function checkBody(text: string): Promise<void> {
  const expected = expectedBody(text);
  const { out } = await answerText(text);
  if (expected === null) {
    expect(out, `no answer for ${text}`).toBeNull();
    return;
  }
  expect(out, `an answer for ${text}`).not.toBeNull();
  let parsed: unknown;
  try {
    parsed = JSON.parse(out!);
  } catch {
    throw new Error(`the answer is not valid JSON: ${out!}\nbody: ${text}`);
  }
  if (Array.isArray(expected)) {
    expect(Array.isArray(parsed), `a batch answer is an array: ${out!}`).toBe(true);
    const arr = parsed as unknown[];
    expect(arr.length, `one answer per non-notification element, in order: ${out!}`).toBe(expected.length);
    arr.forEach((a, i) => checkAnswer(a, expected[i]));
  } else {
    checkAnswer(parsed, expected);
  }
}

// ---- generators: body text built member by member so ids can be raw number tokens (1e400, -0, 2^64) ----

const ws = fc.constantFrom('', '', '', ' ', '\n', '\t', ' \r\n ');

/** An id as JSON text: readable ids, unreadable types, and number tokens that are not finite once parsed. */
const idToken: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string().map((s) => JSON.stringify(s)) },
  { weight: 4, arbitrary: fc.integer().map(String) },
  { weight: 2, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)) },
  { weight: 1, arbitrary: fc.constant('null') },
  {
    weight: 2,
    arbitrary: fc.constantFrom('1e400', '-1e400', '1E999', '123456789e400', '-0', '0.0', '1e-400', '18446744073709551615', '9007199254740993', '1.5e300'),
  },
  { weight: 1, arbitrary: fc.constantFrom('true', 'false', '{}', '[]', '[1]', '{"id":1}') },
);

const jsonrpcToken: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.constant('"2.0"') },
  { weight: 1, arbitrary: fc.constantFrom('"1.0"', '"2"', '2.0', '2', '"2.0 "', '" 2.0"', 'null', '"2.00"', '["2.0"]', '{"v":"2.0"}') },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).filter((v) => v !== '2.0').map((v) => JSON.stringify(v)) },
);

const methodToken: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...METHOD_NAMES).map((m) => JSON.stringify(m)) },
  { weight: 2, arbitrary: fc.constantFrom('sendTransaction', 'getLeaderSlots', '', 'ECHO', 'echo ', '__proto__', 'constructor', 'toString', 'hasOwnProperty').map((m) => JSON.stringify(m)) },
  { weight: 2, arbitrary: fc.string().map((m) => JSON.stringify(m)) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).filter((v) => typeof v !== 'string').map((v) => JSON.stringify(v)) },
);

const paramsToken: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 4 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.constant('[null]') },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
);

const RESERVED = new Set(['id', 'jsonrpc', 'method', 'params']);
const extraMember = fc
  .tuple(fc.string().filter((k) => !RESERVED.has(k)), fc.jsonValue({ maxDepth: 2 }))
  .map(([k, v]) => JSON.stringify(k) + ':' + JSON.stringify(v));

/** A request object as text: each member present or absent, in any order, with extra members. */
const requestObjectText: fc.Arbitrary<string> = fc
  .record({
    id: fc.option(idToken, { freq: 5 }),
    jsonrpc: fc.option(jsonrpcToken, { freq: 10 }),
    method: fc.option(methodToken, { freq: 10 }),
    params: fc.option(paramsToken, { freq: 3 }),
    extra: fc.array(extraMember, { maxLength: 2 }),
    sep: ws,
  })
  .chain((r) => {
    const members: string[] = [...r.extra];
    if (r.id !== null) members.push('"id":' + r.id);
    if (r.jsonrpc !== null) members.push('"jsonrpc":' + r.jsonrpc);
    if (r.method !== null) members.push('"method":' + r.method);
    if (r.params !== null) members.push('"params":' + r.params);
    return fc.shuffledSubarray(members, { minLength: members.length, maxLength: members.length }).map((m) => '{' + r.sep + m.join(',' + r.sep) + r.sep + '}');
  });

/** A batch element: mostly request objects, sometimes any other JSON value. */
const elementText: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: requestObjectText },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)) },
);

const bodyText: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: requestObjectText },
  { weight: 4, arbitrary: fc.tuple(fc.array(elementText, { minLength: 0, maxLength: MAX_BATCH + 2 }), ws).map(([els, s]) => '[' + s + els.join(',' + s) + s + ']') },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
  // Broken text: cut, spliced or arbitrary (also lone surrogates, control characters).
  { weight: 1, arbitrary: fc.tuple(requestObjectText, fc.nat()).map(([t, n]) => t.slice(0, n % Math.max(1, t.length))) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.tuple(requestObjectText, fc.string({ unit: 'binary', maxLength: 3 }), fc.nat()).map(([t, s, n]) => t.slice(0, n % (t.length + 1)) + s + t.slice(n % (t.length + 1))) },
);

describe('JSON-RPC envelope and dispatch (property)', () => {
  it('every body gets exactly the specified answer: codes, messages, ids with their type, order, no answer to notifications', async () => {
    await fc.assert(fc.asyncProperty(bodyText, checkBody), fcParams(SEED, 1000));
  });

  it('only bugs in handlers are internal errors; every other failure is answered, never logged as a bug', async () => {
    await fc.assert(
      fc.asyncProperty(bodyText, async (text) => {
        const { internal } = await answerText(text);
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          value = undefined;
        }
        const elements = Array.isArray(value) ? (value.length <= MAX_BATCH ? value : []) : value === undefined ? [] : [value];
        const bugs = elements.filter(
          (e) => isObject(e) && e.jsonrpc === '2.0' && (!('id' in e) || readableId(e.id)) && (e.method === 'boom' || e.method === 'boomLater'),
        ).length;
        expect(internal).toBe(bugs);
      }),
      fcParams(SEED + 1, 300),
    );
  });

  it('an id that is not a finite number once parsed (1e400) makes the element an invalid request with id null', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('1e400', '-1e400', '1E999', '9e99999', '-123456789e400'),
        fc.constantFrom(...METHOD_NAMES),
        fc.boolean(),
        async (idTok, method, inBatch) => {
          const el = `{"jsonrpc":"2.0","id":${idTok},"method":"${method}","params":[1]}`;
          const { out } = await answerText(inBatch ? `[${el}]` : el);
          expect(out).not.toBeNull();
          let parsed: unknown;
          expect(() => (parsed = JSON.parse(out!)), `valid JSON: ${out!}`).not.toThrow();
          const one = inBatch ? (parsed as unknown[])[0] : parsed;
          expect(one).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id: null });
        },
      ),
      fcParams(SEED + 2, 50),
    );
  });

  it('`jsonrpc` errors follow Agave (jsonrpc-core): a wrong value is "Invalid request", an absent one "Unsupported JSON-RPC protocol version", and an absent one without id is a notification (no answer)', async () => {
    // jsonrpc-core: Version deserializes only from "2.0", so any other value makes the element Call::Invalid (-32600
    // "Invalid request", id kept when readable); a missing `jsonrpc` deserializes (Option<Version> = None) and is refused
    // in handle_call with Error::invalid_version() ("Unsupported JSON-RPC protocol version"), or, without an id, is a
    // Notification that is dropped unanswered. `"jsonrpc": null` is None, like absent.
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.constant<string | null>(null), jsonrpcToken.filter((t) => t !== '"2.0"')),
        fc.option(fc.oneof(fc.integer({ min: 0 }).map(String), fc.string().map((x) => JSON.stringify(x))), { freq: 3 }),
        fc.constantFrom(...METHOD_NAMES),
        async (version, id, method) => {
          const members = [`"method":"${method}"`, '"params":[1]'];
          if (version !== null) members.push(`"jsonrpc":${version}`);
          if (id !== null) members.push(`"id":${id}`);
          const { out } = await answerText('{' + members.join(',') + '}');
          const echoed = id === null ? null : (JSON.parse(id) as Id);
          // serde reads `"jsonrpc": null` into Option<Version> as None: the same as absent.
          const absent = version === null || version === 'null';
          if (absent && id === null) {
            expect(out, 'a notification without `jsonrpc` is not answered').toBeNull();
            return;
          }
          const message = absent ? 'Unsupported JSON-RPC protocol version' : 'Invalid request';
          expect(out === null ? null : JSON.parse(out)).toEqual({ jsonrpc: '2.0', error: { code: -32600, message }, id: echoed });
        },
      ),
      fcParams(SEED + 6, 100),
    );
  });

  it('integer ids are echoed as written up to 2^53, beyond as the nearest double (docs/protocol-decisions.md)', async () => {
    // Agave echoes any u64 id exactly; the relay parses ids with JSON.parse, so an id above 2^53 comes back as the
    // double it rounds to (still a valid number, same type). Clients that need exact large ids send strings.
    await fc.assert(
      fc.asyncProperty(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), async (n) => {
        const { out } = await answerText(`{"jsonrpc":"2.0","id":${n},"method":"echo","params":[]}`);
        expect(out).not.toBeNull();
        const expected = n <= BigInt(Number.MAX_SAFE_INTEGER) ? String(n) : String(Number(n));
        expect(out!, `id ${n} echoed`).toContain(`"id":${expected}}`);
        expect((JSON.parse(out!) as { id: number }).id).toBe(Number(n));
      }),
      fcParams(SEED + 3, 300),
    );
  });

  it('a handler error carrying data null is answered without `data` (docs/errors.md: omitted when none, never null)', async () => {
    // Reachable in the relay: preflight passes an upstream's -32602 / -32016 `data` on as it came (src/rpc/preflight.ts),
    // so an upstream answering "data": null would reach web3.js, which reads error.data.logs.
    const nullData: MethodTable<null> = new Map<string, MethodHandler<null>>([
      ['sync', () => {
        throw new RelayError(Errors.INVALID_PARAMS, FAIL_MESSAGE, null);
      }],
      ['async', () => Promise.reject(new RelayError(Errors.MIN_CONTEXT_SLOT_NOT_REACHED, 'Minimum context slot has not been reached', null))],
    ]);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('sync', 'async'), fc.oneof(fc.string(), fc.integer()), async (method, id) => {
        const body = JSON.stringify({ jsonrpc: '2.0', id, method });
        const out = await dispatchJsonRpc(parseJsonRpcBody(body, MAX_BATCH), nullData, null, { onInternalError: () => undefined });
        const answer = JSON.parse(out!) as { error: Record<string, unknown> };
        expect(answer.error, `answer ${out!}`).not.toHaveProperty('data');
        const direct = JSON.parse(errorJson(id, -32602, FAIL_MESSAGE, null)) as { error: Record<string, unknown> };
        expect(direct.error, 'errorJson(id, code, message, null)').not.toHaveProperty('data');
      }),
      fcParams(SEED + 5, 20),
    );
  });

  it('response.ts: any id, message and data serialise to valid JSON that parses back to exactly them', () => {
    const id = fc.oneof(fc.string({ unit: 'binary' }), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(null));
    // data null is the property above.
    const data = fc.option(fc.jsonValue({ maxDepth: 3 }).filter((v) => v !== null), { freq: 3, nil: undefined });
    fc.assert(
      fc.property(id, fc.integer({ min: -32768, max: -32000 }), fc.string({ unit: 'binary' }), data, fc.jsonValue({ maxDepth: 3 }), (i, code, message, d, result) => {
        const err = JSON.parse(errorJson(i, code, message, d)) as Record<string, unknown>;
        checkEnvelopeShape(err);
        expect(sameJson(err.id, i)).toBe(true);
        const e = err.error as Record<string, unknown>;
        expect(e.code).toBe(code);
        expect(e.message).toBe(message);
        if (d === undefined) expect('data' in e, 'no data member when there is none').toBe(false);
        else expect(sameJson(e.data, d)).toBe(true);
        const ok = JSON.parse(resultJson(i, JSON.stringify(result))) as Record<string, unknown>;
        checkEnvelopeShape(ok);
        expect(sameJson(ok.result, result)).toBe(true);
        const batch = JSON.parse(batchJson([resultJson(i, '1'), errorJson(i, code, message)])!) as unknown[];
        expect(batch).toHaveLength(2);
        expect(batchJson([])).toBeNull();
      }),
      fcParams(SEED + 4, 500),
    );
  });
});
