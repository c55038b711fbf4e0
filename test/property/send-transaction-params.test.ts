// Property tests of sendTransaction's params and config (src/front/methods/send-transaction.ts through the relay's
// method table, src/front/method-table.ts, driven by parseJsonRpcBody + dispatchJsonRpc like the front does): every
// config field of the wrong type — numbers, strings, booleans, objects such as {"toString":1}, arrays nested
// thousands deep, non-finite numbers — is answered -32602 with a message naming the field, never another error
// (no -32603, nothing reported as a bug); params of the wrong shape get Agave's wording; a config with nothing wrong
// reaches intake: skipPreflight answers the first signature and the ring record carries the client's maxRetries.
// Seeded: FC_SEED / FC_PATH / FC_RUNS_SCALE (test/property/fc-params.ts).
import fc from 'fast-check';
import type { HttpResponse } from 'uWebSockets.js';
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { KeyTable } from '../../src/admission/key-table.js';
import type { CallContext } from '../../src/admission/call-context.js';
import { RequestState } from '../../src/http/response.js';
import { Intake } from '../../src/admission/intake.js';
import { relayRpcMethods } from '../../src/front/method-table.js';
import { dispatchJsonRpc } from '../../src/jsonrpc/dispatch.js';
import { parseJsonRpcBody } from '../../src/jsonrpc/envelope.js';
import { createRing, RingConsumer, RingProducer } from '../../src/shm/ring.js';
import { legacyTransfer, v0Transfer, type SignedTx } from '../helpers/transactions.js';
import { fcParams } from './fc-params.js';

const SEED = 0x5eed_0002;
const KEY = '6f1c2a4e-9b7d-4c3a-8e21-5d0f4b6a7c19';

// ---- the relay's sendTransaction handler over a real ring (no upstream: preflight answers -32005) ----
// The one place that knows how the front wires the handler; if Intake's shape changes, only this block changes.

const config = configSchema.parse({ keys: [{ key: KEY, name: 'property-test', rateLimit: { perSecond: 1_000_000, burst: 1_000_000 } }] });
const keys = new KeyTable(config.keys, config.routes.defaultRoutes, 0);
const sab = createRing(64, config.transactions.maxTransactionBytes);
const producer = new RingProducer(sab);
const consumer = new RingConsumer(sab);
const intake = new Intake([producer], config.transactions.maxTransactionBytes);
const table = relayRpcMethods({ config, intake, upstream: null });
const keyEntry = keys.entries[0];

interface Published {
  readonly bytes: Buffer;
  readonly maxRetries: number;
}

interface Answer {
  readonly json: Record<string, unknown>;
  readonly internalErrors: unknown[];
  readonly published: Published[];
}

/** One POST body through envelope + dispatch, as the front answers it; also what reached the ring. */
async function answer(body: string): Promise<Answer> {
  const internalErrors: unknown[] = [];
  const ctx: CallContext = {
    key: keyEntry,
    // The handler reads requestId, receivedAtMs and aborted; the uWS response object is never touched by it.
    state: new RequestState(undefined as unknown as HttpResponse, 'property-test', 0),
    routeMask: keyEntry.defaultMask,
  };
  const out = await dispatchJsonRpc(parseJsonRpcBody(body, config.http.maxBatchSize), table, ctx, {
    onInternalError: (err) => void internalErrors.push(err),
  });
  const published: Published[] = [];
  for (let slot = consumer.take(); slot >= 0; slot = consumer.take()) {
    published.push({ bytes: Buffer.from(consumer.txBytes(slot)), maxRetries: consumer.maxRetries(slot) });
    consumer.complete(slot);
  }
  expect(out, `an answer to ${body.slice(0, 200)}`).not.toBeNull();
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(out!) as Record<string, unknown>;
  } catch {
    throw new Error(`the answer is not JSON: ${out!}`);
  }
  return { json, internalErrors, published };
}

afterEach(() => {
  for (let slot = consumer.take(); slot >= 0; slot = consumer.take()) consumer.complete(slot);
});

// ---- valid transactions (real, signed) ----

const TXS: readonly SignedTx[] = [legacyTransfer(1), legacyTransfer(2), v0Transfer(3), v0Transfer(4)];

// ---- value tokens (JSON text, so 1e400 and 2^64 reach the relay exactly as a client writes them) ----

function deepArray(depth: number, inner = ''): string {
  return '['.repeat(depth) + inner + ']'.repeat(depth);
}
function deepObject(depth: number, inner = '1'): string {
  return '{"a":'.repeat(depth) + inner + '}'.repeat(depth);
}

