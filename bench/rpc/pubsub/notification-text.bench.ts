// Micro bench of forwarding one upstream notification to one client (src/rpc/pubsub/notification-text.ts, front
// thread, HOT): find the id from the text's end and build the client's copy, next to what the relay would do if it
// parsed instead (JSON.parse + JSON.stringify of the same text), in the same run. Three sizes: a slot notification,
// a 2 KB account (base64) and a 1 MiB account.
//   npx tsc -p tsconfig.json && node dist/bench/rpc/pubsub/notification-text.bench.js [timeMs per task, default 300]
import { Bench } from 'tinybench';
import { splitNotification, withSubscriptionId } from '../../../src/rpc/pubsub/notification-text.js';

const timeMs = Number(process.argv[2] ?? 300);

function account(dataBytes: number): string {
  const data = Buffer.alloc(dataBytes, 7).toString('base64');
  return `{"jsonrpc":"2.0","method":"accountNotification","params":{"result":{"context":{"slot":123456789},"value":{"data":["${data}","base64"],"executable":false,"lamports":2039280,"owner":"TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA","rentEpoch":18446744073709551615,"space":${dataBytes}}},"subscription":4242}}`;
}

const cases: [string, string][] = [
  ['slot', '{"jsonrpc":"2.0","method":"slotNotification","params":{"result":{"parent":123456788,"root":123456757,"slot":123456789},"subscription":4242}}'],
  ['account 2 KB', account(1536)],
  ['account 1 MiB', account(768 * 1024)],
];
let sink = 0;

const bench = new Bench({ time: timeMs, warmupTime: 100 });
for (const [name, text] of cases) {
  bench
    .add(`${name} (${text.length} B): split + client copy`, () => {
      const p = splitNotification(text)!;
      sink += withSubscriptionId(p.head, 17).length;
    })
    .add(`  baseline (${name}): JSON.parse + set id + JSON.stringify`, () => {
      const v = JSON.parse(text) as { params: { subscription: number } };
      v.params.subscription = 17;
      sink += JSON.stringify(v).length;
    });
}

await bench.run();
console.table(
  bench.tasks.map((t) => ({
    task: t.name,
    'median us': t.result?.latency.p50 !== undefined ? (t.result.latency.p50 * 1000).toFixed(2) : '-',
    'ops/s': t.result?.throughput.mean !== undefined ? Math.round(t.result.throughput.mean) : '-',
  })),
);
const med = (i: number): number => bench.tasks[i].result?.latency.p50 ?? NaN;
console.log(cases.map(([name], i) => `${name}: parse/split ${(med(2 * i + 1) / med(2 * i)).toFixed(1)}x`).join(', ') + ' (same run)');
if (sink < 0) console.log(sink);
