// getRecentPrioritizationFees on the JSON-RPC host, against real relay processes (docs/fees.md).
// Part 1: the embedded localnet is the upstream (startRelay({})); transactions with compute-unit prices are landed on
// the localnet itself (its URL from the relay's localnet_started line) and read back through the relay with
// @solana/web3.js, network-wide and scoped to a written account; bad input gets Agave's exact errors.
// Part 2: a `slotrelay localnet` process is the cluster; the relay's telemetry follows it directly (so the slot
// ticks), while its upstream.rpcUrl is a counting HTTP proxy in front of it: how often the relay really asks the
// upstream, that bad input never reaches it, and what clients see when the proxy stops and comes back.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { ComputeBudgetProgram, Connection, Keypair, SystemProgram, Transaction, type PublicKey } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedLocalnetUrl, fundedPayer } from '../../helpers/embedded-localnet.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { waitFor } from '../../helpers/wait-for.js';

interface Fee {
  slot: number;
  prioritizationFee: number;
}

async function post(url: string, body: unknown, key: string | null = TEST_KEY): Promise<{ status: number; json: any; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === null ? {} : { 'x-api-key': key }) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: JSON.parse(text), ms: performance.now() - t0 };
}

function feesCall(id: unknown, params?: unknown): Record<string, unknown> {
  return params === undefined ? { jsonrpc: '2.0', id, method: 'getRecentPrioritizationFees' } : { jsonrpc: '2.0', id, method: 'getRecentPrioritizationFees', params };
}

function expectAscendingNumbers(fees: Fee[]): void {
  expect(fees.length).toBeGreaterThan(0);
  expect(fees.length).toBeLessThanOrEqual(150);
  for (const f of fees) {
    expect(Object.keys(f)).toEqual(['slot', 'prioritizationFee']);
    expect(Number.isInteger(f.slot) && Number.isInteger(f.prioritizationFee)).toBe(true);
  }
  for (let i = 1; i < fees.length; i++) expect(fees[i].slot).toBeGreaterThan(fees[i - 1].slot);
}

/** Every bad input of the method, with the exact answer Agave gives (as error objects). */
const BAD_INPUT: [string, unknown, Record<string, unknown>][] = [
  ['129 addresses', [Array.from({ length: 129 }, () => Keypair.generate().publicKey.toBase58())], { code: -32602, message: 'Too many inputs provided; max 128' }],
  ['a malformed address (bad character)', [['11111111111111111111111111111111', '0OIl']], { code: -32602, message: 'Invalid param: Invalid' }],
  ['a malformed address (wrong size)', [['abc']], { code: -32602, message: 'Invalid param: WrongSize' }],
  ['a string instead of a list', ['11111111111111111111111111111111'], { code: -32602, message: 'Invalid params: invalid type: string "11111111111111111111111111111111", expected a sequence.' }],
  ['a number in the list', [['11111111111111111111111111111111', 5]], { code: -32602, message: 'Invalid params: invalid type: integer `5`, expected a string.' }],
  ['two params', [[], {}], { code: -32602, message: 'Invalid parameters: Expected from 0 to 1 parameters.', data: 'Got: 2' }],
  ['params not an array', { addresses: [] }, { code: -32602, message: '`params` should be an array' }],
];

