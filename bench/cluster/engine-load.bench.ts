// The cluster engine's cost at scale, measured on this box (issue #17: "10 regions and 10,000 keys" in
// docs/deployment.md takes its per-operation figures from here). Starts its own redis-server
// (scripts/cluster/start-redis.sh, 127.0.0.1, free port) and measures, in one run:
//   - lease settles/s: the real lease script (src/cluster/lease-script.ts) over 30,000 buckets (10,000 keys x 3
//     classes), pipelined 100 per round trip as the budget agent sends them, from 2 connections; next to plain HGET
//     in the same pipelining (the engine's floor for a one-key command);
//   - telemetry rounds/s: one region's SET (a 128-leader entry, ~5 KB) + MGET of 9 other regions' entries, as each
//     relay's telemetry thread does once per publishIntervalMs;
//   - engine memory per bucket hash and per region entry (INFO memory before / after);
//   - the front thread's cost of a leased take() next to the local TokenBucket take() (tinybench, ns per call).
//   node dist/bench/cluster/engine-load.bench.js [--json bench/results/cluster-engine.json] [--seconds 3]
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { Bench } from 'tinybench';
import { TokenBucket } from '../../src/admission/rate-limit.js';
import { budgetKey, keyHash, telemetryKey } from '../../src/cluster/engine-keys.js';
import { LEASE_COMMAND, LEASE_SCRIPT } from '../../src/cluster/lease-script.js';
import { LeasedBudget } from '../../src/cluster/leased-budget.js';

const { values } = parseArgs({ options: { json: { type: 'string' }, seconds: { type: 'string', default: '3' } } });
const SECONDS = Number(values.seconds);
const KEYS = 10_000;
const CLASSES = ['submit', 'simulate', 'read'] as const;
const PIPELINE = 100;
const CONNECTIONS = 2;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

type LeaseClient = Redis & Record<string, (...a: unknown[]) => Promise<unknown>>;

function client(port: number): LeaseClient {
  const r = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 }) as LeaseClient;
  r.defineCommand(LEASE_COMMAND, { numberOfKeys: 1, lua: LEASE_SCRIPT });
  r.on('error', () => undefined); // refused while the server starts: retried below
  return r;
}

/** Pipelines of `PIPELINE` commands from each connection for `SECONDS`; returns commands per second. */
async function rate(clients: LeaseClient[], add: (p: ReturnType<Redis['pipeline']>, i: number) => void): Promise<number> {
  let done = 0;
  let i = 0;
  const end = Date.now() + SECONDS * 1000;
  const t0 = performance.now();
  await Promise.all(
    clients.map(async (c) => {
      while (Date.now() < end) {
        const p = c.pipeline();
        for (let k = 0; k < PIPELINE; k++) add(p, i++);
        await p.exec();
        done += PIPELINE;
      }
    }),
  );
  return done / ((performance.now() - t0) / 1000);
}

async function usedMemory(r: Redis): Promise<number> {
  const info = await r.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)![1]);
}

const port = await freePort();
const server = spawn('scripts/cluster/start-redis.sh', [String(port)], { stdio: 'ignore' });
try {
  const clients = Array.from({ length: CONNECTIONS }, () => client(port));
  for (;;) {
    try {
      await clients[0].ping();
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const buckets = Array.from({ length: KEYS }, (_, k) => keyHash(`00000000-0000-4000-8000-${String(k).padStart(12, '0')}`)).flatMap((h) =>
    CLASSES.map((c) => budgetKey('bench', h, c)),
  );
  const m0 = await usedMemory(clients[0]);
  // Every bucket once (creates the 30,000 hashes), then steady-state settles over all of them.
  await rate(clients, (p, i) => (p as unknown as Record<string, (...a: unknown[]) => void>)[LEASE_COMMAND](buckets[i % buckets.length], 100, 200, 40, 0, 0, 120_000));
  const m1 = await usedMemory(clients[0]);
  const settles = await rate(clients, (p, i) => (p as unknown as Record<string, (...a: unknown[]) => void>)[LEASE_COMMAND](buckets[i % buckets.length], 100, 200, 40, i % 7, i % 5, 120_000));
  const hget = await rate(clients, (p, i) => p.hget(buckets[i % buckets.length], 't'));

  // Telemetry: 128 leaders per region entry, as a relay writes it.
  const entry = (region: string) =>
    JSON.stringify({
      v: 1,
      region,
      at: Date.now(),
      slot: 350_000_000,
      leaders: Object.fromEntries(Array.from({ length: 128 }, (_, i) => [`Leader${String(i).padStart(38, 'x')}`, [1234 + i, 700 + i]])),
      paths: { 'static:ams-1': 412, jito: 905 },
    });
  const regions = Array.from({ length: 10 }, (_, i) => `region${i}`);
  const entryBytes = entry('region0').length;
  const m2 = await usedMemory(clients[0]);
  for (const r of regions) await clients[0].set(telemetryKey('bench', r), entry(r), 'PX', 60_000);
  const m3 = await usedMemory(clients[0]);
  let rounds = 0;
  const tEnd = Date.now() + SECONDS * 1000;
  const tt0 = performance.now();
  await Promise.all(
    clients.map(async (c, ci) => {
      while (Date.now() < tEnd) {
        const me = regions[rounds % 10];
        const p = c.pipeline();
        p.set(telemetryKey('bench', me), entry(me), 'PX', 60_000);
        p.mget(...regions.filter((r) => r !== me).map((r) => telemetryKey('bench', r)));
        await p.exec();
        rounds++;
        void ci;
      }
    }),
  );
  const telemetryRounds = rounds / ((performance.now() - tt0) / 1000);
  for (const c of clients) c.disconnect();

  // Front-thread cost per request: local bucket vs leased budget (always has balance: the steady state).
  const local = new TokenBucket(1e12, 1e12, 0);
  const leased = new TokenBucket(1e12, 1e12, 0);
  const lb = new LeasedBudget('k', 'submit', 100, 200, 200, 2_000);
  lb.active = true;
  lb.balance = 1e15;
  leased.shared = lb;
  let now = 0;
  const bench = new Bench({ time: 1_000 });
  bench.add('TokenBucket.take (relay alone)', () => void local.take(1, ++now));
  bench.add('TokenBucket.take with a leased budget (cluster)', () => void leased.take(1, ++now));
  await bench.run();
  const ns = Object.fromEntries(bench.tasks.map((t) => [t.name, Math.round((t.result!.latency.mean ?? 0) * 1e6)]));

  const result = {
    at: new Date().toISOString(),
    host: { cpus: os.cpus().length, model: os.cpus()[0]?.model, load1: os.loadavg()[0] },
    redis: '7.0.15 (Debian), one instance, 127.0.0.1, no persistence',
    connections: CONNECTIONS,
    pipeline: PIPELINE,
    leaseSettlesPerSecond: Math.round(settles),
    hgetPerSecond: Math.round(hget),
    settleCostVsHget: Number((hget / settles).toFixed(2)),
    bucketBytes: Math.round((m1 - m0) / buckets.length),
    telemetryEntryJsonBytes: entryBytes,
    telemetryEntryEngineBytes: Math.round((m3 - m2) / regions.length),
    telemetryRoundsPerSecond: Math.round(telemetryRounds),
    frontTakeNs: ns,
  };
  console.log(JSON.stringify(result, null, 2));
  if (values.json !== undefined) {
    mkdirSync(dirname(values.json), { recursive: true });
    writeFileSync(values.json, JSON.stringify(result, null, 2) + '\n');
  }
} finally {
  server.kill('SIGTERM');
}
