// Issue #43 item 3's benchmark, in one run: from the localnet's block production (a transaction's execution into its
// block: localnet_getLandings' executedNs, CLOCK_MONOTONIC, comparable across this host's processes) to the relay
// knowing the landing (its receipt's landed.processedAt, unix ms), for a relay on push (receipts.push, the default)
// and a relay on the 200 ms poll (receipts.push false), both following the SAME transactions on the SAME localnet (each
// transaction is submitted to both; the localnet keeps the first copy). Also to finalizedAt. The figures are printed
// as one JSON line (`push_landing`), committed in bench/results/push-landing.md. A client subscribed to each relay's
// receipt stream (receiptSubscribe on the whole key, our client library) records when each `processed` and
// `finalized` notification reaches it: block production -> notification at the subscribed client, push against poll. It also fails when the push is not
// clearly sooner than the poll (p90 at least 50 ms sooner), so it cannot pass with the push broken.
import { Connection, Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { RelayClient, type ReceiptUpdate } from 'slotrelay/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureClientBuilt } from '../../helpers/client-dist.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { embeddedLocalnetUrl, fundedPayer } from '../../helpers/embedded-localnet.js';
import { waitFor } from '../../helpers/wait-for.js';

const N = Number(process.env.PUSH_LANDING_N ?? 60);
const GAP_MS = 170; // not a multiple of the 250 ms slot: sends fall at every phase of it

const relays: RelayHandle[] = [];
beforeAll(() => ensureClientBuilt());
afterAll(async () => {
  for (const r of relays) await r.stop('SIGTERM');
});

function nearestRank(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)] * 10) / 10;
}
const summary = (xs: number[]) => ({ n: xs.length, p50: nearestRank(xs, 50), p90: nearestRank(xs, 90), p99: nearestRank(xs, 99), max: nearestRank(xs, 100) });

