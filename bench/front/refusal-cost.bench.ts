// What a refusal costs the front thread next to an acceptance, in the same run (issue #18 defect 9: a flood of garbage
// is the cheapest attack on a relay, so refusing must be no dearer than accepting). The real JSON-RPC endpoint handler
// without the network (stand-in-front.ts): a valid sendTransaction into the ring, then the same kind of request
// refused as an undecodable transaction (-32602), an unknown key (401) and a rate-limited key (429), plus two
// refusals for information (bad params, a body that is not JSON). Each row's median is compared with the accept
// row's of the same round; rounds repeat the whole set (the box is shared and a task's place in the order matters),
// and the median of the per-round ratios is the figure. The process exits 1 when a targeted refusal costs more than
// an acceptance, so `make bench-micro` flags the regression (a benchmark, not a timed unit test). Before the fix an
// undecodable transaction cost 3.3x an acceptance here (bench/results/refusal-cost.md).
//   npx tsc -p tsconfig.json && node dist/bench/front/refusal-cost.bench.js [timeMs per task, default 300] [rounds, default 3]
import { Bench } from 'tinybench';
import { body, KEY, LIMITED_KEY, sendTransactionBodies, standInFront, statusText, UNKNOWN_KEY } from './stand-in-front.js';

const timeMs = Number(process.argv[2] ?? 300);
const ROUNDS = Math.max(1, Number(process.argv[3] ?? 3));
const front = standInFront();
const N = 256;
/** Requests per timed task (then one event-loop turn). */
const BATCH = 32;
const valid = sendTransactionBodies(N);
// Valid base64 of a transaction cut short by 3-30 bytes: decoded into the slot, refused by the parser.
const undecodable = sendTransactionBodies(N, (i) => 3 * (1 + (i % 10)));
const badParams = Array.from({ length: N }, (_, i) => body(`{"jsonrpc":"2.0","id":${i},"method":"sendTransaction","params":[${i}]}`));
const notJson = Array.from({ length: N }, (_, i) => body(`{"jsonrpc":"2.0","id":${i},"method":"sendTransaction","params":[`));

interface Row {
  readonly name: string;
  readonly bodies: readonly ArrayBuffer[];
  readonly key: string;
  /** The answer this row must get (checked on its last request): status line prefix and a body fragment. */
  readonly status: string;
  readonly fragment: string;
  /** Held to the target (no dearer than the accept row). */
  readonly target: boolean;
}

const ACCEPT = 'accept: valid sendTransaction -> ring';
const rows: Row[] = [
  { name: ACCEPT, bodies: valid, key: KEY, status: '200', fragment: '"result":"', target: false },
  { name: 'refuse: undecodable transaction (-32602)', bodies: undecodable, key: KEY, status: '200', fragment: 'failed to fill whole buffer', target: true },
  { name: 'refuse: unknown key (401)', bodies: valid, key: UNKNOWN_KEY, status: '401', fragment: '"code":-32600', target: true },
  { name: 'refuse: rate limited (429)', bodies: valid, key: LIMITED_KEY, status: '429', fragment: '"reason":"rate_limited"', target: true },
  { name: '  (info) refuse: params[0] not a string (-32602)', bodies: badParams, key: KEY, status: '200', fragment: 'expected a string', target: false },
  { name: '  (info) refuse: body is not JSON (-32700)', bodies: notJson, key: KEY, status: '200', fragment: '"code":-32700', target: false },
];

let n = 0;
const wrong: string[] = [];
// Check each row's answer once, before the timing (a row answered otherwise would measure the wrong path).
front.request(valid[0], LIMITED_KEY); // spends the limited key's one token
for (const row of rows) {
  front.request(row.bodies[1], row.key);
  await front.settle(); // a submission is answered from setImmediate (src/http/after-read.ts)
  const status = statusText(front.answers.lastStatus);
  if (!status.startsWith(row.status) || !front.answers.lastBody.includes(row.fragment)) {
    wrong.push(`${row.name}: ${status} ${front.answers.lastBody}`);
  }
}
front.drain();
if (wrong.length > 0) throw new Error(`rows not answered as intended:\n${wrong.join('\n')}`);

const medianOf = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
/** Per row: median latency (us) and cost / accept, one entry per round. */
const perRow = new Map<string, { us: number[]; ratio: number[] }>(rows.map((r) => [r.name, { us: [], ratio: [] }]));
for (let round = 0; round < ROUNDS; round++) {
  const bench = new Bench({ time: timeMs, warmupTime: 100 });
  for (const row of rows) {
    // A batch and one event-loop turn (settle: the parked submissions run), per request: every row pays the turn.
    bench.add(row.name, async () => {
      for (let i = 0; i < BATCH; i++) front.request(row.bodies[n++ & (N - 1)], row.key);
      await front.settle();
    });
  }
  await bench.run();
  for (const t of bench.tasks) if (t.result?.error) throw t.result.error; // tinybench records a task's throw and goes on
  const us = (name: string): number => ((bench.tasks.find((t) => t.name === name)?.result?.latency.p50 ?? NaN) * 1000) / BATCH;
  const accept = us(ACCEPT);
  for (const row of rows) {
    perRow.get(row.name)!.us.push(us(row.name));
    perRow.get(row.name)!.ratio.push(us(row.name) / accept);
  }
}
front.drain();
console.table(
  rows.map((r) => {
    const x = perRow.get(r.name)!;
    return {
      task: r.name,
      'median us per request': medianOf(x.us).toFixed(2),
      'per round': x.us.map((v) => v.toFixed(2)).join(' '),
      '/ accept': r.name === ACCEPT ? '' : medianOf(x.ratio).toFixed(2),
    };
  }),
);
const ratio = (r: Row): number => medianOf(perRow.get(r.name)!.ratio);
const missed = rows.filter((r) => r.target && !(ratio(r) <= 1));
console.log(
  `refusing no dearer than accepting (median over ${ROUNDS} rounds of cost / accept <= 1): ` +
    rows.filter((r) => r.target).map((r) => `${r.name.replace('refuse: ', '')} ${ratio(r).toFixed(2)}x ${missed.includes(r) ? 'NOT met' : 'met'}`).join('; '),
);
if (missed.length > 0) process.exitCode = 1;
