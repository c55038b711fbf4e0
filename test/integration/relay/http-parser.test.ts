// The HTTP parser defects of issue #15, sent byte for byte over raw sockets to a real relay on every uWS build that
// loads under this Node (docs/http-runtime.md), asserting what each build answers (docs/known-issues.md lists what a
// client sees on each). `source` is our build of the vendored uWS with its patches (issue #29: HTTP/1.0,
// absolute-form targets, bare LF); `maintained` and `legacy` are the prebuilt npm builds. Whatever the build: a
// submission is answered with its own answer or not handed to a ring at all — never sent while its answer is lost to
// a later malformed request in the same read, and never sent twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exchange, loadableUwsBuilds, type Exchange } from '../../helpers/raw-http.js';
import { startFakeRpcUpstream, type FakeRpcUpstream } from '../../helpers/fake-upstream.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { waitFor } from '../../helpers/wait-for.js';

const BUILDS = loadableUwsBuilds();
/** uWS closes a silent connection 8-12 s after it opened (10 s, swept every 4 s); margin for a loaded box. */
const SILENT_CLOSE_MS = [7_000, 14_500] as const;

const GET_HEALTH = 'GET /health HTTP/1.1\r\nhost: relay\r\n\r\n';

function submitRequest(base64: string, extraHeaders = ''): string {
  const body = JSON.stringify({ transaction: base64 });
  return `POST /v1/submit HTTP/1.1\r\nhost: relay\r\nx-api-key: ${TEST_KEY}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n${extraHeaders}\r\n${body}`;
}

