// The landing tracker's poll, what it costs the front thread with the status calls made there (before) and in the
// receipts' status thread (after, src/rpc/status/status-thread.ts), paired in one run (issue #28 item 2). 20,000
// receipts followed (receipts.maxTracked's default), nothing landing, so every poll asks the oldest 2,048 in 8 calls
// of 256, as in the wire bench; the upstream is a real HTTP server in its own process (null-status-upstream.ts) that
// answers null for every signature. Per poll, the front's busy time (performance.eventLoopUtilization: this thread's
// active time between the poll's start and its end; nothing else runs here) and the poll's duration; polls alternate
// between the two trackers.
// Then the same for the rebroadcast scheduler's poll (src/egress/rebroadcast/signature-status-poller.ts) of a full
// retry queue (retries.maxQueue: 10,000 signatures, 40 calls), on the consumer thread (before) and in its status
// thread (after): the consumer thread's busy time per poll, polls alternating.
//   node dist/bench/wire/status-poll.bench.js [--polls 200] [--retry-polls 30] [--json bench/results/status-poll.json]
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import hdr from 'hdr-histogram-js';
import { createLogger } from '../../src/log/logger.js';
import { LandingTracker } from '../../src/receipts/landing-tracker.js';
import { ReceiptMetrics } from '../../src/receipts/receipt-metrics.js';
import { ReceiptTable } from '../../src/receipts/receipt-table.js';
import { upstreamStatusAsker, type SignatureStatusAsker } from '../../src/rpc/status/signature-statuses.js';
import { StatusThread } from '../../src/rpc/status/status-thread.js';
import { UpstreamRpcClient } from '../../src/rpc/upstream-client.js';
import { SignatureStatusPoller } from '../../src/egress/rebroadcast/signature-status-poller.js';

const { values } = parseArgs({ options: { polls: { type: 'string', default: '200' }, 'retry-polls': { type: 'string', default: '30' }, json: { type: 'string' } } });
const POLLS = Number(values.polls);
const RETRY_POLLS = Number(values['retry-polls']);
const RETRY_QUEUE = 10_000;
const WARMUP = 20;
const N = 20_000;
const TIMEOUT_MS = 5_000;

const child = spawn(process.execPath, [fileURLToPath(new URL('./null-status-upstream.js', import.meta.url))], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise<number>((resolve) => createInterface({ input: child.stdout! }).once('line', (l) => resolve(Number(l.split(' ')[1]))));
const url = `http://127.0.0.1:${port}`;
const log = createLogger('silent', 'bench');
const upstream = new UpstreamRpcClient(url, TIMEOUT_MS);
const front = upstreamStatusAsker(upstream, TIMEOUT_MS);
const thread = new StatusThread({ role: 'receipt-status', url, timeoutMs: TIMEOUT_MS, log, fallback: front });
thread.start();

function tracker(asker: SignatureStatusAsker): LandingTracker {
  const table = new ReceiptTable({ capacity: 32_768, ttlMs: 600_000 });
  const t = new LandingTracker(table, upstream, null, new ReceiptMetrics(), { pollMs: 200, trackForMs: 600_000, maxTracked: N, timeoutMs: TIMEOUT_MS }, log, asker);
  const now = Date.now();
  for (let i = 0; i < N; i++) t.track(table.accept(`${i}`.padStart(88, '5'), 1, 1, `r${i}`, now, 1));
  return t;
}
const trackers = { before: tracker(front), after: tracker(thread) };
const busy = { before: hdr.build({ numberOfSignificantValueDigits: 3 }), after: hdr.build({ numberOfSignificantValueDigits: 3 }) };
const wall = { before: hdr.build({ numberOfSignificantValueDigits: 3 }), after: hdr.build({ numberOfSignificantValueDigits: 3 }) };
for (let i = 0; i < POLLS + WARMUP; i++) {
  for (const k of i % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
    const elu = performance.eventLoopUtilization();
    const t0 = performance.now();
    await trackers[k].poll();
    const took = performance.now() - t0;
    const d = performance.eventLoopUtilization(elu);
    if (i >= WARMUP) {
      busy[k].recordValue(Math.max(1, Math.round(d.active * 1000)));
      wall[k].recordValue(Math.max(1, Math.round(took * 1000)));
    }
  }
}
await thread.stop();

// The rebroadcast scheduler's poll of a full retry queue.
const pollers = { before: new SignatureStatusPoller(url), after: new SignatureStatusPoller(url, log) };
const queued = Array.from({ length: RETRY_QUEUE }, (_, i) => `${i}`.padStart(88, '4'));
const retryBusy = { before: hdr.build({ numberOfSignificantValueDigits: 3 }), after: hdr.build({ numberOfSignificantValueDigits: 3 }) };
for (let i = 0; i < RETRY_POLLS + 3; i++) {
  for (const k of i % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
    const elu = performance.eventLoopUtilization();
    const res = await pollers[k].statuses(queued);
    const d = performance.eventLoopUtilization(elu);
    if (res.failedCalls > 0) throw new Error(`retry poll failed: ${res.lastError ?? ''}`);
    if (i >= 3) retryBusy[k].recordValue(Math.max(1, Math.round(d.active * 1000)));
  }
}
pollers.after.close();
child.kill('SIGTERM');
const s = (x: hdr.Histogram): { p50Us: number; p90Us: number; p99Us: number; maxUs: number; meanUs: number } => ({
  p50Us: x.getValueAtPercentile(50),
  p90Us: x.getValueAtPercentile(90),
  p99Us: x.getValueAtPercentile(99),
  maxUs: x.maxValue,
  meanUs: Math.round(x.mean),
});
const out = {
  what: "landing-tracker poll (20,000 followed, 8 getSignatureStatuses calls of 256 to a real HTTP upstream): the front thread's busy time per poll and the poll's duration; before = calls made on the front, after = in the status thread; polls alternating",
  command: `node dist/bench/wire/status-poll.bench.js --polls ${POLLS} --retry-polls ${RETRY_POLLS}`,
  date: new Date().toISOString(),
  polls: POLLS,
  frontBusy: { before: s(busy.before), after: s(busy.after) },
  pollDuration: { before: s(wall.before), after: s(wall.after) },
  ratioFrontBusyP50: Math.round((busy.after.getValueAtPercentile(50) / busy.before.getValueAtPercentile(50)) * 1000) / 1000,
  ratioFrontBusyP99: Math.round((busy.after.getValueAtPercentile(99) / busy.before.getValueAtPercentile(99)) * 1000) / 1000,
  statusPolls: thread.polls,
  retryPoll: {
    what: `rebroadcast scheduler's status poll of ${RETRY_QUEUE} queued signatures (${Math.ceil(RETRY_QUEUE / 256)} calls): the consumer thread's busy time per poll; before = calls on it, after = in its status thread`,
    polls: RETRY_POLLS,
    before: s(retryBusy.before),
    after: s(retryBusy.after),
    ratioP50: Math.round((retryBusy.after.getValueAtPercentile(50) / retryBusy.before.getValueAtPercentile(50)) * 1000) / 1000,
  },
};
console.log(JSON.stringify(out, null, 2));
if (values.json !== undefined) writeFileSync(values.json, JSON.stringify(out, null, 2) + '\n');
