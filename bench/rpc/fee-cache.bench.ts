// getRecentPrioritizationFees cache hits, micro (tinybench, this process; issue #11 item 1). Run after `npm run build`:
//   node dist/bench/rpc/fee-cache.bench.js [--json bench/results/prioritization-fees-micro.json]
// Rows: the handler's network-wide hit (params [] and absent), the same through the JSON-RPC dispatcher with the
// answer's envelope as text (what batches get) and as bytes (what the front thread writes for a single call since the
// answer is cached encoded, src/jsonrpc/encoded-result.ts), and an address-scoped hit (3 addresses: shape checks,
// canonical key, LRU touch). The epoch comes from the real snapshotEpochs over a real
// SnapshotReader whose generation does not change (what the front thread sees between two slots). The cached answer is a
// 150-slot result like a real cluster's (~6.8 KB). Bytes allocated per op: heap used across 20,000 calls with GC
// forced before and none during (V8's young generation holds far more than that), divided by the count, net of the
// same measurement of a call that returns a constant.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Bench } from 'tinybench';
import { dispatchJsonRpc, dispatchJsonRpcAnswer, type DispatchHooks } from '../../src/jsonrpc/dispatch.js';
import { EncodedAnswer, EncodedResult } from '../../src/jsonrpc/encoded-result.js';
import { parseJsonRpcBody, type JsonRpcCall } from '../../src/jsonrpc/envelope.js';
import { prioritizationFeesMethod } from '../../src/rpc/fees/get-recent-prioritization-fees.js';
import { createSnapshotBuffer, SNAPSHOT_SCHEMA_VERSION } from '../../src/telemetry/snapshot-layout.js';
import { SnapshotReader, SnapshotWriter } from '../../src/telemetry/snapshot.js';

const { values } = parseArgs({ options: { json: { type: 'string' } } });

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const SLOT = 350_000_000;
const answer = '[' + Array.from({ length: 150 }, (_, i) => `{"slot":${SLOT - 150 + i},"prioritizationFee":${(i * 7919) % 50_000}}`).join(',') + ']';
// A real snapshot in shared memory, read by a real SnapshotReader (the front thread's), published once: its
// generation does not change during the run, as between two slots. Dated an hour ahead so it stays fresh.
const sab = createSnapshotBuffer();
new SnapshotWriter(sab).publish({
  schemaVersion: SNAPSHOT_SCHEMA_VERSION,
  firstSlot: SLOT,
  snapshotSlot: SLOT,
  generatedAtUnixMs: Date.now() + 3_600_000,
  slotMs: 400,
  leaders: [{ identity: 'Vote111111111111111111111111111111111111111', tpuQuic: '127.0.0.1:8009', stake: 1 }],
  leaderIndex: [0],
  rows: ['{"slot":' + SLOT + '}'],
});
const reader = new SnapshotReader(sab);
if (reader.current()?.snapshotSlot !== SLOT) throw new Error('snapshot not readable');
const { handler } = prioritizationFeesMethod<null>({
  upstream: null,
  timeoutMs: 1_000,
  maxScopedEntries: 1_024,
  snapshot: { reader, maxAgeMs: 2_000 },
  fetcher: () => Promise.resolve(answer),
});

const ADDRS = ['Vote111111111111111111111111111111111111111', '11111111111111111111111111111111', 'ComputeBudget111111111111111111111111111111'];
const emptyParams: unknown[] = [];
const scopedParams: unknown[] = [ADDRS];
const call = { id: 1, method: 'getRecentPrioritizationFees', params: emptyParams, notification: false } as unknown as JsonRpcCall;
const body = '{"jsonrpc":"2.0","id":"6f1c2a4e-9b7d-4c3a-8e21-5d0f4b6a7c19","method":"getRecentPrioritizationFees","params":[]}';
const parsed = parseJsonRpcBody(body, 100);
const hooks: DispatchHooks = { onInternalError: () => undefined };

