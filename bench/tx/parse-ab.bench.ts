// A/B micro bench of the intake parser (src/tx/parse-transaction.ts) against another build of it, in one process and
// one run (the box is shared: only same-run ratios mean anything). Legacy, v0 and v1 transactions of typical shapes;
// the other build parses what it can (a build from before v1 refuses v1, which is timed too and marked so).
//   node dist/bench/tx/parse-ab.bench.js <other checkout's dist dir> [timeMs per task, default 400] [rounds, default 3]
// e.g. the parser before v1 support:
//   git worktree add /tmp/before cd90a86 && ln -s $PWD/node_modules /tmp/before/ && (cd /tmp/before && npx tsc -p tsconfig.json)
//   node dist/bench/tx/parse-ab.bench.js /tmp/before/dist
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { generateKeyPairSigner } from '@solana/kit';
import { Bench } from 'tinybench';
import { legacyTx, v0Tx } from './sample-transactions.js';
import * as ours from '../../src/tx/parse-transaction.js';
import { signedV1 } from '../../test/fixtures/tx/v1-transactions.js';

type ParserModule = Pick<typeof ours, 'createParsedTransaction' | 'tryParseTransaction'>;


async function main(): Promise<void> {
  const otherDist = process.argv[2];
  if (otherDist === undefined) throw new Error('usage: parse-ab.bench.js <other dist dir> [timeMs] [rounds]');
  const time = Number(process.argv[3] ?? 400);
  const rounds = Number(process.argv[4] ?? 3);
  const other = (await import(pathToFileURL(path.resolve(otherDist, 'src/tx/parse-transaction.js')).href)) as ParserModule;
  const extra = await Promise.all([1, 2, 3].map(() => generateKeyPairSigner()));
  const txs: [string, Buffer][] = [
    ['legacy transfer + CU limit/price', legacyTx(true)],
    ['v0 8 transfers + lookup table', v0Tx()],
    ['v1 transfer + fee config', (await signedV1({ lamports: 1n, priorityFeeLamports: 5_000n, computeUnitLimit: 1_000 })).bytes],
    ['v1 memo 3,500 B, 4 signers', (await signedV1({ memoBytes: 3_500, extraSigners: extra })).bytes],
  ];
  const results: Record<string, { ours: number[]; other: number[]; otherAccepts: boolean }> = {};
  for (const [name, bytes] of txs) {
    const accepted = other.tryParseTransaction(bytes, 0, bytes.length, other.createParsedTransaction()) === null;
    results[name] = { ours: [], other: [], otherAccepts: accepted };
  }
  let sink = 0;
  for (let r = 0; r < rounds; r++) {
    const bench = new Bench({ time, warmupTime: 100 });
    for (const [name, bytes] of txs) {
      const po = ours.createParsedTransaction();
      const pt = other.createParsedTransaction();
      // Alternate which build goes first from round to round, so neither always runs on a warmer cache.
      const pair: [string, () => void][] = [
        [`ours | ${name}`, () => void (sink += ours.tryParseTransaction(bytes, 0, bytes.length, po) === null ? 1 : 0)],
        [`other | ${name}`, () => void (sink += other.tryParseTransaction(bytes, 0, bytes.length, pt) === null ? 1 : 0)],
      ];
      for (const [n, f] of r % 2 === 0 ? pair : pair.reverse()) bench.add(n, f);
    }
    await bench.run();
    for (const t of bench.tasks) {
      const [who, name] = t.name.split(' | ');
      const ns = (t.result?.latency.p50 ?? NaN) * 1e6;
      results[name][who === 'ours' ? 'ours' : 'other'].push(ns);
    }
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const rows = Object.entries(results).map(([name, r]) => ({
    transaction: name,
    'ours ns (median of round medians)': Math.round(median(r.ours)),
    'other ns': Math.round(median(r.other)),
    'ours / other': (median(r.ours) / median(r.other)).toFixed(2),
    'per-round ratios': r.ours.map((o, i) => (o / r.other[i]).toFixed(2)).join(' '),
    'other build': r.otherAccepts ? 'accepts' : 'refuses (timed refusal)',
  }));
  console.table(rows);
  const out = process.env.PARSE_AB_OUT;
  if (out !== undefined) writeFileSync(out, JSON.stringify({ when: new Date().toISOString(), otherDist, time, rounds, rows }, null, 2) + '\n');
  if (sink === -1) console.log(sink);
}

void main();
