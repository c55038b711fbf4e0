// Judges one answer against a case's expectation (harness process; hot: once per case). Classes: expected;
// unexpectedStatus (HTTP status not among the expected ones); invalidBody (not JSON, wrong content type, JSON-RPC
// or REST envelope wrong, id not echoed, data: null, a key in the body, x-request-id or CORS header missing or
// wrong); unexpectedAnswer (well-formed, right status, but the wrong code, reason, message, data or result).
import { isDeepStrictEqual } from 'node:util';
import type { DataRule, ErrorRule, Expectation, RestOutcome, RpcElementExp, RpcOutcome } from './expectations.js';

export interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}

export type JudgedClass = 'expected' | 'unexpectedStatus' | 'invalidBody' | 'unexpectedAnswer';

export interface Verdict {
  readonly cls: JudgedClass;
  readonly detail: string;
}

export interface JudgeContext {
  /** x-request-id the answer must echo (null: the relay makes one up). */
  readonly echoRequestId: string | null;
  /** Strings no answer may contain (the API keys). */
  readonly secrets: readonly string[];
  /** The fake cluster's slot now (getLeaderSlots' snapshot must be close to it). */
  readonly clusterSlot: number;
  readonly horizonSlots: number;
  readonly lookbackSlots: number;
}

const OK: Verdict = { cls: 'expected', detail: '' };
const fail = (cls: JudgedClass, detail: string): Verdict => ({ cls, detail });
const BASE58_SIG = /^[1-9A-HJ-NP-Za-km-z]{32,88}$/;
const REQUEST_ID = /^[\x21-\x7e]{1,64}$/;

function header(a: Answer, name: string): string | undefined {
  const v = a.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

function isJsonType(a: Answer): boolean {
  const t = header(a, 'content-type') ?? '';
  return t.split(';')[0].trim().toLowerCase() === 'application/json';
}

function parse(a: Answer): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(a.body.toString('utf8')) };
  } catch {
    return { ok: false };
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function checkData(err: Record<string, unknown>, rule: DataRule | undefined): string | null {
  if (!('data' in err)) return rule === undefined ? null : 'data missing';
  const d = err.data;
  if (rule === undefined) return `unexpected data ${JSON.stringify(d)?.slice(0, 80)}`;
  if ('exact' in rule) return isDeepStrictEqual(d, rule.exact) ? null : `data ${JSON.stringify(d)?.slice(0, 80)}`;
  if (!isObject(d)) return 'data not an object';
  if (rule.shape === 'contextSlot') return typeof d.contextSlot === 'number' ? null : 'data.contextSlot not a number';
  if (rule.shape === 'rate_limited' || rule.shape === 'simulate_rate_limited') {
    return d.reason === rule.shape && typeof d.retryAfterMs === 'number' && d.retryAfterMs > 0 ? null : `data ${JSON.stringify(d)}`;
  }
  return null;
}

/** An error object against a rule: null when it fits, else why not. */
export function checkError(err: Record<string, unknown>, rule: ErrorRule): string | null {
  if (err.code !== rule.code) return `code ${String(err.code)}, expected ${rule.code}`;
  const m = err.message;
  if (typeof m !== 'string') return 'message not a string';
  if (rule.message !== undefined && m !== rule.message) return `message ${JSON.stringify(m)}, expected ${JSON.stringify(rule.message)}`;
  if (rule.prefixes !== undefined && !rule.prefixes.some((p) => m.startsWith(p))) return `message ${JSON.stringify(m.slice(0, 120))} has none of the expected prefixes`;
  if (rule.includes !== undefined && !m.toLowerCase().includes(rule.includes.toLowerCase())) return `message ${JSON.stringify(m.slice(0, 120))} does not name ${rule.includes}`;
  return checkData(err, rule.data);
}

function checkLeaderSlots(v: Record<string, unknown>, o: { startSlot: number; limit: number }, ctx: JudgeContext): string | null {
  if ('result' in v) {
    const r = v.result;
    if (!isObject(r) || r.success !== true || !Array.isArray(r.data) || typeof r.snapshotSlot !== 'number' || typeof r.total !== 'number') return 'getLeaderSlots result malformed';
    if (typeof r.snapshotGeneratedAtUnixMs !== 'number' || typeof r.snapshotAgeMs !== 'number') return 'getLeaderSlots snapshot fields missing';
    const rows = r.data as unknown[];
    if (r.total !== rows.length || rows.length < 1 || rows.length > o.limit) return `total ${r.total}, ${rows.length} rows, limit ${o.limit}`;
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      if (!isObject(row) || row.slot !== o.startSlot + i || typeof row.identity !== 'string') return `row ${i} is not slot ${o.startSlot + i}`;
    }
    const last = r.snapshotSlot + ctx.horizonSlots - 1;
    if (o.startSlot < r.snapshotSlot - ctx.lookbackSlots || o.startSlot > last) return `startSlot ${o.startSlot} answered outside the snapshot (slot ${r.snapshotSlot})`;
    if (rows.length < o.limit && o.startSlot + rows.length - 1 !== last) return `${rows.length} rows although the snapshot covers up to ${last}`;
    if (Math.abs(r.snapshotSlot - ctx.clusterSlot) > 25) return `snapshot slot ${r.snapshotSlot}, cluster at ${ctx.clusterSlot}`;
    return null;
  }
  const e = v.error;
  if (!isObject(e) || e.code !== -32016) return `getLeaderSlots answered ${JSON.stringify(e)?.slice(0, 160)}`;
  const d = e.data;
  if (!isObject(d) || typeof d.firstSlot !== 'number' || typeof d.lastSlot !== 'number' || typeof d.contextSlot !== 'number') return 'range-not-covered data malformed';
  if (o.startSlot >= d.firstSlot && o.startSlot <= d.lastSlot) return `range not covered although ${o.startSlot} is in [${d.firstSlot}, ${d.lastSlot}]`;
  if (Math.abs(d.contextSlot - ctx.clusterSlot) > 25) return `snapshot slot ${d.contextSlot}, cluster at ${ctx.clusterSlot}`;
  return null;
}

