// Rebroadcast and delivery accounting through the real relay process, against real loopback listeners: an upstream
// JSON-RPC node (below) that counts sendTransaction per signature and answers getSignatureStatuses / isBlockhashValid
// as the test scripts it, and the loopback block engine. Intervals are ~100 ms so the file stays fast.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import bs58 from 'bs58';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startJitoBlockEngine, type JitoBlockEngine } from '../../helpers/jito-block-engine.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer, v0Transfer, type SignedTx } from '../../helpers/transactions.js';
import { ensureDist } from './dist-build.js';
import { until } from '../../helpers/wait-for.js';

interface StatusUpstream {
  readonly url: string;
  /** sendTransaction calls per base58 signature. */
  readonly sends: Map<string, number>;
  /** Signatures getSignatureStatuses reports confirmed. */
  readonly landed: Set<string>;
  /** Signatures whose sendTransaction is answered with a JSON-RPC error. */
  readonly failing: Set<string>;
  /** Sizes of the getSignatureStatuses calls. */
  readonly statusCalls: number[];
  close(): Promise<void>;
}

async function startStatusUpstream(): Promise<StatusUpstream> {
  const up = { url: '', sends: new Map<string, number>(), landed: new Set<string>(), failing: new Set<string>(), statusCalls: [] as number[] } as StatusUpstream;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: unknown; method: string; params: unknown[] };
      let answer: object;
      if (body.method === 'sendTransaction') {
        const tx = Buffer.from(body.params[0] as string, 'base64');
        const sig = bs58.encode(tx.subarray(1, 65));
        up.sends.set(sig, (up.sends.get(sig) ?? 0) + 1);
        answer = up.failing.has(sig) ? { error: { code: -32002, message: 'Transaction simulation failed: Blockhash not found' } } : { result: sig };
      } else if (body.method === 'getSignatureStatuses') {
        const sigs = body.params[0] as string[];
        up.statusCalls.push(sigs.length);
        answer = {
          result: {
            context: { slot: 100 },
            value: sigs.map((s) => (up.landed.has(s) ? { slot: 99, confirmations: 1, err: null, confirmationStatus: 'confirmed', status: { Ok: null } } : null)),
          },
        };
      } else if (body.method === 'isBlockhashValid') {
        answer = { result: { context: { slot: 100 }, value: true } };
      } else {
        answer = { error: { code: -32601, message: 'Method not found' } };
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, ...answer }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  (up as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  up.close = () =>
    new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return up;
}

let upstream: StatusUpstream | undefined;
let engine: JitoBlockEngine | undefined;
let relay: RelayHandle | undefined;

beforeAll(() => ensureDist());
afterEach(async () => {
  await relay?.stop('SIGKILL');
  await upstream?.close();
  await engine?.close();
  relay = undefined;
  upstream = undefined;
  engine = undefined;
});

