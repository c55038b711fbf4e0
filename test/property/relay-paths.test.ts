// Property tests of every relay-host path through a real relay on loopback (dist/, one relay for the file, started
// like test/helpers/relay-on-upstream.ts does, on a recording upstream that is its rpc route and preflight upstream):
//   POST /v1/submit         JSON bodies with `transaction`, `encoding`, `routes`, `maxRetries` of every type
//   POST /v1/transactions   octet-stream and text/plain bodies, ?encoding= and ?maxRetries=
//   POST /v1/sendTransaction JSON-RPC sendTransaction, single and batched
// Each answer has the status and `error.reason` docs/relay-api.md and docs/errors.md specify, for one of the things
// actually wrong with the request (the order of checks is not specified); intake refusals carry Agave's message (the
// reference model, test/property/agave-model.ts); `accepted: true` / a result only when nothing is wrong, with the
// transaction's first signature, and every accepted transaction reaches the rpc route's endpoint byte for byte.
// Seeded: FC_SEED / FC_PATH / FC_RUNS_SCALE (test/property/fc-params.ts).
import bs58 from 'bs58';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { agaveTextVerdict, agaveVerdict, TYPE, type TextVerdict } from './agave-model.js';
import { fcParams } from './fc-params.js';
import { buildReal, shapeArb } from './real-transactions.js';
import { mutatedTx, POOL_ALL } from './tx-mutations.js';
import { relayOnFakeRpcUpstream } from '../helpers/relay-on-upstream.js';

const SEED = 0x5eed_0003;
const KEY = '6f1c2a4e-9b7d-4c3a-8e21-5d0f4b6a7c19';
const ROUTE_NAMES = ['rpc', 'direct', 'jito', 'static'];
/** What this relay can deliver by: only the rpc route is configured (the recording upstream). */
const AVAILABLE = ['rpc'];

const env = relayOnFakeRpcUpstream({
  // Limits out of the way: this file is about what each body is answered, not about admission.
  keys: [
    {
      key: KEY,
      name: 'property-test',
      rateLimit: { perSecond: 1_000_000, burst: 1_000_000 },
      simulateLimit: { perSecond: 1_000_000, burst: 1_000_000 },
      readLimit: { perSecond: 1_000_000, burst: 1_000_000 },
    },
  ],
  // No rebroadcast traffic while the file runs.
  retries: { intervalMs: 600_000 },
});

// ---- HTTP ----

interface HttpAnswer {
  readonly status: number;
  readonly text: string;
  readonly json: unknown;
}

async function post(path: string, body: string | Buffer, contentType: string | null): Promise<HttpAnswer> {
  const headers: Record<string, string> = { 'x-api-key': KEY };
  if (contentType !== null) headers['content-type'] = contentType;
  const res = await fetch(env.relay.relayUrl + path, { method: 'POST', headers, body });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`HTTP ${res.status} answer to ${path} is not JSON: ${text.slice(0, 300)}`);
  }
  return { status: res.status, text, json };
}

/** Accepted transactions (base64): each must reach the rpc route's endpoint. */
const accepted = new Set<string>();

