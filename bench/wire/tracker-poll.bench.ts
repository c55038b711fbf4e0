// The landing tracker's poll on the front thread (issue #28 item 2), before/after in one run: 20,000 receipts followed
// (receipts.maxTracked's default; what 5,000 tx/s of transactions that do not land yet fill in 4 s), an upstream that
// answers at once with no status (nothing lands: every poll asks the same oldest 2,048), the time of one poll()'s
// synchronous work on this thread (the sum of its slices between awaits, i.e. what it blocks the front for), polls
// alternating between the two implementations. `before` is another build's landing-tracker.js (a copy of dist/ made
// before the change), `after` this checkout's.
//   node dist/bench/wire/tracker-poll.bench.js <before dist dir> [--json bench/results/tracker-poll.json]
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import hdr from 'hdr-histogram-js';
import { createLogger } from '../../src/log/logger.js';
import { LandingTracker } from '../../src/receipts/landing-tracker.js';
import { ReceiptMetrics } from '../../src/receipts/receipt-metrics.js';
import { ReceiptTable } from '../../src/receipts/receipt-table.js';
import type { UpstreamRpcClient } from '../../src/rpc/upstream-client.js';

const beforeDir = process.argv[2];
if (beforeDir === undefined) throw new Error('usage: tracker-poll.bench <before dist dir> [--json FILE]');
const jsonOut = process.argv.includes('--json') ? process.argv[process.argv.indexOf('--json') + 1] : null;
const Before = (await import(pathToFileURL(resolve(beforeDir, 'src/receipts/landing-tracker.js')).href)).LandingTracker as typeof LandingTracker;
const N = 20_000;
const POLLS = 200;

/** Answers at once (a resolved promise): the time measured is this thread's own work, not the upstream's. */
let busyUs = 0;
let sliceStart = 0n;
const upstream = {
  async call<T>(_m: string, params: unknown[]): Promise<T> {
    busyUs += Number(process.hrtime.bigint() - sliceStart) / 1000; // the slice before this await ends here
    const sigs = params[0] as string[];
    const answer = JSON.parse(JSON.stringify({ context: { slot: 1 }, value: sigs.map(() => null) })) as T; // what fetch would hand back
    sliceStart = process.hrtime.bigint();
    return answer;
  },
};

function make(Cls: typeof LandingTracker): LandingTracker {
  const table = new ReceiptTable({ capacity: 32_768, ttlMs: 600_000 });
  const t = new Cls(table, upstream as unknown as UpstreamRpcClient, null, new ReceiptMetrics(), { pollMs: 200, trackForMs: 600_000, maxTracked: N, timeoutMs: 1_000 }, createLogger('silent', 'bench'));
  const now = Date.now();
  for (let i = 0; i < N; i++) t.track(table.accept(`sig${i}`.padEnd(88, 'x'), 1, 1, `r${i}`, now, 1));
  return t;
}
const trackers = { before: make(Before), after: make(LandingTracker) };
const h = { before: hdr.build({ numberOfSignificantValueDigits: 3 }), after: hdr.build({ numberOfSignificantValueDigits: 3 }) };
for (let i = 0; i < POLLS + 20; i++) {
  for (const k of i % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
    busyUs = 0;
    sliceStart = process.hrtime.bigint();
    await trackers[k].poll();
    busyUs += Number(process.hrtime.bigint() - sliceStart) / 1000;
    if (i >= 20) h[k].recordValue(Math.max(1, Math.round(busyUs)));
  }
}
const s = (x: hdr.Histogram) => ({ p50Us: x.getValueAtPercentile(50), p99Us: x.getValueAtPercentile(99), maxUs: x.maxValue });
const out = {
  what: 'one landing-tracker poll: front-thread work per poll (sum of its synchronous slices), 20,000 followed, paired',
  command: `node dist/bench/wire/tracker-poll.bench.js ${beforeDir}`,
  date: new Date().toISOString(),
  polls: POLLS,
  before: s(h.before),
  after: s(h.after),
  ratioP50: Math.round((h.after.getValueAtPercentile(50) / h.before.getValueAtPercentile(50)) * 1000) / 1000,
  ratioP99: Math.round((h.after.getValueAtPercentile(99) / h.before.getValueAtPercentile(99)) * 1000) / 1000,
};
console.log(JSON.stringify(out, null, 2));
if (jsonOut !== null) writeFileSync(jsonOut, JSON.stringify(out, null, 2) + '\n');
