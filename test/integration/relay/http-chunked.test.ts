// Chunked request bodies with chunk extensions and a trailer section (issue #30 item 13, RFC 9112 §7.1.1-7.1.2),
// sent byte for byte over raw sockets to a real relay on every uWS build that loads under this Node. Our build
// (`source`, vendor/uws-patches/0006) reads both: a sendTransaction sent that way is answered and sent once, on a
// kept-alive connection the next request is served, and a malformed chunked framing (junk where an extension goes, a
// bare LF, an extension or a trailer section past its bound, a bad trailer field, data not followed by CRLF) is
// answered 400 with the connection closed and nothing sent. The prebuilt builds keep upstream's decoder: what a client
// sees there is asserted as documented (docs/known-issues.md): an extension gets 400, a trailer section 505.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exchange, exchangeInTurn, loadableUwsBuilds, type Exchange } from '../../helpers/raw-http.js';
import { startFakeRpcUpstream, type FakeRpcUpstream } from '../../helpers/fake-upstream.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer, type SignedTx } from '../../helpers/transactions.js';
import { waitFor } from '../../helpers/wait-for.js';

const BUILDS = loadableUwsBuilds();

const rpcBody = (base64: string, id = 7): string => JSON.stringify({ jsonrpc: '2.0', id, method: 'sendTransaction', params: [base64, { encoding: 'base64', skipPreflight: true }] });
const submitBody = (base64: string): string => JSON.stringify({ transaction: base64 });

const HEAD_RPC = `POST / HTTP/1.1\r\nhost: relay\r\nx-api-key: ${TEST_KEY}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`;
const HEAD_SUBMIT = `POST /v1/submit HTTP/1.1\r\nhost: relay\r\nx-api-key: ${TEST_KEY}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`;
const GET_HEALTH = 'GET /health HTTP/1.1\r\nhost: relay\r\n\r\n';

/** Extensions of every shape RFC 9112 §7.1.1 allows: a token value, none, BWS, a quoted-string with quoted-pairs. */
const EXTENSIONS = [';name=value', ';flag', ' ; a = b ;c', ';sig="a value; with \\"quotes\\" and \\\\"', ''];
/** A trailer section of RFC 9112 §7.1.2: two fields (one empty, one with OWS and obs-text). */
const TRAILER = 'x-checksum: 5f3a9c\r\nx-note:  caf\xe9 \t\r\nx-empty:\r\n';

/** The body as chunks of 1, 32, 0x1a... bytes, each with the next extension when `ext`; the last chunk, the trailer section. */
function chunked(body: string, o: { readonly ext: boolean; readonly trailer: boolean }): string {
  const sizes = [1, 32, 0x1a];
  let out = '';
  let at = 0;
  let i = 0;
  while (at < body.length) {
    const n = Math.min(sizes[i % sizes.length]!, body.length - at);
    out += `${n.toString(16)}${o.ext ? EXTENSIONS[i % EXTENSIONS.length] : ''}\r\n${body.slice(at, at + n)}\r\n`;
    at += n;
    i++;
  }
  return `${out}0${o.ext ? ';last="yes"' : ''}\r\n${o.trailer ? TRAILER : ''}\r\n`;
}

/** `bytes` cut at each of `points` (ascending offsets): separate writes, so separate TCP segments on loopback. */
function splitAt(bytes: string, points: readonly number[]): string[] {
  const out: string[] = [];
  let from = 0;
  for (const p of points) {
    out.push(bytes.slice(from, p));
    from = p;
  }
  out.push(bytes.slice(from));
  return out.filter((s) => s !== '');
}

