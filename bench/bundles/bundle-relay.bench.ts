// Bundles through the relay next to calling the bundle service directly, same run (issue #16; docs/bundles.md).
// Run from dist/ after `npm run build` (make bench-bundles):
//   node dist/bench/bundles/bundle-relay.bench.js [--bundles 600] [--size 3] [--rounds 3] [--concurrency 16]
//                                                 [--latency-bundles 100] [--json bench/results/bundles.json]
// A real relay (dist/src/cli.js start) on its embedded localnet runs as a child; the bundle service is that
// localnet's Jito-compatible block engine (unlimited rate: the bench measures the relay, not the limiter). This
// process is the client: undici keep-alive, `concurrency` sendBundle calls in flight, each bundle distinct (`size`
// signed transfers, the last one tipping a tip account: the relay decodes, sanitizes and verifies every signature
// and checks the tip before forwarding). Rows per round, alternating which goes first so drift bills both:
//   direct   POST {engine}/api/v1/bundles
//   relay    POST {relay}/v1/bundles (the same body, key in x-api-key)
// Two phases per round: throughput (`concurrency` in flight: bundles accepted per second, p99) and latency (one at a
// time, `latency-bundles` calls: p50/p99 per call, HDR, microseconds); the relay's added latency is its latency-phase
// p50 (p99) minus the direct p50 (p99) of the same round, i.e. without queueing in either server.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { build, type Histogram } from 'hdr-histogram-js';
import { Agent, request } from 'undici';
import { BENCH_KEY, startBenchRelay } from '../bench-relay.js';

const { values } = parseArgs({
  options: {
    bundles: { type: 'string', default: '600' },
    size: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '16' },
    'latency-bundles': { type: 'string', default: '100' },
    json: { type: 'string' },
  },
});
const BUNDLES = Number(values.bundles);
const SIZE = Math.min(5, Math.max(1, Number(values.size)));
const ROUNDS = Math.max(1, Number(values.rounds));
const CONCURRENCY = Number(values.concurrency);
const LATENCY_BUNDLES = Number(values['latency-bundles']);

interface Row {
  readonly round: number;
  /** throughput: CONCURRENCY in flight; latency: one at a time (the added latency without queueing). */
  readonly phase: 'throughput' | 'latency';
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
      txs.push(t.serialize({ verifySignatures: false }).toString('base64')); // signed just above: skip web3.js's re-check
    }
    out.push(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'sendBundle', params: [txs, { encoding: 'base64' }] }));
  }
  return out;
}

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return ((await res.json()) as { result: unknown }).result;
}

async function drive(url: string, headers: Record<string, string>, bodies: readonly string[], dispatcher: Agent, concurrency: number): Promise<{ accepted: number; seconds: number; h: Histogram }> {
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
  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  return { accepted, seconds: (performance.now() - start) / 1000, h };
}

function row(round: number, phase: Row['phase'], target: Row['target'], bundles: number, r: { accepted: number; seconds: number; h: Histogram }): Row {
  return { round, phase, target, bundles, accepted: r.accepted, perSecond: Math.round(r.accepted / r.seconds), p50Us: r.h.getValueAtPercentile(50), p99Us: r.h.getValueAtPercentile(99) };
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
      for (const phase of ['throughput', 'latency'] as const) {
        const n = phase === 'throughput' ? BUNDLES : LATENCY_BUNDLES;
        const concurrency = phase === 'throughput' ? CONCURRENCY : 1;
        // Distinct bundles per row: the engine treats a resent bundle as the same one.
        const tip = new PublicKey(tips[round % tips.length]);
        const forDirect = makeBundles(n, latest.value.blockhash, tip);
        const forRelay = makeBundles(n, latest.value.blockhash, tip);
        const runDirect = async (): Promise<void> => {
          rows.push(row(round, phase, 'direct', n, await drive(engineUrl, json, forDirect, dispatcher, concurrency)));
        };
        const runRelay = async (): Promise<void> => {
          rows.push(row(round, phase, 'relay', n, await drive(relayUrl, { ...json, 'x-api-key': BENCH_KEY }, forRelay, dispatcher, concurrency)));
        };
        if (round % 2 === 1) {
          await runDirect();
          await runRelay();
        } else {
          await runRelay();
          await runDirect();
        }
      }
    }
    const pick = (phase: Row['phase'], target: Row['target']): Row[] => rows.filter((r) => r.phase === phase && r.target === target);
    const added = (phase: Row['phase']): { round: number; p50Us: number; p99Us: number }[] =>
      pick(phase, 'relay').map((r) => {
        const d = pick(phase, 'direct').find((x) => x.round === r.round)!;
        return { round: r.round, p50Us: r.p50Us - d.p50Us, p99Us: r.p99Us - d.p99Us };
      });
    const summary = {
      bundleSize: SIZE,
      throughput: {
        concurrency: CONCURRENCY,
        bundlesPerRow: BUNDLES,
        medianPerSecond: { direct: median(pick('throughput', 'direct').map((r) => r.perSecond)), relay: median(pick('throughput', 'relay').map((r) => r.perSecond)) },
        medianP99Us: { direct: median(pick('throughput', 'direct').map((r) => r.p99Us)), relay: median(pick('throughput', 'relay').map((r) => r.p99Us)) },
      },
      latency: {
        concurrency: 1,
        bundlesPerRow: LATENCY_BUNDLES,
        medianP50Us: { direct: median(pick('latency', 'direct').map((r) => r.p50Us)), relay: median(pick('latency', 'relay').map((r) => r.p50Us)) },
        medianP99Us: { direct: median(pick('latency', 'direct').map((r) => r.p99Us)), relay: median(pick('latency', 'relay').map((r) => r.p99Us)) },
        medianAddedP50Us: median(added('latency').map((a) => a.p50Us)),
        medianAddedP99Us: median(added('latency').map((a) => a.p99Us)),
      },
    };
    for (const r of rows) console.log(`round ${r.round} ${r.phase.padEnd(10)} ${r.target.padEnd(6)} ${r.accepted}/${r.bundles} accepted  ${r.perSecond} bundles/s  p50 ${r.p50Us} us  p99 ${r.p99Us} us`);
    console.log(JSON.stringify(summary, null, 2));
    if (values.json !== undefined) {
      mkdirSync(dirname(values.json), { recursive: true });
      writeFileSync(values.json, JSON.stringify({ command: `node dist/bench/bundles/bundle-relay.bench.js ${process.argv.slice(2).join(' ')}`.trim(), at: new Date().toISOString(), summary, rows }, null, 2) + '\n');
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