async function submit(r: RelayHandle, base64: string): Promise<string> {
  const res = await fetch(`${r.relayUrl}/v1/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
    body: JSON.stringify({ transaction: base64, routes: ['rpc'], maxRetries: 0 }),
  });
  const body = (await res.json()) as { signature: string };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.signature;
}

async function receipt(r: RelayHandle, sig: string): Promise<any> {
  return (await fetch(`${r.relayUrl}/v1/transactions/${sig}`, { headers: { 'x-api-key': TEST_KEY } })).json();
}

describe('push against the 200 ms poll, same transactions, same localnet', () => {
  it('measures block production -> landing known by the relay, p50/p99', async () => {
    const push = await startRelay({ receipts: { pollMs: 200 } });
    relays.push(push);
    const lnUrl = embeddedLocalnetUrl(push);
    const poll = await startRelay({ upstream: { rpcUrl: lnUrl }, routes: { rpc: { endpoints: [lnUrl] } }, receipts: { pollMs: 200, push: false } });
    relays.push(poll);
    const ln = new Connection(lnUrl, 'confirmed');
    await waitFor('push up', async () => (await (await fetch(`${push.rpcUrl}/health?detail`)).json()) as any, (d) => d.landing?.source === 'push', 15_000);
    // A subscribed client per relay: when each landing notification reaches it (its own clock, as a user sees it).
    const told = { push: new Map<string, { processed?: number; finalized?: number }>(), poll: new Map<string, { processed?: number; finalized?: number }>() };
    const streams = (['push', 'poll'] as const).map((name) => {
      const r = name === 'push' ? push : poll;
      const it = new RelayClient({ url: r.relayUrl, rpcUrl: r.rpcUrl, pubsubUrl: r.wsUrl, apiKey: TEST_KEY }).receipts();
      const done = (async () => {
        for await (const u of it as AsyncIterable<ReceiptUpdate>) {
          if (u.event !== 'processed' && u.event !== 'finalized') continue;
          const e = told[name].get(u.signature) ?? {};
          e[u.event] ??= Date.now();
          told[name].set(u.signature, e);
        }
      })().catch(() => undefined);
      return { it, done };
    });
    await new Promise((r) => setTimeout(r, 300)); // subscribed before the first submit (nothing is replayed)
    const payer = await fundedPayer(ln, 2);
    const sigs: string[] = [];
    for (let i = 0; i < N; i++) {
      const { blockhash, lastValidBlockHeight } = await ln.getLatestBlockhash('processed');
      const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight }).add(
        SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 + i }),
      );
      tx.sign(payer);
      const b64 = tx.serialize().toString('base64');
      // Alternate which relay is asked first, so neither tracks earlier by construction.
      const [a] = i % 2 === 0 ? await Promise.all([submit(push, b64), submit(poll, b64)]) : (await Promise.all([submit(poll, b64), submit(push, b64)])).reverse();
      sigs.push(a);
      await new Promise((r) => setTimeout(r, GAP_MS));
    }
    const done = (x: any): boolean => x.landed?.finalizedAt != null;
    // Read once finalized and kept (reading again would only spend the key's read rate).
    const landed = { push: new Map<string, any>(), poll: new Map<string, any>() };
    for (const s of sigs) {
      landed.push.set(s, (await waitFor(`push ${s}`, () => receipt(push, s), done, 15_000, 100)).landed);
      landed.poll.set(s, (await waitFor(`poll ${s}`, () => receipt(poll, s), done, 15_000, 100)).landed);
    }
    // The localnet's execution times, on this host's monotonic clock, turned into unix ms with this process's offset.
    const offsetMs = Date.now() - Number(process.hrtime.bigint()) / 1e6;
    const page = (await (
      await fetch(lnUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'localnet_getLandings', params: [{ from: 0, limit: 10_000 }] }) })
    ).json()) as { result: { landings: { signature: string; executedNs: string }[] } };
    const executedAt = new Map(page.result.landings.map((l) => [l.signature, Number(BigInt(l.executedNs)) / 1e6 + offsetMs]));
    const fig = { push: { processed: [] as number[], finalized: [] as number[] }, poll: { processed: [] as number[], finalized: [] as number[] } };
    const atClient = { push: { processed: [] as number[], finalized: [] as number[] }, poll: { processed: [] as number[], finalized: [] as number[] } };
    for (const s of sigs) {
      const at = executedAt.get(s);
      expect(at, s).toBeDefined();
      for (const name of ['push', 'poll'] as const) {
        const l = landed[name].get(s);
        fig[name].processed.push(l.processedAt - at!);
        fig[name].finalized.push(l.finalizedAt - at!);
        const c = told[name].get(s);
        if (c?.processed !== undefined) atClient[name].processed.push(c.processed - at!);
        if (c?.finalized !== undefined) atClient[name].finalized.push(c.finalized - at!);
      }
    }
    for (const st of streams) await st.it.return?.();
    for (const st of streams) await st.done;
    const out = {
      event: 'push_landing',
      n: N,
      slotMs: 250,
      pollMs: 200,
      executedToProcessedKnownMs: { push: summary(fig.push.processed), poll: summary(fig.poll.processed) },
      executedToFinalizedKnownMs: { push: summary(fig.push.finalized), poll: summary(fig.poll.finalized) },
      executedToProcessedAtClientMs: { push: summary(atClient.push.processed), poll: summary(atClient.poll.processed) },
      executedToFinalizedAtClientMs: { push: summary(atClient.push.finalized), poll: summary(atClient.poll.finalized) },
    };
    console.log(JSON.stringify(out));
    // Judged at p90: the poll's p50 over 60 sends depends on how the send cadence meets its 200 ms phase (49 ms in one
    // CI run), its p90 is ~180 ms whatever the phase; a working push's p90 is ~10 ms.
    expect(out.executedToProcessedKnownMs.push.p90 + 50).toBeLessThan(out.executedToProcessedKnownMs.poll.p90);
    // Every landing reached the subscribed clients, and the push's reaches them sooner too.
    for (const name of ['push', 'poll'] as const) expect(atClient[name].processed.length, name).toBe(N);
    expect(out.executedToProcessedAtClientMs.push.p90 + 50).toBeLessThan(out.executedToProcessedAtClientMs.poll.p90);
  }, 180_000);
});
