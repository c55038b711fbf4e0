// The jito route through the real relay process: a loopback block engine (test/helpers/jito-block-engine.ts) gets
// the exact bytes with x-jito-auth; a 429 / -32097 is counted as `failed` and logged as rate-limited with the trace
// id, never with the auth uuid or the API key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startJitoBlockEngine, type JitoBlockEngine } from '../../helpers/jito-block-engine.js';
import { startFakeRpcUpstream, type FakeRpcUpstream } from '../../helpers/fake-upstream.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer, v0Transfer, type SignedTx } from '../../helpers/transactions.js';
import { ensureDist } from './dist-build.js';
import { until } from '../../helpers/wait-for.js';

const AUTH = '3c2b1a09-8f7e-4d6c-9b5a-493827160504';
let engine: JitoBlockEngine;
let upstream: FakeRpcUpstream;
let relay: RelayHandle;

beforeAll(async () => {
  ensureDist();
  engine = await startJitoBlockEngine();
  upstream = await startFakeRpcUpstream();
  relay = await startRelay({
    upstream: { rpcUrl: upstream.url },
    routes: { rpc: { endpoints: [upstream.url] }, jito: { url: engine.url, authUuid: AUTH, timeoutMs: 2_000 } },
    retries: { defaultMaxRetries: 0 },
  });
});
afterAll(async () => {
  await relay?.stop();
  await engine?.close();
  await upstream?.close();
});

async function submit(tx: SignedTx, routes: string[], traceId: string): Promise<number> {
  const res = await fetch(`${relay.relayUrl}/v1/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY, 'x-request-id': traceId },
    body: JSON.stringify({ transaction: tx.base64, routes }),
  });
  await res.text();
  return res.status;
}

async function metric(re: RegExp): Promise<number> {
  const text = await (await fetch(`${relay.relayUrl}/metrics`)).text();
  const m = re.exec(text);
  return m ? Number(m[1]) : 0;
}

describe('jito route through the relay', () => {
  it('the block engine receives the exact bytes on /api/v1/transactions with x-jito-auth', async () => {
    const a = legacyTransfer();
    const b = v0Transfer();
    expect(await submit(a, ['jito'], 'jito-a')).toBe(200);
    expect(await submit(b, ['jito', 'rpc'], 'jito-b')).toBe(200);
    const sent = await engine.waitForSends(2);
    expect(sent.some((x) => x.equals(a.bytes))).toBe(true);
    expect(sent.some((x) => x.equals(b.bytes))).toBe(true);
    for (const r of engine.requests) {
      expect(r).toMatchObject({ path: '/api/v1/transactions', auth: AUTH, method: 'sendTransaction' });
      expect(r.params[1]).toEqual({ encoding: 'base64' });
    }
    await upstream.waitForSends(1);
    expect(upstream.sent().some((x) => x.equals(b.bytes))).toBe(true);
    await until(async () => (await metric(/slotrelay_egress_outcomes_total\{route="jito",outcome="sent"\} (\d+)/)) === 2, 10_000, 20);
  });

  it('a 429 / -32097 is counted as failed, logged as rate-limited with the trace id, never the uuid or API key', async () => {
    engine.mode = 'rate-limited';
    const tx = legacyTransfer();
    expect(await submit(tx, ['jito'], 'jito-429-trace')).toBe(200);
    await until(async () => (await metric(/slotrelay_egress_outcomes_total\{route="jito",outcome="failed"\} (\d+)/)) === 1, 10_000, 20);
    engine.mode = 'ok';
    expect(engine.sent().some((x) => x.equals(tx.bytes))).toBe(true);
    await until(() => relay.logs.some((l) => l.includes('jito-429-trace') && l.includes('not delivered by any route')), 10_000, 20);
    const routeLine = relay.logs.find((l) => l.includes('jito-429-trace') && l.includes('rate-limited by the block engine'));
    expect(routeLine).toBeDefined();
    expect(JSON.parse(routeLine!)).toMatchObject({ traceId: 'jito-429-trace', route: 'jito', reason: 'rate_limited' });
    const accounting = JSON.parse(relay.logs.find((l) => l.includes('jito-429-trace') && l.includes('not delivered by any route'))!);
    expect(accounting).toMatchObject({ traceId: 'jito-429-trace', outcomes: { jito: 'failed' }, retry: 'none' });
    expect(await metric(/slotrelay_egress_records_total\{stage="undelivered"\} (\d+)/)).toBe(1);
    for (const l of relay.logs) {
      expect(l).not.toContain(AUTH);
      expect(l).not.toContain(TEST_KEY);
    }
  });
});
