// One fuzz case from (seed, index): an HTTP request to one of the relay's paths and the answer it must get (harness
// process; generation, hot). Transport-level rules come first, in the front's order (src/front/json-rpc-endpoint.ts,
// relay-endpoints.ts, docs/relay-api.md): key (401), media type (415), body size (413, connection closed), then the
// body's own answer. /health, /metrics and OPTIONS need no key; other methods or paths answer 405 (JSON-RPC host)
// or 404 (relay host). Every answer carries x-request-id (ours when it is 1-64 printable ASCII characters).
import { rpcBody } from './cases-rpc.js';
import { submitCase, transactionsCase, type RestCase } from './cases-rest.js';
import { restError, rpcTransport, type Expectation } from './expectations.js';
import { KEYS, carriers, pickProfile } from './keys.js';
import { caseRng, type Rng } from './rng.js';
import type { PoolTx } from './tx-pool.js';

export interface FuzzRequest {
  readonly host: 'rpc' | 'relay';
  readonly method: string;
  /** Path with its query string. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer | null;
  /** Write the body in several pieces (the relay assembles multi-chunk bodies). */
  readonly split: boolean;
  /** Close the connection this long after the request was written, whether or not an answer came. */
  readonly abortAfterMs?: number;
}

/** One request and what its answer must be. */
export interface Part {
  readonly label: string;
  readonly request: FuzzRequest;
  readonly expectation: Expectation;
  /** The x-request-id the answer must echo, or null when the relay must make its own. */
  readonly echoRequestId: string | null;
  /** Transactions this request can put into a ring, at most; and how many of those no answer reports. */
  readonly sends: number;
  readonly silentSends: number;
}

export interface FuzzCase extends Part {
  readonly index: number;
  readonly family: string;
  /** Requests pipelined after `request` on the same connection (raw TCP), answered in order. */
  readonly pipelined: readonly Part[];
}

export interface CaseEnv {
  readonly pool: readonly PoolTx[];
  readonly maxBodyBytes: number;
  readonly maxBatchSize: number;
}

const JSON_TYPES = ['application/json', 'application/json; charset=utf-8', 'Application/JSON', 'application/json;charset=UTF-8', ' application/json ; charset=utf-8'];
const BAD_JSON_TYPES = [null, 'text/plain', 'application/x-www-form-urlencoded', 'application/jsonx', 'text/json', 'multipart/form-data; boundary=x', 'application/octet-stream', 'json'];
const BAD_RAW_TYPES = [null, 'application/json', 'application/x-binary', 'text/html', 'octet-stream', 'text/plain2'];

function requestId(rng: Rng, index: number): { header: string | null; echo: string | null } {
  const mine = `fz${index.toString(36)}`;
  switch (rng.weighted<string>([[75, 'mine'], [10, 'none'], [5, 'max length'], [10, 'invalid']])) {
    case 'mine':
      return { header: mine, echo: mine };
    case 'none':
      return { header: null, echo: null };
    case 'max length': {
      const s = (mine + '-~!#$%&*+.^_`|' + 'x'.repeat(64)).slice(0, 64);
      return { header: s, echo: s };
    }
    default:
      return { header: rng.pick([mine + 'x'.repeat(64), 'a b', 'fz\té', 'é', ' ', mine + ' ' + mine]), echo: null };
  }
}

function query(params: readonly (readonly [string, string])[]): string {
  return params.length === 0 ? '' : '?' + params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
}

/** A body over the limit: the relay must refuse it from Content-Length, before reading it. */
function oversized(rng: Rng, body: Buffer, max: number): Buffer {
  const n = max + rng.range(1, 4096);
  return Buffer.concat([Buffer.alloc(n - Math.min(body.length, n), 0x20), body.subarray(0, Math.min(body.length, n))]);
}

