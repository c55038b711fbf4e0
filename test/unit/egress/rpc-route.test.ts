import { afterEach, describe, expect, it } from 'vitest';
import { RpcRoute } from '../../../src/egress/worker-routes/rpc-route.js';
import type { TxView } from '../../../src/egress/contract/route.js';
import { CAUSE } from '../../../src/shm/receipts-layout.js';
import { startFakeRpcUpstream, type FakeRpcUpstream } from '../../helpers/fake-upstream.js';
import { createLogger } from '../../../src/log/logger.js';
import { ringTxView } from '../../helpers/ring-tx-view.js';

const log = createLogger('silent', 'test');
const upstreams: FakeRpcUpstream[] = [];
const routes: RpcRoute[] = [];

async function upstream(init: Parameters<typeof startFakeRpcUpstream>[0] = {}): Promise<FakeRpcUpstream> {
  const u = await startFakeRpcUpstream(init);
  upstreams.push(u);
  return u;
}

function route(endpoints: string[], timeoutMs = 2_000): RpcRoute {
  const r = new RpcRoute({ endpoints, timeoutMs, connections: 4 }, log);
  routes.push(r);
  return r;
}

/** A TxView over a real ring slot holding `tx`. */
function view(tx: Buffer, maxRetries = -1): TxView {
  return ringTxView(tx, { maxRetries });
}

function randomTx(len: number): Buffer {
  const b = Buffer.alloc(len);
  for (let i = 0; i < len; i++) b[i] = (i * 131 + len) & 0xff;
  b[0] = 1;
  return b;
}

afterEach(async () => {
  for (const r of routes.splice(0)) await r.close();
  for (const u of upstreams.splice(0)) await u.close();
});

describe('rpc route', () => {
  it('sends the exact bytes as base64 sendTransaction with skipPreflight and maxRetries', async () => {
    const u = await upstream();
    const r = route([u.url]);
    const a = randomTx(1232);
    const b = randomTx(300);
    expect(await r.send(view(a, 5))).toBe('sent');
    expect(await r.send(view(b))).toBe('sent');
    expect(u.received).toHaveLength(2);
    expect(u.received[0].tx.equals(a)).toBe(true);
    expect(u.received[0].options).toEqual({ encoding: 'base64', skipPreflight: true, maxRetries: 5 });
    expect(u.received[1].tx.equals(b)).toBe(true);
    expect(u.received[1].options).toEqual({ encoding: 'base64', skipPreflight: true });
  });

  it('answers dropped:no_endpoint synchronously without endpoints', () => {
    expect(route([]).send(view(randomTx(10)))).toBe('dropped:no_endpoint');
  });

  it('fails on a JSON-RPC error, an HTTP 500, a refused connection and a timeout, answering the cause', async () => {
    const rpcErr = await upstream({ mode: 'rpc-error' });
    const http500 = await upstream({ mode: 'http-500' });
    const slow = await upstream({ delayMs: 500 });
    expect(await route([rpcErr.url]).send(view(randomTx(50)))).toMatchObject({ outcome: 'failed', cause: CAUSE.route_upstream, code: 32002 });
    expect(await route([http500.url]).send(view(randomTx(50)))).toMatchObject({ outcome: 'failed', cause: CAUSE.route_upstream, code: 32603 }); // its 500 carries a JSON-RPC error
    expect(await route(['http://127.0.0.1:1/']).send(view(randomTx(50)))).toMatchObject({ outcome: 'failed', cause: CAUSE.route_network, code: 0 });
    const t0 = performance.now();
    expect(await route([slow.url], 100).send(view(randomTx(50)))).toMatchObject({ outcome: 'failed', cause: CAUSE.route_timeout });
    expect(performance.now() - t0).toBeLessThan(450);
  });

  it('is sent when at least one of several endpoints accepts', async () => {
    const bad = await upstream({ mode: 'rpc-error' });
    const good = await upstream();
    const tx = randomTx(200);
    expect(await route([bad.url, good.url]).send(view(tx))).toBe('sent');
    expect(good.received[0].tx.equals(tx)).toBe(true);
  });

  it('close() turns in-flight sends into dropped:shutdown', async () => {
    const slow = await upstream({ delayMs: 2_000 });
    const r = route([slow.url]);
    const pending = r.send(view(randomTx(60)));
    await new Promise((res) => setTimeout(res, 50));
    await r.close();
    expect(await pending).toBe('dropped:shutdown');
    expect(r.send(view(randomTx(60)))).toBe('dropped:shutdown');
  });

  it('reuses keep-alive connections', async () => {
    const u = await upstream();
    const r = route([u.url]);
    for (let i = 0; i < 20; i++) expect(await r.send(view(randomTx(100 + i)))).toBe('sent');
    expect(u.received).toHaveLength(20);
    expect(u.connections()).toBe(1);
  });
});
