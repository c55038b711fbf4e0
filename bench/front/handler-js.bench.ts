// The front thread's JavaScript per sendTransaction request, without the network: the real JSON-RPC endpoint
// handler (key lookup, rate limit, envelope, method table, sendTransaction, intake into a real ring, response text,
// metrics) driven with stand-in uWS request/response objects that hand over the body at once and swallow the answer.
// Next to it, in the same run, the "bare" handler of the building-blocks note (JSON.parse + base64 decode + base58
// signature + response text): the difference is what the relay's checks and bookkeeping cost per request.
//   npx tsc -p tsconfig.json && node dist/bench/front/handler-js.bench.js [timeMs per task, default 500]
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { Bench } from 'tinybench';
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { configSchema } from '../../src/config/schema.js';
import { KeyTable } from '../../src/front/auth.js';
import type { FrontDeps } from '../../src/front/front-deps.js';
import { Intake } from '../../src/front/intake.js';
import { responseOptions } from '../../src/front/http.js';
import { jsonRpcEndpoint } from '../../src/front/json-rpc-endpoint.js';
import { rpcHostMethods } from '../../src/front/method-table.js';
import { createLogger } from '../../src/log/logger.js';
import { FrontMetrics } from '../../src/metrics/front-metrics.js';
import { createRing, RingConsumer, RingProducer } from '../../src/shm/ring.js';
import { encodeSignatureBase58 } from '../../src/tx/index.js';

const timeMs = Number(process.argv[2] ?? 500);
const KEY = '11111111-2222-4333-8444-555555555555';
const config = configSchema.parse({
  upstream: { rpcUrl: 'http://127.0.0.1:9' },
  keys: [{ key: KEY, name: 'bench', rateLimit: { perSecond: 1e12, burst: 1e9 }, preflight: 'skip' }],
});

const ring = createRing(4096, config.transactions.maxTransactionBytes);
const producer = new RingProducer(ring);
const consumer = new RingConsumer(ring);
const intake = new Intake([producer], config.transactions.maxTransactionBytes);
const table = rpcHostMethods({ config, intake, upstream: null }, null);
const deps: FrontDeps = {
  config,
  keys: new KeyTable(config.keys, config.routes.defaultRoutes, Date.now()),
  intake,
  upstream: null,
  metrics: new FrontMetrics(table.keys()),
  log: createLogger('silent', 'bench'),
  availableRouteMask: 1,
  addedRouteMasks: new Uint32Array(1),
  responseOptions: responseOptions('*', 60),
  renderMetrics: () => '',
  health: () => ({ status: 'ok', reasons: [], routes: {}, upstream: { configured: false, reachable: false, lastAnswerAgoMs: null, error: null }, localnet: null, leaderData: null }),
};
const handler = jsonRpcEndpoint(deps, table, 'rpc', '/');

const payer = Keypair.generate();
const bodies: ArrayBuffer[] = [];
for (let i = 0; i < 256; i++) {
  const tx = new Transaction({ feePayer: payer.publicKey, blockhash: Keypair.generate().publicKey.toBase58(), lastValidBlockHeight: 1 }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 + i }),
  );
  tx.sign(payer);
  const text = JSON.stringify({ jsonrpc: '2.0', id: i, method: 'sendTransaction', params: [tx.serialize().toString('base64'), { encoding: 'base64', skipPreflight: true }] });
  const b = Buffer.from(text);
  bodies.push(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
}

let answered = 0;
let current: ArrayBuffer = bodies[0];
const headers: Record<string, string> = { 'content-type': 'application/json', 'x-api-key': KEY, 'content-length': String(current.byteLength) };
// The front passes header names as pre-encoded ArrayBuffers (src/front/off-heap-bytes.ts), which uWS accepts; the
// stand-in maps each one to its name once.
const names = new WeakMap<ArrayBuffer, string>();
const nameOf = (h: string | ArrayBuffer): string => {
  if (typeof h === 'string') return h;
  let s = names.get(h);
  if (s === undefined) names.set(h, (s = Buffer.from(h).toString('latin1')));
  return s;
};
const req = { getHeader: (h: string | ArrayBuffer) => headers[nameOf(h)] ?? '', getQuery: () => undefined } as unknown as HttpRequest;
/** Answers with another status than 200 (uWS's default, the only one the relay leaves unwritten). */
let refused = 0;
const res = {
  onAborted() {},
  onData(cb: (chunk: ArrayBuffer, last: boolean) => void) {
    cb(current, true);
  },
  cork(cb: () => void) {
    cb();
  },
  writeStatus() {
    refused++;
  },
  writeHeader() {},
  end() {
    answered++;
  },
} as unknown as HttpResponse;

let n = 0;
function drain(): void {
  let slot: number;
  while ((slot = consumer.take()) >= 0) consumer.complete(slot);
}

const scratch = Buffer.alloc(2048);
const bench = new Bench({ time: timeMs, warmupTime: 200 });
bench
  .add('relay JSON-RPC handler: sendTransaction skipPreflight -> ring', () => {
    current = bodies[n++ & 255];
    handler(res, req);
    if ((n & 63) === 0) drain();
  })
  .add('  baseline: bare handler (JSON.parse + base64 + base58 + response text)', () => {
    current = bodies[n++ & 255];
    const body = JSON.parse(Buffer.from(current).toString('utf8')) as { id: number; params: [string] };
    scratch.write(body.params[0], 'base64');
    const text = '{"jsonrpc":"2.0","result":"' + encodeSignatureBase58(scratch, 1) + '","id":' + body.id + '}';
    if (text.length > 0) answered++;
  });
await bench.run();
for (const t of bench.tasks) if (t.result?.error) throw t.result.error; // tinybench records a task's throw and goes on
drain();
console.table(
  bench.tasks.map((t) => ({
    task: t.name,
    'median us': ((t.result?.latency.p50 ?? NaN) * 1000).toFixed(2),
    'mean us': ((t.result?.latency.mean ?? NaN) * 1000).toFixed(2),
  })),
);
// A bench of the error path would flatter the relay: every answer must be a 200 with a signature.
if (refused > 0) throw new Error(`${refused} requests were refused: the stand-in request is not what the front expects`);
const [a, b] = bench.tasks.map((t) => t.result?.latency.p50 ?? NaN);
console.log(`relay handler / bare handler = ${(a / b).toFixed(2)}x (same run; answered ${answered})`);
