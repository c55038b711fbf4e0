// A route failing every send, under steady load (issue #30 item 10; docs/health.md): once the relay has found it
// failing, only a trickle of live transactions (one per health tick) is let in to probe it, never a whole tick of
// them each time its failures age out of the window; when the route is fixed, the trickle's first send reopens it.
// A real relay on a recording upstream that fails every sendTransaction, submissions over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeRpcUpstream, type FakeRpcUpstream } from '../../helpers/fake-upstream.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer } from '../../helpers/transactions.js';

const TICK_MS = 1_000;
const HEALTH = { probeIntervalMs: TICK_MS, probeTimeoutMs: 3_000, failingWindowMs: 2_000, failingMinOutcomes: 3 };

let upstream: FakeRpcUpstream;
let relay: RelayHandle;
beforeAll(async () => {
  upstream = await startFakeRpcUpstream();
  upstream.sendError = { code: -32002, message: 'the endpoint refuses everything' };
  relay = await startRelay({ upstream: { rpcUrl: upstream.url }, routes: { rpc: { endpoints: [upstream.url] } }, telemetry: { enabled: false }, health: HEALTH });
});
afterAll(async () => {
  await relay?.stop();
  await upstream?.close();
});

async function submit(): Promise<number> {
  const res = await fetch(`${relay.relayUrl}/v1/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
    body: JSON.stringify({ transaction: legacyTransfer().base64 }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** `loops` senders, each one request every `gapMs`, for `ms`: the statuses with the time each was answered. */
async function load(ms: number, loops = 4, gapMs = 20): Promise<{ at: number; status: number }[]> {
  const out: { at: number; status: number }[] = [];
  const until = Date.now() + ms;
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while (Date.now() < until) {
        out.push({ status: await submit(), at: Date.now() });
        await new Promise((r) => setTimeout(r, gapMs));
      }
    }),
  );
  return out.sort((a, b) => a.at - b.at);
}

describe('a failing route under load is probed by a trickle, not reopened', () => {
  it('after the first refusal at most one transaction per tick is accepted (and dropped); once fixed, the route reopens', { timeout: 60_000 }, async () => {
    const failing = await load(10_000);
    const firstRefusal = failing.findIndex((a) => a.status === 503);
    expect(firstRefusal, 'the route was never found failing').toBeGreaterThanOrEqual(0);
    const after = failing.slice(firstRefusal);
    const accepted = after.filter((a) => a.status === 200).length;
    const spanTicks = Math.ceil((after[after.length - 1]!.at - after[0]!.at) / TICK_MS);
    // The trickle: one a tick, plus one tick of slack for a grant that falls at either end.
    expect(accepted, `${accepted} accepted and dropped over ${spanTicks} ticks of ${after.length} requests`).toBeLessThanOrEqual(spanTicks + 2);
    // The load was there to be let in: ten times what the trickle admits (a fixed count, 500, failed once on a loaded
    // host that sent 468 in the window: the same test, a slower load generator).
    expect(after.length).toBeGreaterThan(10 * (spanTicks + 2));
    expect(after.every((a) => a.status === 200 || a.status === 503)).toBe(true);

    // Fixed: the next trickled transaction is sent, and the route takes everything again.
    upstream.sendError = null;
    const fixedAt = Date.now();
    const recovering = await load(6_000);
    const reopened = recovering.findIndex((a, i) => i + 20 <= recovering.length && recovering.slice(i, i + 20).every((x) => x.status === 200));
    expect(reopened, 'the route never reopened').toBeGreaterThanOrEqual(0);
    expect(recovering[reopened]!.at - fixedAt).toBeLessThan(4 * TICK_MS);
    expect(recovering.slice(-20).every((a) => a.status === 200)).toBe(true);
    const h = (await (await fetch(`${relay.relayUrl}/health?detail`)).json()) as { status: string };
    expect(h.status).toBe('ok');
  });
});
