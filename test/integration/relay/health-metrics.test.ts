// The gauges /metrics carries for alerting (src/health/health-metrics.ts, src/admission/key-usage.ts; docs/monitoring.md),
// read from a real relay on a recording upstream: health status, route deliverability and upstream reachability follow
// the upstream going away; per-key counts follow what each key sends, by key name, never the key.
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { resolveWaitPolicy } from '../../../src/config/wait-policy.js';
import { relayOnFakeRpcUpstream } from '../../helpers/relay-on-upstream.js';
import { OTHER_KEY, TEST_KEY } from '../../helpers/relay-process.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { sampleValue, scrape } from '../../helpers/metrics-text.js';
import { waitFor } from '../../helpers/wait-for.js';

// A short probe interval, so the dead upstream shows within the test's patience.
const env = relayOnFakeRpcUpstream({ health: { probeIntervalMs: 200, probeTimeoutMs: 300 } });

async function send(key: string): Promise<number> {
  const tx = legacyTransfer();
  const res = await fetch(env.relay.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx.base64, { encoding: 'base64', skipPreflight: true }] }),
  });
  await res.text();
  return res.status;
}

describe('alerting gauges on /metrics', () => {
  it('counts accepted transactions and rate-limit refusals per key name, every key listed, no key value anywhere', async () => {
    const before = await scrape(env.relay.rpcUrl);
    expect(sampleValue(before, 'slotrelay_key_transactions_accepted_total', 'key_name="test-bot"')).toBe(0);
    expect(sampleValue(before, 'slotrelay_key_transactions_accepted_total', 'key_name="tight-bot"')).toBe(0);
    expect(sampleValue(before, 'slotrelay_key_rate_limited_total', 'key_name="tight-bot"')).toBe(0);
    for (let i = 0; i < 3; i++) expect(await send(TEST_KEY)).toBe(200);
    // tight-bot: burst 3, 1/s. Five at once: three pass, two are refused 429.
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push(await send(OTHER_KEY));
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(2);
    const after = await scrape(env.relay.rpcUrl);
    expect(sampleValue(after, 'slotrelay_key_transactions_accepted_total', 'key_name="test-bot"')).toBe(3);
    expect(sampleValue(after, 'slotrelay_key_transactions_accepted_total', 'key_name="tight-bot"')).toBe(statuses.filter((s) => s === 200).length);
    expect(sampleValue(after, 'slotrelay_key_rate_limited_total', 'key_name="tight-bot"')).toBe(statuses.filter((s) => s === 429).length);
    expect(sampleValue(after, 'slotrelay_key_rate_limited_total', 'key_name="test-bot"')).toBe(0);
    expect(after).not.toContain(TEST_KEY);
    expect(after).not.toContain(OTHER_KEY);
  });

  it('says which wait policy each ring consumer runs: auto, chosen from this host\'s core count', async () => {
    const text = await scrape(env.relay.rpcUrl);
    const expected = resolveWaitPolicy(configSchema.parse({}).rings, 'egress-worker', availableParallelism());
    expect(sampleValue(text, 'slotrelay_ring_wait_policy', `consumer="egress-worker",policy="${expected.policy}",spin_us="${expected.spinUs}"`)).toBe(1);
    expect(text.split('\n').filter((l) => l.startsWith('slotrelay_ring_wait_policy{consumer="egress-worker"'))).toHaveLength(1);
  });

  it('health status, rpc route and upstream gauges say ok while the upstream answers, and unhealthy once it is gone', async () => {
    const up = await waitFor('the upstream seen reachable', async () => scrape(env.relay.rpcUrl), (t) => sampleValue(t, 'slotrelay_upstream_reachable') === 1);
    expect(sampleValue(up, 'slotrelay_route_deliverable', 'route="rpc"')).toBe(1);
    expect(sampleValue(up, 'slotrelay_health_status', 'status="unhealthy"')).toBe(0);
    expect(sampleValue(up, 'slotrelay_upstream_last_answer_age_seconds')).toBeLessThan(5);
    // Exactly one status is 1, and it is the one /health answers.
    const health = (await (await fetch(`${env.relay.rpcUrl}/health?detail`)).json()) as { status: string };
    expect(sampleValue(up, 'slotrelay_health_status', `status="${health.status}"`)).toBe(1);
    expect(['ok', 'degraded', 'unhealthy', 'shutting_down'].map((s) => sampleValue(up, 'slotrelay_health_status', `status="${s}"`)).reduce((a, b) => a! + b!, 0)).toBe(1);

    await env.upstream.close();
    const down = await waitFor('the dead upstream on /metrics', async () => scrape(env.relay.rpcUrl), (t) => sampleValue(t, 'slotrelay_upstream_reachable') === 0, 10_000);
    await waitFor('the rpc route undeliverable', async () => scrape(env.relay.rpcUrl), (t) => sampleValue(t, 'slotrelay_route_deliverable', 'route="rpc"') === 0 && sampleValue(t, 'slotrelay_health_status', 'status="unhealthy"') === 1, 10_000);
    expect(sampleValue(down, 'slotrelay_upstream_last_answer_age_seconds')).toBeGreaterThan(0);
  });
});
