// getLeaderSlots benchmark (`make bench-telemetry`). Run from dist/ after `npx tsc -p tsconfig.json`:
//   node dist/bench/telemetry/get-leader-slots.bench.js [--duration 5] [--connections 32] [--micro-only]
// 1. Micro (tinybench, this process): building one snapshot (row tails + rows for lookback 8 + horizon 512 over 100
//    distinct leaders, 2 regions, direct + 1 static path), SnapshotWriter.publish, a reader's first read of a new
//    generation, and the handler itself at limit 20 / 100.
// 2. End to end: the real relay (dist/src/cli.js start, routes.direct on) following an embedded localnet started in
//    this process; wrk (/usr/bin/wrk) POSTs getLeaderSlots at limit 20 and 100 over keep-alive connections.
// A full run (not --micro-only, wrk present) writes both parts to bench/results/get-leader-slots.json.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Bench } from 'tinybench';
import { stringify } from 'yaml';
import { configSchema } from '../../src/config/schema.js';
import { getLeaderSlotsMethod } from '../../src/front/methods/get-leader-slots.js';
import { startLocalnet } from '../../src/localnet/localnet.js';
import { txPathSpecs } from '../../src/config/tx-paths.js';
import { RouteModel, rowText } from '../../src/telemetry/route-model.js';
import { createSnapshotBuffer } from '../../src/telemetry/snapshot-layout.js';
import { SnapshotReader, SnapshotWriter, type SnapshotContent } from '../../src/telemetry/snapshot.js';
import { parseWrkOutput, type WrkFigures } from '../wrk-output.js';

const args = process.argv.slice(2);
const opt = (name: string, def: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const DURATION_S = opt('duration', 5);
const CONNECTIONS = opt('connections', 32);
const KEY = '6f1c2a4e-9b7d-4c3a-8e21-5d0f4b6a7c19';
const root = fileURLToPath(new URL('../../..', import.meta.url));

function buildContent(model: RouteModel, now: number): SnapshotContent {
  const leaders = Array.from({ length: 100 }, (_, i) => ({ identity: `Vali${i}dator1111111111111111111111111111111`, tpuQuic: `10.0.${i}.1:8009`, stake: 1_000_000_000_000 + i }));
  const tails = leaders.map((l, i) =>
    model.tail({
      ...l,
      location: { dataCenterKey: `dc-${i}`, region: 'fra', latitude: 50 + i / 100, longitude: 8 },
      direct: i % 2 === 0 ? { handshakeRttMs: 3 + i / 10, measuredAt: Date.now(), sendLatencyMs: 0.02 } : undefined,
      hop: () => (i % 3 === 0 ? { handshakeRttMs: 8, measuredAt: Date.now(), sendLatencyMs: 0.03 } : undefined),
    }),
  );
  const rows: string[] = [];
  const leaderIndex: number[] = [];
  for (let s = 0; s < 520; s++) {
    const li = Math.floor(s / 4) % 100;
    rows.push(rowText(1_000_000 + s, tails[li]));
    leaderIndex.push(li);
  }
  return { schemaVersion: 1, firstSlot: 1_000_000, snapshotSlot: 1_000_008, generatedAtUnixMs: now, slotMs: 400, leaders, leaderIndex, rows };
}

interface MicroResult {
  readonly name: string;
  readonly meanUs: number;
  readonly p99Us: number;
  readonly opsPerSec: number;
}

async function micro(): Promise<MicroResult[]> {
  const t = configSchema.parse({
    telemetry: {
      region: 'fra',
      regions: [
        { name: 'fra', latitude: 50.11, longitude: 8.68 },
        { name: 'nyc', latitude: 40.71, longitude: -74, marketLatencyMs: 1 },
      ],
      paths: [{ provider: 'static:ams', kind: 'static', peer: '10.9.0.1:8009', region: 'fra', hopLatencyMs: 4 }],
    },
  }).telemetry;
  const model = new RouteModel(t, txPathSpecs(t, { direct: true, staticPeers: ['10.9.0.1:8009'], jito: false }));
  const sab = createSnapshotBuffer();
  const w = new SnapshotWriter(sab);
  const content = buildContent(model, Date.now());
  const bytes = w.publish(content);
  const reader = new SnapshotReader(sab);
  const view = reader.current()!;
  const m = getLeaderSlotsMethod<unknown>({ reader, defaultLimit: 20, maxSnapshotAgeMs: 1e12 });
  const call = { id: 1, notification: false, method: 'getLeaderSlots', params: [] };
  process.stdout.write(`snapshot: ${content.rows.length} rows, ${view.rowsText.length} bytes of row text, generation ${bytes}\n`);
  const bench = new Bench({ time: 400, warmupTime: 100 });
  bench
    .add('build snapshot content (100 leader tails + 520 rows)', () => void buildContent(model, 0))
    .add('SnapshotWriter.publish (520 rows)', () => void w.publish(content))
    .add('reader: first read of a new generation (copy + decode)', () => void new SnapshotReader(sab).current())
    .add('handler getLeaderSlots limit 20 (cached generation)', () => void m([1_000_010, 20], {}, call as never))
    .add('handler getLeaderSlots limit 100 (cached generation)', () => void m([1_000_010, 100], {}, call as never));
  await bench.run();
  const out: MicroResult[] = [];
  for (const task of bench.tasks) {
    const r = task.result!;
    const lat = r.latency;
    process.stdout.write(`  ${task.name}: mean ${(lat.mean * 1000).toFixed(1)} us, p99 ${(lat.p99! * 1000).toFixed(1)} us (${r.throughput.mean.toFixed(0)} ops/s)\n`);
    out.push({ name: task.name, meanUs: round2(lat.mean * 1000), p99Us: round2(lat.p99! * 1000), opsPerSec: Math.round(r.throughput.mean) });
  }
  return out;
}

const round2 = (x: number): number => Math.round(x * 100) / 100;

async function startRelayProcess(rpcUrl: string): Promise<{ url: string; stop: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'slotrelay-bench-'));
  const file = join(dir, 'config.yaml');
  writeFileSync(
    file,
    stringify({
      rpcHost: { host: '127.0.0.1', port: 0 },
      admin: { port: 0 }, // the status page's default 8890 is one per host
      relayHost: { host: '127.0.0.1', port: 0, quicPort: 0 }, // no QUIC ingress: 4433 would collide between relays
      upstream: { rpcUrl },
      rings: { workers: 1, slotsPerRing: 256 },
      log: { level: 'warn' },
      // direct on: rows carry the direct txPath, as on a relay that sends to leaders (its egress pre-warms
      // connections to the localnet's leaders and reports their RTTs).
      routes: { direct: { enabled: true } },
      telemetry: { probe: { enabled: false } },
      keys: [{ key: KEY, name: 'bench', rateLimit: { perSecond: 10_000_000, burst: 10_000_000 }, readLimit: { perSecond: 10_000_000, burst: 10_000_000 } }],
    }),
  );
  const child = spawn(process.execPath, [join(root, 'dist/src/cli.js'), 'start', '--config', file], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (c) => reject(new Error(`relay exited ${String(c)}`)));
    createInterface({ input: child.stdout! }).on('line', (l) => {
      try {
        const m = JSON.parse(l) as { event?: string; listeners?: { name: string; host: string; port: number }[] };
        const rpc = m.listeners?.find((x) => x.name === 'rpc');
        if (m.event === 'relay_ready' && rpc) resolve(`http://${rpc.host}:${rpc.port}`);
      } catch {
        /* not JSON */
      }
    });
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

