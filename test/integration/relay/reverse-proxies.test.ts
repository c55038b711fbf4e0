// A real nginx and a real HAProxy (Debian's packages: scripts/ci/ensure-proxies.sh) in front of a real relay, each with
// its defaults for an upstream (issue #29): nginx proxies with proxy_http_version 1.0 (HTTP/1.0 + Connection: close
// to the relay); HAProxy health-checks with `option httpchk` (OPTIONS / HTTP/1.0, no Host) and with
// `option httpchk GET /health` (HTTP/1.0). On our source build of uWS requests through each are answered and the
// checks pass; on the maintained prebuilt build (when it loads here) uWS's own 505 comes back instead, which is why
// the source build exists. Skipped, saying why, only where the packages cannot be installed or our build was not made.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadableUwsBuilds } from '../../helpers/raw-http.js';
import { startFakeRpcUpstream, type FakeRpcUpstream } from '../../helpers/fake-upstream.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { ensureProxies, freePort, haproxyConfig, haproxyServers, nginxConfig, ProxyProcess, type ProxyBinaries, type ServerCheck } from '../../helpers/reverse-proxies.js';
import { legacyTransfer } from '../../helpers/transactions.js';

const bins = ensureProxies();
const builds = loadableUwsBuilds();
const skip = 'missing' in bins ? `nginx/HAProxy not available: ${bins.missing}` : !builds.includes('source') ? 'our uWS build was not made on this host (make build: no C++ compiler or Node headers)' : null;
if (skip !== null) console.warn(`reverse-proxy test skipped: ${skip}`);

interface Stack {
  readonly relay: RelayHandle;
  readonly nginx: ProxyProcess;
  readonly haproxy: ProxyProcess;
  /** nginx in front of the relay host and of the JSON-RPC host; HAProxy in front of the relay host; HAProxy's stats. */
  readonly ports: { readonly nginxRelay: number; readonly nginxRpc: number; readonly haproxy: number; readonly stats: number };
}

async function startStack(b: ProxyBinaries, up: FakeRpcUpstream, build: string): Promise<Stack> {
  const relay = await startRelay({ upstream: { rpcUrl: up.url }, routes: { rpc: { endpoints: [up.url] } } }, { SLOTRELAY_UWS_BUILD: build });
  const ports = { nginxRelay: await freePort(), nginxRpc: await freePort(), haproxy: await freePort(), stats: await freePort() };
  const nginx = await ProxyProcess.start(
    'nginx',
    b.nginx,
    (dir) => ['-p', dir, '-c', `${dir}/nginx.conf`, '-e', `${dir}/error.log`],
    (dir) => nginxConfig(dir, [
      { listen: ports.nginxRelay, upstream: relay.relayUrl },
      { listen: ports.nginxRpc, upstream: relay.rpcUrl },
    ]),
    ports.nginxRelay,
  );
  const haproxy = await ProxyProcess.start('haproxy', b.haproxy, (dir) => ['-db', '-f', `${dir}/haproxy.conf`], () => haproxyConfig(ports.haproxy, ports.stats, new URL(relay.relayUrl).host), ports.haproxy);
  return { relay, nginx, haproxy, ports };
}

async function stopStack(s: Stack | undefined): Promise<void> {
  await s?.haproxy.stop();
  await s?.nginx.stop();
  await s?.relay.stop();
}

/** HAProxy's view of both servers once each has had a few checks (300 ms apart; bounded at 5 s). */
async function settledChecks(statsPort: number, want: (c: ServerCheck) => boolean): Promise<ServerCheck[]> {
  const until = Date.now() + 5_000;
  for (;;) {
    const servers = await haproxyServers(statsPort);
    if ((servers.length === 2 && servers.every(want)) || Date.now() > until) return servers;
    await new Promise((r) => setTimeout(r, 200));
  }
}

function submit(base: string, base64: string): Promise<Response> {
  return fetch(`${base}/v1/submit`, { method: 'POST', headers: { 'x-api-key': TEST_KEY, 'content-type': 'application/json' }, body: JSON.stringify({ transaction: base64 }) });
}

