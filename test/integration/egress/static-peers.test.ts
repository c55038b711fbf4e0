// The static route end to end: the real relay sends transactions over QUIC to each configured peer (two localnet
// TPU listeners standing in for fixed validators). Shown here:
// - routes [static]: every transaction reaches every peer exactly once (maxRetries 0: no rebroadcast can add a copy),
//   from the configured relay identity;
// - routes.static.everyTransaction (default true): transactions that name only rpc (/v1/submit) or none (JSON-RPC
//   sendTransaction, key defaults [rpc]) reach the static peers too;
// - a key's allowedRoutes narrow the request: a key allowed only rpc asking for [rpc, static] is answered routes
//   [rpc], its transaction reaches the rpc upstream and no static peer; asking for [static] alone is refused (403);
// - without identity.keypairPath the relay warns at start that it generated an UNSTAKED identity, and the peers see it.
import { Keypair } from '@solana/web3.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeRpcUpstream, type FakeRpcUpstream } from '../../helpers/fake-upstream.js';
import { TpuListener } from '../../../src/localnet/tpu-listener.js';
import { defaultKeys, startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { ensureDist } from './dist-build.js';
import { until } from '../../helpers/wait-for.js';

const RPC_ONLY_KEY = '0c9d2a71-5e3b-4f8a-9d6c-1b2e3f4a5b6c';
const relayKey = Keypair.generate();
const peers: { l: TpuListener; got: Map<string, number>; senders: Set<string | null> }[] = [];
let upstream: FakeRpcUpstream;
let relay: RelayHandle;

function peerAddresses(): string[] {
  return peers.map((p) => `127.0.0.1:${p.l.address().port}`);
}

async function submit(base: string, key: string, body: Record<string, unknown>): Promise<{ status: number; json: Record<string, unknown> }> {
  const r = await fetch(`${base}/v1/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(body),
  });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> };
}

async function metric(labels: string): Promise<number> {
  const text = await (await fetch(`${relay.rpcUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('slotrelay_egress_outcomes_total{') && l.includes(labels));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

function writeKeypair(): string {
  const keypairPath = join(mkdtempSync(join(tmpdir(), 'slotrelay-static-')), 'relay.json');
  writeFileSync(keypairPath, JSON.stringify(Array.from(relayKey.secretKey)));
  return keypairPath;
}

const upstreamHas = (base64: string) => upstream.received.some((r) => r.tx.toString('base64') === base64);

beforeAll(async () => {
  ensureDist();
  for (let i = 0; i < 2; i++) {
    const got = new Map<string, number>();
    const senders = new Set<string | null>();
    const l = new TpuListener({
      host: '127.0.0.1',
      port: 0,
      validatorIdentity: `peer${i}`,
      onTransaction: (tx, info) => {
        const k = Buffer.from(tx).toString('base64');
        got.set(k, (got.get(k) ?? 0) + 1);
        senders.add(info.senderIdentity);
      },
    });
    await l.start();
    peers.push({ l, got, senders });
  }
  upstream = await startFakeRpcUpstream();
  relay = await startRelay({
    upstream: { rpcUrl: 'http://127.0.0.1:9' }, // no preflight here (skipPreflight / /v1/submit); nothing else needs it
    identity: { keypairPath: writeKeypair() },
    // The burst below (300) fits in one ring: this file is about delivery, not back-pressure (the peers share this
    // process's event loop with the HTTP load, so on a busy machine they drain slower than the front accepts).
    rings: { workers: 2, slotsPerRing: 512 },
    keys: [...defaultKeys(), { key: RPC_ONLY_KEY, name: 'rpc-only', allowedRoutes: ['rpc'], rateLimit: { perSecond: 1_000, burst: 1_000 } }],
    // The peers run on this test process's event loop, which also drives the HTTP load: on a busy machine their
    // stream credit can come back late. This file is about delivery, not the stale bound (stalled-peer.test.ts).
    routes: { rpc: { endpoints: [upstream.url] }, direct: { staleAfterMs: 30_000 }, static: { peers: peerAddresses() } },
  });
}, 60_000);

afterAll(async () => {
  await relay?.stop();
  await upstream?.close();
  for (const p of peers) await p.l.stop();
});

describe('static route through the relay', () => {
  it('when the relay says ready, its connection to every static peer is already up (nothing sent yet)', async () => {
    // First in the file, straight after startRelay resolved on relay_ready. The relay's side of the handshake ends
    // when the peer's Finished arrives; the peer counts the connection when the relay's last flight reaches it, sent
    // before relay_ready was printed: a short bound covers the two pipes' order. Before the relay waited for its
    // consumers' routes to be warm (src/egress/contract/consumer-ready.ts) the first connection came ~370 ms after ready.
    for (const p of peers) await until(() => p.l.counters.activeConnections === 1, 100);
    for (const p of peers) expect(p.l.counters.transactions).toBe(0);
  });

  it('every transaction reaches every static peer exactly once, from the configured identity', async () => {
    const N = 300;
    const txs = Array.from({ length: N }, (_, i) => legacyTransfer(5_000 + i));
    for (let i = 0; i < N; i += 20) {
      const batch = txs.slice(i, i + 20).map(async (tx) => {
        const r = await submit(relay.relayUrl, TEST_KEY, { transaction: tx.base64, routes: ['static'], maxRetries: 0 });
        expect(r.status).toBe(200);
      });
      await Promise.all(batch);
    }
    for (const p of peers) {
      await until(() => p.got.size === N, 15_000);
      for (const tx of txs) expect(p.got.get(tx.base64)).toBe(1);
      expect([...p.senders]).toEqual([relayKey.publicKey.toBase58()]);
    }
    expect(await metric('route="static",outcome="sent"')).toBe(N);
  });

  it('everyTransaction: a transaction naming only rpc, and a JSON-RPC sendTransaction (key defaults: rpc), reach the peers too', async () => {
    const viaSubmit = legacyTransfer(6_001);
    const r = await submit(relay.relayUrl, TEST_KEY, { transaction: viaSubmit.base64, routes: ['rpc'], maxRetries: 0 });
    // The answer names where it goes: the relay's own addition included.
    expect(r).toMatchObject({ status: 200, json: { accepted: true, routes: ['rpc', 'static'] } });

    const viaJsonRpc = legacyTransfer(6_002);
    const j = await fetch(relay.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [viaJsonRpc.base64, { encoding: 'base64', skipPreflight: true, maxRetries: 0 }] }),
    });
    expect(((await j.json()) as { result?: string }).result).toBe(viaJsonRpc.signature);

    for (const tx of [viaSubmit, viaJsonRpc]) {
      await until(() => upstreamHas(tx.base64), 5_000);
      for (const p of peers) {
        await until(() => p.got.get(tx.base64) === 1, 5_000);
      }
    }
  });

  it("a key's allowedRoutes narrow the request's routes: [rpc, static] from an rpc-only key goes to rpc only; [static] alone is refused", async () => {
    const staticBefore = await metric('route="static",outcome="sent"');
    const tx = legacyTransfer(6_101);
    const r = await submit(relay.relayUrl, RPC_ONLY_KEY, { transaction: tx.base64, routes: ['rpc', 'static'], maxRetries: 0 });
    expect(r).toMatchObject({ status: 200, json: { accepted: true, routes: ['rpc'] } });
    await until(() => upstreamHas(tx.base64), 5_000);

    const refused = legacyTransfer(6_102);
    const s = await submit(relay.relayUrl, RPC_ONLY_KEY, { transaction: refused.base64, routes: ['static'], maxRetries: 0 });
    expect(s.status).toBe(403);
    expect(s.json).toMatchObject({ accepted: false, error: { reason: 'route_not_allowed' } });

    // Neither reached a static peer (the relay's static connections are up and fast: give them time to show up).
    await new Promise((res) => setTimeout(res, 300));
    for (const p of peers) {
      expect(p.got.has(tx.base64)).toBe(false);
      expect(p.got.has(refused.base64)).toBe(false);
    }
    expect(await metric('route="static",outcome="sent"')).toBe(staticBefore);
    expect(upstreamHas(refused.base64)).toBe(false);
  });
});

