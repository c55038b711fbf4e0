// The engine's key registry at 10,000 keys, measured on this box (docs/deployment.md takes its "keys from the engine"
// figures from here). Starts its own redis-server (scripts/cluster/start-redis.sh, 127.0.0.1, free port) and measures:
//   - writes/s of `keys add` records through the real write script (pipelined 500 at a time: a bulk import's floor);
//   - engine memory per key (the {ns}:keys field and record plus its {ns}:keys:log member; INFO memory before/after);
//   - the full read a relay does once at start (every record), its time and size;
//   - reads/s of the periodic read script with nothing changed and with one key changed (what every relay runs once
//     per cluster.keys.pollMs, and once per change notice).
//   node dist/bench/cluster/key-registry.bench.js [--json bench/results/cluster-key-registry.json] [--seconds 3]
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { keyHash, keysChannel, keysKey, keysLogKey, keysRevKey } from '../../src/cluster/engine-keys.js';
import { encodeRecord, parsePlan } from '../../src/cluster/key-plan.js';
import { KEY_READ_SCRIPT, KEY_WRITE_SCRIPT } from '../../src/cluster/key-registry-script.js';

const { values } = parseArgs({ options: { json: { type: 'string' }, seconds: { type: 'string', default: '3' } } });
const SECONDS = Number(values.seconds);
const KEYS = 10_000;
const NS = 'bench';
const REGISTRY = [keysKey(NS), keysRevKey(NS), keysLogKey(NS)] as const;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

async function usedMemory(r: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await r.info('memory'))![1]);
}

/** Read scripts asking from `since`, pipelined 100 at a time for SECONDS; reads per second. */
async function readRate(r: Redis, since: number): Promise<number> {
  let done = 0;
  const end = Date.now() + SECONDS * 1000;
  const t0 = performance.now();
  while (Date.now() < end) {
    const p = r.pipeline();
    for (let i = 0; i < 100; i++) p.eval(KEY_READ_SCRIPT, 3, ...REGISTRY, String(since));
    await p.exec();
    done += 100;
  }
  return done / ((performance.now() - t0) / 1000);
}

const port = await freePort();
const server = spawn('scripts/cluster/start-redis.sh', [String(port)], { stdio: 'ignore' });
try {
  const r = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 });
  r.on('error', () => undefined); // refused while the server starts: retried below
  for (let i = 0; ; i++) {
    try {
      await r.ping();
      break;
    } catch (err) {
      if (i > 500) throw err;
      await new Promise((res) => setTimeout(res, 100));
    }
  }
  const before = await usedMemory(r);
  let recordBytes = 0;
  const t0 = performance.now();
  for (let i = 0; i < KEYS; i += 500) {
    const p = r.pipeline();
    for (let j = 0; j < 500; j++) {
      const plan = parsePlan({ name: `customer-${i + j}`, rateLimit: { perSecond: 100, burst: 200 }, allowedRoutes: ['rpc', 'direct', 'jito'] });
      if ('error' in plan) throw new Error(plan.error);
      const rec = encodeRecord(plan.plan, Date.now());
      recordBytes += rec.length;
      p.eval(KEY_WRITE_SCRIPT, 3, ...REGISTRY, 'add', keyHash(randomUUID()), rec, '', keysChannel(NS));
    }
    await p.exec();
  }
  const writesPerSecond = KEYS / ((performance.now() - t0) / 1000);
  const bytesPerKey = (await usedMemory(r)) - before;
  const t1 = performance.now();
  const full = (await r.eval(KEY_READ_SCRIPT, 3, ...REGISTRY, '-1')) as string[];
  const fullReadMs = performance.now() - t1;
  const fullReadBytes = full.slice(2).reduce((n, s) => n + String(s).length, 0);
  const result = {
    when: new Date().toISOString(),
    host: `${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}`,
    redis: (/redis_version:(\S+)/.exec(await r.info('server')) ?? [])[1],
    keys: KEYS,
    recordBytesAvg: Math.round(recordBytes / KEYS),
    engineBytesPerKey: Math.round(bytesPerKey / KEYS),
    engineMBFor10kKeys: Number((bytesPerKey / 1e6).toFixed(2)),
    writesPerSecond: Math.round(writesPerSecond),
    fullRead: { keys: (full.length - 2) / 2, ms: Math.round(fullReadMs), bytes: fullReadBytes },
    idleReadsPerSecond: Math.round(await readRate(r, KEYS)),
    oneChangeReadsPerSecond: Math.round(await readRate(r, KEYS - 1)),
  };
  console.log(JSON.stringify(result, null, 2));
  if (values.json) {
    mkdirSync(dirname(values.json), { recursive: true });
    writeFileSync(values.json, JSON.stringify(result, null, 2) + '\n');
  }
  r.disconnect();
} finally {
  server.kill('SIGTERM');
}