function rpcSend(base: string, base64: string): Promise<Response> {
  return fetch(base, {
    method: 'POST',
    headers: { 'x-api-key': TEST_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [base64, { encoding: 'base64', skipPreflight: true }] }),
  });
}

describe.skipIf(skip !== null)('nginx and HAProxy with their default upstream settings in front of the relay', () => {
  let up: FakeRpcUpstream;
  let ours: Stack | undefined;

  beforeAll(async () => {
    up = await startFakeRpcUpstream();
    ours = await startStack(bins as ProxyBinaries, up, 'source');
  }, 60_000);
  afterAll(async () => {
    await stopStack(ours);
    await up?.close();
  });

  it('source build, through nginx (HTTP/1.0 to the relay): GET /health, /v1/submit and JSON-RPC sendTransaction are answered, each sent once', async () => {
    const s = ours!;
    const nginxRelay = `http://127.0.0.1:${s.ports.nginxRelay}`;
    const nginxRpc = `http://127.0.0.1:${s.ports.nginxRpc}`;
    for (let i = 0; i < 20; i++) {
      const r = await fetch(`${nginxRelay}/health`);
      expect([r.status, await r.text()]).toEqual([200, 'ok']);
    }
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) {
      const a = legacyTransfer();
      const r = await submit(nginxRelay, a.base64);
      expect(r.status).toBe(200);
      expect(await r.text()).toContain(a.signature);
      const b = legacyTransfer();
      const q = await rpcSend(nginxRpc, b.base64);
      expect(q.status).toBe(200);
      expect(((await q.json()) as { result: string }).result).toBe(b.signature);
      sent.push(a.base64, b.base64);
    }
    await up.waitForSends(10);
    await new Promise((r) => setTimeout(r, 300));
    for (const tx of sent) expect(up.sent().filter((x) => x.toString('base64') === tx).length).toBe(1);
    // nginx's access log: every request answered by the upstream with 200 (no 502/505 from nginx or uWS).
    expect(s.nginx.output.join('')).not.toMatch(/upstream prematurely closed|upstream sent invalid/);
  });

  it('source build, behind HAProxy: both `option httpchk` checks (HTTP/1.0) pass and requests through it are answered', async () => {
    const s = ours!;
    const servers = await settledChecks(s.ports.stats, (c) => c.status === 'UP' && c.checkStatus === 'L7OK');
    expect(servers.map((c) => `${c.backend}/${c.server} ${c.status} ${c.checkStatus} ${c.checkCode}`).sort()).toEqual(['relay/health UP L7OK 200', 'relay_plain_check/plain UP L7OK 204']);
    const base = `http://127.0.0.1:${s.ports.haproxy}`;
    const r = await fetch(`${base}/health`);
    expect([r.status, await r.text()]).toEqual([200, 'ok']);
    const tx = legacyTransfer();
    const before = up.sent().length;
    const q = await submit(base, tx.base64);
    expect(q.status).toBe(200);
    expect(await q.text()).toContain(tx.signature);
    await up.waitForSends(before + 1);
  });

  it.skipIf(!builds.includes('maintained'))('for contrast, the maintained prebuilt build: nginx passes on uWS\'s 505 and HAProxy marks the relay DOWN', async () => {
    const prebuilt = await startStack(bins as ProxyBinaries, up, 'maintained');
    try {
      const r = await fetch(`http://127.0.0.1:${prebuilt.ports.nginxRelay}/health`);
      expect(r.status).toBe(505);
      const servers = await settledChecks(prebuilt.ports.stats, (c) => c.status === 'DOWN');
      expect(servers.map((c) => `${c.server} ${c.status} ${c.checkStatus}`).sort()).toEqual(['health DOWN L7STS', 'plain DOWN L7STS']);
    } finally {
      await stopStack(prebuilt);
    }
  }, 40_000);
});