function checkOutcome(v: Record<string, unknown>, o: RpcOutcome, ctx: JudgeContext): string | null {
  if ('result' in o && o.result === 'leaderSlots') return checkLeaderSlots(v, o, ctx);
  if ('result' in o) {
    if (!('result' in v)) return `error ${JSON.stringify(v.error)?.slice(0, 200)}, expected a signature`;
    if (typeof v.result !== 'string' || !BASE58_SIG.test(v.result)) return `result ${JSON.stringify(v.result)?.slice(0, 80)} is not a signature`;
    return o.signature === null || v.result === o.signature ? null : `signature ${v.result}, expected ${o.signature}`;
  }
  if (!('error' in v)) return `result ${JSON.stringify(v.result)?.slice(0, 120)}, expected error ${o.error.code}`;
  return checkError(v.error as Record<string, unknown>, o.error);
}

/** One JSON-RPC response object: envelope (invalidBody) then outcome (unexpectedAnswer). */
function judgeElement(v: unknown, exp: RpcElementExp, ctx: JudgeContext): Verdict {
  if (!isObject(v) || v.jsonrpc !== '2.0') return fail('invalidBody', 'not a JSON-RPC 2.0 response object');
  if (!('id' in v)) return fail('invalidBody', 'no id');
  if (v.id !== exp.id) return fail('invalidBody', `id ${JSON.stringify(v.id)?.slice(0, 60)}, expected ${JSON.stringify(exp.id)?.slice(0, 60)}`);
  if (('result' in v) === ('error' in v)) return fail('invalidBody', 'not exactly one of result and error');
  if ('error' in v) {
    const e = v.error;
    if (!isObject(e) || !Number.isInteger(e.code) || typeof e.message !== 'string') return fail('invalidBody', 'error object malformed');
    if ('data' in e && e.data === null) return fail('invalidBody', 'error data: null');
  }
  const reasons: string[] = [];
  for (const o of exp.outcomes) {
    const why = checkOutcome(v, o, ctx);
    if (why === null) return OK;
    reasons.push(why);
  }
  return fail('unexpectedAnswer', reasons.join(' / '));
}

function judgeRest(v: unknown, o: RestOutcome): Verdict {
  if (!isObject(v) || typeof v.accepted !== 'boolean') return fail('invalidBody', 'no boolean `accepted`');
  if ('accepted' in o) {
    if (v.accepted !== true) return fail('unexpectedAnswer', `refused: ${JSON.stringify(v.error)?.slice(0, 200)}`);
    if (typeof v.signature !== 'string' || !BASE58_SIG.test(v.signature)) return fail('invalidBody', 'signature missing or not base58');
    if (o.signature !== null && v.signature !== o.signature) return fail('unexpectedAnswer', `signature ${v.signature}, expected ${o.signature}`);
    return isDeepStrictEqual(v.routes, o.routes) ? OK : fail('unexpectedAnswer', `routes ${JSON.stringify(v.routes)}`);
  }
  const e = v.error;
  if (v.accepted !== false || !isObject(e) || typeof e.reason !== 'string' || !Number.isInteger(e.code) || typeof e.message !== 'string') {
    return v.accepted === true ? fail('unexpectedAnswer', `accepted, expected ${o.reason}`) : fail('invalidBody', 'REST error body malformed');
  }
  if ('data' in e && e.data === null) return fail('invalidBody', 'error data: null');
  if (e.reason !== o.reason) return fail('unexpectedAnswer', `reason ${e.reason} (${JSON.stringify(e.message).slice(0, 160)}), expected ${o.reason}`);
  const why = checkError(e, o.rule);
  return why === null ? OK : fail('unexpectedAnswer', why);
}