const numberToken = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
  fc.constantFrom('1e400', '-1e400', '1E999', '-0', '0.5', '1.0', '-1', '9007199254740993', '18446744073709551616', '4294967296', '2147483648', '1e-400'),
);
const stringToken = fc.oneof(
  fc.string().map((s) => JSON.stringify(s)),
  fc.constantFrom('"true"', '"false"', '"1"', '"0"', '""', '"processed"', '"base64"', '"base58"', '"binary"', '"json"', '"jsonParsed"', '"null"', '"toString"'),
);
const objectToken = fc.oneof(
  fc.constantFrom('{}', '{"toString":1}', '{"valueOf":1}', '{"toString":{"toString":1}}', '{"__proto__":{"toString":1}}', '{"length":1e400}', '{"0":"processed","length":1}'),
  fc.object({ maxDepth: 2 }).map((o) => JSON.stringify(o)),
);
const arrayToken = fc.oneof(
  fc.constantFrom('[]', '[1]', '[true]', '["processed"]', '[{"toString":1}]', '[null]'),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }).map((a) => JSON.stringify(a)),
);
/** Nested thousands deep: String() or JSON.stringify() of these overflows the stack. */
const deepToken = fc.oneof(
  fc.integer({ min: 2, max: 20_000 }).map((d) => deepArray(d)),
  fc.integer({ min: 2, max: 20_000 }).map((d) => deepArray(d, '{"toString":1}')),
  fc.integer({ min: 2, max: 20_000 }).map((d) => deepObject(d)),
  fc.integer({ min: 2, max: 5_000 }).map((d) => deepObject(d, '{"toString":1}')),
);
/** Any JSON value, weighted towards the shapes that broke message formatting before. */
const anyToken = fc.oneof(
  { weight: 3, arbitrary: numberToken },
  { weight: 3, arbitrary: stringToken },
  { weight: 1, arbitrary: fc.constantFrom('true', 'false') },
  { weight: 3, arbitrary: objectToken },
  { weight: 2, arbitrary: arrayToken },
  { weight: 2, arbitrary: deepToken },
);

// ---- the config fields, their valid values and how a value is judged ----

const FIELDS = ['skipPreflight', 'preflightCommitment', 'encoding', 'maxRetries', 'minContextSlot'] as const;
type Field = (typeof FIELDS)[number];

/** What a field's value is, per Agave's types: absent (absent/null), ok, a wrong value of the right type, or wrong. */
type Verdict = { readonly kind: 'absent' | 'ok' | 'wrong' } | { readonly kind: 'unknownVariant'; readonly value: string } | { readonly kind: 'unsupported'; readonly value: string };

function judge(field: Field, v: unknown): Verdict {
  if (v === undefined || v === null) return { kind: 'absent' };
  switch (field) {
    case 'skipPreflight':
      return { kind: typeof v === 'boolean' ? 'ok' : 'wrong' };
    case 'preflightCommitment':
      if (typeof v !== 'string') return { kind: 'wrong' };
      return ['processed', 'confirmed', 'finalized'].includes(v) ? { kind: 'ok' } : { kind: 'unknownVariant', value: v };
    case 'encoding':
      if (typeof v !== 'string') return { kind: 'wrong' };
      if (['base58', 'base64', 'binary'].includes(v)) return { kind: 'ok' };
      if (v === 'json' || v === 'jsonParsed') return { kind: 'unsupported', value: v };
      return { kind: 'unknownVariant', value: v };
    case 'maxRetries':
    case 'minContextSlot':
      return { kind: typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? 'ok' : 'wrong' };
  }
}

/** Does `message` report this verdict of `field`? (Specified: -32602 naming the field; Agave's variant wording.) */
function reports(field: Field, verdict: Verdict, message: string): boolean {
  switch (verdict.kind) {
    case 'wrong':
      return message.includes(field);
    case 'unknownVariant':
      return message.includes(`unknown variant \`${verdict.value}\``);
    case 'unsupported':
      return message === `unsupported encoding: ${verdict.value}. Supported encodings: base58, base64`;
    default:
      return false;
  }
}

const okToken: Record<Field, fc.Arbitrary<string>> = {
  skipPreflight: fc.constantFrom('true', 'false'),
  preflightCommitment: fc.constantFrom('"processed"', '"confirmed"', '"finalized"'),
  encoding: fc.constantFrom('"base58"', '"base64"', '"binary"'),
  // Up to 2^31 - 1 here; larger values (carried wrongly today) have their own property below, so that finding does
  // not hide what these properties check.
  maxRetries: fc.oneof(fc.nat(10), fc.nat(0x7fff_ffff)).map(String),
  minContextSlot: fc.oneof(fc.nat(10), fc.maxSafeNat()).map(String),
};