describe('getRecentPrioritizationFees on the embedded localnet', () => {
  let relay: RelayHandle;
  let localnet: Connection;
  let web3: Connection;

  beforeAll(async () => {
    relay = await startRelay({});
    localnet = new Connection(embeddedLocalnetUrl(relay), 'confirmed');
    web3 = new Connection(relay.rpcUrl, { commitment: 'confirmed', httpHeaders: { 'x-api-key': TEST_KEY }, disableRetryOnRateLimit: true });
  });
  afterAll(async () => {
    await relay?.stop();
  });

  /** A signed transfer payer -> `to` with a compute-unit price. */
  async function pricedTransfer(payer: Keypair, to: PublicKey, microLamports: number, blockhash: string): Promise<Buffer> {
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight: 1_000_000 })
      .add(ComputeBudgetProgram.setComputeUnitPrice({ microLamports }))
      .add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 1_000_000 }));
    tx.sign(payer);
    return tx.serialize();
  }

  async function slotOf(sig: string): Promise<number> {
    const st = await waitFor(`${sig} confirmed`, async () => (await localnet.getSignatureStatuses([sig])).value[0], (s) => s?.confirmationStatus === 'confirmed' || s?.confirmationStatus === 'finalized');
    expect(st!.err).toBeNull();
    return st!.slot;
  }

  it('fees reflect transactions landed with compute-unit prices, network-wide and scoped to a written account', async () => {
    const HIGH = 7_777;
    const LOW = 3;
    // Two transfers in one slot: one at a high price writing `hot`, one at a low price writing `cold`. The block's
    // minimum (the network-wide fee of that slot) is LOW; scoped to `hot` it is HIGH. The two are sent together;
    // should they fall into different slots, another pair is sent.
    const hot = Keypair.generate().publicKey;
    const cold = Keypair.generate().publicKey;
    const payerHot = await fundedPayer(localnet);
    const payerCold = await fundedPayer(localnet);
    let slot = -1;
    for (let attempt = 0; attempt < 6 && slot < 0; attempt++) {
      const { blockhash } = await localnet.getLatestBlockhash('confirmed');
      const [a, b] = await Promise.all([
        localnet.sendRawTransaction(await pricedTransfer(payerHot, hot, HIGH, blockhash), { skipPreflight: true }),
        localnet.sendRawTransaction(await pricedTransfer(payerCold, cold, LOW, blockhash), { skipPreflight: true }),
      ]);
      const [sa, sb] = [await slotOf(a), await slotOf(b)];
      if (sa === sb) slot = sa;
    }
    expect(slot, 'the two priced transfers never landed in one slot').toBeGreaterThan(0);

    // Through the relay, with web3.js unchanged: the slot appears once it is complete and the relay's cache has moved on.
    const network = await waitFor(`slot ${slot} in the network-wide fees`, () => web3.getRecentPrioritizationFees(), (f) => f.some((x) => x.slot === slot));
    expectAscendingNumbers(network);
    expect(network.find((x) => x.slot === slot)!.prioritizationFee).toBe(LOW);
    const scoped = await waitFor(`slot ${slot} in the fees for hot`, () => web3.getRecentPrioritizationFees({ lockedWritableAccounts: [hot] }), (f) => f.some((x) => x.slot === slot));
    expectAscendingNumbers(scoped);
    expect(scoped.find((x) => x.slot === slot)!.prioritizationFee).toBe(HIGH);
    // Scoped to the cheap account, or to one nobody wrote, the slot's fee is the block's minimum.
    const forCold = await web3.getRecentPrioritizationFees({ lockedWritableAccounts: [cold] });
    expect(forCold.find((x) => x.slot === slot)?.prioritizationFee).toBe(LOW);
    const both = await web3.getRecentPrioritizationFees({ lockedWritableAccounts: [cold, hot, cold] });
    expect(both.find((x) => x.slot === slot)?.prioritizationFee).toBe(HIGH);

    // Per slot, what the relay answers is what the localnet itself answers (the relay may be a slot behind).
    const direct = await localnet.getRecentPrioritizationFees({ lockedWritableAccounts: [hot] });
    const viaRelay = await web3.getRecentPrioritizationFees({ lockedWritableAccounts: [hot] });
    const directBySlot = new Map(direct.map((f) => [f.slot, f.prioritizationFee]));
    const common = viaRelay.filter((f) => directBySlot.has(f.slot));
    expect(common.length).toBeGreaterThanOrEqual(Math.min(direct.length, viaRelay.length) - 2);
    expect(common.length).toBeGreaterThan(0);
    for (const f of common) expect(f.prioritizationFee).toBe(directBySlot.get(f.slot));
  });

  it('bad input gets Agave’s exact error with the request id', async () => {
    let id = 100;
    for (const [what, params, error] of BAD_INPUT) {
      const r = await post(relay.rpcUrl, feesCall(++id, params));
      expect(r.status, what).toBe(200);
      expect(r.json, what).toEqual({ jsonrpc: '2.0', error, id });
    }
    // String ids too, and inside a batch next to a good call.
    const batch = await post(relay.rpcUrl, [feesCall('bad', BAD_INPUT[0][1]), feesCall('good', [])]);
    expect(batch.json[0]).toEqual({ jsonrpc: '2.0', error: BAD_INPUT[0][2], id: 'bad' });
    expectAscendingNumbers(batch.json[1].result);
    expect(batch.json[1].id).toBe('good');
    // What a web3.js user sees for 129 addresses.
    const many = Array.from({ length: 129 }, () => Keypair.generate().publicKey);
    await expect(web3.getRecentPrioritizationFees({ lockedWritableAccounts: many })).rejects.toThrow('Too many inputs provided; max 128');
  });
});