async function allDelivered(): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const sent = new Set(env.upstream.sent().map((b) => b.toString('base64')));
    const missing = [...accepted].filter((t) => !sent.has(t));
    if (missing.length === 0) return;
    if (Date.now() > deadline) throw new Error(`${missing.length} accepted transactions never reached the rpc route, e.g. ${missing[0]}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// ---- the registry's REST statuses and codes (docs/errors.md) ----

const REST: Record<string, { status: number; code: number }> = {
  parse_error: { status: 400, code: -32700 },
  invalid_params: { status: 400, code: -32602 },
  unknown_route: { status: 400, code: -32602 },
  route_not_allowed: { status: 403, code: -32602 },
  route_not_configured: { status: 400, code: -32602 },
  unsupported_media_type: { status: 415, code: -32600 },
  body_too_large: { status: 413, code: -32600 },
  tx_too_large_encoded: { status: 400, code: -32602 },
  tx_too_large_decoded: { status: 400, code: -32602 },
  tx_bad_encoding: { status: 400, code: -32602 },
  tx_undecodable: { status: 400, code: -32602 },
  tx_invalid: { status: 400, code: -32602 },
  tx_unsupported_encoding: { status: 400, code: -32602 },
};

/** A refusal the request deserves: its reason, and what its message must say when that is specified. */
interface Problem {
  readonly reason: string;
  readonly message?: (m: string) => boolean;
  readonly what: string;
}

function intakeProblem(v: TextVerdict): Problem | null {
  if (v.kind === 'ok') return null;
  const exact = v.message;
  return {
    reason: v.reason,
    what: `intake ${v.reason}${exact === null ? '' : `: ${exact}`}`,
    message: exact === null ? (m) => m.startsWith('invalid base') && m.includes(' encoding: ') : (m) => m === exact,
  };
}

/** Check a REST answer: accepted (nothing wrong) or a refusal for one of the problems. */
function checkRest(a: HttpAnswer, problems: readonly Problem[], signature: string | null, label: string): void {
  const o = a.json as Record<string, unknown>;
  if (problems.length === 0) {
    expect(a.status, `${label}\nanswer ${a.text}`).toBe(200);
    expect(o, label).toEqual({ accepted: true, signature, routes: AVAILABLE });
    return;
  }
  expect(o.accepted, `${label}\nexpected one of: ${problems.map((p) => p.what).join(' | ')}\nanswer ${a.status} ${a.text.slice(0, 400)}`).toBe(false);
  const e = o.error as { code: number; reason: string; message: string; data?: unknown };
  expect(Object.keys(o).sort()).toEqual(['accepted', 'error']);
  const p = problems.find((x) => x.reason === e.reason);
  expect(p, `${label}\nexpected one of: ${problems.map((x) => x.what).join(' | ')}\nanswer ${a.status} ${a.text.slice(0, 400)}`).toBeDefined();
  expect(a.status, `${e.reason} status`).toBe(REST[e.reason].status);
  expect(e.code, `${e.reason} code`).toBe(REST[e.reason].code);
  expect(typeof e.message).toBe('string');
  if ('data' in e) expect(e.data, 'data is omitted when there is none, never null').not.toBeNull();
  if (p!.message !== undefined) expect(p!.message(e.message), `${label}\nmessage "${e.message}" for ${p!.what}`).toBe(true);
}

// ---- transactions and their text ----

type Enc = 'base64' | 'base58';

function encode(bytes: Buffer, enc: Enc): string {
  return enc === 'base64' ? bytes.toString('base64') : bs58.encode(bytes);
}

const nastyChar = fc.constantFrom('=', '-', '_', ' ', '\n', '0', 'O', 'l', '+', '/', '!', 'é', '\u0000', '\u00a0');

/** Transaction text meant to be read as `enc` (sometimes written in the other encoding, or broken). */
function txText(enc: Enc): fc.Arbitrary<string> {
  const other: Enc = enc === 'base64' ? 'base58' : 'base64';
  const valid = fc.nat(POOL_ALL.length - 1).map((i) => encode(POOL_ALL[i], enc));
  return fc.oneof(
    { weight: 5, arbitrary: valid },
    { weight: 4, arbitrary: mutatedTx.map((m) => encode(m.tx, enc)) },
    { weight: 1, arbitrary: fc.nat(POOL_ALL.length - 1).map((i) => encode(POOL_ALL[i], other)) },
    {
      weight: 2,
      arbitrary: fc.tuple(valid, fc.nat(), nastyChar).map(([t, i, c]) => {
        const at = i % t.length;
        return t.slice(0, at) + c + t.slice(at + 1);
      }),
    },
    { weight: 1, arbitrary: fc.tuple(valid, fc.nat()).map(([t, n]) => t.slice(0, n % t.length)) },
    { weight: 1, arbitrary: fc.integer({ min: 1233, max: 1300 }).map((n) => encode(Buffer.alloc(n, 3), enc)) },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', 'A', '1', 'AAAA', '1111') },
  );
}

function signatureOf(v: TextVerdict): string | null {
  return v.kind === 'ok' ? bs58.encode(v.firstSignature) : null;
}

// ---- value tokens for fields of the wrong type ----

function deepArray(depth: number, inner = ''): string {
  return '['.repeat(depth) + inner + ']'.repeat(depth);
}
const wrongToken = fc.oneof(
  fc.integer().map(String),
  fc.constantFrom('1e400', '-1', '0.5', 'true', 'false', '{}', '{"toString":1}', '{"valueOf":1}', '[]', '[1]', '[{"toString":1}]', '""', '"x"'),
  fc.integer({ min: 2, max: 12_000 }).map((d) => deepArray(d)),
  fc.integer({ min: 2, max: 3_000 }).map((d) => '{"a":'.repeat(d) + '{"toString":1}' + '}'.repeat(d)),
  fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
);

/** http.maxBodyBytes (default): a longer body is 413 body_too_large, whatever it holds. */
const MAX_BODY = 51_200;

// ---- POST /v1/submit ----

type Judged = { readonly ok: true; readonly enc?: Enc } | { readonly ok: false; readonly problem: Problem };

function judgeEncoding(v: unknown): Judged {
  if (v === undefined || v === null || v === 'base64') return { ok: true, enc: 'base64' };
  if (v === 'base58' || v === 'binary') return { ok: true, enc: 'base58' };
  if (v === 'json' || v === 'jsonParsed') {
    const exact = `unsupported encoding: ${v}. Supported encodings: base58, base64`;
    return { ok: false, problem: { reason: 'tx_unsupported_encoding', what: `encoding ${v}`, message: (m) => m === exact } };
  }
  // Described without serialising: the value may be nested thousands deep.
  return { ok: false, problem: { reason: 'invalid_params', what: `encoding of type ${Array.isArray(v) ? 'array' : typeof v}` } };
}

function judgeRoutes(v: unknown): Judged {
  if (v === undefined || v === null || v === 'default') return { ok: true };
  // The brief and docs: a bad `routes` of any shape is 400 unknown_route, with a message naming `routes`.
  const unknown: Problem = { reason: 'unknown_route', what: 'routes shape/name', message: (m) => /\broutes\b/.test(m) };
  if (!Array.isArray(v) || v.length === 0) return { ok: false, problem: unknown };
  if (v.some((r) => typeof r !== 'string' || !ROUTE_NAMES.includes(r))) return { ok: false, problem: unknown };
  // The key allows every route: none of those asked runs here is the relay's matter (issue 30, item 3).
  if (!v.some((r) => AVAILABLE.includes(r as string))) return { ok: false, problem: { reason: 'route_not_configured', what: 'no route this relay runs requested' } };
  return { ok: true };
}

function judgeMaxRetries(v: unknown): Judged {
  if (v === undefined || v === null) return { ok: true };
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return { ok: true };
  return { ok: false, problem: { reason: 'invalid_params', what: 'maxRetries' } };
}

const encodingToken = fc.oneof(
  { weight: 14, arbitrary: fc.constantFrom<string | null>(null, null, 'null', '"base64"', '"base58"', '"binary"') },
  { weight: 1, arbitrary: fc.constantFrom('"json"', '"jsonParsed"', '"BASE64"', '""', '"base64 "') },
  { weight: 1, arbitrary: wrongToken },
);
const routesToken = fc.oneof(
  { weight: 14, arbitrary: fc.constantFrom<string | null>(null, 'null', '"default"', '["rpc"]', '["rpc","jito"]', '["direct","rpc"]', '["rpc","rpc"]') },
  { weight: 2, arbitrary: fc.constantFrom('["jito"]', '["direct"]', '["static","direct"]', '["jito","jito"]') },
  { weight: 2, arbitrary: fc.constantFrom('[]', '["carrier-pigeon"]', '["RPC"]', '"rpc"', '[null]', '[["rpc"]]', '["rpc",5]', '{"rpc":true}', '"Default"') },
  { weight: 2, arbitrary: wrongToken },
  { weight: 1, arbitrary: fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }).map((a) => JSON.stringify(a)) },
);
const maxRetriesToken = fc.oneof(
  { weight: 14, arbitrary: fc.oneof(fc.constant<string | null>(null), fc.constant('null'), fc.nat(10).map(String), fc.nat(0x7fff_ffff).map(String)) },
  { weight: 2, arbitrary: fc.constantFrom('-1', '1.5', '"3"', '1e400', '9007199254740993', '[3]', '{"toString":1}') },
  { weight: 1, arbitrary: wrongToken },
);

interface SubmitCase {
  readonly enc: Enc;
  readonly txToken: string | null;
  readonly encoding: string | null;
  readonly routes: string | null;
  readonly maxRetries: string | null;
  readonly extra: readonly string[];
}

const submitCase: fc.Arbitrary<SubmitCase> = fc
  .record({
    encoding: encodingToken,
    routes: routesToken,
    maxRetries: maxRetriesToken,
    extra: fc.array(fc.tuple(fc.constantFrom('"foo"', '"transactions"', '"Transaction"', '"skipPreflight"', '""'), wrongToken).map(([k, v]) => `${k}:${v}`), { maxLength: 2 }),
    wrongTx: fc.oneof({ weight: 10, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: wrongToken }),
  })
  .chain((r) => {
    const parsedEnc = r.encoding === null ? undefined : (JSON.parse(r.encoding) as unknown);
    const j = judgeEncoding(parsedEnc);
    const enc: Enc = j.ok && j.enc !== undefined ? j.enc : 'base64';
    const tx: fc.Arbitrary<string | null> = r.wrongTx !== null ? fc.constant(r.wrongTx) : fc.oneof({ weight: 20, arbitrary: txText(enc).map((t) => JSON.stringify(t)) }, { weight: 1, arbitrary: fc.constant(null) });
    return tx.map((txToken) => ({ enc, txToken, encoding: r.encoding, routes: r.routes, maxRetries: r.maxRetries, extra: r.extra }));
  });

function submitBody(c: SubmitCase): string {
  const members = [...c.extra];
  if (c.txToken !== null) members.push(`"transaction":${c.txToken}`);
  if (c.encoding !== null) members.push(`"encoding":${c.encoding}`);
  if (c.routes !== null) members.push(`"routes":${c.routes}`);
  if (c.maxRetries !== null) members.push(`"maxRetries":${c.maxRetries}`);
  return '{' + members.join(',') + '}';
}

async function checkSubmit(c: SubmitCase): Promise<void> {
  const body = submitBody(c);
  const o = JSON.parse(body) as Record<string, unknown>;
  const problems: Problem[] = [];
  let verdict: TextVerdict | null = null;
  const enc = judgeEncoding(o.encoding);
  for (const j of [enc, judgeRoutes(o.routes), judgeMaxRetries(o.maxRetries)]) if (!j.ok) problems.push(j.problem);
  if (typeof o.transaction !== 'string') problems.push({ reason: 'invalid_params', what: 'transaction not a string' });
  else if (enc.ok) {
    verdict = agaveTextVerdict(o.transaction, enc.enc ?? 'base64');
    const p = intakeProblem(verdict);
    if (p !== null) problems.push(p);
  }
  if (Buffer.byteLength(body) > MAX_BODY) problems.splice(0, problems.length, { reason: 'body_too_large', what: `body of ${Buffer.byteLength(body)} bytes` });
  const a = await post('/v1/submit', body, 'application/json');
  checkRest(a, problems, verdict === null ? null : signatureOf(verdict), `POST /v1/submit ${body.slice(0, 300)}`);
  if (problems.length === 0 && verdict?.kind === 'ok') accepted.add(verdict.bytes.toString('base64'));
}

// ---- POST /v1/transactions ----

interface TransactionsCase {
  readonly contentType: string | null;
  readonly encodingParam: string | null;
  readonly maxRetriesParam: string | null;
  readonly body: Buffer;
  /** For text bodies: the transaction text inside the whitespace. */
  readonly text: string | null;
}

const rawBody = fc.oneof(
  { weight: 5, arbitrary: fc.nat(POOL_ALL.length - 1).map((i) => POOL_ALL[i]) },
  { weight: 5, arbitrary: mutatedTx.map((m) => m.tx) },
  { weight: 1, arbitrary: fc.constantFrom(Buffer.alloc(0), Buffer.from([0]), Buffer.from([1])) },
  { weight: 1, arbitrary: fc.integer({ min: 1233, max: 1400 }).map((n) => Buffer.alloc(n, 1)) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)) },
);
const space = fc.constantFrom('', '', '', ' ', '\n', '\r\n', '\t ', '  \n');

const transactionsCase: fc.Arbitrary<TransactionsCase> = fc
  .record({
    contentType: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom('application/octet-stream', 'text/plain', 'text/plain; charset=utf-8', 'Application/Octet-Stream', 'TEXT/PLAIN') },
      { weight: 1, arbitrary: fc.constantFrom<string | null>('application/json', 'text/html', 'application/x-www-form-urlencoded', null, 'text/plainx', 'octet-stream') },
    ),
    encodingParam: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom<string | null>(null, null, 'base64', 'base58', 'binary') },
      { weight: 1, arbitrary: fc.constantFrom('', 'json', 'jsonParsed', 'BASE58', 'base 64', 'null') },
    ),
    maxRetriesParam: fc.oneof(
      { weight: 6, arbitrary: fc.oneof(fc.constant<string | null>(null), fc.nat(10).map(String), fc.nat(0x7fff_ffff).map(String)) },
      { weight: 1, arbitrary: fc.constantFrom('', '-1', '1e3', ' 5', '0x10', '1.0', '1234567890123456', '٣', '5 ') },
    ),
    before: space,
    after: space,
    raw: rawBody,
  })
  .chain((r): fc.Arbitrary<TransactionsCase> => {
    const isText = r.contentType !== null && r.contentType.toLowerCase().startsWith('text/plain') && !r.contentType.toLowerCase().startsWith('text/plainx');
    if (!isText) return fc.constant<TransactionsCase>({ contentType: r.contentType, encodingParam: r.encodingParam, maxRetriesParam: r.maxRetriesParam, body: r.raw, text: null });
    const enc: Enc = r.encodingParam === 'base58' || r.encodingParam === 'binary' ? 'base58' : 'base64';
    return txText(enc).map((t) => ({
      contentType: r.contentType,
      encodingParam: r.encodingParam,
      maxRetriesParam: r.maxRetriesParam,
      body: Buffer.from(r.before + t + r.after, 'utf8'),
      text: t,
    }));
  });

function query(c: TransactionsCase): string {
  const parts: string[] = [];
  if (c.encodingParam !== null) parts.push('encoding=' + encodeURIComponent(c.encodingParam));
  if (c.maxRetriesParam !== null) parts.push('maxRetries=' + encodeURIComponent(c.maxRetriesParam));
  return parts.length === 0 ? '' : '?' + parts.join('&');
}

async function checkTransactions(c: TransactionsCase): Promise<void> {
  const path = '/v1/transactions' + query(c);
  const label = `POST ${path} (${c.contentType ?? 'no content-type'}) ${c.text !== null ? JSON.stringify(c.text.slice(0, 200)) : c.body.toString('base64').slice(0, 200)}`;
  const a = await post(path, c.body, c.contentType);
  const mt = (c.contentType ?? '').split(';')[0].trim().toLowerCase();
  if (mt !== 'application/octet-stream' && mt !== 'text/plain') {
    checkRest(a, [{ reason: 'unsupported_media_type', what: 'content type' }], null, label);
    return;
  }
  const problems: Problem[] = [];
  if (c.maxRetriesParam !== null && !/^[0-9]{1,15}$/.test(c.maxRetriesParam)) problems.push({ reason: 'invalid_params', what: 'maxRetries query', message: (m) => m.includes('maxRetries') });
  let bytes: Buffer | null = null;
  let signature: string | null = null;
  if (mt === 'application/octet-stream') {
    if (c.body.length === 0) problems.push({ reason: 'tx_undecodable', what: 'empty body' });
    else if (c.body.length > (c.body[0] === 0x81 ? 4096 : 1232)) {
      // Legacy/v0 within one packet, v1 up to 4096 (docs/transactions.md); beyond 4096 the relay's own maximum speaks.
      const cap = c.body[0] === 0x81 || c.body.length > 4096 ? 4096 : 1232;
      const exact = `decoded ${TYPE} too large: ${c.body.length} bytes (max: ${cap} bytes)`;
      problems.push({ reason: 'tx_too_large_decoded', what: exact, message: (m) => m === exact });
    } else {
      const v = agaveVerdict(c.body);
      if (v.kind === 'ok') {
        bytes = c.body;
        signature = bs58.encode(v.firstSignature);
      } else problems.push({ reason: v.reason, what: v.message, message: (m) => m === v.message });
    }
  } else {
    const e = c.encodingParam === null ? { ok: true as const, enc: 'base64' as Enc } : judgeEncoding(c.encodingParam);
    if (!e.ok) problems.push(e.problem);
    else {
      // docs/relay-api.md: surrounding whitespace is ignored.
      const text = c.body.toString('utf8').replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '');
      const v = agaveTextVerdict(text, e.enc ?? 'base64');
      const p = intakeProblem(v);
      if (p !== null) problems.push(p);
      else if (v.kind === 'ok') {
        bytes = v.bytes;
        signature = bs58.encode(v.firstSignature);
      }
    }
  }
  checkRest(a, problems, signature, label);
  if (problems.length === 0 && bytes !== null) accepted.add(bytes.toString('base64'));
}

// ---- POST /v1/sendTransaction (JSON-RPC) ----

interface RpcElement {
  readonly id: number | string;
  readonly text: string;
  readonly encoding: string | null;
  readonly skipPreflight: boolean | null;
}

const rpcElement: fc.Arbitrary<RpcElement> = fc
  .record({
    id: fc.oneof(fc.nat(1_000_000), fc.string({ maxLength: 12 })),
    encoding: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom<string | null>(null, 'base64', 'base58', 'binary') },
      { weight: 1, arbitrary: fc.constantFrom('json', 'jsonParsed', 'BASE64', '') },
    ),
    skipPreflight: fc.constantFrom<boolean | null>(true, true, false, null),
  })
  .chain((r) => {
    const enc: Enc = r.encoding === 'base64' ? 'base64' : 'base58';
    return txText(enc).map((text) => ({ id: r.id, text, encoding: r.encoding, skipPreflight: r.skipPreflight }));
  });

function rpcRequest(e: RpcElement): unknown {
  const cfg: Record<string, unknown> = {};
  if (e.encoding !== null) cfg.encoding = e.encoding;
  if (e.skipPreflight !== null) cfg.skipPreflight = e.skipPreflight;
  return { jsonrpc: '2.0', id: e.id, method: 'sendTransaction', params: [e.text, cfg] };
}

function checkRpcAnswer(got: unknown, e: RpcElement, label: string): void {
  const o = got as Record<string, unknown>;
  expect(o.jsonrpc).toBe('2.0');
  expect(o.id, `${label}: id echoed with its type`).toBe(e.id);
  let enc: Enc = 'base58';
  if (e.encoding === 'base64') enc = 'base64';
  else if (e.encoding === 'json' || e.encoding === 'jsonParsed') {
    expect(o.error, label).toEqual({ code: -32602, message: `unsupported encoding: ${e.encoding}. Supported encodings: base58, base64` });
    return;
  } else if (e.encoding !== null && e.encoding !== 'base58' && e.encoding !== 'binary') {
    const err = o.error as { code: number; message: string };
    expect(err?.code, label).toBe(-32602);
    expect(err.message, label).toContain(`unknown variant \`${e.encoding}\``);
    return;
  }
  const v = agaveTextVerdict(e.text, enc);
  if (v.kind === 'ok') {
    expect(o, `${label}\nanswer ${JSON.stringify(o).slice(0, 300)}`).toEqual({ jsonrpc: '2.0', result: bs58.encode(v.firstSignature), id: e.id });
    accepted.add(v.bytes.toString('base64'));
    return;
  }
  const err = o.error as { code: number; message: string; data?: unknown } | undefined;
  expect(err, `${label}: refused ${v.reason}\nanswer ${JSON.stringify(o).slice(0, 300)}`).toBeDefined();
  expect(Object.keys(err!).sort(), 'no data member on intake errors').toEqual(['code', 'message']);
  expect(err!.code).toBe(-32602);
  if (v.message !== null) expect(err!.message, label).toBe(v.message);
  else expect(err!.message, label).toMatch(new RegExp(`^invalid ${enc} encoding: `));
}