function judgeOne(exp: Expectation, a: Answer, ctx: JudgeContext): Verdict {
  switch (exp.kind) {
    case 'anyOf': {
      const verdicts = exp.options.map((o) => judgeOne(o, a, ctx));
      if (verdicts.some((v) => v.cls === 'expected')) return OK;
      return verdicts.find((v) => v.cls !== 'unexpectedStatus') ?? verdicts[0];
    }
    case 'health':
      if (a.status !== 200) return fail('unexpectedStatus', `${a.status}, expected 200`);
      if (isJsonType(a)) {
        const p = parse(a);
        if (!p.ok || !isObject(p.value) || typeof p.value.status !== 'string') return fail('invalidBody', 'health JSON without a `status` string');
        // docs/health.md: 200 while the relay can deliver, i.e. ok or degraded.
        return p.value.status === 'ok' || p.value.status === 'degraded' ? OK : fail('unexpectedAnswer', `health status ${p.value.status} with HTTP 200`);
      }
      return (header(a, 'content-type') ?? '').startsWith('text/plain') && a.body.toString() === 'ok' ? OK : fail('invalidBody', `health body ${JSON.stringify(a.body.toString().slice(0, 60))}`);
    case 'metrics':
      if (a.status !== 200) return fail('unexpectedStatus', `${a.status}, expected 200`);
      return (header(a, 'content-type') ?? '').startsWith('text/plain') && a.body.includes('slotrelay_') ? OK : fail('invalidBody', 'not Prometheus text');
    case 'cors':
      if (a.status !== 204) return fail('unexpectedStatus', `${a.status}, expected 204`);
      return a.body.length === 0 && (header(a, 'access-control-allow-methods') ?? '').includes('POST') ? OK : fail('invalidBody', 'CORS preflight answer incomplete');
    case 'empty':
      if (a.status !== 200) return fail('unexpectedStatus', `${a.status}, expected 200`);
      return a.body.length === 0 ? OK : fail('invalidBody', `a body for notifications: ${a.body.toString().slice(0, 100)}`);
    default:
      break;
  }
  const status = exp.kind === 'rpcBatch' ? 200 : exp.status;
  if (a.status !== status) return fail('unexpectedStatus', `${a.status}, expected ${status}`);
  if (!isJsonType(a)) return fail('invalidBody', `content-type ${JSON.stringify(header(a, 'content-type'))}`);
  const p = parse(a);
  if (!p.ok) return fail('invalidBody', 'body is not valid JSON');
  if (exp.kind !== 'rpcBatch') {
    if (exp.retryAfter && !/^[1-9][0-9]*$/.test(header(a, 'retry-after') ?? '')) return fail('unexpectedAnswer', 'no Retry-After');
    if (exp.close && header(a, 'connection') !== 'close') return fail('unexpectedAnswer', 'connection not closed');
  }
  if (exp.kind === 'rest') return judgeRest(p.value, exp.outcome);
  if (exp.kind === 'rpc') return judgeElement(p.value, exp.element, ctx);
  if (!Array.isArray(p.value)) return fail('invalidBody', 'batch answer is not an array');
  if (p.value.length !== exp.elements.length) return fail('invalidBody', `${p.value.length} responses for ${exp.elements.length} calls`);
  for (let i = 0; i < exp.elements.length; i++) {
    const v = judgeElement(p.value[i], exp.elements[i], ctx);
    if (v.cls !== 'expected') return fail(v.cls, `element ${i}: ${v.detail}`);
  }
  return OK;
}

/** The verdict on one answer: common headers, secrets, then the expectation. */
export function judge(exp: Expectation, a: Answer, ctx: JudgeContext): Verdict {
  const rid = header(a, 'x-request-id');
  if (rid === undefined || !REQUEST_ID.test(rid)) return fail('invalidBody', `x-request-id ${JSON.stringify(rid)}`);
  if (ctx.echoRequestId !== null && rid !== ctx.echoRequestId) return fail('invalidBody', `x-request-id ${rid} not echoed`);
  if (header(a, 'access-control-allow-origin') !== '*') return fail('invalidBody', 'no access-control-allow-origin');
  // docs/protocol-decisions.md: every response announces how long an idle connection stays open.
  if (!/^timeout=\d+$/.test(header(a, 'keep-alive') ?? '')) return fail('invalidBody', `keep-alive ${JSON.stringify(header(a, 'keep-alive'))}`);
  const text = a.body.toString('latin1').toLowerCase();
  for (const s of ctx.secrets) if (text.includes(s.toLowerCase())) return fail('invalidBody', 'the answer contains an API key');
  return judgeOne(exp, a, ctx);
}