/** Cut points inside the framing a decoder must carry across segments: in an extension, a quoted-string, between a CR and its LF, in the trailer section, before the final CRLF. */
function framingCuts(bytes: string): number[] {
  const marks = ['name=va', 'quotes\\', ';last="y', 'x-check', 'caf', '\r\nx-empty:\r\n\r', 'x-empty:\r\n\r\n'];
  const points = marks.map((m) => bytes.indexOf(m)).filter((p) => p > 0).map((p, i) => p + 1 + (i % 3));
  // and the first CRLF of the first chunk line, split between CR and LF
  points.push(bytes.indexOf('\r\n', bytes.indexOf('\r\n\r\n') + 4) + 1);
  return [...new Set(points)].sort((a, b) => a - b);
}

describe.each(BUILDS)('chunked request bodies with extensions and trailers on the %s uWS build', (build) => {
  let up: FakeRpcUpstream;
  let relay: RelayHandle;

  beforeAll(async () => {
    up = await startFakeRpcUpstream();
    relay = await startRelay({ upstream: { rpcUrl: up.url }, routes: { rpc: { endpoints: [up.url] } } }, { SLOTRELAY_UWS_BUILD: build });
    const detail = (await (await fetch(`${relay.relayUrl}/health?detail`)).json()) as { http: { build: string; packageVersion: string } };
    expect(detail.http.build).toBe(build);
    if (build === 'source') expect(detail.http.packageVersion).toMatch(/\+\d+ patches/);
  });
  afterAll(async () => {
    await relay?.stop();
    await up?.close();
  });

  const timesSent = (base64: string): number => up.sent().filter((b) => b.toString('base64') === base64).length;

  /** Answered 200 with the signature (JSON-RPC: the result; REST: the signature field), and sent exactly once. */
  async function expectSentOnce(e: Exchange, tx: SignedTx, what: string): Promise<void> {
    expect(e.statuses, what).toEqual([200]);
    expect(e.text, what).toContain(tx.signature);
    // This transaction's own send (the upstream's total already counts the earlier cases'), then no second one.
    await waitFor(`${what}: sent`, async () => timesSent(tx.base64), (n) => n >= 1, 10_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(timesSent(tx.base64), what).toBe(1);
  }

  it.runIf(build === 'source')('a sendTransaction (JSON-RPC and /v1/submit) chunked with extensions, with a trailer section, with both: answered and sent once', async () => {
    for (const [ext, trailer] of [[true, false], [false, true], [true, true]] as const) {
      for (const [url, head, body] of [[relay.rpcUrl, HEAD_RPC, rpcBody], [relay.relayUrl, HEAD_SUBMIT, submitBody]] as const) {
        const tx = legacyTransfer();
        const what = `${url === relay.rpcUrl ? 'JSON-RPC' : '/v1/submit'} ext=${ext} trailer=${trailer}`;
        const e = await exchange(url, [head + chunked(body(tx.base64), { ext, trailer })], { untilStatuses: 1, waitMs: 3_000 });
        await expectSentOnce(e, tx, what);
        expect(e.closed, `${what}: kept alive`).toBe(false);
      }
    }
  });

  it.runIf(build === 'source')('extensions and a trailer section split across TCP segments (inside an extension, a quoted-string, a CRLF, a trailer field, the final CRLF), and one byte per segment', async () => {
    const tx = legacyTransfer();
    const bytes = HEAD_RPC + chunked(rpcBody(tx.base64), { ext: true, trailer: true });
    const cuts = framingCuts(bytes);
    expect(cuts.length).toBeGreaterThanOrEqual(7);
    const e = await exchange(relay.rpcUrl, splitAt(bytes, cuts), { gapMs: 30, untilStatuses: 1, waitMs: 3_000 });
    await expectSentOnce(e, tx, 'split at the framing');
    // The body's end is the empty line after the trailer section: nothing is answered (or sent) before it.
    const tx2 = legacyTransfer();
    const bytes2 = HEAD_RPC + chunked(rpcBody(tx2.base64), { ext: true, trailer: true });
    const held = await exchange(relay.rpcUrl, [bytes2.slice(0, -2)], { waitMs: 800 });
    expect(held.statuses, 'all but the final CRLF: no answer yet').toEqual([]);
    expect(held.closed).toBe(false);
    expect(timesSent(tx2.base64)).toBe(0);
    // The trailing bytes of the framing, one TCP segment each.
    const tx3 = legacyTransfer();
    const bytes3 = HEAD_SUBMIT + chunked(submitBody(tx3.base64), { ext: true, trailer: true });
    const start = bytes3.indexOf('0;last=');
    const perByte = [bytes3.slice(0, start), ...bytes3.slice(start).split('')];
    const b = await exchange(relay.relayUrl, perByte, { gapMs: 5, untilStatuses: 1, waitMs: 3_000 });
    expect(b.statuses).toEqual([200]);
    await waitFor('one byte per segment: sent', async () => timesSent(tx3.base64), (n) => n >= 1, 10_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(timesSent(tx3.base64)).toBe(1);
  });

  it.runIf(build === 'source')('on a kept-alive connection: two chunked submissions with extensions and trailers, then a GET, each answered in turn; the connection stays open', async () => {
    const a = legacyTransfer();
    const b = legacyTransfer();
    const e = await exchangeInTurn(relay.rpcUrl, [
      [HEAD_RPC + chunked(rpcBody(a.base64, 1), { ext: true, trailer: true })],
      // the second one in two segments, cut inside its trailer section
      splitAt(HEAD_RPC + chunked(rpcBody(b.base64, 2), { ext: true, trailer: true }), [HEAD_RPC.length + 40, HEAD_RPC.length + chunked(rpcBody(b.base64, 2), { ext: true, trailer: true }).length - 20]),
      [GET_HEALTH],
    ]);
    expect(e.statuses).toEqual([200, 200, 200]);
    expect(e.text).toContain(a.signature);
    expect(e.text).toContain(b.signature);
    expect(e.text).toMatch(/\r\n\r\nok$/);
    expect(e.closed).toBe(false);
    await waitFor('both kept-alive submissions sent', async () => Math.min(timesSent(a.base64), timesSent(b.base64)), (n) => n >= 1, 10_000);
    await new Promise((r) => setTimeout(r, 200));
    expect([timesSent(a.base64), timesSent(b.base64)]).toEqual([1, 1]);
  });

  /** Malformed chunked framings: each a whole JSON-RPC sendTransaction whose body is framed wrongly at one place. */
  function malformed(tx: SignedTx): Record<string, string> {
    const body = rpcBody(tx.base64);
    const size = body.length.toString(16);
    const whole = (line: string, tail = '0\r\n\r\n'): string => `${HEAD_RPC}${line}${body}\r\n${tail}`;
    return {
      'an extension without ";"': whole(`${size} name=value\r\n`),
      'junk right after the size': whole(`${size}name\r\n`),
      'a hex digit past f (g)': whole(`${size}g\r\n`),
      'whitespace then CRLF after the size': whole(`${size} \r\n`),
      'a bare LF inside an extension': whole(`${size};na\nme=value\r\n`),
      'a bare LF ending a size line with an extension': whole(`${size};name=value\n`),
      'a bare CR inside an extension': whole(`${size};name=va\rlue\r\n`),
      'an unterminated quoted-string': whole(`${size};name="value\r\n`),
      'an extension of 5,000 bytes (the line is bounded at 4,096)': whole(`${size};name=${'v'.repeat(5_000)}\r\n`),
      'a chunk size past 2^44': whole(`${'f'.repeat(12)}\r\n`),
      'chunk data not followed by CRLF (its size one short)': `${HEAD_RPC}${(body.length - 1).toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      'a trailer section of 5,000 bytes (bounded at 4,096)': whole(`${size}\r\n`, `0\r\nx-pad: ${'v'.repeat(5_000)}\r\n\r\n`),
      'a trailer field without a colon': whole(`${size}\r\n`, '0\r\nx-checksum abc\r\n\r\n'),
      'a trailer field with a space before the colon': whole(`${size}\r\n`, '0\r\nx-checksum : abc\r\n\r\n'),
      'an obs-folded trailer line': whole(`${size}\r\n`, '0\r\nx-checksum: abc\r\n def\r\n\r\n'),
      'a NUL in a trailer value': whole(`${size}\r\n`, '0\r\nx-checksum: a\0c\r\n\r\n'),
      'a trailer line ending in a bare LF': whole(`${size}\r\n`, '0\r\nx-checksum: abc\n\r\n'),
      'a bare LF as the final line': whole(`${size}\r\n`, '0\r\n\n'),
    };
  }

  it.runIf(build === 'source')('malformed chunked framing (junk in place of an extension, bare LF/CR, oversize extension or trailers, bad trailer fields, smuggling shapes): 400, closed, nothing sent', async () => {
    const cases = Object.keys(malformed(legacyTransfer())).map((what) => {
      const tx = legacyTransfer();
      return [what, malformed(tx)[what]!, tx] as const;
    });
    const results = await Promise.all(cases.map(([, bytes]) => exchange(relay.rpcUrl, [bytes], { waitMs: 2_000 })));
    results.forEach((e, i) => {
      const what = cases[i]![0];
      expect(e.statuses, what).toEqual([400]);
      expect(e.closed, what).toBe(true);
    });
    // The same cases cut in two inside the faulty place (the decoder's state crosses the segment): the same answer.
    const split = await Promise.all(cases.slice(0, 8).map(([, bytes]) => exchange(relay.rpcUrl, [bytes.slice(0, HEAD_RPC.length + 3), bytes.slice(HEAD_RPC.length + 3)], { waitMs: 2_000 })));
    split.forEach((e, i) => {
      expect(e.statuses, `${cases[i]![0]} (split)`).toEqual([400]);
      expect(e.closed).toBe(true);
    });
    await new Promise((r) => setTimeout(r, 300));
    for (const [what, , tx] of cases) expect(timesSent(tx.base64), what).toBe(0);
  });

  // The prebuilt builds (no compiler on the host) keep upstream's decoder: docs/known-issues.md says what a client sees.
  it.runIf(build !== 'source')('documented limitation of the prebuilt build: a chunk extension gets 400, a trailer section 505 and the connection closed (the transaction not sent; sent when the trailer came in a later segment)', async () => {
    const a = legacyTransfer();
    const ext = await exchange(relay.rpcUrl, [HEAD_RPC + `${rpcBody(a.base64).length.toString(16)};name=value\r\n${rpcBody(a.base64)}\r\n0\r\n\r\n`], { waitMs: 2_000 });
    expect(ext.statuses).toEqual([400]);
    expect(ext.closed).toBe(true);
    const b = legacyTransfer();
    const trailer = await exchange(relay.rpcUrl, [HEAD_RPC + chunked(rpcBody(b.base64), { ext: false, trailer: true })], { waitMs: 2_000 });
    expect(trailer.statuses).toEqual([505]);
    expect(trailer.closed).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect([timesSent(a.base64), timesSent(b.base64)]).toEqual([0, 0]);
    // A trailer section in a later TCP segment than the last chunk: to upstream's decoder the body ended at the last
    // chunk, so the request is answered and sent; the trailer then gets 505.
    const c = legacyTransfer();
    const bytes = HEAD_RPC + chunked(rpcBody(c.base64), { ext: false, trailer: true });
    const cut = bytes.indexOf('x-checksum');
    const late = await exchange(relay.rpcUrl, [bytes.slice(0, cut), bytes.slice(cut)], { gapMs: 300, waitMs: 2_000 });
    expect(late.statuses).toEqual([200, 505]);
    expect(late.closed).toBe(true);
    await waitFor('the late-trailer request sent', async () => timesSent(c.base64), (n) => n >= 1, 10_000);
    expect(timesSent(c.base64)).toBe(1);
  });
});
