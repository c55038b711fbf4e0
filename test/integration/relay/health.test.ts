// Health that tells the truth (issue #18 defect 3), over real HTTP against a real relay: a dead upstream or a route
// failing every send shows in GET /health (plain and ?detail JSON), and a transaction none of whose routes can deliver
// is refused at intake (503 routes_unavailable) instead of being accepted and dropped; both recover on their own.
import { Connection } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import { buildExampleTransaction } from '../../../src/client/example-transaction.js';
import { startFakeRpcUpstream, type FakeRpcUpstream } from '../../helpers/fake-upstream.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { waitFor } from '../../helpers/wait-for.js';

let upstream: FakeRpcUpstream | undefined;
let relay: RelayHandle | undefined;
afterEach(async () => {
  await relay?.stop('SIGKILL');
  await upstream?.close();
  relay = undefined;
  upstream = undefined;
});

// Probes answer fast on loopback, but the upstream runs in this busy test process: a generous probe timeout (a
// closed upstream is refused at once anyway).
const FAST_HEALTH = { probeIntervalMs: 100, probeTimeoutMs: 3_000, failingWindowMs: 1_000, failingMinOutcomes: 3 };

async function health(url: string): Promise<{ status: number; text: string; detail: any }> {
  const plain = await fetch(`${url}/health`);
  const text = await plain.text();
  const detail = await (await fetch(`${url}/health?detail`)).json();
  return { status: plain.status, text, detail };
}

async function submit(url: string): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}/v1/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
    body: JSON.stringify({ transaction: legacyTransfer().base64 }),
  });
  return { status: res.status, json: await res.json() };
}

