// Passthrough overhead per call (issue #11 item 3; docs/passthrough.md). Run from dist/ after `npm run build`:
//   node dist/bench/rpc/passthrough.bench.js [--calls 4000] [--rounds 3] [--seconds 3] [--concurrency 16] [--json bench/results/passthrough.json]
// The real relay (dist/src/cli.js start) runs as a child with its embedded localnet (another child); this process
// is the client. The same JSON-RPC request goes to the localnet facade directly and through the relay, in the same
// run, alternating (direct first in odd rounds, relay first in even ones) so load drift on the shared box bills both:
// 1. sequential latency over ONE keep-alive connection (undici Client, pipelining 1), HDR histogram in microseconds:
//    p50/p90/p99 per method (getSlot: a tiny answer; getLatestBlockhash: a context object); the figure is
//    relay p50 - direct p50 (target: <= 0.3 ms);
// 2. a small concurrency run: `concurrency` callers over as many connections for `seconds`, req/s and p50/p99.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { build, type Histogram } from 'hdr-histogram-js';
import { Client, Pool } from 'undici';
import { startBenchRelay } from '../bench-relay.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '4000' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '16' },
    json: { type: 'string' },
  },
});
const CALLS = Number(values.calls);
const ROUNDS = Number(values.rounds);
const SECONDS = Number(values.seconds);
const CONCURRENCY = Number(values.concurrency);
const KEY = '6f1c2a4e-9b7d-4c3a-8e21-5d0f4b6a7c19';
const WARMUP = 500;

const METHODS: Record<string, string> = {
  getSlot: '{"jsonrpc":"2.0","id":1,"method":"getSlot","params":[{"commitment":"processed"}]}',
  getLatestBlockhash: '{"jsonrpc":"2.0","id":1,"method":"getLatestBlockhash","params":[{"commitment":"processed"}]}',
};

interface Target {
  readonly name: 'direct' | 'relay';
  readonly url: string;
  readonly headers: Record<string, string>;
}


function histogram(): Histogram {
  return build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });
}

async function callOnce(d: Client | Pool, t: Target, body: string): Promise<void> {
  const { statusCode, body: b } = await d.request({ path: '/', method: 'POST', headers: { 'content-type': 'application/json', ...t.headers }, body });
  const text = await b.text();
  if (statusCode !== 200 || !text.includes('"result"')) throw new Error(`${t.name}: HTTP ${statusCode} ${text.slice(0, 200)}`);
}

/** Sequential calls over one keep-alive connection; microseconds per call. */
async function sequential(t: Target, body: string, calls: number): Promise<Histogram> {
  const c = new Client(new URL(t.url).origin, { pipelining: 1 });
  const h = histogram();
  try {
    for (let i = 0; i < WARMUP; i++) await callOnce(c, t, body);
    for (let i = 0; i < calls; i++) {
      const s = process.hrtime.bigint();
      await callOnce(c, t, body);
      h.recordValue(Math.max(1, Number((process.hrtime.bigint() - s) / 1000n)));
    }
  } finally {
    await c.close();
  }
  return h;
}

/** `concurrency` callers over as many connections for `seconds`. */
async function concurrent(t: Target, body: string, concurrency: number, seconds: number): Promise<{ rps: number; p50: number; p99: number }> {
  const p = new Pool(new URL(t.url).origin, { connections: concurrency, pipelining: 1 });
  const h = histogram();
  for (let i = 0; i < WARMUP; i++) await callOnce(p, t, body);
  const end = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const s = process.hrtime.bigint();
        await callOnce(p, t, body);
        h.recordValue(Math.max(1, Number((process.hrtime.bigint() - s) / 1000n)));
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  await p.close();
  return { rps: Math.round(h.totalCount / secs), p50: h.getValueAtPercentile(50), p99: h.getValueAtPercentile(99) };
}

const ms = (us: number): number => Math.round(us) / 1000;

const started = await startBenchRelay(1_000_000);
const direct: Target = { name: 'direct', url: started.localnetUrl, headers: {} };
const relay: Target = { name: 'relay', url: started.rpcUrl, headers: { 'x-api-key': KEY } };
console.log(`node ${process.version}, ${os.cpus().length} cpus, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(`relay ${relay.url} -> embedded localnet ${direct.url}; ${CALLS} sequential calls x ${ROUNDS} rounds per method and target`);

interface SeqRow {
  method: string;
  round: number;
  target: string;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  meanMs: number;
}
const seqRows: SeqRow[] = [];
const overhead: { method: string; round: number; p50OverheadMs: number }[] = [];
try {
  for (const [method, body] of Object.entries(METHODS)) {
    for (let round = 1; round <= ROUNDS; round++) {
      const order = round % 2 === 1 ? [direct, relay] : [relay, direct];
      const byTarget = new Map<string, Histogram>();
      for (const t of order) byTarget.set(t.name, await sequential(t, body, CALLS));
      for (const t of [direct, relay]) {
        const h = byTarget.get(t.name)!;
        seqRows.push({ method, round, target: t.name, p50Ms: ms(h.getValueAtPercentile(50)), p90Ms: ms(h.getValueAtPercentile(90)), p99Ms: ms(h.getValueAtPercentile(99)), meanMs: ms(h.mean) });
      }
      overhead.push({ method, round, p50OverheadMs: ms(byTarget.get('relay')!.getValueAtPercentile(50) - byTarget.get('direct')!.getValueAtPercentile(50)) });
    }
  }
  console.table(seqRows);
  console.table(overhead);

  const concRows: { method: string; target: string; concurrency: number; rps: number; p50Ms: number; p99Ms: number }[] = [];
  for (const t of [direct, relay]) {
    const r = await concurrent(t, METHODS.getSlot, CONCURRENCY, SECONDS);
    concRows.push({ method: 'getSlot', target: t.name, concurrency: CONCURRENCY, rps: r.rps, p50Ms: ms(r.p50), p99Ms: ms(r.p99) });
  }
  console.table(concRows);

  const medianOverhead = (m: string): number => {
    const v = overhead.filter((o) => o.method === m).map((o) => o.p50OverheadMs).sort((a, b) => a - b);
    return v[Math.floor(v.length / 2)];
  };
  const summary = Object.keys(METHODS).map((m) => ({ method: m, medianP50OverheadMs: medianOverhead(m), targetMs: 0.3, met: medianOverhead(m) <= 0.3 }));
  console.table(summary);
  if (values.json !== undefined) {
    const out = {
      bench: 'passthrough',
      command: `node dist/bench/rpc/passthrough.bench.js --calls ${CALLS} --rounds ${ROUNDS} --seconds ${SECONDS} --concurrency ${CONCURRENCY}`,
      node: process.version,
      cpus: os.cpus().length,
      loadAverage: os.loadavg(),
      when: new Date().toISOString(),
      sequential: seqRows,
      overhead,
      concurrency: concRows,
      summary,
    };
    mkdirSync(dirname(values.json), { recursive: true });
    writeFileSync(values.json, JSON.stringify(out, null, 2) + '\n');
    console.log(`wrote ${values.json}`);
  }
} finally {
  started.child.kill('SIGTERM');
}
