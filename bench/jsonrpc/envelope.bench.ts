// Micro benches of the JSON-RPC envelope on the front thread's hot path (src/jsonrpc): parse a sendTransaction body
// (one real signed transfer, base64), the same in a batch of 10, and the response text for a signature.
// Next to each, JSON.parse of the same text alone, measured in the same run (the floor the envelope rules add to).
//   npx tsc -p tsconfig.json && node dist/bench/jsonrpc/envelope.bench.js [timeMs per task, default 300]
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { Bench } from 'tinybench';
import { parseJsonRpcBody } from '../../src/jsonrpc/envelope.js';
import { errorJson, resultJson } from '../../src/jsonrpc/response.js';

const timeMs = Number(process.argv[2] ?? 300);

function sendBody(id: number | string): object {
  const payer = Keypair.generate();
  const tx = new Transaction({ feePayer: payer.publicKey, blockhash: bs58.encode(Buffer.alloc(32, 7)), lastValidBlockHeight: 1 }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 }),
  );
  tx.sign(payer);
  return { jsonrpc: '2.0', id, method: 'sendTransaction', params: [tx.serialize().toString('base64'), { encoding: 'base64', skipPreflight: true }] };
}

const single = JSON.stringify(sendBody('6f1c1d9e-5b44-4d9f-9c55-3f6a2b0e7d11'));
const batch = JSON.stringify(Array.from({ length: 10 }, (_, i) => sendBody(i)));
const signature = '"' + bs58.encode(Buffer.alloc(64, 3)) + '"';
let sink = 0;

const bench = new Bench({ time: timeMs, warmupTime: 100 });
bench
  .add(`parse single sendTransaction (${single.length} B)`, () => {
    const p = parseJsonRpcBody(single, 100);
    if (p.kind === 'single') sink++;
  })
  .add('  baseline: JSON.parse alone, same text', () => {
    if (JSON.parse(single) !== null) sink++;
  })
  .add(`parse batch of 10 (${batch.length} B)`, () => {
    const p = parseJsonRpcBody(batch, 100);
    if (p.kind === 'batch') sink++;
  })
  .add('  baseline: JSON.parse alone, same batch', () => {
    if (JSON.parse(batch) !== null) sink++;
  })
  .add('result text (string id, signature)', () => {
    sink += resultJson('6f1c1d9e-5b44-4d9f-9c55-3f6a2b0e7d11', signature).length;
  })
  .add('error text (-32602 with message)', () => {
    sink += errorJson(7, -32602, 'invalid transaction: Transaction failed to sanitize accounts offsets correctly').length;
  });

await bench.run();
console.table(
  bench.tasks.map((t) => ({
    task: t.name,
    'median us': t.result?.latency.p50 !== undefined ? (t.result.latency.p50 * 1000).toFixed(2) : '-',
    'ops/s': t.result?.throughput.mean !== undefined ? Math.round(t.result.throughput.mean) : '-',
  })),
);
const med = (i: number): number => bench.tasks[i].result?.latency.p50 ?? NaN;
console.log(`envelope rules over JSON.parse: single ${(med(0) / med(1)).toFixed(2)}x, batch ${(med(2) / med(3)).toFixed(2)}x (same run)`);
if (sink < 0) console.log(sink);
