// Log volume under failure (issue #18 defect 8): an rpc endpoint that answers every sendTransaction with HTTP 500,
// through the real relay, under a few thousand submissions. Each transaction also names the jito route (a stand-in
// block engine that accepts everything), so the relay keeps accepting them: a route that fails alone is taken out of
// admission by the health monitor (src/health/), which would hide the log volume. Per transaction the rpc route fails
// and the delivery accounting notes a record not delivered by every route. The relay's log stays under a small fixed number of lines:
// a failure is logged once when it starts (with one example trace id), then summarised per route + reason at most
// once per 10 s (LOG_SUMMARY_INTERVAL_MS) and when the relay stops, each line carrying `count`, the occurrences it
// stands for; the metrics count every one. Summing `count` over a kind of line gives the metric's total.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startJitoBlockEngine, type JitoBlockEngine } from '../../helpers/jito-block-engine.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { ensureDist } from './dist-build.js';
import { until } from '../../helpers/wait-for.js';
import { metricNow } from '../../helpers/metrics-text.js';

let relay: RelayHandle | undefined;
let server: Server | undefined;
let engine: JitoBlockEngine | undefined;

afterEach(async () => {
  await relay?.stop('SIGKILL');
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  await engine?.close();
  relay = undefined;
  server = undefined;
  engine = undefined;
});

/** An HTTP endpoint that answers 500 with a short HTML body to everything. */
async function failingEndpoint(): Promise<string> {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(500, { 'content-type': 'text/html' });
      res.end('<html>internal error</html>');
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/?api-key=SECRET-PROVIDER-KEY`;
}

async function submitMany(n: number, body: Record<string, unknown>, prefix: string): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) {
      const i = next++;
      const res = await fetch(`${relay!.relayUrl}/v1/submit`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY, 'x-request-id': `${prefix}-${i}` },
        body: JSON.stringify({ transaction: legacyTransfer(i).base64, routes: ['rpc', 'jito'], ...body }),
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

type Line = Record<string, unknown> & { msg?: string; count?: number };
const jsonLines = (logs: string[]): Line[] => logs.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Line);
const countOf = (lines: Line[]): number => lines.reduce((s, l) => s + (typeof l.count === 'number' ? l.count : 0), 0);

describe('a route whose endpoint always fails', () => {
  it('2,000 failed transactions: a bounded number of log lines, summaries carry the count, metrics the total', async () => {
    ensureDist();
    const url = await failingEndpoint();
    engine = await startJitoBlockEngine();
    relay = await startRelay({
      upstream: { rpcUrl: 'http://127.0.0.1:9' }, // no preflight on /v1/submit; maxRetries 0: no status polling
      // Long timeouts: on a loaded box the stand-in endpoints answer late, and late is not what this test is about.
      routes: { rpc: { endpoints: [url], timeoutMs: 30_000 }, jito: { url: engine.url, timeoutMs: 30_000 } },
      rings: { workers: 2, slotsPerRing: 1024 },
    });
    const N = 2_000;
    const t0 = Date.now();
    await submitMany(N, { maxRetries: 0 }, 'fail');
    await until(async () => (await metricNow(relay!.rpcUrl, 'slotrelay_egress_outcomes_total', 'route="rpc",outcome="failed"')) === N, 60_000, 50);
    // One summary interval (10 s) after a worker's first failure line, its check (every 1 s) writes the periodic
    // summary of what happened since; wait for it (bounded) rather than for a fixed time, which raced that check.
    // The egress workers' summaries (the front's own, e.g. the receipts' status polls of this dead upstream, carry no
    // transaction).
    const isPeriodic = (l: Line): boolean => l.event === 'log_summary' && l.thread === 'egress';
    await until(() => jsonLines(relay!.logs).some(isPeriodic), Math.max(0, t0 + 20_000 - Date.now()));
    const periodic = jsonLines(relay.logs).filter(isPeriodic);
    expect(periodic.length).toBeGreaterThan(0);
    expect(periodic.every((l) => typeof l.count === 'number' && l.count > 0 && typeof l.traceId === 'string')).toBe(true);

    expect(await relay.stop('SIGTERM')).toBe(0);
    const lines = jsonLines(relay.logs);
    // Bounded: start-up lines, plus per worker and kind one first line, one periodic summary and one at stop.
    expect(relay.logs.length).toBeLessThan(60);
    // Every failure is in exactly one line's count: the route's lines (per endpoint and reason) ...
    const routeLines = lines.filter((l) => l.msg?.startsWith('rpc route: endpoint did not accept the transaction'));
    expect(routeLines.every((l) => l.reason === 'http_error' && typeof l.traceId === 'string')).toBe(true);
    expect(countOf(routeLines)).toBe(N);
    // ... and the delivery accounting's (per combination of route outcomes).
    // (Normally "delivered, but not by every requested route": jito took it.)
    const accounting = lines.filter((l) => /^egress: (delivered, but not by every requested route|transaction not delivered by any route)/.test(l.msg ?? ''));
    expect(accounting.every((l) => (l.outcomes as Record<string, string>).rpc === 'failed' && typeof l.traceId === 'string')).toBe(true);
    expect(countOf(accounting)).toBe(N);
    // Neither the API key nor the endpoint's query (a provider key) is ever written.
    for (const l of relay.logs) {
      expect(l).not.toContain(TEST_KEY);
      expect(l).not.toContain('SECRET-PROVIDER-KEY');
    }
  }, 150_000);

  it('with rebroadcasts (maxRetries default: until expired) the failures of every round stay bounded too', async () => {
    ensureDist();
    const url = await failingEndpoint();
    engine = await startJitoBlockEngine();
    relay = await startRelay({
      upstream: { rpcUrl: url }, // the status poller fails against it too
      routes: { rpc: { endpoints: [url], timeoutMs: 30_000 }, jito: { url: engine.url, timeoutMs: 30_000 } },
      retries: { intervalMs: 100, statusPollMs: 100 },
      rings: { workers: 2, slotsPerRing: 1024 },
    });
    const N = 1_000;
    await submitMany(N, {}, 'retry');
    // A few rebroadcast rounds of all 1,000 fail.
    await until(async () => (await metricNow(relay!.rpcUrl, 'slotrelay_egress_rebroadcasts_total', 'route="rpc",outcome="failed"')) >= 3 * N, 60_000, 50);
    expect(await relay.stop('SIGTERM')).toBe(0);
    expect(relay.logs.length).toBeLessThan(80);
    const lines = jsonLines(relay.logs);
    // The upstream URL's query (a provider key) is in no log line, relay_ready and the start banner included.
    expect(relay.logs.join('\n')).not.toContain('SECRET-PROVIDER-KEY');
    expect(lines.find((l) => l.event === 'relay_ready')?.upstream).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    // The retry queue's 1,000 transactions end dropped:shutdown at stop: counted in summary lines, not one each.
    const shutdown = lines.filter((l) => l.reason === 'dropped:shutdown' && String(l.msg).startsWith('retry:'));
    expect(countOf(shutdown)).toBe(N);
  }, 150_000);
});