describe('static route without identity.keypairPath', () => {
  it('warns at start that a generated, UNSTAKED identity is used, and the peers see exactly that identity', async () => {
    const own = await startRelay({
      upstream: { rpcUrl: 'http://127.0.0.1:9' },
      rings: { workers: 1, slotsPerRing: 256 },
      routes: { static: { peers: peerAddresses() } },
    });
    try {
      const line = own.logs.find((l) => l.includes('"event":"identity_generated"'));
      expect(line).toBeDefined();
      const warn = JSON.parse(line!) as { level: number; identity: string; msg: string; persistent: boolean };
      expect(warn.level).toBe(40);
      expect(warn.msg).toContain('UNSTAKED');
      expect(warn.persistent).toBe(false);
      expect(warn.identity).not.toBe(relayKey.publicKey.toBase58());

      const tx = legacyTransfer(6_201);
      expect((await submit(own.relayUrl, TEST_KEY, { transaction: tx.base64, routes: ['static'], maxRetries: 0 })).status).toBe(200);
      for (const p of peers) {
        await until(() => p.got.get(tx.base64) === 1, 5_000);
        expect(p.senders.has(warn.identity)).toBe(true);
      }
    } finally {
      await own.stop();
    }
  });
});

describe('static peer down at start', () => {
  it('holds the start only for its first connect attempt: the relay gets ready, logs the failed connect before ready, and no egress_late', async () => {
    // A UDP port nobody answers on: the QUIC handshake times out (routes.direct.connectTimeoutMs).
    const silent = new TpuListener({ host: '127.0.0.1', port: 0, validatorIdentity: 'gone', onTransaction: () => undefined });
    await silent.start();
    const gone = `127.0.0.1:${silent.address().port}`;
    await silent.stop();
    const own = await startRelay({
      upstream: { rpcUrl: 'http://127.0.0.1:9' },
      identity: { keypairPath: writeKeypair() },
      rings: { workers: 1, slotsPerRing: 256 },
      routes: { direct: { connectTimeoutMs: 500 }, static: { peers: [gone, ...peerAddresses()] } },
    });
    try {
      const ready = own.logs.findIndex((l) => l.includes('"event":"relay_ready"'));
      const failed = own.logs.findIndex((l) => l.includes('egress: connect failed') && l.includes(gone));
      expect(ready).toBeGreaterThan(-1);
      expect(failed).toBeGreaterThan(-1);
      expect(failed).toBeLessThan(ready);
      expect(own.logs.some((l) => l.includes('"event":"egress_late"'))).toBe(false);
      // The peers that are up deliver.
      const tx = legacyTransfer(6_301);
      expect((await submit(own.relayUrl, TEST_KEY, { transaction: tx.base64, routes: ['static'], maxRetries: 0 })).status).toBe(200);
      for (const p of peers) await until(() => p.got.get(tx.base64) === 1, 5_000);
    } finally {
      await own.stop();
    }
  });
});

