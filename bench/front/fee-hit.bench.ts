// The front thread's JavaScript per cached getRecentPrioritizationFees request (issue #11 item 1), without the
// network: the real JSON-RPC endpoint handler (prologue, key lookup, body, envelope, rate limit, dispatch, the fee
// cache's hit, answer, metrics) driven with the stand-in uWS objects of stand-in-front.ts, the cache filled once with
// a 150-slot answer (~6.9 KB) and its epoch fixed (as between two slots). Next to it, in the same run, the relay's
// floor: an unknown method (-32601) through the same handler. The bytes uWS then sends are not in these figures
// (the stand-in's res.end keeps what it is given): bench/e2e/prioritization-fees-load.ts measures them.
//   npx tsc -p tsconfig.json && node dist/bench/front/fee-hit.bench.js [timeMs per task, default 1000]
import { Bench } from 'tinybench';
import type { CallContext } from '../../src/admission/call-context.js';
import type { MethodHandler } from '../../src/jsonrpc/dispatch.js';
import { prioritizationFeesMethod } from '../../src/rpc/fees/get-recent-prioritization-fees.js';
import { body, KEY, standInFront } from './stand-in-front.js';

const timeMs = Number(process.argv[2] ?? 1_000);
const SLOT = 350_000_000;
const result = '[' + Array.from({ length: 150 }, (_, i) => `{"slot":${SLOT - 150 + i},"prioritizationFee":${(i * 7919) % 50_000}}`).join(',') + ']';
const fees = prioritizationFeesMethod<CallContext>({
  upstream: null,
  timeoutMs: 1_000,
  maxScopedEntries: 16,
  snapshot: { reader: null, maxAgeMs: 2_000 },
  epochs: { current: () => 1 },
  fetcher: () => Promise.resolve(result),
});
await fees.cache.networkWide(); // the one miss: fills the cache for epoch 1
const front = standInFront(new Map<string, MethodHandler<CallContext>>([['getRecentPrioritizationFees', fees.handler]]));

const numericId = body('{"jsonrpc":"2.0","id":1,"method":"getRecentPrioritizationFees","params":[]}');
const uuidId = body('{"jsonrpc":"2.0","id":"6f1c2a4e-9b7d-4c3a-8e21-5d0f4b6a7c19","method":"getRecentPrioritizationFees","params":[]}');
const unknown = body('{"jsonrpc":"2.0","id":1,"method":"noSuchMethod","params":[]}');

/** The last answer as text (decoded here, outside the timing). */
function lastAnswer(): string {
  const a = front.answers as { lastBody: string; lastBytes?: Uint8Array | null };
  return a.lastBytes ? Buffer.from(a.lastBytes).toString('utf8') : a.lastBody;
}
for (const [b, id] of [[numericId, '1'], [uuidId, '"6f1c2a4e-9b7d-4c3a-8e21-5d0f4b6a7c19"']] as const) {
  front.request(b, KEY);
  const want = '{"jsonrpc":"2.0","result":' + result + ',"id":' + id + '}';
  if (lastAnswer() !== want) throw new Error(`not the cached answer: ${lastAnswer().slice(0, 200)}`);
}
front.request(unknown, KEY);
if (!lastAnswer().includes('-32601')) throw new Error(`not -32601: ${lastAnswer()}`);
if (front.answers.non200 !== 0) throw new Error('an answer was not 200');

const bench = new Bench({ time: timeMs, warmupTime: 300 });
bench
  .add('getRecentPrioritizationFees hit, id 1', () => front.request(numericId, KEY))
  .add('getRecentPrioritizationFees hit, UUID id', () => front.request(uuidId, KEY))
  .add('  floor: unknown method (-32601)', () => front.request(unknown, KEY));
await bench.run();
for (const t of bench.tasks) if (t.result?.error) throw t.result.error;
console.table(
  bench.tasks.map((t) => ({
    task: t.name,
    'median us': ((t.result?.latency.p50 ?? NaN) * 1000).toFixed(2),
    'mean us': ((t.result?.latency.mean ?? NaN) * 1000).toFixed(2),
  })),
);