async function submit(r: RelayHandle, tx: SignedTx, body: Record<string, unknown>, traceId?: string): Promise<number> {
  const res = await fetch(`${r.relayUrl}/v1/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY, ...(traceId ? { 'x-request-id': traceId } : {}) },
    body: JSON.stringify({ transaction: tx.base64, ...body }),
  });
  await res.text();
  return res.status;
}

async function metrics(r: RelayHandle): Promise<string> {
  return (await fetch(`${r.relayUrl}/metrics`)).text();
}

function value(text: string, name: string, labels: string): number {
  const prefix = labels === '' ? `${name} ` : `${name}{${labels}} `;
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

describe('rebroadcast through the relay', () => {
  it('maxRetries rebroadcasts until getSignatureStatuses reports the signature confirmed, then stops; maxRetries 0 sends once', async () => {
    upstream = await startStatusUpstream();
    relay = await startRelay({
      upstream: { rpcUrl: upstream.url },
      routes: { rpc: { endpoints: [upstream.url] } },
      retries: { intervalMs: 100, statusPollMs: 50 },
    });
    const retried = v0Transfer();
    const once = legacyTransfer();
    expect(await submit(relay, retried, { maxRetries: 50 })).toBe(200);
    expect(await submit(relay, once, { maxRetries: 0 })).toBe(200);
    await until(() => (upstream!.sends.get(retried.signature) ?? 0) >= 3, 10_000, 20); // first send + 2 rebroadcasts
    upstream.landed.add(retried.signature);
    await until(async () => value(await metrics(relay!), 'slotrelay_retry_transactions_total', 'outcome="landed"') === 1, 10_000, 20);
    const atLanding = upstream.sends.get(retried.signature)!;
    await sleep(400); // 4 intervals: nothing more may arrive
    expect(upstream.sends.get(retried.signature)).toBe(atLanding);
    expect(atLanding).toBeLessThan(50);
    expect(upstream.sends.get(once.signature)).toBe(1);
    const m = await metrics(relay);
    expect(value(m, 'slotrelay_retry_transactions_total', 'outcome="queued"')).toBe(1);
    expect(value(m, 'slotrelay_retry_queue_depth', '')).toBe(0);
    expect(value(m, 'slotrelay_egress_outcomes_total', 'route="rpc",outcome="sent"')).toBe(2); // first sends
    expect(value(m, 'slotrelay_egress_rebroadcasts_total', 'route="rpc",outcome="sent"')).toBe(atLanding - 1);
    expect(upstream.statusCalls.every((n) => n >= 1 && n <= 256)).toBe(true);
  });

  it('a full retry queue sheds with dropped:retry_queue_full, counted and logged with the trace id', async () => {
    upstream = await startStatusUpstream();
    relay = await startRelay({
      upstream: { rpcUrl: upstream.url },
      routes: { rpc: { endpoints: [upstream.url] } },
      retries: { intervalMs: 60_000, maxQueue: 2 },
    });
    const txs = Array.from({ length: 5 }, () => legacyTransfer());
    // One at a time, each until the retry queue took or shed it: a record joins the queue when its first send
    // finished, and concurrent sends to the upstream can finish out of order (shed-3 was once shed before shed-2).
    const settled = async (): Promise<number> => {
      const m = await metrics(relay!);
      return value(m, 'slotrelay_retry_transactions_total', 'outcome="queued"') + value(m, 'slotrelay_retry_transactions_total', 'outcome="dropped:retry_queue_full"');
    };
    for (let i = 0; i < txs.length; i++) {
      expect(await submit(relay, txs[i], { maxRetries: 3 }, `shed-${i}`)).toBe(200);
      await until(async () => (await settled()) === i + 1, 10_000, 20);
    }
    const m = await metrics(relay);
    expect(value(m, 'slotrelay_retry_transactions_total', 'outcome="queued"')).toBe(2);
    expect(value(m, 'slotrelay_retry_queue_depth', '')).toBe(2);
    for (const tx of txs) expect(upstream.sends.get(tx.signature)).toBe(1); // every one was still sent once
    // Logged bounded (src/log/summarized-log.ts): the first shed one at once with its trace id, the others counted
    // in a summary line (every 10 s, or at stop) whose example is one of them; `count` sums to the shed total.
    expect(await relay.stop('SIGTERM')).toBe(0);
    const shedLines = relay.logs.filter((l) => l.includes('"reason":"dropped:retry_queue_full"')).map((l) => JSON.parse(l) as { traceId: string; count: number });
    expect(shedLines[0]).toMatchObject({ traceId: 'shed-2', count: 1 });
    expect(shedLines.reduce((n, l) => n + l.count, 0)).toBe(3);
    for (const l of shedLines) expect(['shed-2', 'shed-3', 'shed-4']).toContain(l.traceId);
  });

  it('delivery accounting: N transactions over rpc and jito with failures on both; every route row sums to its N', async () => {
    upstream = await startStatusUpstream();
    engine = await startJitoBlockEngine();
    engine.rateLimitEvery = 3; // every third block-engine request is a 429
    relay = await startRelay({
      upstream: { rpcUrl: upstream.url },
      routes: { rpc: { endpoints: [upstream.url] }, jito: { url: engine.url } },
      retries: { intervalMs: 100, statusPollMs: 50, defaultMaxRetries: 1 },
      rings: { workers: 2, slotsPerRing: 64 },
    });
    const N = 60;
    const sets = [['rpc'], ['jito'], ['rpc', 'jito']];
    const perRoute = { rpc: 0, jito: 0 };
    const txs: SignedTx[] = [];
    for (let i = 0; i < N; i++) {
      const tx = i % 2 === 0 ? legacyTransfer() : v0Transfer();
      txs.push(tx);
      if (i % 4 === 0) upstream.failing.add(tx.signature); // rpc refuses a quarter of them
      if (i % 5 === 0) upstream.landed.add(tx.signature); // some land right away
      const routes = sets[i % 3];
      for (const r of routes) perRoute[r as 'rpc' | 'jito']++;
      expect(await submit(relay, tx, { routes }, `acct-${i}`)).toBe(200);
    }
    // Every queued transaction ends (landed, or its one rebroadcast done and one more interval passed).
    await until(async () => {
      const m = await metrics(relay!);
      return value(m, 'slotrelay_egress_records_total', 'stage="released"') === N && value(m, 'slotrelay_retry_queue_depth', '') === 0;
    }, 10_000, 20);
    const m = await metrics(relay);
    if (process.env.DEBUG_RETRY) console.log(m);
    const outcomesOf = (route: string) =>
      m
        .split('\n')
        .filter((l) => l.startsWith(`slotrelay_egress_outcomes_total{route="${route}",`))
        .reduce((s, l) => s + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    expect(outcomesOf('rpc')).toBe(perRoute.rpc);
    expect(outcomesOf('jito')).toBe(perRoute.jito);
    const rpcFailed = value(m, 'slotrelay_egress_outcomes_total', 'route="rpc",outcome="failed"');
    const jitoFailed = value(m, 'slotrelay_egress_outcomes_total', 'route="jito",outcome="failed"');
    expect(rpcFailed).toBeGreaterThan(0);
    expect(jitoFailed).toBeGreaterThan(0);
    expect(value(m, 'slotrelay_egress_records_total', 'stage="consumed"')).toBe(N);
    // Retry lifecycle: every transaction asked for one retry; each was queued or shed, each queued one ended once.
    const retry = (o: string) => value(m, 'slotrelay_retry_transactions_total', `outcome="${o}"`);
    expect(retry('queued') + retry('dropped:retry_queue_full')).toBe(N);
    expect(retry('landed') + retry('dropped:expired') + retry('dropped:retries_exhausted') + retry('dropped:shutdown')).toBe(retry('queued'));
    expect(retry('landed')).toBeGreaterThan(0);
    // Each record a route did not take is counted in exactly one accounting line (bounded per combination of route
    // outcomes: the first at once, then summaries; the last ones at stop), each with an example trace id and every
    // route's outcome of that combination.
    const undelivered = value(m, 'slotrelay_egress_records_total', 'stage="undelivered"');
    expect(await relay.stop('SIGTERM')).toBe(0);
    const accounting = relay.logs
      .filter((l) => l.includes('"msg":"egress: ') && l.includes('"outcomes":')) // the accounting lines, not the start's
      .map((l) => JSON.parse(l) as { traceId: string; outcomes: Record<string, string>; msg: string; count: number });
    const count = (lines: { count: number }[]): number => lines.reduce((n, l) => n + l.count, 0);
    expect(count(accounting.filter((a) => a.msg.includes('not delivered by any route')))).toBe(undelivered);
    expect(count(accounting)).toBe(rpcFailed + jitoFailed - bothFailed(accounting));
    // 2 workers x 5 combinations (rpc or jito or both failed, with or without the other sent) x (first, periodic, stop)
    expect(accounting.length).toBeLessThanOrEqual(2 * 5 * 3);
    for (const a of accounting) expect(a.traceId).toMatch(/^acct-\d+$/);
    for (const l of relay.logs) expect(l).not.toContain(TEST_KEY);
  });
});

/** Records where both routes failed are counted once in the accounting log but twice in the failed counters. */
function bothFailed(lines: { outcomes: Record<string, string>; count: number }[]): number {
  return lines.filter((a) => a.outcomes.rpc === 'failed' && a.outcomes.jito === 'failed').reduce((n, l) => n + l.count, 0);
}