/** A field's token: absent, a valid value, or anything at all. */
function fieldToken(field: Field, anyWeight: number): fc.Arbitrary<string | null> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.constant('null') },
    { weight: 4, arbitrary: okToken[field] },
    { weight: anyWeight, arbitrary: anyToken },
  );
}

interface Case {
  /** Index into TXS (an index keeps fast-check's counterexamples short). */
  readonly tx: number;
  readonly tokens: Readonly<Record<Field, string | null>>;
  readonly extra: readonly string[];
}

/** Text of the transaction in the encoding the config selects (base58 when absent, Agave's default). */
function txText(tx: SignedTx, encoding: unknown): string {
  return encoding === 'base64' ? tx.base64 : tx.base58;
}

function render(c: Case, id: number): { body: string; values: Record<Field, unknown> } {
  const values = {} as Record<Field, unknown>;
  const members: string[] = [...c.extra];
  for (const f of FIELDS) {
    const t = c.tokens[f];
    values[f] = t === null ? undefined : (JSON.parse(t) as unknown);
    if (t !== null) members.push(`"${f}":${t}`);
  }
  const cfg = '{' + members.join(',') + '}';
  const body = `{"jsonrpc":"2.0","id":${id},"method":"sendTransaction","params":[${JSON.stringify(txText(TXS[c.tx], values.encoding))},${cfg}]}`;
  return { body, values };
}

const extraMember = fc
  .tuple(fc.string().filter((k) => !(FIELDS as readonly string[]).includes(k)), anyToken)
  .map(([k, v]) => JSON.stringify(k) + ':' + v);

function caseArb(anyWeight: number): fc.Arbitrary<Case> {
  return fc.record({
    tx: fc.nat(TXS.length - 1),
    tokens: fc.record({
      skipPreflight: fieldToken('skipPreflight', anyWeight),
      preflightCommitment: fieldToken('preflightCommitment', anyWeight),
      encoding: fieldToken('encoding', anyWeight),
      maxRetries: fieldToken('maxRetries', anyWeight),
      minContextSlot: fieldToken('minContextSlot', anyWeight),
    }),
    extra: fc.array(extraMember, { maxLength: 2 }),
  });
}

/** The specified answer for a config, checked against what the relay answered. */
async function checkCase(c: Case): Promise<void> {
  const { body, values } = render(c, 7);
  const problems = FIELDS.map((f) => ({ field: f, verdict: judge(f, values[f]) })).filter((p) => p.verdict.kind !== 'absent' && p.verdict.kind !== 'ok');
  const a = await answer(body);
  expect(a.internalErrors, `no internal error for ${body.slice(0, 300)}`).toEqual([]);
  expect(a.json.id).toBe(7);
  if (problems.length > 0) {
    const err = a.json.error as { code: number; message: string } | undefined;
    expect(err, `an error for ${body.slice(0, 300)}: ${JSON.stringify(a.json).slice(0, 300)}`).toBeDefined();
    expect(err!.code, err!.message).toBe(-32602);
    const named = problems.some((p) => reports(p.field, p.verdict, err!.message));
    expect(named, `"${err!.message}" reports one of ${problems.map((p) => `${p.field}:${p.verdict.kind}`).join(', ')}\nbody: ${body.slice(0, 300)}`).toBe(true);
    expect(a.published, 'nothing reaches a ring').toEqual([]);
    return;
  }
  if (values.skipPreflight === true) {
    const tx = TXS[c.tx];
    expect(a.json, body.slice(0, 300)).toEqual({ jsonrpc: '2.0', result: tx.signature, id: 7 });
    expect(a.published).toHaveLength(1);
    expect(a.published[0].bytes.equals(tx.bytes), 'the exact bytes are in the ring').toBe(true);
    // docs/relay-api.md: maxRetries is carried with the transaction (values above 2^31-1 as 2^31-1); -1 when the
    // client gave none.
    const carried = values.maxRetries === undefined || values.maxRetries === null ? -1 : Math.min(Number(values.maxRetries), 0x7fff_ffff);
    expect(a.published[0].maxRetries, `maxRetries ${String(values.maxRetries)} carried with the transaction`).toBe(carried);
  } else {
    // No upstream: the preflight cannot run (docs/errors.md: -32005 with data.reason).
    expect(a.json).toEqual({
      jsonrpc: '2.0',
      error: { code: -32005, message: 'Node is unhealthy: preflight simulation upstream is unavailable', data: { reason: 'preflight_unavailable' } },
      id: 7,
    });
    expect(a.published).toEqual([]);
  }
}

