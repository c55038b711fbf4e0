// Bundles through the relay next to calling the bundle service directly, same run (issue #16; docs/bundles.md).
// Run from dist/ after `npm run build` (make bench-bundles):
//   node dist/bench/bundles/bundle-relay.bench.js [--bundles 1500] [--size 3] [--rounds 3] [--concurrency 16]
//                                                 [--json bench/results/bundles.json]
// A real relay (dist/src/cli.js start) on its embedded localnet runs as a child; the bundle service is that
// localnet's Jito-compatible block engine (unlimited rate: the bench measures the relay, not the limiter). This
// process is the client: undici keep-alive, `concurrency` sendBundle calls in flight, each bundle distinct (`size`
// signed transfers, the last one tipping a tip account: the relay decodes, sanitizes and verifies every signature
// and checks the tip before forwarding). Rows per round, alternating which goes first so drift bills both:
//   direct   POST {engine}/api/v1/bundles
//   relay    POST {relay}/v1/bundles (the same body, key in x-api-key)
// Figures: bundles accepted per second and p50/p99 per call (HDR, microseconds); the relay's added latency is its p50
// (and p99) minus the direct p50 (p99) of the same round.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { build, type Histogram } from 'hdr-histogram-js';
import { Agent, request } from 'undici';
import { BENCH_KEY, startBenchRelay } from '../bench-relay.js';

const { values } = parseArgs({
  options: {
    bundles: { type: 'string', default: '1500' },
    size: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '16' },
    json: { type: 'string' },
  },
});
const BUNDLES = Number(values.bundles);
const SIZE = Math.min(5, Math.max(1, Number(values.size)));
const ROUNDS = Math.max(1, Number(values.rounds));
const CONCURRENCY = Number(values.concurrency);

interface Row {
  readonly round: number;
  readonly target: 'direct' | 'relay';
  readonly bundles: number;
  readonly accepted: number;
  readonly perSecond: number;
  readonly p50Us: number;
  readonly p99Us: number;
}

/** `n` distinct bundles of SIZE transfers; the last transaction also tips `tip`. Signed before any timing. */
function makeBundles(n: number, blockhash: string, tip: PublicKey): string[] {
  const payer = Keypair.generate();
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const txs: string[] = [];
    for (let j = 0; j < SIZE; j++) {
      const t = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight: 1_000_000 }).add(
        SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000 + i * SIZE + j }),
      );
      if (j === SIZE - 1) t.add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: tip, lamports: 10_000 }));
      t.sign(payer);
      txs.push(t.serialize().toString('base64'));
    }
    out.push(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'sendBundle', params: [txs, { encoding: 'base64' }] }));
  }
  return out;
}

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return ((await res.json()) as { result: unknown }).result;
}

async function drive(url: string, headers: Record<string, string>, bodies: readonly string[], dispatcher: Agent): Promise<{ accepted: number; seconds: number; h: Histogram }> {
  const h = build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });
  let next = 0;
  let accepted = 0;
  const start = performance.now();
  const worker = async (): Promise<void> => {
    while (next < bodies.length) {
      const body = bodies[next++];
      const t0 = performance.now();
      const res = await request(url, { method: 'POST', headers, body, dispatcher });
      const text = await res.body.text();
      h.recordValue(Math.max(1, Math.round((performance.now() - t0) * 1000)));
      if (res.statusCode === 200 && text.includes('"result"')) accepted++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, () => worker()));
  return { accepted, seconds: (performance.now() - start) / 1000, h };
}

function row(round: number, target: Row['target'], r: { accepted: number; seconds: number; h: Histogram }): Row {
  return { round, target, bundles: BUNDLES, accepted: r.accepted, perSecond: Math.round(r.accepted / r.seconds), p50Us: r.h.getValueAtPercentile(50), p99Us: r.h.getValueAtPercentile(99) };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function main(): Promise<void> {
  // The localnet's block engine limits requests per IP like Jito's; the bench lifts it (localnet.blockEngine) so that
  // both rows measure forwarding, not the limiter.
  const relay = await startBenchRelay(1_000_000, { bundles: true, rateLimit: { perSecond: 1_000_000, burst: 1_000_000 } }, { localnet: { blockEngine: { rateLimitPerSecond: 0 } } });
  const dispatcher = new Agent({ connections: CONCURRENCY, pipelining: 1 });
  try {
    const engineUrl = `${relay.blockEngineUrl}/api/v1/bundles`;
    const relayUrl = `${relay.relayUrl}/v1/bundles`;
    const tips = (await rpc(engineUrl, 'getTipAccounts', [])) as string[];
    const latest = (await rpc(relay.localnetUrl, 'getLatestBlockhash', [])) as { value: { blockhash: string } };
    const json = { 'content-type': 'application/json' };
    const rows: Row[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // Distinct bundles per row: the engine treats a resent bundle as the same one.
      const forDirect = makeBundles(BUNDLES, latest.value.blockhash, new PublicKey(tips[round % tips.length]));
      const forRelay = makeBundles(BUNDLES, latest.value.blockhash, new PublicKey(tips[round % tips.length]));
      const runDirect = async (): Promise<void> => {
        rows.push(row(round, 'direct', await drive(engineUrl, json, forDirect, dispatcher)));
      };
      const runRelay = async (): Promise<void> => {
        rows.push(row(round, 'relay', await drive(relayUrl, { ...json, 'x-api-key': BENCH_KEY }, forRelay, dispatcher)));
      };
      if (round % 2 === 1) {
        await runDirect();
        await runRelay();
      } else {
        await runRelay();
        await runDirect();
      }
    }
    const direct = rows.filter((r) => r.target === 'direct');
    const viaRelay = rows.filter((r) => r.target === 'relay');
    const added = viaRelay.map((r) => {
      const d = direct.find((x) => x.round === r.round)!;
      return { round: r.round, p50Us: r.p50Us - d.p50Us, p99Us: r.p99Us - d.p99Us };
    });
    const summary = {
      bundleSize: SIZE,
      concurrency: CONCURRENCY,
      bundlesPerRow: BUNDLES,
      medianPerSecond: { direct: median(direct.map((r) => r.perSecond)), relay: median(viaRelay.map((r) => r.perSecond)) },
      medianP50Us: { direct: median(direct.map((r) => r.p50Us)), relay: median(viaRelay.map((r) => r.p50Us)) },
      medianP99Us: { direct: median(direct.map((r) => r.p99Us)), relay: median(viaRelay.map((r) => r.p99Us)) },
      medianAddedP50Us: median(added.map((a) => a.p50Us)),
      medianAddedP99Us: median(added.map((a) => a.p99Us)),
    };
    for (const r of rows) console.log(`round ${r.round} ${r.target.padEnd(6)} ${r.accepted}/${r.bundles} accepted  ${r.perSecond} bundles/s  p50 ${r.p50Us} us  p99 ${r.p99Us} us`);
    console.log(JSON.stringify(summary, null, 2));
    if (values.json !== undefined) {
      mkdirSync(dirname(values.json), { recursive: true });
      writeFileSync(values.json, JSON.stringify({ command: `node dist/bench/bundles/bundle-relay.bench.js ${process.argv.slice(2).join(' ')}`.trim(), at: new Date().toISOString(), summary, rows, added }, null, 2) + '\n');
    }
  } finally {
    await dispatcher.close();
    relay.child.kill('SIGTERM');
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
