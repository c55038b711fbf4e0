// The jito route against a real loopback listener mimicking the block engine (test/helpers/jito-block-engine.ts).
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { JitoRoute, jitoAnswerError, jitoTransactionsUrl } from '../../../src/egress/worker-routes/jito-route.js';
import type { TxView } from '../../../src/egress/contract/route.js';
import { CAUSE } from '../../../src/shm/receipts-layout.js';
import { ringTxView } from '../../helpers/ring-tx-view.js';
import { startJitoBlockEngine, type JitoBlockEngine } from '../../helpers/jito-block-engine.js';
import { legacyTransfer, v0Transfer } from '../../helpers/transactions.js';

const AUTH = '0f9e8d7c-6b5a-4938-8271-605f4e3d2c1b';
const engines: JitoBlockEngine[] = [];
const routes: JitoRoute[] = [];

function capturingLog(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString('utf8'));
      cb();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines };
}

async function engine(): Promise<JitoBlockEngine> {
  const e = await startJitoBlockEngine();
  engines.push(e);
  return e;
}

function route(url: string, log: Logger, extra: Partial<ConstructorParameters<typeof JitoRoute>[0]> = {}): JitoRoute {
  const r = new JitoRoute({ url, bundleOnly: false, timeoutMs: 2_000, connections: 2, ...extra }, log);
  routes.push(r);
  return r;
}

/** A TxView over a real ring slot holding `tx`. */
function view(tx: Buffer, traceId = 'trace-j'): TxView {
  return ringTxView(tx, { routeMask: 1 << 2, traceId });
}

afterEach(async () => {
  for (const r of routes.splice(0)) await r.close();
  for (const e of engines.splice(0)) await e.close();
});

describe('jito route', () => {
  it('POSTs the exact bytes as base64 sendTransaction to /api/v1/transactions with x-jito-auth', async () => {
    const e = await engine();
    const { log, lines } = capturingLog();
    const r = route(e.url, log, { authUuid: AUTH });
    const a = legacyTransfer();
    const b = v0Transfer();
    expect(await r.send(view(a.bytes))).toBe('sent');
    expect(await r.send(view(b.bytes))).toBe('sent');
    expect(e.requests).toHaveLength(2);
    expect(e.requests[0]).toMatchObject({ path: '/api/v1/transactions', bundleOnly: null, auth: AUTH, method: 'sendTransaction' });
    expect(e.requests[0].params[1]).toEqual({ encoding: 'base64' });
    expect(e.sent()[0].equals(a.bytes)).toBe(true);
    expect(e.sent()[1].equals(b.bytes)).toBe(true);
    expect(lines.join('')).not.toContain(AUTH);
  });

  it('no x-jito-auth without authUuid; ?bundleOnly=true when configured; a base URL with the path is kept', async () => {
    const e = await engine();
    const { log } = capturingLog();
    expect(await route(`${e.url}/api/v1/transactions`, log, { bundleOnly: true }).send(view(legacyTransfer().bytes))).toBe('sent');
    expect(e.requests[0]).toMatchObject({ path: '/api/v1/transactions', bundleOnly: 'true', auth: undefined });
    expect(jitoTransactionsUrl('https://ny.block-engine.jito.wtf/', false).href).toBe('https://ny.block-engine.jito.wtf/api/v1/transactions');
  });

  it('HTTP 429 / -32097 is `failed`, logged as rate-limited with the trace id and never the auth uuid', async () => {
    const e = await engine();
    e.mode = 'rate-limited';
    const { log, lines } = capturingLog();
    const r = route(`${e.url}/?uuid=${AUTH}`, log, { authUuid: AUTH });
    expect(await r.send(view(legacyTransfer().bytes, 'trace-429'))).toMatchObject({ outcome: 'failed', cause: CAUSE.route_http, code: 429 });
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]) as Record<string, unknown>;
    expect(line).toMatchObject({ traceId: 'trace-429', route: 'jito', reason: 'rate_limited' });
    expect(String(line.err)).toMatch(/rate-limited by the block engine \(HTTP 429, code -32097\)/);
    expect(lines[0]).not.toContain(AUTH);
  });

  it('a JSON-RPC error, a refused connection and a timeout are `failed`; close() answers dropped:shutdown', async () => {
    const e = await engine();
    const { log, lines } = capturingLog();
    e.mode = 'error';
    expect(await route(e.url, log).send(view(legacyTransfer().bytes))).toMatchObject({ outcome: 'failed', cause: CAUSE.route_upstream, code: 32602 });
    expect(await route('http://127.0.0.1:1', log).send(view(legacyTransfer().bytes))).toMatchObject({ outcome: 'failed', cause: CAUSE.route_network });
    e.mode = 'ok';
    e.delayMs = 400;
    expect(await route(e.url, log, { timeoutMs: 100 }).send(view(legacyTransfer().bytes))).toMatchObject({ outcome: 'failed', cause: CAUSE.route_timeout });
    const reasons = lines.map((l) => (JSON.parse(l) as { reason: string }).reason);
    expect(reasons).toEqual(['upstream_error', 'network', 'timeout']);
    const r = route(e.url, log);
    const pending = r.send(view(legacyTransfer().bytes));
    await new Promise((res) => setTimeout(res, 50));
    await r.close();
    expect(await pending).toBe('dropped:shutdown');
    expect(r.send(view(legacyTransfer().bytes))).toBe('dropped:shutdown');
  });

  it('jitoAnswerError names rate limits even when the body is not JSON', () => {
    expect(jitoAnswerError(200, Buffer.from('{"jsonrpc":"2.0","result":"abc","id":1}'))).toBeNull();
    expect(jitoAnswerError(429, Buffer.from('Too Many Requests'))?.reason).toBe('rate_limited');
    expect(jitoAnswerError(200, Buffer.from('{"jsonrpc":"2.0","error":{"code":-32097,"message":"x"},"id":1}'))?.reason).toBe('rate_limited');
    expect(jitoAnswerError(502, Buffer.from('<html>'))?.reason).toBe('http_error');
  });
});