describe('everyTransaction and intake when a route is down', () => {
  // Last in the file: it stops the rpc endpoint.
  it('rpc endpoint gone: a transaction naming only rpc is still accepted when everyTransaction adds static (which can deliver it); a key without static is refused 503', async () => {
    await upstream.close();
    const deadline = Date.now() + 15_000;
    for (;;) {
      const d = (await (await fetch(`${relay.rpcUrl}/health?detail`)).json()) as { routes: Record<string, { reason: string | null }> };
      if (d.routes.rpc?.reason === 'endpoint_unreachable') break;
      if (Date.now() > deadline) throw new Error('the rpc endpoint was never reported unreachable');
      await new Promise((r) => setTimeout(r, 50));
    }
    const tx = legacyTransfer(9_001);
    const ok = await submit(relay.relayUrl, TEST_KEY, { transaction: tx.base64, routes: ['rpc'], maxRetries: 0 });
    expect(ok.status).toBe(200);
    expect(ok.json.routes).toEqual(['rpc', 'static']);
    for (const p of peers) await until(() => p.got.get(tx.base64) === 1, 15_000);
    const refused = await submit(relay.relayUrl, RPC_ONLY_KEY, { transaction: legacyTransfer(9_002).base64, routes: ['rpc'] });
    expect(refused.status).toBe(503);
    expect((refused.json.error as { reason: string }).reason).toBe('routes_unavailable');
  });
});