describe('health that tells the truth', () => {
  it('upstream down: /health unhealthy with reasons, submissions refused 503 routes_unavailable; back: ok and accepted', async () => {
    upstream = await startFakeRpcUpstream();
    const port = Number(new URL(upstream.url).port);
    relay = await startRelay({ upstream: { rpcUrl: upstream.url }, routes: { rpc: { endpoints: [upstream.url] } }, telemetry: { enabled: false }, health: FAST_HEALTH });

    const up = await health(relay.rpcUrl);
    expect(up.status).toBe(200);
    expect(up.text).toBe('ok');
    expect(up.detail).toMatchObject({ status: 'ok', reasons: [], routes: { rpc: { deliverable: true, reason: null } }, upstream: { configured: true, reachable: true } });
    expect((await submit(relay.relayUrl)).status).toBe(200);

    await upstream.close();
    const down = await waitFor('unhealthy', () => health(relay!.relayUrl), (h) => h.status === 503 && h.detail.status === 'unhealthy' && h.detail.routes.rpc.deliverable === false && h.detail.upstream.reachable === false);
    expect(down.text).toBe('unhealthy');
    expect(down.detail.status).toBe('unhealthy');
    expect(down.detail.reasons).toEqual(expect.arrayContaining(['upstream_unreachable', 'rpc:endpoint_unreachable']));
    expect(down.detail.routes.rpc).toMatchObject({ deliverable: false, reason: 'endpoint_unreachable' });
    expect(down.detail.upstream).toMatchObject({ configured: true, reachable: false });
    expect(down.detail.upstream.error).toMatch(/^(ECONNREFUSED|ECONNRESET|UND_ERR_SOCKET|timeout)$/);
    // The detail never shows the upstream URL (it may carry a provider's key).
    expect(JSON.stringify(down.detail)).not.toContain(String(port));

    // One transaction a tick is still let in to probe the route (docs/health.md, the trickle): the next is refused.
    let refused = await submit(relay.relayUrl);
    for (let i = 0; i < 5 && refused.status === 200; i++) refused = await submit(relay.relayUrl);
    expect(refused.status).toBe(503);
    expect(refused.json).toEqual({
      accepted: false,
      error: {
        code: -32005,
        reason: 'routes_unavailable',
        message: "Node is unhealthy: none of the transaction's routes can deliver now",
        data: { reason: 'routes_unavailable', routes: { rpc: 'endpoint_unreachable' } },
      },
    });
    const rpcRefusal = await fetch(relay.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'r', method: 'sendTransaction', params: [legacyTransfer().base64, { encoding: 'base64', skipPreflight: true }] }),
    });
    expect(rpcRefusal.status).toBe(503);
    expect(rpcRefusal.headers.get('retry-after')).toBe('1');
    expect(await rpcRefusal.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32005, message: "Node is unhealthy: none of the transaction's routes can deliver now", data: { reason: 'routes_unavailable', routes: { rpc: 'endpoint_unreachable' } } },
      id: 'r',
    });
    expect(relay.logs.some((l) => l.includes('"event":"health_changed"') && l.includes('upstream_unreachable'))).toBe(true);

    upstream = await startFakeRpcUpstream({ port });
    await waitFor('healthy again', () => health(relay!.relayUrl), (h) => h.status === 200 && h.detail.status === 'ok');
    const back = await submit(relay.relayUrl);
    expect(back.status).toBe(200);
    await upstream.waitForSends(1);
    const metrics = await (await fetch(`${relay.relayUrl}/metrics`)).text();
    // Both refusals above, the REST one and the JSON-RPC one, are counted.
    expect(metrics).toMatch(/slotrelay_rejections_total\{reason="routes_unavailable"\} ([2-9]|\d\d+)\n/);
  });

  it('a route failing every send is reported and refused once it has failed failingMinOutcomes times, then recovers', async () => {
    upstream = await startFakeRpcUpstream();
    upstream.sendError = { code: -32002, message: 'the endpoint refuses everything' };
    // A window long enough that the refusal below is seen while the failures are still inside it on a busy box.
    const health5s = { ...FAST_HEALTH, failingWindowMs: 5_000 };
    relay = await startRelay({ upstream: { rpcUrl: upstream.url }, routes: { rpc: { endpoints: [upstream.url] } }, telemetry: { enabled: false }, health: health5s });
    // The endpoint answers (reachable) but fails every send: the first few are accepted, fail, and are counted.
    for (let i = 0; i < 3; i++) expect((await submit(relay.relayUrl)).status).toBe(200);
    await upstream.waitForSends(3);
    // The plain check and the detail are two requests, and an evaluation can fall between them: wait for both to agree.
    const failing = await waitFor('route_failing', () => health(relay!.relayUrl), (h) => h.status === 503 && h.detail.routes.rpc.reason === 'route_failing');
    expect(failing.status).toBe(503);
    expect(failing.detail.routes.rpc.window).toMatchObject({ sent: 0 });
    expect(failing.detail.routes.rpc.window.notDelivered).toBeGreaterThanOrEqual(3);
    // One transaction a tick is still let in to probe the route (docs/health.md, the trickle): the next is refused.
    let refused = await submit(relay.relayUrl);
    for (let i = 0; i < 5 && refused.status === 200; i++) refused = await submit(relay.relayUrl);
    expect(refused.status).toBe(503);
    expect(refused.json.error.data).toEqual({ reason: 'routes_unavailable', routes: { rpc: 'route_failing' } });

    // Fixed: the next trickled transaction is sent, and the route takes everything again.
    upstream.sendError = null;
    await waitFor('route admitted again', () => submit(relay!.relayUrl), (a) => a.status === 200);
    await waitFor('ok', () => health(relay!.relayUrl), (h) => h.detail.status === 'ok');
  });

  it('the embedded localnet dying is logged and the child is restarted on the same port; transactions flow again; no orphan when the relay is killed', async () => {
    relay = await startRelay({ health: FAST_HEALTH });
    const started = relay.logs.map((l) => (l.includes('"event":"localnet_started"') ? (JSON.parse(l) as { pid: number; rpcUrl: string }) : null)).find((x) => x !== null);
    expect(started).toBeTruthy();
    expect((await health(relay.rpcUrl)).detail.localnet).toEqual({ state: 'running', restarts: 0 });

    process.kill(started!.pid, 'SIGKILL');
    await waitFor('exit logged', async () => relay!.logs.find((l) => l.includes('"event":"localnet_exited"')), (l) => l !== undefined);
    const exited = JSON.parse(relay.logs.find((l) => l.includes('"event":"localnet_exited"'))!) as { level: number; signal: string; pid: number };
    expect(exited).toMatchObject({ level: 50, signal: 'SIGKILL', pid: started!.pid });

    const restarted = await waitFor('restarted', async () => relay!.logs.find((l) => l.includes('"event":"localnet_restarted"')), (l) => l !== undefined, 30_000);
    expect(JSON.parse(restarted!)).toMatchObject({ rpcUrl: started!.rpcUrl });
    const h = await waitFor('healthy after the restart', () => health(relay!.rpcUrl), (x) => x.detail.status === 'ok', 30_000);
    expect(h.detail.localnet).toEqual({ state: 'running', restarts: 1 });
    // The relay's upstream URL still works: a transaction made on the restarted localnet goes through the relay and lands.
    const tx = await buildExampleTransaction(started!.rpcUrl);
    const res = await fetch(`${relay.relayUrl}/v1/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
      body: JSON.stringify({ transaction: tx }),
    });
    expect(res.status).toBe(200);
    const { signature } = (await res.json()) as { signature: string };
    const conn = new Connection(started!.rpcUrl, 'processed');
    const status = await waitFor('landed', async () => (await conn.getSignatureStatuses([signature])).value[0], (s) => s !== null);
    expect(status!.err).toBeNull();

    // A relay killed outright leaves no localnet behind: the child watches its stdin pipe (--supervised).
    const childPid = (JSON.parse(restarted!) as { pid: number }).pid;
    await relay.stop('SIGKILL');
    relay = undefined;
    const alive = (): boolean => {
      try {
        process.kill(childPid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await waitFor('the localnet child exits with its relay', async () => alive(), (a) => !a, 10_000);
  });
});