/** A `slotrelay localnet` child: its JSON-RPC and PubSub URLs. */
async function startLocalnetProcess(): Promise<{ child: ChildProcess; rpcUrl: string; wsUrl: string }> {
  const child = spawn(process.execPath, ['dist/src/cli.js', 'localnet', '--rpc-port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const ready = JSON.parse((await lines.next()).value as string) as { event: string; rpcUrl: string; wsUrl: string };
  expect(ready.event).toBe('localnet_ready');
  return { child, rpcUrl: ready.rpcUrl, wsUrl: ready.wsUrl };
}

/** An HTTP proxy in front of the localnet's JSON-RPC that records every call by method. `mode` decides how it answers. */
interface CountingProxy {
  url: string;
  port: number;
  calls: { method: string; params: unknown }[];
  /** forward: pass the call on; silent: read it and never answer. */
  mode: 'forward' | 'silent';
  count(method: string): number;
  close(): Promise<void>;
  listen(port: number): Promise<void>;
}

function countingProxy(target: string): CountingProxy {
  let server: Server;
  const p: CountingProxy = {
    url: '',
    port: 0,
    calls: [],
    mode: 'forward',
    count: (m) => p.calls.filter((c) => c.method === m).length,
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
    listen: async (port) => {
      server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          const parsed = JSON.parse(body) as { method: string; params: unknown };
          p.calls.push({ method: parsed.method, params: parsed.params });
          if (p.mode === 'silent') return;
          fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
            .then(async (r) => {
              res.writeHead(r.status, { 'content-type': 'application/json' });
              res.end(await r.text());
            })
            .catch(() => res.destroy());
        });
      });
      await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
      p.port = (server.address() as AddressInfo).port;
      p.url = `http://127.0.0.1:${p.port}`;
    },
  };
  return p;
}