/** Async: the localnet runs on this process's event loop and must keep producing slots during the run. */
async function wrk(url: string, body: string): Promise<string> {
  const lua = join(mkdtempSync(join(tmpdir(), 'slotrelay-wrk-')), 'post.lua');
  writeFileSync(lua, `wrk.method = "POST"\nwrk.body = '${body}'\nwrk.headers["content-type"] = "application/json"\nwrk.headers["x-api-key"] = "${KEY}"\n`);
  const { stdout } = await promisify(execFile)('/usr/bin/wrk', ['-t1', `-c${CONNECTIONS}`, `-d${DURATION_S}s`, '--latency', '-s', lua, url], { encoding: 'utf8' });
  return stdout;
}

interface WrkResult extends WrkFigures {
  readonly limit: number;
  readonly responseBytes: number;
}

function parseWrk(out: string, limit: number, responseBytes: number): WrkResult {
  return { limit, responseBytes, ...parseWrkOutput(out) };
}

async function e2e(): Promise<WrkResult[] | null> {
  if (!existsSync('/usr/bin/wrk')) {
    process.stdout.write('wrk not found at /usr/bin/wrk: end-to-end part skipped\n');
    return null;
  }
  const results: WrkResult[] = [];
  const localnet = await startLocalnet({ validators: 8 });
  const relay = await startRelayProcess(localnet.rpcUrl);
  try {
    const start = localnet.clock.current + 100; // covered until the snapshot slot passes start + 8 (lookback): ~43 s
    for (;;) {
      const r = await fetch(relay.url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getLeaderSlots', params: [start, 1] }) });
      if (((await r.json()) as { result?: unknown }).result) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    for (const limit of [20, 100]) {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getLeaderSlots', params: [start, limit] });
      const check = await fetch(relay.url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body });
      const text = await check.text();
      const out = await wrk(relay.url, body);
      const r = parseWrk(out, limit, text.length);
      results.push(r);
      process.stdout.write(
        `wrk -t1 -c${CONNECTIONS} -d${DURATION_S}s getLeaderSlots limit ${limit} (${text.length} B response): ${r.requestsPerSec} req/s, p50 ${r.p50ms} ms, p99 ${r.p99ms} ms, non-2xx ${r.non2xx}\n`,
      );
      const after = (await (await fetch(relay.url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body })).json()) as { result?: { total: number } };
      if (after.result?.total !== limit) throw new Error(`answers were not results during the run: ${JSON.stringify(after).slice(0, 200)}`);
    }
  } finally {
    relay.stop();
    await localnet.stop();
  }
  return results;
}

const microResults = await micro();
const e2eResults = args.includes('--micro-only') ? null : await e2e();
// Only a full run replaces the committed figures.
if (e2eResults !== null) {
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(
    join(root, 'bench/results/get-leader-slots.json'),
    JSON.stringify({ date: new Date().toISOString(), durationS: DURATION_S, connections: CONNECTIONS, micro: microResults, wrk: e2eResults }, null, 2) + '\n',
  );
  process.stdout.write('wrote bench/results/get-leader-slots.json\n');
}
process.exit(0);
