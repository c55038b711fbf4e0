// Routes a relay does not run (issue 30, item 3). The two-region example of docs/deployment.md set `defaultRoutes:
// [direct, rpc]` without `routes.rpc.endpoints`: nothing said so at start, default submissions went to direct only,
// and `routes: ["rpc"]` answered 403 route_not_allowed, blaming the key. Shown, on real relay processes: a default
// route named in the config that cannot exist stops the start with exit 2 naming it (routes.defaultRoutes and a key's
// defaultRoutes); the docs' example names only routes it configures; a request for a route this relay does not run
// gets route_not_configured (400 / -32602) on /v1/submit, /v1/transactions and JSON-RPC, the same `data.configured`
// on each, while a route the key may not use still gets route_not_allowed (403).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { unavailableDefaultRoutes } from '../../../src/config/default-routes.js';
import { configSchema } from '../../../src/config/schema.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { ensureDistFresh } from '../../unit/telemetry/dist-fresh.js';

const RPC_ONLY_KEY = '2a6c8e14-3b5d-4f79-8a1c-d3e5f7092b46';
const tx = legacyTransfer().base64;

function start(config: Record<string, unknown>): { status: number | null; stderr: string; stdout: string } {
  const file = join(mkdtempSync(join(tmpdir(), 'slotrelay-default-routes-')), 'config.yaml');
  writeFileSync(file, stringify({ rpcHost: { port: 0 }, relayHost: { port: 0, quicPort: 0 }, telemetry: { enabled: false }, ...config }));
  const r = spawnSync(process.execPath, ['dist/src/cli.js', 'start', '--config', file], { encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

describe('a default route that cannot exist is a start-time error', () => {
  beforeAll(() => ensureDistFresh());

  it('routes.defaultRoutes naming rpc without routes.rpc.endpoints: exit 2, named', () => {
    const r = start({ upstream: { rpcUrl: 'http://127.0.0.1:9' }, routes: { defaultRoutes: ['direct', 'rpc'], direct: { enabled: true } } });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/routes\.defaultRoutes names "rpc"/);
    expect(r.stderr).toContain('routes.rpc.endpoints');
    expect(r.stdout).not.toContain('relay_ready');
  });

  it("a key's defaultRoutes naming jito without routes.jito: exit 2, the key named (never the key itself)", () => {
    const r = start({ upstream: { rpcUrl: 'http://127.0.0.1:9' }, routes: { rpc: { endpoints: ['http://127.0.0.1:9'] } }, keys: [{ key: TEST_KEY, name: 'jito-bot', defaultRoutes: ['jito'] }] });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/keys\[0\] \("jito-bot"\): defaultRoutes names "jito"/);
    expect(r.stderr).toContain('routes.jito');
    expect(r.stderr).not.toContain(TEST_KEY);
  });

  it("docs/deployment.md's two-region example names only routes it configures", () => {
    const doc = readFileSync('docs/deployment.md', 'utf8');
    const block = /```yaml\n(# \/etc\/slotrelay\/fra\.yaml[\s\S]*?)```/.exec(doc);
    expect(block).not.toBeNull();
    const raw = parse(block![1]) as Record<string, any>;
    // Files the example refers to are not here: the routes are what is checked.
    delete raw.keysFile;
    delete raw.identity;
    delete raw.telemetry.locations;
    const config = configSchema.parse(raw);
    expect(unavailableDefaultRoutes(config, raw)).toEqual([]);
  });
});

describe('a route this relay does not run is not the key\'s fault', () => {
  let relay: RelayHandle;

  beforeAll(async () => {
    ensureDistFresh();
    // The jito route only (a dead block engine: accepted submissions just fail to send); the default routes are the
    // schema's implicit [rpc], which this relay does not run (allowed at start: nothing named it).
    relay = await startRelay({
      upstream: { rpcUrl: 'http://127.0.0.1:9' },
      telemetry: { enabled: false },
      routes: { jito: { url: 'http://127.0.0.1:9' } },
      keys: [
        { key: TEST_KEY, name: 'test-bot', preflight: 'skip' },
        { key: RPC_ONLY_KEY, name: 'rpc-only-bot', allowedRoutes: ['rpc'], preflight: 'skip' },
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await relay?.stop();
  });

  async function submit(key: string, body: Record<string, unknown>): Promise<{ status: number; json: any }> {
    const res = await fetch(`${relay.relayUrl}/v1/submit`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ transaction: tx, maxRetries: 0, ...body }) });
    return { status: res.status, json: await res.json() };
  }

  it('/v1/submit naming rpc, and a default submission: 400 route_not_configured', async () => {
    for (const body of [{ routes: ['rpc'] }, {}, { routes: 'default' }]) {
      const r = await submit(TEST_KEY, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error.reason).toBe('route_not_configured');
      expect(r.json.error.data).toEqual({ reason: 'route_not_configured', configured: ['jito'] });
      expect(r.json.error.message).toMatch(/none of the requested routes is configured on this relay/);
    }
  });

  it('/v1/transactions (default routes) and JSON-RPC sendTransaction: route_not_configured', async () => {
    const raw = await fetch(`${relay.relayUrl}/v1/transactions`, { method: 'POST', headers: { 'content-type': 'text/plain', 'x-api-key': TEST_KEY }, body: tx });
    const rawBody = (await raw.json()) as any;
    expect(raw.status, JSON.stringify(rawBody)).toBe(400);
    expect(rawBody.error.reason).toBe('route_not_configured');
    const rpc = await fetch(relay.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'sendTransaction', params: [tx, { encoding: 'base64', skipPreflight: true }] }),
    });
    const j = (await rpc.json()) as any;
    expect(rpc.status, JSON.stringify(j)).toBe(200);
    expect(j.error.code).toBe(-32602);
    expect(j.error.message).toBe('Invalid params: none of the requested routes is configured on this relay');
  });

  // Issue #42: sendTransaction decided its routes apart from send-options and refused without `data.configured`.
  it('JSON-RPC sendTransaction (JSON-RPC host and /v1/sendTransaction) refuses with the data /v1/submit gives: configured', async () => {
    const rest = await submit(TEST_KEY, {});
    expect(rest.json.error.data).toEqual({ reason: 'route_not_configured', configured: ['jito'] });
    for (const url of [relay.rpcUrl, `${relay.relayUrl}/v1/sendTransaction`]) {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
        body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'sendTransaction', params: [tx, { encoding: 'base64', skipPreflight: true }] }),
      });
      const j = (await res.json()) as any;
      expect(res.status, url).toBe(200);
      expect(j.id).toBe(8);
      expect(j.error, url).toEqual({ code: -32602, message: rest.json.error.message, data: rest.json.error.data });
    }
  });

  it('a route the key may not use is still the key\'s: 403 route_not_allowed; a running route is accepted', async () => {
    const r = await submit(RPC_ONLY_KEY, { routes: ['jito'] });
    expect(r.status).toBe(403);
    expect(r.json.error.reason).toBe('route_not_allowed');
    const ok = await submit(TEST_KEY, { routes: ['jito'] });
    expect(ok.status).toBe(200);
    expect(ok.json.routes).toEqual(['jito']);
  });
});
