// The front thread's JavaScript per sendTransaction request, without the network: the real JSON-RPC endpoint
// handler (key lookup, rate limit, envelope, method table, sendTransaction, intake into a real ring, response text,
// metrics) driven with stand-in uWS request/response objects that hand over the body at once (stand-in-front.ts).
// Next to it, in the same run, the "bare" handler of the building-blocks note (JSON.parse + base64 decode + base58
// signature + response text): the difference is what the relay's checks and bookkeeping cost per request.
//   npx tsc -p tsconfig.json && node dist/bench/front/handler-js.bench.js [timeMs per task, default 500]
import { Bench } from 'tinybench';
import { encodeSignatureBase58 } from '../../src/tx/index.js';
import { KEY, sendTransactionBodies, standInFront } from './stand-in-front.js';

const timeMs = Number(process.argv[2] ?? 500);
const front = standInFront();
const bodies = sendTransactionBodies(256);

let answered = 0;
let n = 0;
const scratch = Buffer.alloc(2048);
/**
 * Requests per timed task: a batch, then one event-loop turn (settle) in which the relay's parked submissions run, as
 * in the relay, where one turn handles what its reads carried. The baseline takes the same turn, so both pay it alike.
 */
const BATCH = 32;
const bench = new Bench({ time: timeMs, warmupTime: 200 });
bench
  .add('relay JSON-RPC handler: sendTransaction skipPreflight -> ring', async () => {
    for (let i = 0; i < BATCH; i++) front.request(bodies[n++ & 255], KEY);
    await front.settle();
  })
  .add('  baseline: bare handler (JSON.parse + base64 + base58 + response text)', async () => {
    for (let i = 0; i < BATCH; i++) {
      const current = bodies[n++ & 255];
      const body = JSON.parse(Buffer.from(current).toString('utf8')) as { id: number; params: [string] };
      scratch.write(body.params[0], 'base64');
      const text = '{"jsonrpc":"2.0","result":"' + encodeSignatureBase58(scratch, 1) + '","id":' + body.id + '}';
      if (text.length > 0) answered++;
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
  });
await bench.run();
for (const t of bench.tasks) if (t.result?.error) throw t.result.error; // tinybench records a task's throw and goes on
front.drain();
console.table(
  bench.tasks.map((t) => ({
    task: t.name,
    'median us per request': (((t.result?.latency.p50 ?? NaN) * 1000) / BATCH).toFixed(2),
    'mean us per request': (((t.result?.latency.mean ?? NaN) * 1000) / BATCH).toFixed(2),
  })),
);
// A bench of the error path would flatter the relay: every answer must be a 200 with a signature
// (refusal-cost.bench.ts measures the refusals on purpose).
const refused = front.answers.non200;
if (refused > 0) throw new Error(`${refused} requests were refused: the stand-in request is not what the front expects`);
const [a, b] = bench.tasks.map((t) => t.result?.latency.p50 ?? NaN);
console.log(`relay handler / bare handler = ${(a / b).toFixed(2)}x (same run; answered ${front.answers.total + answered})`);