describe('getRecentPrioritizationFees behind a counting upstream', () => {
  const TIMEOUT_MS = 1_500;
  let localnet: { child: ChildProcess; rpcUrl: string; wsUrl: string };
  let proxy: CountingProxy;
  let relay: RelayHandle;

  async function clusterSlot(): Promise<number> {
    return (await post(localnet.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'getSlot', params: [{ commitment: 'processed' }] }, null)).json.result as number;
  }

  beforeAll(async () => {
    localnet = await startLocalnetProcess();
    proxy = countingProxy(localnet.rpcUrl);
    await proxy.listen(0);
    relay = await startRelay({
      upstream: { rpcUrl: proxy.url, wsUrl: localnet.wsUrl, requestTimeoutMs: TIMEOUT_MS },
      // The slot source: the cluster itself, not the proxy, so the slot ticks while the proxy is down.
      telemetry: { rpcUrl: localnet.rpcUrl },
      // Thousands of reads in a few seconds: the key's readLimit must not be what the test measures.
      keys: [{ key: TEST_KEY, name: 'many-clients', readLimit: { perSecond: 1_000_000, burst: 1_000_000 } }],
    });
    // The snapshot (the slot) exists once getLeaderSlots answers.
    await waitFor('the telemetry snapshot', async () => post(relay.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'getLeaderSlots', params: [await clusterSlot(), 1] }), (r) => r.json.result?.success === true);
    // A localnet this young may have no completed slot to report yet (an empty answer, cached for its slot): wait for
    // the first slot with fees history (seen on the faster Node 24 run).
    await waitFor('fees history', async () => post(relay.rpcUrl, feesCall(1, [])), (r) => Array.isArray(r.json.result) && r.json.result.length > 0, 20_000);
  });
  afterAll(async () => {
    await relay?.stop();
    await proxy?.close();
    localnet?.child.kill('SIGTERM');
  });

  it('the network-wide answer is fetched from the upstream at most once per slot, however many clients ask', async () => {
    expectAscendingNumbers((await post(relay.rpcUrl, feesCall(1, []))).json.result);
    const before = proxy.count('getRecentPrioritizationFees');
    const s0 = await clusterSlot();
    // 64 clients, each asking back to back (web3.js's `[]`, kit's and others' variants alike) for ~3 s: thousands of
    // calls over several slots.
    const variants = [[], undefined, [null], [[]]];
    const end = performance.now() + 3_000;
    let answered = 0;
    const seenSlots = new Set<number>();
    await Promise.all(
      Array.from({ length: 64 }, async (_, i) => {
        while (performance.now() < end) {
          const r = await post(relay.rpcUrl, feesCall(i, variants[i % variants.length]));
          expect(r.json.id).toBe(i);
          const fees = r.json.result as Fee[];
          seenSlots.add(fees[fees.length - 1].slot);
          answered++;
        }
      }),
    );
    const s1 = await clusterSlot();
    const fetched = proxy.count('getRecentPrioritizationFees') - before;
    const slots = s1 - s0;
    expect(slots).toBeGreaterThanOrEqual(3);
    expect(answered).toBeGreaterThan(20 * slots);
    // Once per slot the relay saw (the two ends are sampled separately: one slot of slack), and at least once per
    // couple of slots: the answers moved with the cluster.
    expect(fetched).toBeLessThanOrEqual(slots + 1);
    expect(fetched).toBeGreaterThanOrEqual(Math.floor(slots / 2));
    expect(seenSlots.size).toBeGreaterThanOrEqual(2);
    for (const c of proxy.calls.slice(-fetched)) if (c.method === 'getRecentPrioritizationFees') expect(c.params).toEqual([]);
  });

  it('a network-wide hit is the exact envelope for any id: the answer bytes are written from the cached bytes (src/jsonrpc/encoded-result.ts)', async () => {
    // Ids as a client may send them (the JSON text), with the id text Agave's member order ends the answer with.
    const ids: [string, string][] = [
      ['1', '1'], ['-7', '-7'], ['1.5', '1.5'], ['1e21', '1e+21'], ['123456789012345', '123456789012345'], ['null', 'null'],
      ['""', '""'], ['"abc"', '"abc"'], ['"x\\"y\\\\z"', '"x\\"y\\\\z"'], ['"\\u00e9"', '"é"'], ['"😀"', '"😀"'],
      ['"' + 'k'.repeat(62) + '"', '"' + 'k'.repeat(62) + '"'], ['"' + 'k'.repeat(300) + '"', '"' + 'k'.repeat(300) + '"'],
    ];
    for (const [sent, echoed] of [...ids, ...ids.reverse()]) {
      const res = await fetch(relay.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
        body: '{"jsonrpc":"2.0","id":' + sent + ',"method":"getRecentPrioritizationFees","params":[]}',
      });
      expect(res.status).toBe(200);
      const text = await res.text();
      const json = JSON.parse(text) as { result: Fee[] };
      expectAscendingNumbers(json.result);
      expect(text).toBe('{"jsonrpc":"2.0","result":' + JSON.stringify(json.result) + ',"id":' + echoed + '}');
    }
  });

  it('identical address-scoped requests share one upstream call, asked with the sorted, deduplicated set', async () => {
    const keys = Array.from({ length: 5 }, () => Keypair.generate().publicKey.toBase58());
    const sorted = [...keys].sort();
    const before = proxy.calls.length;
    // 32 clients at once, each naming the same set in another order, with repeats.
    const answers = await Promise.all(
      Array.from({ length: 32 }, (_, i) => {
        const mine = [...keys.slice(i % 5), ...keys.slice(0, i % 5), keys[i % 5]];
        return post(relay.rpcUrl, feesCall(`s${i}`, [mine]));
      }),
    );
    for (const [i, a] of answers.entries()) {
      expect(a.json.id).toBe(`s${i}`);
      expectAscendingNumbers(a.json.result);
    }
    // Address-scoped calls only: the previous test's last network-wide answer may have been served stale with one
    // refresh started for nobody (fee-cache.ts, stale-while-revalidate), and that call ([] params) can reach the
    // upstream during this burst (it did once, stop 39's CI rehearsal on Node 24).
    const scopedCalls = proxy.calls.slice(before).filter((c) => c.method === 'getRecentPrioritizationFees' && JSON.stringify(c.params) !== '[]');
    // One call, or two if a slot boundary fell inside the burst (a new slot is a new answer).
    expect(scopedCalls.length).toBeGreaterThanOrEqual(1);
    expect(scopedCalls.length).toBeLessThanOrEqual(2);
    for (const c of scopedCalls) expect(c.params).toEqual([sorted]);
  });

  it('bad input is refused with the exact error and never goes upstream', async () => {
    const before = proxy.calls.length;
    let id = 0;
    for (const [what, params, error] of BAD_INPUT) {
      const r = await post(relay.rpcUrl, feesCall(`bad-${++id}`, params));
      expect(r.json, what).toEqual({ jsonrpc: '2.0', error, id: `bad-${id}` });
    }
    expect(proxy.calls.slice(before).filter((c) => c.method === 'getRecentPrioritizationFees')).toEqual([]);
  });

  it('upstream stopped: -32005 upstream_unavailable within the timeout; silent: upstream_timeout; then recovery', async () => {
    const port = proxy.port;
    await proxy.close();
    const stoppedAt = performance.now();
    // At most one slot's worth of the last good answer (stale-while-revalidate), then the failure; every answer in time.
    const down = await waitFor(
      'the relay to report the stopped upstream',
      () => post(relay.rpcUrl, feesCall('down', [])),
      (r) => {
        expect(r.ms).toBeLessThan(TIMEOUT_MS + 1_000);
        return r.json.error !== undefined;
      },
      10_000,
      20,
    );
    expect(down.json).toEqual({ jsonrpc: '2.0', error: { code: -32005, message: 'Node is unhealthy: the upstream RPC is unavailable', data: { reason: 'upstream_unavailable' } }, id: 'down' });
    expect(performance.now() - stoppedAt).toBeLessThan(5_000);
    expect(JSON.stringify(down.json)).not.toContain(String(port));
    // Scoped too, and not served from the cache.
    const scopedDown = await post(relay.rpcUrl, feesCall('down2', [[Keypair.generate().publicKey.toBase58()]]));
    expect(scopedDown.json.error).toMatchObject({ code: -32005, data: { reason: 'upstream_unavailable' } });

    // Silent upstream: it takes the call and never answers.
    proxy.mode = 'silent';
    await proxy.listen(port);
    const silent = await post(relay.rpcUrl, feesCall('slow', [[Keypair.generate().publicKey.toBase58()]]));
    expect(silent.json).toEqual({ jsonrpc: '2.0', error: { code: -32005, message: 'Node is unhealthy: the upstream RPC did not answer in time', data: { reason: 'upstream_timeout' } }, id: 'slow' });
    expect(silent.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(silent.ms).toBeLessThan(TIMEOUT_MS + 1_000);

    // Back: answers again, from a fresh fetch.
    proxy.mode = 'forward';
    await proxy.close();
    await proxy.listen(port);
    const back = await waitFor('the relay to answer again', () => post(relay.rpcUrl, feesCall('back', [])), (r) => Array.isArray(r.json.result), 10_000);
    expectAscendingNumbers(back.json.result);
    expect(back.json.id).toBe('back');
  });
});