function rpcSend(base64: string): string {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'sendTransaction', params: [base64, { encoding: 'base64', skipPreflight: true }] });
  return `POST / HTTP/1.1\r\nhost: relay\r\nx-api-key: ${TEST_KEY}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
}

/** A request as bytes: any version, target and line ending (the cases of issue #29). */
function rawRequest(o: { method: string; target: string; version: string; headers: readonly string[]; body?: string; eol?: string }): string {
  const eol = o.eol ?? '\r\n';
  const lines = [`${o.method} ${o.target} ${o.version}`, ...o.headers, ...(o.body === undefined ? [] : [`content-length: ${o.body.length}`])];
  return lines.map((l) => l + eol).join('') + eol + (o.body ?? '');
}

const SUBMIT_HEADERS = [`x-api-key: ${TEST_KEY}`, 'content-type: application/json'];
const submitBody = (base64: string): string => JSON.stringify({ transaction: base64 });
const rpcBody = (base64: string): string => JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'sendTransaction', params: [base64, { encoding: 'base64', skipPreflight: true }] });

/** Header-section faults each line of the issue lists. */
const BAD_HEADERS: Record<string, string> = {
  'a NUL byte in a header value': 'GET /health HTTP/1.1\r\nhost: relay\r\nx-a: a\0b\r\n\r\n',
  'a space before the colon': 'GET /health HTTP/1.1\r\nhost : relay\r\n\r\n',
  'a header line without a colon': 'GET /health HTTP/1.1\r\nhost: relay\r\nno-colon-here\r\n\r\n',
  'an obsolete folded line': 'GET /health HTTP/1.1\r\nhost: relay\r\nx-a: a\r\n  folded\r\n\r\n',
};
const SIXTY_HEADERS = `GET /health HTTP/1.1\r\nhost: relay\r\n${Array.from({ length: 60 }, (_, i) => `x-h${i}: v\r\n`).join('')}\r\n`;

/** How many times the upstream (the rpc route) received this transaction. */
function timesSent(up: FakeRpcUpstream, base64: string): number {
  return up.sent().filter((b) => b.toString('base64') === base64).length;
}

/**
 * Waits until the upstream has this transaction, then 300 ms more for a duplicate, and says how many times it came.
 * Waiting for "one more send than before" does not do: the relay rebroadcasts the earlier tests' transactions (none
 * of them ever lands on this upstream) to the same endpoint, and one of those can be the send that was awaited
 * (a Node 24 rehearsal: 0 where 1 was expected).
 */
async function sentTimes(up: FakeRpcUpstream, base64: string): Promise<number> {
  await waitFor('the transaction at the upstream', () => timesSent(up, base64), (n) => n >= 1, 10_000, 10);
  await new Promise((r) => setTimeout(r, 300));
  return timesSent(up, base64);
}

function expectSilentThenClosed(e: Exchange, what: string): void {
  expect(e.text, `${what}: no answer at all`).toBe('');
  expect(e.closed, `${what}: closed by the server`).toBe(true);
  expect(e.closedAfterMs ?? 0, what).toBeGreaterThanOrEqual(SILENT_CLOSE_MS[0]);
  expect(e.closedAfterMs ?? 0, what).toBeLessThanOrEqual(SILENT_CLOSE_MS[1]);
}

describe.each(BUILDS)('HTTP parser on the %s uWS build', (build) => {
  /** The builds on upstream's current parser (ours and the maintained prebuilt) answer where the legacy one does not. */
  const current = build !== 'legacy';
  let up: FakeRpcUpstream;
  let relay: RelayHandle;

  beforeAll(async () => {
    up = await startFakeRpcUpstream();
    relay = await startRelay({ upstream: { rpcUrl: up.url }, routes: { rpc: { endpoints: [up.url] } } }, { SLOTRELAY_UWS_BUILD: build });
    // The build in use, as /health?detail, /metrics and relay_ready report it (docs/http-runtime.md).
    const detail = (await (await fetch(`${relay.relayUrl}/health?detail`)).json()) as { http: { build: string; node: string } };
    expect(detail.http).toMatchObject({ build, node: process.versions.node });
    const metrics = await (await fetch(`${relay.rpcUrl}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`^slotrelay_http_runtime_info\\{build="${build}",uws="[^"]+",package="[^"]+",glibc_compat="(true|false)",node="${process.versions.node}",glibc="[^"]+"\\} 1$`, 'm'));
    expect(relay.logs.some((l) => l.includes('"event":"relay_ready"') && l.includes(`"build":"${build}"`))).toBe(true);
  });
  afterAll(async () => {
    await relay?.stop();
    await up?.close();
  });

  it('a request line and headers split into two TCP segments at every byte are answered (uWS #1776 on legacy)', async () => {
    const results = await Promise.all(
      Array.from({ length: GET_HEALTH.length - 1 }, (_, i) => exchange(relay.relayUrl, [GET_HEALTH.slice(0, i + 1), GET_HEALTH.slice(i + 1)], { gapMs: 40, untilStatuses: 1 })),
    );
    const statuses = results.map((r) => r.statuses[0] ?? 0);
    if (current) {
      expect(statuses.every((s) => s === 200), statuses.join(',')).toBe(true);
    } else {
      // The legacy build answers 505 at roughly half the split points inside the request line (18 of 32 measured).
      expect(statuses.filter((s) => s === 505).length).toBeGreaterThan(0);
      expect(statuses.every((s) => s === 200 || s === 505)).toBe(true);
    }
  });

  it('header-section faults and 60 header fields: 400 / answered on source and maintained; no answer, closed by the slow-client timer on legacy', async () => {
    // All at once: on the legacy build each waits for uWS's timer, so they share one wait.
    const cases = [...Object.entries(BAD_HEADERS), ['60 header fields (legacy allows 48)', SIXTY_HEADERS] as const];
    const results = await Promise.all(cases.map(([, bytes]) => exchange(relay.relayUrl, [bytes], { waitMs: current ? 1_500 : 15_000 })));
    results.forEach((e, i) => {
      const what = cases[i]![0];
      if (build === 'legacy') return expectSilentThenClosed(e, what);
      if (what.startsWith('60 header fields')) {
        expect(e.statuses, what).toEqual([200]);
      } else {
        expect(e.statuses, what).toEqual([400]);
        expect(e.closed, what).toBe(true);
      }
    });
  }, 30_000);

  /** What the prebuilt builds do with every request of issue #29: their own 505, connection closed, nothing sent. */
  async function expect505(url: string, bytes: string, base64?: string): Promise<void> {
    const e = await exchange(url, [bytes]);
    expect(e.statuses, JSON.stringify(bytes)).toEqual([505]);
    expect(e.closed).toBe(true);
    if (base64 !== undefined) {
      await new Promise((r) => setTimeout(r, 300));
      expect(timesSent(up, base64)).toBe(0);
    }
  }

  /** Our build: answered 200 with the transaction's signature, and the transaction sent exactly once. */
  async function expectSentOnce(url: string, bytes: string, tx: { base64: string; signature: string }): Promise<Exchange> {
    const e = await exchange(url, [bytes], { untilStatuses: 1, waitMs: 3_000 });
    expect(e.statuses, JSON.stringify(bytes.slice(0, 60))).toEqual([200]);
    expect(e.text).toContain(tx.signature);
    expect(await sentTimes(up, tx.base64)).toBe(1);
    return e;
  }

  it('HTTP/1.0 GET /health: answered as HTTP/1.0 and closed; kept open when it asks for keep-alive (source), 505 on the prebuilt builds', async () => {
    const plain = rawRequest({ method: 'GET', target: '/health', version: 'HTTP/1.0', headers: [] });
    const keepAlive = rawRequest({ method: 'GET', target: '/health', version: 'HTTP/1.0', headers: ['connection: keep-alive'] });
    if (build !== 'source') return expect505(relay.relayUrl, plain);
    const e = await exchange(relay.relayUrl, [plain], { waitMs: 1_500 });
    expect(e.statuses).toEqual([200]);
    expect(e.text).toMatch(/^HTTP\/1\.0 200 OK\r\n/);
    expect(e.text).toMatch(/\r\nConnection: close\r\n/i);
    expect(e.text).toMatch(/\r\n\r\nok$/);
    expect(e.closed, 'HTTP/1.0 without keep-alive: closed after the answer (RFC 9112 9.3)').toBe(true);
    const k = await exchange(relay.relayUrl, [keepAlive, keepAlive], { gapMs: 200, waitMs: 1_000 });
    expect(k.statuses).toEqual([200, 200]);
    expect(k.text).toMatch(/^HTTP\/1\.0 200 OK\r\n/);
    expect(k.text).toMatch(/\r\nConnection: keep-alive\r\n/i);
    expect(k.closed, 'HTTP/1.0 with Connection: keep-alive stays open').toBe(false);
  });

  it('HTTP/1.0 sendTransaction with Content-Length (/v1/submit and JSON-RPC): accepted and sent once (source), 505 and not sent on the prebuilt builds', async () => {
    for (const [url, target, body] of [
      [relay.relayUrl, '/v1/submit', submitBody],
      [relay.rpcUrl, '/', rpcBody],
    ] as const) {
      const tx = legacyTransfer();
      const bytes = rawRequest({ method: 'POST', target, version: 'HTTP/1.0', headers: SUBMIT_HEADERS, body: body(tx.base64) });
      if (build !== 'source') {
        await expect505(url, bytes, tx.base64);
        continue;
      }
      const e = await expectSentOnce(url, bytes, tx);
      expect(e.text).toMatch(/^HTTP\/1\.0 200 OK\r\n/);
    }
  });

  it('absolute-form targets (GET http://relay/health, POST http://127.0.0.1:port/v1/submit and /): routed by their path (source), 505 on the prebuilt builds', async () => {
    const get = rawRequest({ method: 'GET', target: 'http://relay/health', version: 'HTTP/1.1', headers: ['host: relay'] });
    if (build !== 'source') {
      await expect505(relay.relayUrl, get);
    } else {
      const e = await exchange(relay.relayUrl, [get], { untilStatuses: 1 });
      expect(e.statuses).toEqual([200]);
      expect(e.text).toMatch(/\r\n\r\nok$/);
    }
    for (const [url, path, body] of [
      [relay.relayUrl, '/v1/submit', submitBody],
      [relay.rpcUrl, '/', rpcBody],
    ] as const) {
      const tx = legacyTransfer();
      const { host } = new URL(url);
      const bytes = rawRequest({ method: 'POST', target: `http://${host}${path}`, version: 'HTTP/1.1', headers: [`host: ${host}`, ...SUBMIT_HEADERS], body: body(tx.base64) });
      if (build !== 'source') await expect505(url, bytes, tx.base64);
      else await expectSentOnce(url, bytes, tx);
    }
  });

  it('bare-LF line endings (GET /health, a submission): answered (source), 505 on the prebuilt builds; a bare CR is 400 (source)', async () => {
    const get = rawRequest({ method: 'GET', target: '/health', version: 'HTTP/1.1', headers: ['host: relay'], eol: '\n' });
    const tx = legacyTransfer();
    const submit = rawRequest({ method: 'POST', target: '/v1/submit', version: 'HTTP/1.1', headers: ['host: relay', ...SUBMIT_HEADERS], body: submitBody(tx.base64), eol: '\n' });
    if (build !== 'source') {
      await expect505(relay.relayUrl, get);
      await expect505(relay.relayUrl, submit, tx.base64);
      return;
    }
    const e = await exchange(relay.relayUrl, [get], { untilStatuses: 1 });
    expect(e.statuses).toEqual([200]);
    await expectSentOnce(relay.relayUrl, submit, tx);
    // Mixed CRLF and LF, split inside a line ending: still one request.
    const mixed = await exchange(relay.relayUrl, ['GET /health HTTP/1.1\r', '\nhost: relay\n', '\r\n'], { untilStatuses: 1 });
    expect(mixed.statuses).toEqual([200]);
    // RFC 9112 2.2: a bare CR is invalid.
    const cr = await exchange(relay.relayUrl, ['GET /health HTTP/1.1\r\nhost: relay\rx: y\r\n\r\n']);
    expect(cr.statuses).toEqual([400]);
    expect(cr.closed).toBe(true);
  });

  it('an unknown method: answered 404 on source and maintained; closed unanswered on legacy', async () => {
    const e = await exchange(relay.relayUrl, ['FOO /health HTTP/1.1\r\nhost: relay\r\n\r\n'], { untilStatuses: 1 });
    if (current) {
      expect(e.statuses).toEqual([404]);
    } else {
      expect(e.text).toBe('');
      expect(e.closed).toBe(true);
    }
  });

  it('Transfer-Encoding other than chunked (xchunked, gzip+chunked, chunked+identity): 400, closed, nothing sent', async () => {
    for (const te of ['xchunked', 'gzip, chunked', 'chunked, identity']) {
      const tx = legacyTransfer();
      const body = JSON.stringify({ transaction: tx.base64 });
      const chunked = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
      const e = await exchange(relay.relayUrl, [
        `POST /v1/submit HTTP/1.1\r\nhost: relay\r\nx-api-key: ${TEST_KEY}\r\ncontent-type: application/json\r\ntransfer-encoding: ${te}\r\n\r\n${chunked}`,
      ]);
      expect(e.statuses, te).toEqual([400]);
      expect(e.text).toContain('Transfer-Encoding must be exactly chunked');
      expect(e.closed).toBe(true);
      expect(timesSent(up, tx.base64)).toBe(0);
    }
    // A plain chunked body is read as usual.
    const tx = legacyTransfer();
    const body = JSON.stringify({ transaction: tx.base64 });
    const ok = await exchange(relay.relayUrl, [
      `POST /v1/submit HTTP/1.1\r\nhost: relay\r\nx-api-key: ${TEST_KEY}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
    ], { untilStatuses: 1 });
    expect(ok.statuses).toEqual([200]);
    expect(await sentTimes(up, tx.base64)).toBe(1);
  });

  it('a submission followed in the same read by a malformed request is not sent, and its retry is sent once', async () => {
    for (const [what, first] of [
      ['/v1/submit', submitRequest],
      ['JSON-RPC sendTransaction', rpcSend],
    ] as const) {
      const tx = legacyTransfer();
      const url = what === '/v1/submit' ? relay.relayUrl : relay.rpcUrl;
      const e = await exchange(url, [first(tx.base64) + 'GET /x HTTP/9.9\r\n\r\n']);
      expect(e.statuses, what).not.toContain(200); // its answer would be lost: it is not accepted at all
      expect(e.closed, what).toBe(true);
      // The client retries on a fresh connection: accepted, and the upstream sees the transaction exactly once.
      const retry = await exchange(url, [first(tx.base64)], { untilStatuses: 1 });
      expect(retry.statuses, what).toEqual([200]);
      expect(retry.text).toContain(tx.signature);
      expect(await sentTimes(up, tx.base64), what).toBe(1);
    }
  });

  it('two different Content-Length headers: 400 and closed before the body is read, nothing sent; identical repeats are one value', async () => {
    const tx = legacyTransfer();
    const body = JSON.stringify({ transaction: tx.base64 });
    const e = await exchange(relay.relayUrl, [
      `POST /v1/submit HTTP/1.1\r\nhost: relay\r\nx-api-key: ${TEST_KEY}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\ncontent-length: ${body.length + 9}\r\n\r\n${body}smuggled`,
    ], { waitMs: 1_500 });
    await new Promise((r) => setTimeout(r, 300));
    expect(e.closed).toBe(true);
    if (current) {
      // The relay walks the headers (src/http/request.ts): RFC 9112 6.3, the framing is invalid.
      expect(e.statuses).toEqual([400]);
      expect(e.text).toContain('Content-Length headers with different values');
    } else {
      // The legacy build answers the rest (`smuggled`) 505 itself and drops what was buffered before it: our 400
      // or its 505, never a 200.
      expect(e.statuses.length).toBe(1);
      expect([400, 505]).toContain(e.statuses[0]);
    }
    expect(timesSent(up, tx.base64)).toBe(0);
    // The same on the JSON-RPC host (sendTransaction), with the request id unknown: the body is never read.
    const rpcBody = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'sendTransaction', params: [tx.base64, { encoding: 'base64', skipPreflight: true }] });
    const r = await exchange(relay.rpcUrl, [
      `POST / HTTP/1.1\r\nhost: relay\r\nx-api-key: ${TEST_KEY}\r\ncontent-type: application/json\r\ncontent-length: ${rpcBody.length}\r\ncontent-length: ${rpcBody.length + 1}\r\n\r\n${rpcBody}`,
    ], { waitMs: 1_500 });
    expect(r.statuses).toEqual([400]);
    expect(r.text).toContain('Content-Length headers with different values');
    expect(r.closed).toBe(true);
    await new Promise((res) => setTimeout(res, 300));
    expect(timesSent(up, tx.base64)).toBe(0);
    // Two identical Content-Length headers are one value (RFC 9110 8.6): served and sent once.
    const ok = await exchange(relay.relayUrl, [
      `POST /v1/submit HTTP/1.1\r\nhost: relay\r\nx-api-key: ${TEST_KEY}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
    ], { untilStatuses: 1 });
    expect(ok.statuses).toEqual([200]);
    expect(ok.text).toContain(tx.signature);
    expect(await sentTimes(up, tx.base64)).toBe(1);
  });

  it('pipelining behind a submission is refused: the connection closes, neither is sent; reads still pipeline', async () => {
    const a = legacyTransfer();
    const b = legacyTransfer();
    const e = await exchange(relay.relayUrl, [submitRequest(a.base64) + submitRequest(b.base64)]);
    expect(e.statuses).toEqual([]);
    expect(e.closed).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(timesSent(up, a.base64) + timesSent(up, b.base64)).toBe(0);
    const reads = await exchange(relay.relayUrl, [GET_HEALTH + GET_HEALTH + GET_HEALTH], { untilStatuses: 3 });
    expect(reads.statuses).toEqual([200, 200, 200]);
    expect(reads.closed).toBe(false);
  });
});