// Fill both entries (the first calls are misses), then check every row answers the cached text synchronously.
await handler(emptyParams, null, call);
await handler(scopedParams, null, call);
// A network-wide hit is the cached answer as an EncodedResult (its bytes up to the id); a scoped one the text.
for (const [name, r] of [
  ['network', handler(emptyParams, null, call)],
  ['absent', handler(undefined, null, call)],
  ['scoped', handler(scopedParams, null, call)],
] as const) {
  const text = r instanceof EncodedResult ? r.text : r;
  if (text !== answer) throw new Error(`${name}: not a synchronous hit`);
}
const dispatched = dispatchJsonRpc(parsed, new Map([['getRecentPrioritizationFees', handler]]), null, hooks);
if (typeof dispatched !== 'string' || !dispatched.includes(answer)) throw new Error('dispatch: not a synchronous hit');
const table0 = new Map([['getRecentPrioritizationFees', handler]]);
const asBytes = dispatchJsonRpcAnswer(parsed, table0, null, hooks);
if (!(asBytes instanceof EncodedAnswer) || Buffer.from(asBytes.bytes()).toString() !== dispatched) throw new Error('dispatch (bytes): not the same answer');

const table = new Map([['getRecentPrioritizationFees', handler]]);
const rows: [string, () => unknown][] = [
  ['handler hit, network-wide (params [])', () => handler(emptyParams, null, call)],
  ['handler hit, network-wide (no params)', () => handler(undefined, null, call)],
  ['dispatch + envelope as text, network-wide hit', () => dispatchJsonRpc(parsed, table, null, hooks)],
  // What the front does (json-rpc-endpoint.ts): the answer's bytes, the cached head with the id written after it.
  ['dispatch + answer bytes, network-wide hit', () => (dispatchJsonRpcAnswer(parsed, table, null, hooks) as EncodedAnswer).bytes()],
  // For comparison, what a text answer cost before uWS could send it: flattened and encoded to UTF-8 per request
  // (uWS copies a string through V8's Utf8Value; Buffer.from stands in for it here).
  ['  (before) dispatch + text answer encoded to UTF-8', () => Buffer.from(dispatchJsonRpc(parsed, table, null, hooks) as string, 'utf8')],
  ['handler hit, scoped (3 addresses)', () => handler(scopedParams, null, call)],
];

/** Heap bytes per call over `n` calls with no GC in between (the results are kept so nothing is freed early). */
function heapPerCall(fn: () => unknown, n = 20_000): number {
  const keep: unknown[] = new Array(n);
  for (let i = 0; i < 1_000; i++) fn();
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < n; i++) keep[i] = fn();
  const after = process.memoryUsage().heapUsed;
  if (keep.length !== n) throw new Error('unreachable');
  return (after - before) / n;
}

/**
 * Bytes a call allocates: the least of 3 measurements, minus the same measurement of a call that returns a constant
 * (the loop's own compilation and the heap statistics cost ~10 bytes per call at this count).
 */
const emptyCall = (): string => answer;
function bytesPerOp(fn: () => unknown): number {
  const least = (f: () => unknown): number => Math.min(heapPerCall(f), heapPerCall(f), heapPerCall(f));
  return Math.max(0, Math.round(least(fn) - least(emptyCall)));
}

// Each tinybench iteration makes BATCH calls: one call is tens of ns, below the timer's own cost per iteration.
const BATCH = 1_000;
let sink: unknown;
const bench = new Bench({ time: 1_500, warmupTime: 300 });
for (const [name, fn] of rows) {
  bench.add(name, () => {
    for (let i = 0; i < BATCH; i++) sink = fn();
  });
}
await bench.run();
if (sink === undefined) throw new Error('unreachable');

const out = bench.tasks.map((t, i) => {
  const latency = t.result!.latency;
  return {
    task: t.name,
    nsPerOpMedian: Number(((latency.p50 ?? latency.mean) * 1e6 / BATCH).toFixed(1)),
    nsPerOpMean: Number((latency.mean * 1e6 / BATCH).toFixed(1)),
    callsPerSec: Math.round((1_000 * BATCH) / latency.mean),
    bytesPerOp: bytesPerOp(rows[i][1]),
  };
});
console.log(`node ${process.version}, ${os.cpus().length} cpus, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; cached answer ${answer.length} bytes`);
console.table(out);
if (values.json !== undefined) {
  mkdirSync(dirname(values.json), { recursive: true });
  writeFileSync(
    values.json,
    JSON.stringify({ bench: 'prioritization-fees-micro', command: 'node dist/bench/rpc/fee-cache.bench.js', node: process.version, cpus: os.cpus().length, loadAverage: os.loadavg(), when: new Date().toISOString(), answerBytes: answer.length, rows: out }, null, 2) + '\n',
  );
  console.log(`wrote ${values.json}`);
}