function bodyCase(rng: Rng, index: number, env: CaseEnv, family: string): Omit<FuzzCase, 'echoRequestId' | 'pipelined' | 'sends' | 'silentSends'> & { sends: number; silentSends: number } & { headers: Record<string, string> } {
  const profile = pickProfile(rng);
  const car = carriers(rng, profile);
  const seen = car.profile ?? KEYS.fuzz; // the body is generated for the key the relay will see (or any, for a 401)
  const host: 'rpc' | 'relay' = family === 'rpc' ? 'rpc' : 'relay';
  const rpcPath = family === 'rpc' || family === 'sendTransaction';
  let path: string;
  let body: Buffer;
  let contentType: string | null;
  let expectation: Expectation;
  let label: string;
  let q: (readonly [string, string])[] = [];
  let sends = 1;
  let silentSends = 0;
  if (rpcPath) {
    const b = rpcBody(rng, { host, key: seen, pool: env.pool, maxBatchSize: env.maxBatchSize });
    path = family === 'rpc' ? '/' : '/v1/sendTransaction';
    body = b.bytes;
    contentType = rng.pick(JSON_TYPES);
    expectation = b.expectation;
    label = b.label;
    sends = b.sends;
    silentSends = b.silentSends;
  } else {
    const r: RestCase = family === 'submit' ? submitCase(rng, { key: seen, pool: env.pool }) : transactionsCase(rng, { key: seen, pool: env.pool });
    path = family === 'submit' ? '/v1/submit' : '/v1/transactions';
    body = r.body;
    contentType = r.contentType;
    expectation = r.expectation;
    label = r.label;
    q = [...r.query];
  }
  if (car.queryKey !== null) q.splice(rng.int(q.length + 1), 0, ['key', car.queryKey]);
  if (rng.chance(0.03)) q.push(['foo', 'bar']);

  const transport = rng.weighted<string>([[94, 'none'], [3, 'media'], [2, 'oversize'], [1, 'at limit']]);
  if (transport === 'media') {
    contentType = rng.pick(family === 'transactions' ? BAD_RAW_TYPES : BAD_JSON_TYPES);
    label = `content-type ${JSON.stringify(contentType)}; ${label}`;
  } else if (transport === 'oversize') {
    body = oversized(rng, body, env.maxBodyBytes);
    label = `${body.length}-byte body; ${label}`;
  } else if (transport === 'at limit' && (family !== 'transactions' || (contentType ?? '').toLowerCase().startsWith('text/'))) {
    // Leading whitespace is ignored by JSON and trimmed from text bodies: same answer at exactly the limit.
    if (body.length < env.maxBodyBytes) body = Buffer.concat([Buffer.alloc(env.maxBodyBytes - body.length, 0x20), body]);
    label = `body of exactly ${body.length} bytes; ${label}`;
  }
  const rest = !rpcPath;
  const tooLarge = body.length > env.maxBodyBytes; // a generated body (deep nesting, a big batch) can be over it too
  if (car.profile === null) {
    expectation = rest ? restError('unauthorized') : rpcTransport('unauthorized');
    label = `no valid key; ${label}`;
  } else if (transport === 'media') {
    expectation = rest ? restError('unsupported_media_type', { prefixes: ['Unsupported media type'] }) : rpcTransport('unsupported_media_type');
  } else if (tooLarge) {
    expectation = rest ? restError('body_too_large') : rpcTransport('body_too_large');
  }
  const headers: Record<string, string> = { ...car.headers };
  if (contentType !== null) headers['content-type'] = contentType;
  if (car.profile === null || transport === 'media' || tooLarge) sends = silentSends = 0; // refused before the body is read
  return {
    index,
    family,
    sends,
    silentSends,
    label: `[key ${car.profile?.name ?? 'none'}] ${label}`,
    request: { host, method: 'POST', path: path + query(q), headers, body, split: body.length > 1 && rng.chance(0.04) },
    expectation,
    headers,
  };
}

const UNKNOWN_RPC: readonly (readonly [string, string])[] = [['GET', '/'], ['PUT', '/'], ['DELETE', '/'], ['POST', '/v1/submit'], ['POST', '/health'], ['GET', '/v1/sendTransaction'], ['POST', '/rpc'], ['PATCH', '/metrics'], ['GET', '/%00'], ['POST', '//']];
const UNKNOWN_RELAY: readonly (readonly [string, string])[] = [['GET', '/v1/submit'], ['POST', '/'], ['POST', '/v1/unknown'], ['PUT', '/v1/transactions'], ['POST', '/health'], ['POST', '/metrics'], ['GET', '/v1/sendTransaction'], ['POST', '/v2/submit'], ['DELETE', '/v1/submit']];