async function checkRpc(els: readonly RpcElement[], batch: boolean): Promise<void> {
  const body = JSON.stringify(batch ? els.map(rpcRequest) : rpcRequest(els[0]));
  const label = `POST /v1/sendTransaction ${body.slice(0, 300)}`;
  const a = await post('/v1/sendTransaction', body, 'application/json');
  expect(a.status, `${label}\nanswer ${a.text.slice(0, 300)}`).toBe(200);
  if (batch) {
    expect(Array.isArray(a.json), label).toBe(true);
    const arr = a.json as unknown[];
    expect(arr).toHaveLength(els.length);
    arr.forEach((x, i) => checkRpcAnswer(x, els[i], `${label} [${i}]`));
  } else {
    checkRpcAnswer(a.json, els[0], label);
  }
}

// ---- properties ----

describe('relay host paths through a real relay (property)', () => {
  it('POST /v1/submit: the specified status and reason for one of the things wrong, else accepted with the signature', async () => {
    await fc.assert(fc.asyncProperty(submitCase, checkSubmit), fcParams(SEED, 300));
    await allDelivered();
  });

  it('POST /v1/submit: a wrong-typed `transaction`, `encoding` or `maxRetries` is 400 invalid_params naming the field', async () => {
    const field = fc.constantFrom('transaction', 'encoding', 'maxRetries');
    const bad = fc.oneof(fc.integer({ max: -1 }).map(String), fc.constantFrom('true', '{}', '{"toString":1}', '[]', '["base64"]', '1e400', '-1', '0.5'), fc.integer({ min: 2, max: 20_000 }).map((d) => deepArray(d)));
    await fc.assert(
      fc.asyncProperty(field, bad, fc.nat(POOL_ALL.length - 1), async (f, token, i) => {
        const members: Record<string, string> = { transaction: JSON.stringify(POOL_ALL[i].toString('base64')) };
        members[f] = token;
        if (f === 'transaction' && token.startsWith('"')) return;
        const body = '{' + Object.entries(members).map(([k, v]) => `"${k}":${v}`).join(',') + '}';
        const a = await post('/v1/submit', body, 'application/json');
        const o = a.json as { accepted: boolean; error?: { reason: string; message: string } };
        expect(a.status, `${body.slice(0, 200)}: ${a.text.slice(0, 300)}`).toBe(400);
        expect(o.error?.reason).toBe('invalid_params');
        expect(o.error?.message, `the message names \`${f}\``).toContain(f);
      }),
      fcParams(SEED + 1, 60),
    );
  });

  it('POST /v1/transactions: octet-stream and text/plain bodies, ?encoding= and ?maxRetries=: the specified answer', async () => {
    await fc.assert(fc.asyncProperty(transactionsCase, checkTransactions), fcParams(SEED + 2, 250));
    await allDelivered();
  });

  it('POST /v1/sendTransaction: single and batched JSON-RPC calls get the signature or Agave\'s error, HTTP 200, ids echoed', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(rpcElement, { minLength: 1, maxLength: 3 }), fc.boolean(), async (els, batch) => checkRpc(els, batch)),
      fcParams(SEED + 3, 150),
    );
    await allDelivered();
  });

  it('a body that is not UTF-8 is not JSON (RFC 8259 §8.1): /v1/sendTransaction -32700 (Agave: serde_json::from_slice), /v1/submit 400 parse_error', async () => {
    // Bytes that are never valid UTF-8 (a lone continuation byte, a truncated sequence, an encoded surrogate, an
    // overlong encoding, 0xff), placed inside a string of an otherwise valid request.
    const bad = fc.constantFrom([0x80], [0xc3], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xff], [0xe2, 0x82]);
    const where = fc.constantFrom('id', 'transaction', 'extra');
    await fc.assert(
      fc.asyncProperty(bad, where, fc.nat(POOL_ALL.length - 1), async (bytes, at, i) => {
        const tx = POOL_ALL[i].toString('base64');
        const mark = '\u0001MARK\u0001';
        const rpc = JSON.stringify({ jsonrpc: '2.0', id: at === 'id' ? `a${mark}` : 1, method: 'sendTransaction', params: [at === 'transaction' ? tx + mark : tx, { encoding: 'base64', skipPreflight: true, note: at === 'extra' ? mark : '' }] });
        const withBad = (text: string): Buffer => {
          const [before, after] = text.split(JSON.stringify(mark).slice(1, -1));
          return Buffer.concat([Buffer.from(before, 'utf8'), Buffer.from(bytes), Buffer.from(after, 'utf8')]);
        };
        const a = await post('/v1/sendTransaction', withBad(rpc), 'application/json');
        expect(a.status).toBe(200);
        expect(a.json, `answer ${a.text.slice(0, 200)}`).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
        const submit = JSON.stringify({ transaction: at === 'transaction' ? tx + mark : tx, note: mark });
        const b = await post('/v1/submit', withBad(submit), 'application/json');
        expect(b.status, `answer ${b.text.slice(0, 200)}`).toBe(400);
        expect((b.json as { error: { reason: string } }).error.reason).toBe('parse_error');
      }),
      fcParams(SEED + 5, 30),
    );
  });

  it('maxRetries as a client sends it reaches the rpc route\'s endpoint, values above 2^31-1 as 2^31-1 (docs/relay-api.md)', async () => {
    const big = fc.oneof(fc.nat(10), fc.constantFrom(2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 3, 2 ** 53 - 1), fc.maxSafeNat());
    await fc.assert(
      fc.asyncProperty(shapeArb, fc.nat(), big, async (shape, s, n) => {
        const tx = buildReal(shape, s ^ 0x7a11);
        // Only calls made after this submission (shrinking resubmits the same bytes).
        const from = env.upstream.calls.length;
        const a = await post('/v1/submit', JSON.stringify({ transaction: tx.toString('base64'), maxRetries: n }), 'application/json');
        expect(a.status, a.text).toBe(200);
        const deadline = Date.now() + 10_000;
        let call: { params: unknown[] } | undefined;
        while (call === undefined) {
          call = env.upstream.calls.slice(from).find((c) => c.method === 'sendTransaction' && c.tx !== undefined && c.tx.equals(tx));
          if (call === undefined) {
            if (Date.now() > deadline) throw new Error('the transaction never reached the rpc route');
            await new Promise((r) => setTimeout(r, 10));
          }
        }
        const cfg = call.params[1] as { maxRetries?: number };
        expect(cfg.maxRetries, `maxRetries ${n} forwarded by the rpc route`).toBe(Math.min(n, 2 ** 31 - 1));
      }),
      fcParams(SEED + 4, 25),
    );
  });
});
