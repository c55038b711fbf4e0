// Ring full -> 503 + Retry-After (counted, never a silent drop); SIGTERM drains every accepted transaction into the
// route and exits 0; a drain that times out ends every undelivered transaction as dropped:shutdown (counted, logged
// with its request id, bounded) and exits 1; a bad configuration exits 2 (exit codes: README "Running it under a
// supervisor").
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeRpcUpstream, type FakeRpcUpstream } from '../../helpers/fake-upstream.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer, type SignedTx } from '../../helpers/transactions.js';
import { until } from '../../helpers/wait-for.js';

let upstream: FakeRpcUpstream | undefined;
let relay: RelayHandle | undefined;
afterEach(async () => {
  await relay?.stop('SIGKILL');
  await upstream?.close();
  relay = undefined;
  upstream = undefined;
});

async function submit(url: string, tx: SignedTx) {
  const res = await fetch(`${url}/v1/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
    body: JSON.stringify({ transaction: tx.base64 }),
  });
  return { status: res.status, json: (await res.json()) as any, retryAfter: res.headers.get('retry-after') };
}

describe('overload and shutdown', () => {
  it('a full ring refuses with 503 + Retry-After and counts it; accepted ones are all delivered', async () => {
    upstream = await startFakeRpcUpstream();
    upstream.delayMs = 1500; // the route holds every record this long, so 4 slots fill at once
    relay = await startRelay({
      upstream: { rpcUrl: upstream.url },
      routes: { rpc: { endpoints: [upstream.url] } },
      rings: { workers: 1, slotsPerRing: 4 },
    });
    const txs = Array.from({ length: 8 }, () => legacyTransfer());
    const answers = [];
    for (const tx of txs) answers.push(await submit(relay.relayUrl, tx));
    const accepted = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 503);
    expect(accepted.length).toBe(4);
    expect(refused.length).toBe(4);
    for (const r of refused) {
      expect(r.retryAfter).toBe('1');
      expect(r.json).toEqual({
        accepted: false,
        error: {
          code: -32005,
          reason: 'overloaded',
          message: 'Server overloaded: the transaction queue is full, retry after the Retry-After delay',
          data: { reason: 'overloaded' },
        },
      });
    }
    const sent = await upstream.waitForSends(4);
    for (let i = 0; i < 8; i++) {
      expect(sent.some((b) => b.equals(txs[i].bytes))).toBe(answers[i].status === 200);
    }
    const metrics = await (await fetch(`${relay.relayUrl}/metrics`)).text();
    expect(metrics).toMatch(/slotrelay_rejections_total\{reason="overloaded"\} 4/);
    // Room again once the route finished (the upstream answers after its delay): the relay serves normally.
    await until(async () => /slotrelay_ring_depth\{ring="0"\} 0\b/.test(await (await fetch(`${relay!.relayUrl}/metrics`)).text()), 10_000, 50);
    expect((await submit(relay.relayUrl, legacyTransfer())).status).toBe(200);
  });

  it('a full ring refuses JSON-RPC sendTransaction with 503 + Retry-After and the exact -32005 error, id kept', async () => {
    upstream = await startFakeRpcUpstream();
    upstream.delayMs = 1500;
    relay = await startRelay({
      upstream: { rpcUrl: upstream.url },
      routes: { rpc: { endpoints: [upstream.url] } },
      rings: { workers: 1, slotsPerRing: 4 },
    });
    const txs = Array.from({ length: 8 }, () => legacyTransfer());
    const answers: { status: number; json: any; retryAfter: string | null }[] = [];
    for (const [i, tx] of txs.entries()) {
      // Both JSON-RPC paths share the rings: alternate the JSON-RPC host and the relay host's /v1/sendTransaction.
      const url = i % 2 === 0 ? relay.rpcUrl : `${relay.relayUrl}/v1/sendTransaction`;
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
        body: JSON.stringify({ jsonrpc: '2.0', id: `t${i}`, method: 'sendTransaction', params: [tx.base64, { encoding: 'base64', skipPreflight: true }] }),
      });
      answers.push({ status: res.status, json: await res.json(), retryAfter: res.headers.get('retry-after') });
    }
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 503, 503, 503, 503]);
    for (const [i, a] of answers.entries()) {
      if (a.status === 200) {
        expect(a.json).toEqual({ jsonrpc: '2.0', result: txs[i].signature, id: `t${i}` });
        continue;
      }
      expect(a.retryAfter).toBe('1');
      expect(a.json).toEqual({
        jsonrpc: '2.0',
        error: { code: -32005, message: 'Server overloaded: the transaction queue is full, retry after the Retry-After delay', data: { reason: 'overloaded' } },
        id: `t${i}`,
      });
    }
    const sent = await upstream.waitForSends(4);
    for (let i = 0; i < 8; i++) expect(sent.some((b) => b.equals(txs[i].bytes))).toBe(i < 4);
    const metrics = await (await fetch(`${relay.rpcUrl}/metrics`)).text();
    expect(metrics).toMatch(/slotrelay_requests_total\{host="rpc",method="sendTransaction",outcome="overloaded"\} 2/);
    expect(metrics).toMatch(/slotrelay_requests_total\{host="relay",method="sendTransaction",outcome="overloaded"\} 2/);
  });

  it('SIGTERM stops accepting, drains the rings into the route and exits 0', async () => {
    upstream = await startFakeRpcUpstream();
    upstream.delayMs = 300;
    relay = await startRelay({
      upstream: { rpcUrl: upstream.url },
      routes: { rpc: { endpoints: [upstream.url] } },
      rings: { workers: 2, slotsPerRing: 64 },
    });
    const txs = Array.from({ length: 20 }, () => legacyTransfer());
    for (const tx of txs) expect((await submit(relay.relayUrl, tx)).status).toBe(200);
    const code = await relay.stop('SIGTERM');
    expect(code).toBe(0);
    const sent = upstream.sent();
    for (const tx of txs) expect(sent.some((b) => b.equals(tx.bytes))).toBe(true);
    expect(relay.logs.some((l) => l.includes('"event":"relay_stopped"'))).toBe(true);
  });

  it('SIGTERM with a route that cannot deliver before shutdown.drainTimeoutMs: every undelivered one is dropped:shutdown, counted and logged (bounded), exit 1', async () => {
    upstream = await startFakeRpcUpstream();
    upstream.delayMs = 20_000; // the rpc endpoint answers long after the drain timeout
    relay = await startRelay({
      upstream: { rpcUrl: upstream.url },
      routes: { rpc: { endpoints: [upstream.url], timeoutMs: 30_000 } },
      rings: { workers: 1, slotsPerRing: 256 },
      shutdown: { drainTimeoutMs: 300 },
      // The upstream holds every answer (health probes too): on a busy box the 150 submits take longer than the
      // default 5 s probe timeout, after which the rpc route would be refused as unreachable (503).
      health: { probeTimeoutMs: 30_000 },
    });
    const N = 150; // more than the per-worker bound of individual lines (SHUTDOWN_LOG_RECORDS = 100)
    for (let i = 0; i < N; i++) {
      const res = await fetch(`${relay.relayUrl}/v1/submit`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY, 'x-request-id': `stop-${i}` },
        body: JSON.stringify({ transaction: legacyTransfer().base64, maxRetries: 0 }),
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const t0 = Date.now();
    const code = await relay.stop('SIGTERM');
    expect(code).toBe(1);
    expect(Date.now() - t0).toBeLessThan(6_000); // drain timeout + route close + flush, not the endpoint's 20 s
    const lines = relay.logs.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, any>);
    // The first 100 undelivered records individually, each with its request id and every route's outcome ...
    const records = lines.filter((l) => l.event === 'shutdown_undelivered');
    expect(records).toHaveLength(100);
    for (const r of records) expect(r).toMatchObject({ traceId: expect.stringMatching(/^stop-\d+$/), outcomes: { rpc: 'dropped:shutdown' } });
    expect(new Set(records.map((r) => r.traceId)).size).toBe(100);
    // ... then one summary per worker with the count per route and outcome.
    const summaries = lines.filter((l) => l.event === 'shutdown_undelivered_summary');
    expect(summaries).toHaveLength(1);
    expect(summaries[0]).toMatchObject({ records: N, logged: 100, byRoute: { rpc: { 'dropped:shutdown': N } } });
    // The accounting holds in the last line: accepted = sent + failed + dropped, per route.
    const stopped = lines.find((l) => l.event === 'relay_stopped');
    expect(stopped).toMatchObject({ exitCode: 1, drained: false, accepted: N, outcomes: { rpc: { 'dropped:shutdown': N } } });
    const rpc = stopped!.outcomes.rpc as Record<string, number>;
    expect(Object.values(rpc).reduce((a, b) => a + b, 0)).toBe(N);
    expect(stopped!.records).toMatchObject({ consumed: N, undelivered: N });
    // Bounded: no line per transaction beyond the 100.
    expect(lines.filter((l) => typeof l.traceId === 'string').length).toBeLessThanOrEqual(102);
  }, 60_000);

  it('a bad configuration exits 2 before anything starts (the third documented exit code)', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'slotrelay-badconfig-')), 'config.yaml');
    writeFileSync(file, 'rpcHost:\n  colour: blue\n');
    const r = spawnSync(process.execPath, ['dist/src/cli.js', 'start', '--config', file], { encoding: 'utf8', timeout: 20_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('rpcHost: unknown key "colour"');
    expect(r.stdout).not.toContain('relay_ready');
  });
});