function plainCase(rng: Rng, index: number, family: string): Omit<FuzzCase, 'echoRequestId' | 'pipelined' | 'sends' | 'silentSends'> & { sends: number; silentSends: number } & { headers: Record<string, string> } {
  const host: 'rpc' | 'relay' = rng.chance(0.5) ? 'rpc' : 'relay';
  const car = carriers(rng, pickProfile(rng));
  const headers: Record<string, string> = rng.chance(0.3) ? { ...car.headers } : {};
  const q = rng.chance(0.3) ? `?${rng.pick(['x=1', 'key=' + (car.queryKey ?? ''), 'a=%ff', '', 'detail', 'detail=1', 'detail&x=%00'])}` : '';
  let method = 'GET';
  let path: string;
  let expectation: Expectation;
  let body: Buffer | null = null;
  if (family === 'health') {
    path = '/health';
    expectation = { kind: 'health' };
  } else if (family === 'metrics') {
    path = '/metrics';
    expectation = { kind: 'metrics' };
  } else if (family === 'options') {
    method = 'OPTIONS';
    path = rng.pick(['/', '/v1/submit', '/v1/transactions', '/v1/sendTransaction', '/health', '/anything']);
    headers['access-control-request-method'] = 'POST';
    headers.origin = 'http://example.test';
    expectation = { kind: 'cors' };
  } else {
    [method, path] = rng.pick(host === 'rpc' ? UNKNOWN_RPC : UNKNOWN_RELAY);
    expectation = host === 'rpc' ? rpcTransport('method_not_allowed') : restError('not_found', { prefixes: ['Not found'] });
    if (method !== 'GET' && rng.chance(0.5)) {
      body = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"getSlot"}');
      headers['content-type'] = 'application/json';
    }
  }
  return { index, family, label: `${method} ${path}${q} on the ${host} host`, request: { host, method, path: path + q, headers, body, split: false }, expectation, headers, sends: 0, silentSends: 0 };
}

const BODY_FAMILIES = ['rpc', 'sendTransaction', 'submit', 'transactions'];

/**
 * 2-4 requests for one host written back to back on one connection: the answers must come in request order (each
 * echoes its own x-request-id), whatever mix of synchronous and preflight (asynchronous) answers they are.
 */
function pipelinedCase(rng: Rng, index: number, env: CaseEnv): FuzzCase {
  const host = rng.chance(0.5) ? 'rpc' : 'relay';
  const parts: Part[] = [];
  const n = rng.range(2, 4);
  for (let tries = 0; parts.length < n && tries < 20; tries++) {
    const family = host === 'rpc' ? 'rpc' : rng.pick(['sendTransaction', 'submit', 'transactions']);
    const c = bodyCase(rng, index, env, family);
    if (c.request.body !== null && c.request.body.length > env.maxBodyBytes) continue; // a 413 closes the connection
    const id = `fz${index.toString(36)}p${parts.length}`;
    parts.push({ label: c.label, request: { ...c.request, split: false, headers: { ...c.headers, 'x-request-id': id } }, expectation: c.expectation, echoRequestId: id, sends: c.sends, silentSends: c.silentSends });
  }
  if (parts.length === 0) return { ...generateCase(index ^ 0x55aa, index, env), index }; // never in practice
  const [first, ...rest] = parts;
  return { index, family: 'pipelined', ...first, label: `${parts.length} pipelined: ${parts.map((p) => p.label).join(' || ')}`, pipelined: rest };
}

/** Case `index` of the run with `seed` (the same pair always gives the same case). */
export function generateCase(seed: number, index: number, env: CaseEnv): FuzzCase {
  const rng = caseRng(seed, index);
  const family = rng.weighted<string>([[38, 'rpc'], [12, 'sendTransaction'], [22, 'submit'], [16, 'transactions'], [2.5, 'health'], [0.5, 'metrics'], [1.5, 'options'], [3, 'unknown route'], [1.5, 'pipelined'], [1, 'abort']]);
  if (family === 'pipelined') return pipelinedCase(rng, index, env);
  const abort = family === 'abort';
  const c = abort ? bodyCase(rng, index, env, rng.pick(BODY_FAMILIES)) : BODY_FAMILIES.includes(family) ? bodyCase(rng, index, env, family) : plainCase(rng, index, family);
  const rid = requestId(rng, index);
  const headers = { ...c.headers };
  if (rid.header !== null) headers['x-request-id'] = rid.header;
  const request: FuzzRequest = { ...c.request, headers, ...(abort ? { abortAfterMs: rng.pick([0, 0, 1, 2, 5, 20]) } : {}) };
  return { index, family, label: abort ? `client gone after ${request.abortAfterMs} ms: ${c.label}` : c.label, request, expectation: c.expectation, echoRequestId: rid.echo, pipelined: [], sends: c.sends, silentSends: c.silentSends };
}