describe('sendTransaction params and config (property)', () => {
  it.each(FIELDS)('only `%s` holds a wrong value: -32602 naming the field (or Agave\'s variant wording), never another error', async (field) => {
    const oneWrong = fc
      .record({
        base: caseArb(0),
        field: fc.constant(field),
        token: anyToken,
      })
      .filter(({ field, token }) => {
        const k = judge(field, JSON.parse(token) as unknown).kind;
        return k !== 'ok' && k !== 'absent';
      })
      .map(({ base, field, token }): Case => ({ ...base, tokens: { ...base.tokens, [field]: token } }));
    await fc.assert(fc.asyncProperty(oneWrong, checkCase), fcParams(SEED + FIELDS.indexOf(field) * 16, 200));
  });

  it('any mix of valid, absent and wrong fields (plus unknown members): an error naming a wrong field, else the signature or -32005', async () => {
    await fc.assert(fc.asyncProperty(caseArb(2), checkCase), fcParams(SEED + 1, 500));
  });

  it('any non-negative integer maxRetries a client sends (u64 in Agave, up to 2^53 here) is carried, above 2^31-1 as 2^31-1 (docs/relay-api.md), or refused with -32602', async () => {
    const big = fc.oneof(
      fc.maxSafeNat(),
      fc.constantFrom(2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 5, 2 ** 53 - 1),
    );
    await fc.assert(
      fc.asyncProperty(fc.nat(TXS.length - 1), big, async (i, n) => {
        const tx = TXS[i];
        const a = await answer(`{"jsonrpc":"2.0","id":1,"method":"sendTransaction","params":["${tx.base64}",{"encoding":"base64","skipPreflight":true,"maxRetries":${n}}]}`);
        expect(a.internalErrors).toEqual([]);
        if (a.json.error !== undefined) {
          expect((a.json.error as { code: number }).code).toBe(-32602);
          expect((a.json.error as { message: string }).message).toContain('maxRetries');
          expect(a.published).toEqual([]);
        } else {
          expect(a.json.result).toBe(tx.signature);
          expect(a.published.map((p) => p.maxRetries), `maxRetries ${n} in the ring record`).toEqual([Math.min(n, 2 ** 31 - 1)]);
        }
      }),
      fcParams(SEED + 3, 200),
    );
  });

  it('params of the wrong shape: Agave\'s wording, id kept, nothing published', async () => {
    const params = fc.oneof(
      { weight: 2, arbitrary: fc.oneof(numberToken, stringToken, objectToken, fc.constantFrom('true', 'false')).map((t) => ({ text: t, shape: 'notArray' as const })) },
      { weight: 1, arbitrary: fc.constant({ text: '[]', shape: 'count' as const }) },
      { weight: 2, arbitrary: fc.array(anyToken, { minLength: 3, maxLength: 5 }).map((ts) => ({ text: '[' + ts.join(',') + ']', shape: 'count' as const })) },
      { weight: 3, arbitrary: fc.oneof(numberToken, objectToken, arrayToken, deepToken, fc.constantFrom('true', 'false', 'null')).map((t) => ({ text: `[${t}]`, shape: 'txType' as const })) },
      {
        weight: 3,
        arbitrary: fc
          .oneof(numberToken, stringToken, arrayToken, deepToken.filter((t) => t.startsWith('[')), fc.constantFrom('true', 'false'))
          .map((t) => ({ text: `[${JSON.stringify(TXS[0].base58)},${t}]`, shape: 'configType' as const })),
      },
    );
    await fc.assert(
      fc.asyncProperty(params, fc.oneof(fc.string(), fc.integer()), async ({ text, shape }, id) => {
        const body = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"sendTransaction","params":${text}}`;
        const value = JSON.parse(text) as unknown;
        const a = await answer(body);
        expect(a.internalErrors).toEqual([]);
        expect(a.published).toEqual([]);
        expect(a.json.id).toBe(id);
        const err = a.json.error as { code: number; message: string; data?: unknown };
        expect(err, JSON.stringify(a.json).slice(0, 300)).toBeDefined();
        expect(err.code).toBe(-32602);
        switch (shape) {
          case 'notArray':
            if (value === null) break; // absent params = [] (count error below would apply); not generated
            expect(err).toEqual({ code: -32602, message: '`params` should be an array' });
            break;
          case 'count':
            expect(err).toEqual({ code: -32602, message: 'Invalid parameters: Expected from 1 to 2 parameters.', data: `Got: ${(value as unknown[]).length}` });
            break;
          case 'txType':
            if (value !== null && typeof (value as unknown[])[0] === 'string') break;
            expect(err.message, 'the transaction must be a string (serde: "invalid type: X, expected a string")').toMatch(/^Invalid params: invalid type: .*, expected a string$/);
            break;
          case 'configType':
            expect(err.message, 'the config must be a map').toMatch(/^Invalid params: invalid type: .*, expected /);
            break;
        }
      }),
      fcParams(SEED + 2, 400),
    );
  });
});
