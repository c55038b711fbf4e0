// Wire-to-wire bench (issue #28 item 1; bench process, cold orchestration around hot clients in clients.ts). Per
// ingress (JSON-RPC sendTransaction, POST /v1/transactions, QUIC uni, QUIC bidi) and per rate (1,000, 5,000,
// 20,000 tx/s and saturation): the time from the client's last byte written (clients.ts) to the first arrival of the
// transaction at a TPU listener of the relay's embedded localnet (its listener read the stream to FIN: one ~215-byte
// transaction is one datagram, so that is its first datagram), both on this host's CLOCK_MONOTONIC
// (process.hrtime.bigint(); checked at start against a child process), matched by the transaction's signature (the
// localnet's arrival log, src/localnet/arrival-log.ts: first 8 signature bytes = run magic + index). Systems in the
// same run, cells interleaved (relay, floor, floor, relay, ... per round):
//   relay    dist/src/cli.js start: direct route only (fanout next-leaders, leaders 0: the current leader, as the
//            floor), no rebroadcast, one egress worker, QUIC ingress on
//   floor-a  bench/wire/min-forwarder.ts: same uWS, same quiche connection, one thread, nothing else
//   floor-b  bench/e2e/bare-uws-answer.ts: uWS answering a constant (HTTP ingresses; client round trip only)
// Per cell: HDR histograms (us) of wire-to-wire and of the client's round trip (HTTP, bidi), loss (sent, not
// arrived), CPU per transaction of the serving process (/proc/<pid>/stat utime+stime; the localnet is another
// process). Bounded: every cell by count and time, the whole run ~4 min.
//   node dist/bench/wire/wire.bench.js [--rounds 2] [--rates 1000,5000,20000,0] [--ingress jsonrpc,tx,uni,bidi]
//     [--systems relay,floor-a,floor-b] [--seconds 2] [--json bench/results/wire.json] [--md bench/results/wire.md]
//     [--relay-env NAME=VALUE,...] [--relay-node-args="--cpu-prof --cpu-prof-dir=DIR"] (the profiles of docs/wire-to-wire.md)
//     [--relay-b '<JSON config overrides>'] [--relay-b-cli other-dist/src/cli.js]: a second relay (system relay-b) on
//     the same localnet, cells interleaved with the first: a paired A/B of a setting or of two builds (before/after)
//     [--relay '<JSON config overrides>']: the same for the first relay, and the base of relay-b's (e.g. both with
//     rebroadcast: '{"retries":{"defaultMaxRetries":-1}}')
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import hdr from 'hdr-histogram-js';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { IngressClient } from '../../src/client/quic/ingress-client.js';
import { createIdentityCertificate, createRandomIdentityCertificate } from '../../src/quic/identity-certificate.js';
import { BENCH_KEY, startBenchRelay } from '../bench-relay.js';
import { BASE_NS, openHttp, runHttp, runQuic, type CellRun, type Stamps } from './clients.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    rates: { type: 'string', default: '1000,5000,20000,0' },
    ingress: { type: 'string', default: 'jsonrpc,tx,uni,bidi' },
    systems: { type: 'string', default: 'relay,floor-a,floor-b' },
    seconds: { type: 'string', default: '2' },
    json: { type: 'string', default: 'bench/results/wire.json' },
    md: { type: 'string', default: 'bench/results/wire.md' },
    'relay-env': { type: 'string', default: '' },
    'relay-node-args': { type: 'string', default: '' },
    relay: { type: 'string', default: '' },
    'relay-b': { type: 'string', default: '' },
    'relay-b-cli': { type: 'string', default: '' },
  },
});
const ROUNDS = Number(values.rounds);
const RATES = values.rates.split(',').map(Number);
const INGRESS = values.ingress.split(',') as Ingress[];
const SYSTEMS = (values.systems.split(',') as System[]).flatMap((s): System[] =>
  s === 'relay' && (values['relay-b'] !== '' || values['relay-b-cli'] !== '') ? ['relay', 'relay-b'] : [s],
);
const SECONDS = Number(values.seconds);
/** Saturation cells: this many transactions (bounded in count; the time bound below holds too). */
const SATURATION_COUNT = 30_000;
const HTTP_CONNECTIONS = 32;
const QUIC_CONNECTIONS = 2;
const UNI_WINDOW = 256;
const BIDI_WINDOW = 100;
const MAX_TX = 4_000_000;
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

type Ingress = 'jsonrpc' | 'tx' | 'uni' | 'bidi';
type System = 'relay' | 'relay-b' | 'floor-a' | 'floor-b';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const newHist = (): hdr.Histogram => hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });

/** CLOCK_MONOTONIC shared across processes: a child's process.hrtime.bigint() lies between ours before and after. */
function checkSharedClock(): { ok: boolean; beforeNs: string; childNs: string; afterNs: string } {
  const before = process.hrtime.bigint();
  const out = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.hrtime.bigint()))'], { encoding: 'utf8' });
  const after = process.hrtime.bigint();
  const child = BigInt(out.stdout.trim());
  return { ok: before < child && child < after, beforeNs: before.toString(), childNs: child.toString(), afterNs: after.toString() };
}

// Transactions: one signed transfer as template (an unknown blockhash: the leader's bank refuses it cheaply, the
// relay does not look), signature bytes rewritten per transaction: bytes 1-4 the run's magic, 5-8 the index.
const MAGIC = randomBytes(4);
const MAGIC_HEX = MAGIC.toString('hex');
const template = (() => {
  const payer = Keypair.generate();
  const t = new Transaction({ feePayer: payer.publicKey, blockhash: Keypair.generate().publicKey.toBase58(), lastValidBlockHeight: 1 }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 }),
  );
  t.sign(payer);
  return t.serialize();
})();
function txBytes(i: number): Buffer {
  const b = Buffer.from(template);
  MAGIC.copy(b, 1);
  b.writeUInt32LE(i, 5);
  return b;
}

function httpRequest(ingress: 'jsonrpc' | 'tx', i: number): Buffer {
  const tx = txBytes(i);
  if (ingress === 'jsonrpc') {
    const body = `{"jsonrpc":"2.0","id":${i},"method":"sendTransaction","params":["${tx.toString('base64')}",{"encoding":"base64","skipPreflight":true}]}`;
    return Buffer.from(`POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nx-api-key: ${BENCH_KEY}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  }
  const head = Buffer.from(`POST /v1/transactions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/octet-stream\r\nx-api-key: ${BENCH_KEY}\r\ncontent-length: ${tx.length}\r\n\r\n`);
  return Buffer.concat([head, tx]);
}

/** CPU us of a process (or, with `thread`, of its main thread: the relay's front). */
function cpuUs(pid: number, thread = false): number {
  const stat = readFileSync(thread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1e6) / CLK_TCK;
}

async function rpc(url: string, method: string, params: unknown[]): Promise<Record<string, unknown>> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const j = (await r.json()) as { result?: Record<string, unknown>; error?: unknown };
  if (j.result === undefined) throw new Error(`${method}: ${JSON.stringify(j.error)}`);
  return j.result;
}

function lineEvent(child: ChildProcess, event: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${event} not seen`)), 60_000);
    createInterface({ input: child.stdout! }).on('line', (l) => {
      if (!l.startsWith('{')) return;
      try {
        const m = JSON.parse(l) as Record<string, unknown>;
        if (m.event === event) {
          clearTimeout(t);
          resolve(m);
        }
      } catch {
        /* not ours */
      }
    });
  });
}

interface Endpoint {
  readonly pid: number;
  readonly http: Partial<Record<'jsonrpc' | 'tx', number>>;
  /** QUIC connections, (re)opened before each QUIC cell when closed (a server's idle timeout during HTTP cells). */
  readonly quic: IngressClient[];
  readonly connectQuic: (() => Promise<IngressClient>) | null;
  /** The relay's /metrics (its direct route's outcomes per cell); null for the floors. */
  readonly metricsUrl?: string;
}

/** The relay's direct-route first-send outcomes so far (slotrelay_egress_outcomes_total{route="direct"}). */
async function directOutcomes(url: string | undefined): Promise<Record<string, number>> {
  if (url === undefined) return {};
  const text = await (await fetch(`${url}/metrics`)).text();
  const o: Record<string, number> = {};
  for (const m of text.matchAll(/^slotrelay_egress_outcomes_total\{route="direct",outcome="([^"]+)"\} (\d+)/gm)) o[m[1]] = Number(m[2]);
  // What the relay refused that a uni client cannot see (a uni stream has no answer): the QUIC ingress's refusals.
  for (const m of text.matchAll(/^slotrelay_quic_ingress_streams_total\{outcome="(refused|overloaded)"\} (\d+)/gm)) o[`ingress:${m[1]}`] = Number(m[2]);
  return o;
}

const dead = new WeakSet<IngressClient>();
async function quicClients(ep: Endpoint): Promise<IngressClient[]> {
  for (let k = 0; k < QUIC_CONNECTIONS; k++) {
    const c = ep.quic[k];
    if (c !== undefined && !dead.has(c)) continue;
    const n = await ep.connectQuic!();
    void n.closed.then(() => dead.add(n));
    ep.quic[k] = n;
  }
  return ep.quic;
}

interface Cell {
  readonly system: System;
  readonly ingress: Ingress;
  readonly rate: number;
  readonly round: number;
  readonly run: CellRun;
  readonly arrived: number;
  /** Relay only: its direct route's first-send outcomes during the cell (sent, dropped:stale, ...). */
  readonly outcomes: Record<string, number>;
  readonly cpuUsPerTx: number;
  /** The main thread only (relay: the front). */
  readonly mainCpuUsPerTx: number;
  readonly wire: hdr.Histogram | null;
  readonly answer: hdr.Histogram | null;
  /** Answers that refused the transaction (503 / -32005 / a QUIC refusal): how fast a refusal comes back. */
  readonly refusalAnswer: hdr.Histogram | null;
}

const PCTS = [50, 90, 99, 99.9] as const;
function summary(h: hdr.Histogram | null): Record<string, number> | null {
  if (h === null || h.totalCount === 0) return null;
  const o: Record<string, number> = { count: h.totalCount };
  for (const p of PCTS) o[`p${p}`] = h.getValueAtPercentile(p);
  o.max = h.maxValue;
  return o;
}

async function main(): Promise<void> {
  const clock = checkSharedClock();
  if (!clock.ok) throw new Error(`process.hrtime.bigint() is not shared across processes here: ${JSON.stringify(clock)}`);
  const relayEnv = Object.fromEntries(values['relay-env'].split(',').filter((x) => x !== '').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as const));
  const keyPlan = { rateLimit: { perSecond: 10_000_000, burst: 10_000_000 }, preflight: 'skip', defaultRoutes: ['direct'] };
  const relayBase: Record<string, unknown> = {
    relayHost: { host: '127.0.0.1', port: 0, quicPort: -1, quic: { maxConcurrentStreams: 512 } },
    rings: { workers: 1, slotsPerRing: 8_192 },
    routes: { defaultRoutes: ['direct'], direct: { enabled: true, fanout: 'next-leaders', leaders: 0 } },
    retries: { defaultMaxRetries: 0 },
  };
  // --relay: overrides one level deep per section, for the first relay and as the base of relay-b's.
  const withOverrides = (base: Record<string, unknown>, json: string): Record<string, unknown> => {
    const over = (json === '' ? {} : JSON.parse(json)) as Record<string, unknown>;
    const cfg: Record<string, unknown> = { ...base };
    for (const [k, v] of Object.entries(over)) cfg[k] = typeof v === 'object' && v !== null && !Array.isArray(v) ? { ...(cfg[k] as object | undefined), ...v } : v;
    return cfg;
  };
  const relayConfig = withOverrides(relayBase, values.relay);
  const relay = await startBenchRelay(1_000, keyPlan, { ...relayConfig, localnet: { arrivalLog: MAX_TX } }, relayEnv, {
    nodeArgs: values['relay-node-args'].split(' ').filter((x) => x !== ''),
  });
  const localnet = relay.localnetUrl;
  const children: ChildProcess[] = [relay.child];
  try {
    const relayCert = await createIdentityCertificate(Keypair.generate().secretKey, BENCH_KEY);
    const endpoints: Partial<Record<System, Endpoint>> = {};
    if (SYSTEMS.includes('relay')) {
      const q = relay.quic!;
      endpoints.relay = {
        pid: relay.child.pid!,
        http: { jsonrpc: Number(new URL(relay.rpcUrl).port), tx: Number(new URL(relay.relayUrl).port) },
        quic: [],
        metricsUrl: relay.rpcUrl,
        connectQuic: () => IngressClient.connect({ host: q.host, port: q.port, certificate: relayCert, idleTimeoutMs: 60_000 }),
      };
    }
    if (SYSTEMS.includes('relay-b')) {
      // Same settings on the first relay's localnet (its upstream), plus the overrides (one level deep per section).
      const cfg = withOverrides({ ...relayConfig, upstream: { rpcUrl: localnet } }, values['relay-b']);
      const b = await startBenchRelay(1_000, keyPlan, cfg, relayEnv, values['relay-b-cli'] === '' ? {} : { cli: values['relay-b-cli'] });
      children.push(b.child);
      const qb = b.quic!;
      endpoints['relay-b'] = {
        pid: b.child.pid!,
        http: { jsonrpc: Number(new URL(b.rpcUrl).port), tx: Number(new URL(b.relayUrl).port) },
        quic: [],
        metricsUrl: b.rpcUrl,
        connectQuic: () => IngressClient.connect({ host: qb.host, port: qb.port, certificate: relayCert, idleTimeoutMs: 60_000 }),
      };
    }
    if (SYSTEMS.includes('floor-a')) {
      const child = spawn(process.execPath, ['dist/bench/wire/min-forwarder.js', localnet], { stdio: ['ignore', 'pipe', 'inherit'] });
      children.push(child);
      const r = await lineEvent(child, 'ready');
      const cert = await createRandomIdentityCertificate();
      endpoints['floor-a'] = {
        pid: child.pid!,
        http: { jsonrpc: r.httpPort as number, tx: r.httpPort as number },
        quic: [],
        connectQuic: () => IngressClient.connect({ host: '127.0.0.1', port: r.quicPort as number, certificate: cert, alpn: 'solana-tpu', idleTimeoutMs: 60_000 }),
      };
    }
    if (SYSTEMS.includes('floor-b')) {
      const dir = mkdtempSync(join(tmpdir(), 'slotrelay-wire-'));
      writeFileSync(join(dir, 'answer.json'), '{"jsonrpc":"2.0","result":"5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW","id":1}');
      const child = spawn(process.execPath, ['dist/bench/e2e/bare-uws-answer.js', join(dir, 'answer.json')], { stdio: ['ignore', 'pipe', 'inherit'] });
      children.push(child);
      const port = await new Promise<number>((resolve) => createInterface({ input: child.stdout! }).on('line', (l) => l.startsWith('ready ') && resolve(Number(l.slice(6)))));
      endpoints['floor-b'] = { pid: child.pid!, http: { jsonrpc: port, tx: port }, quic: [], connectQuic: null };
    }
    const st: Stamps = { sentNs: new Float64Array(MAX_TX).fill(NaN), answerNs: new Float64Array(MAX_TX).fill(NaN), refused: new Uint8Array(MAX_TX) };
    const seen = new Uint8Array(MAX_TX);
    let nextIndex = 0;
    let arrivalCursor = 0;

    /** Pull the arrival log; first arrival per index in [first, end) into `wire`. Returns how many matched. */
    const collect = async (first: number, end: number, wire: hdr.Histogram): Promise<number> => {
      let matched = 0;
      for (let calls = 0; calls < 200; calls++) {
        const page = (await rpc(localnet, 'localnet_getArrivals', [{ from: arrivalCursor, limit: 50_000 }])) as { total: number; next: number; sig8: string[]; arrivalNs: string[] };
        for (let k = 0; k < page.sig8.length; k++) {
          const s = page.sig8[k];
          if (!s.startsWith(MAGIC_HEX)) continue;
          const i = Buffer.from(s.slice(8), 'hex').readUInt32LE(0);
          if (i < first || i >= end || seen[i] === 1) continue;
          seen[i] = 1;
          matched++;
          const sent = st.sentNs[i];
          if (Number.isNaN(sent)) continue; // arrived, but its write time was not observable (bidi, deferred)
          const us = (Number(BigInt(page.arrivalNs[k]) - BASE_NS) - sent) / 1000;
          wire.recordValue(Math.max(1, Math.round(us)));
        }
        arrivalCursor = page.next;
        if (page.next >= page.total) break;
      }
      return matched;
    };

    const runCell = async (system: System, ingress: Ingress, rate: number, round: number): Promise<Cell | null> => {
      const ep = endpoints[system];
      if (ep === undefined) return null;
      if (system === 'floor-b' && (ingress === 'uni' || ingress === 'bidi')) return null;
      if (system === 'floor-b' && ingress === 'tx') return null; // one bare row per rate is enough: it answers any POST
      if (system === 'floor-a' && ingress === 'bidi') return null; // the floor's QUIC ingress is the TPU endpoint: uni only
      const count = rate === 0 ? SATURATION_COUNT : Math.round(rate * SECONDS);
      const first = nextIndex;
      nextIndex += count;
      const maxMs = rate === 0 ? SECONDS * 2_000 : SECONDS * 1_000 + 2_000;
      await collect(0, 0, newHist()); // skip what arrived before this cell
      if (ingress === 'uni' || ingress === 'bidi') await quicClients(ep);
      const outcomes0 = await directOutcomes(ep.metricsUrl);
      const cpu0 = cpuUs(ep.pid);
      const main0 = cpuUs(ep.pid, true);
      let run: CellRun;
      if (ingress === 'jsonrpc' || ingress === 'tx') {
        // Fresh connections per cell: a server's idle timeout (uWS: 10 s) may have closed the last cell's meanwhile.
        const reqs = Array.from({ length: count }, (_, k) => httpRequest(ingress, first + k));
        const socks = await openHttp(ep.http[ingress]!, HTTP_CONNECTIONS);
        try {
          run = await runHttp(socks, (i) => reqs[i - first], first, count, rate, st, maxMs);
        } finally {
          for (const so of socks) so.destroy();
        }
      } else {
        const txs = Array.from({ length: count }, (_, k) => txBytes(first + k));
        run = await runQuic(ingress, await quicClients(ep), (i) => txs[i - first], first, count, rate, st, maxMs, ingress === 'uni' ? UNI_WINDOW : BIDI_WINDOW);
      }
      const cpu = cpuUs(ep.pid) - cpu0;
      const mainCpu = cpuUs(ep.pid, true) - main0;
      const wire = newHist();
      let arrived = 0;
      if (system !== 'floor-b') {
        // Until all arrived, or nothing more for 1.5 s (lost), at most 6 s: a queue inside a starved relay drains late.
        const t0 = performance.now();
        let lastProgress = t0;
        while (arrived < run.sent && performance.now() - lastProgress < 1_500 && performance.now() - t0 < 6_000) {
          await sleep(250);
          const n = await collect(first, first + run.sent, wire);
          arrived += n;
          if (n > 0) lastProgress = performance.now();
        }
      }
      const outcomes1 = await directOutcomes(ep.metricsUrl);
      const outcomes = Object.fromEntries(Object.entries(outcomes1).map(([k, v]) => [k, v - (outcomes0[k] ?? 0)] as const).filter(([, v]) => v > 0));
      // Answers of accepted transactions and of refusals apart (admission by delay: a refusal must come back at once).
      const answer = newHist();
      const refusalAnswer = newHist();
      for (let i = first; i < first + run.sent; i++) {
        const a = st.answerNs[i];
        const s = st.sentNs[i];
        if (!Number.isNaN(a) && !Number.isNaN(s)) (st.refused[i] === 1 ? refusalAnswer : answer).recordValue(Math.max(1, Math.round((a - s) / 1000)));
      }
      const cell: Cell = {
        system, ingress, rate, round, run, arrived, outcomes,
        cpuUsPerTx: Math.round((cpu / Math.max(1, run.sent)) * 10) / 10,
        mainCpuUsPerTx: Math.round((mainCpu / Math.max(1, run.sent)) * 10) / 10,
        wire: system === 'floor-b' ? null : wire,
        answer: answer.totalCount > 0 ? answer : null,
        refusalAnswer: refusalAnswer.totalCount > 0 ? refusalAnswer : null,
      };
      const w = summary(cell.wire);
      const a = summary(cell.answer);
      console.log(
        `r${round} ${system.padEnd(7)} ${ingress.padEnd(7)} ${rate === 0 ? 'sat' : rate} sent ${run.sent} in ${run.seconds.toFixed(2)}s (${Math.round(run.sent / run.seconds)}/s) arrived ${arrived} refused ${run.refused}` +
          (w ? ` wire p50 ${w.p50} p99 ${w.p99} p99.9 ${w['p99.9']} max ${w.max} us` : '') + (a ? ` | answer p50 ${a.p50} p99 ${a.p99} us` : '') + ` cpu ${cell.cpuUsPerTx} us/tx (main thread ${cell.mainCpuUsPerTx})` +
          (Object.keys(outcomes).length > 0 ? ` direct ${JSON.stringify(outcomes)}` : ''),
      );
      return cell;
    };

    // Warm-up: every system and ingress at 2,000 tx/s for a second (JIT, connections, leader caches).
    for (const ingress of INGRESS) for (const s of SYSTEMS) await runCellQuiet(() => runCell(s, ingress, 2_000, 0));
    const cells: Cell[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const rate of RATES) {
        for (const ingress of INGRESS) {
          // Paired: relay and floors back to back, order alternating per round.
          const order = round % 2 === 1 ? SYSTEMS : [...SYSTEMS].reverse();
          for (const s of order) {
            const c = await runCell(s, ingress, rate, round);
            if (c !== null) cells.push(c);
          }
        }
      }
    }
    report(cells, clock);
    for (const ep of Object.values(endpoints)) for (const q of ep?.quic ?? []) q.close();
  } finally {
    for (const c of children) c.kill('SIGTERM');
  }
}

async function runCellQuiet(f: () => Promise<Cell | null>): Promise<void> {
  const log = console.log;
  console.log = () => undefined;
  try {
    await f();
  } finally {
    console.log = log;
  }
}

function report(cells: Cell[], clock: ReturnType<typeof checkSharedClock>): void {
  // Merge rounds per (system, ingress, rate); ratios relay / floor per percentile on the merged histograms, and per round.
  const key = (c: Pick<Cell, 'system' | 'ingress' | 'rate'>): string => `${c.system}|${c.ingress}|${c.rate}`;
  const merged = new Map<string, { wire: hdr.Histogram; answer: hdr.Histogram; refusalAnswer: hdr.Histogram; sent: number; arrived: number; seconds: number; cpu: number[]; mainCpu: number[]; refused: number; deferred: number; queueFull: number }>();
  for (const c of cells) {
    let m = merged.get(key(c));
    if (m === undefined) {
      m = { wire: newHist(), answer: newHist(), refusalAnswer: newHist(), sent: 0, arrived: 0, seconds: 0, cpu: [], mainCpu: [], refused: 0, deferred: 0, queueFull: 0 };
      merged.set(key(c), m);
    }
    if (c.wire) m.wire.add(c.wire);
    if (c.answer) m.answer.add(c.answer);
    if (c.refusalAnswer) m.refusalAnswer.add(c.refusalAnswer);
    m.queueFull += c.outcomes['dropped:queue_full'] ?? 0;
    // uni: the client sees no refusal; the relay's ingress counts them.
    if (c.ingress === 'uni') m.refused += (c.outcomes['ingress:refused'] ?? 0) + (c.outcomes['ingress:overloaded'] ?? 0);
    m.sent += c.run.sent;
    m.arrived += c.arrived;
    m.seconds += c.run.seconds;
    m.cpu.push(c.cpuUsPerTx);
    m.mainCpu.push(c.mainCpuUsPerTx);
    m.refused += c.run.refused;
    m.deferred += c.run.deferred;
  }
  const ratio = (a: Record<string, number> | null, b: Record<string, number> | null): Record<string, number> | null => {
    if (a === null || b === null) return null;
    const o: Record<string, number> = {};
    for (const p of [...PCTS.map((x) => `p${x}`), 'max']) o[p] = Math.round((a[p] / b[p]) * 100) / 100;
    return o;
  };
  const rows = [...merged.entries()].map(([k, m]) => {
    const [system, ingress, rate] = k.split('|');
    return {
      system, ingress, rate: Number(rate),
      // lost: accepted (sent and not refused) and never arrived; queueFull: the direct route's dropped:queue_full.
      sent: m.sent, arrived: m.arrived, lost: system === 'floor-b' ? null : m.sent - m.refused - m.arrived, refused: m.refused, deferredStamps: m.deferred,
      queueFull: system.startsWith('relay') ? m.queueFull : null,
      achievedPerS: Math.round(m.sent / m.seconds),
      cpuUsPerTx: m.cpu.sort((a, b) => a - b)[Math.floor(m.cpu.length / 2)],
      mainCpuUsPerTx: m.mainCpu.sort((a, b) => a - b)[Math.floor(m.mainCpu.length / 2)],
      wireUs: summary(m.wire.totalCount ? m.wire : null),
      answerUs: summary(m.answer.totalCount ? m.answer : null),
      refusalAnswerUs: summary(m.refusalAnswer.totalCount ? m.refusalAnswer : null),
    };
  });
  const find = (s: string, i: string, r: number) => rows.find((x) => x.system === s && x.ingress === i && x.rate === r);
  const ratios = rows
    .filter((r) => r.system === 'relay')
    .map((r) => ({
      ingress: r.ingress,
      rate: r.rate,
      wireRelayOverFloorA: ratio(r.wireUs, find('floor-a', r.ingress, r.rate)?.wireUs ?? null),
      answerRelayOverFloorA: ratio(r.answerUs, find('floor-a', r.ingress, r.rate)?.answerUs ?? null),
      answerRelayOverFloorB: r.ingress === 'jsonrpc' || r.ingress === 'tx' ? ratio(r.answerUs, find('floor-b', 'jsonrpc', r.rate)?.answerUs ?? null) : null,
      wireRelayBOverRelay: ratio(find('relay-b', r.ingress, r.rate)?.wireUs ?? null, r.wireUs),
      perRound: cells
        .filter((c) => c.system === 'relay' && c.ingress === r.ingress && c.rate === r.rate)
        .map((c) => {
          const f = cells.find((x) => x.system === 'floor-a' && x.ingress === c.ingress && x.rate === c.rate && x.round === c.round);
          const b = cells.find((x) => x.system === 'relay-b' && x.ingress === c.ingress && x.rate === c.rate && x.round === c.round);
          const rb = ratio(summary(b?.wire ?? null), summary(c.wire));
          return { round: c.round, wireP50: ratio(summary(c.wire), summary(f?.wire ?? null))?.p50 ?? null, wireP99: ratio(summary(c.wire), summary(f?.wire ?? null))?.p99 ?? null, relayBOverRelayP50: rb?.p50 ?? null, relayBOverRelayP99: rb?.p99 ?? null };
        }),
    }));
  const j5 = find('relay', 'jsonrpc', 5000);
  const f5 = find('floor-a', 'jsonrpc', 5000);
  const u5 = find('relay', 'uni', 5000);
  const targets = {
    jsonrpcP99LeUs1000At5k: j5?.wireUs ? { value: j5.wireUs.p99, met: j5.wireUs.p99 <= 1000 } : null,
    jsonrpcP50Within2xFloorA: j5?.wireUs && f5?.wireUs ? { value: Math.round((j5.wireUs.p50 / f5.wireUs.p50) * 100) / 100, met: j5.wireUs.p50 <= 2 * f5.wireUs.p50 } : null,
    uniP50LeUs100At5k: u5?.wireUs ? { value: u5.wireUs.p50, met: u5.wireUs.p50 <= 100 } : null,
    uniP99LeUs500At5k: u5?.wireUs ? { value: u5.wireUs.p99, met: u5.wireUs.p99 <= 500 } : null,
  };
  const out = {
    what: 'wire to wire: client last byte written -> first arrival at a localnet TPU listener, us, CLOCK_MONOTONIC',
    command: `node dist/bench/wire/wire.bench.js ${process.argv.slice(2).join(' ')}`.trim(),
    date: new Date().toISOString(),
    machine: `${cpus().length} cores (${cpus()[0]?.model ?? '?'}), shared with other work: noisy; rounds interleave systems`,
    sharedClock: clock,
    rounds: ROUNDS,
    secondsPerCell: SECONDS,
    saturationCount: SATURATION_COUNT,
    httpConnections: HTTP_CONNECTIONS,
    quicConnections: QUIC_CONNECTIONS,
    relayOverrides: values.relay,
    relayB: values['relay-b'] === '' && values['relay-b-cli'] === '' ? null : { config: values['relay-b'], cli: values['relay-b-cli'] },
    rows,
    ratios,
    targets,
    cells: cells.map((c) => ({ system: c.system, ingress: c.ingress, rate: c.rate, round: c.round, sent: c.run.sent, arrived: c.arrived, seconds: c.run.seconds, directOutcomes: c.outcomes, refused: c.run.refused, cpuUsPerTx: c.cpuUsPerTx, mainCpuUsPerTx: c.mainCpuUsPerTx, wireUs: summary(c.wire), answerUs: summary(c.answer), refusalAnswerUs: summary(c.refusalAnswer) })),
  };
  writeFileSync(values.json, JSON.stringify(out, null, 2) + '\n');
  writeFileSync(values.md, markdown(out.rows, ratios, targets, out));
  console.log(JSON.stringify({ targets }, null, 2));
}

function markdown(rows: ReadonlyArray<Record<string, unknown>>, ratios: ReadonlyArray<Record<string, unknown>>, targets: Record<string, unknown>, out: Record<string, unknown>): string {
  const us = (s: unknown, p: string): string => (s === null || s === undefined ? '-' : String((s as Record<string, number>)[p]));
  const rateName = (r: unknown): string => (r === 0 ? 'saturation' : String(r));
  let md = `# Wire to wire (issue #28)\n\nGenerated by \`make bench-wire\` (${String(out.command)}), ${String(out.date)}; ${String(out.machine)}.\n\n`;
  md += 'Wire = client\'s last byte written -> first arrival of the transaction at a localnet TPU listener (us, CLOCK_MONOTONIC of this host, ' +
    'matched by signature). Answer = last byte written -> answer read (HTTP, QUIC bidi). relay: the real relay, direct route only; ' +
    'floor-a: bench/wire/min-forwarder.ts (same uWS, same quiche connection, one thread); floor-b: bare uWS constant answer. ' +
    'Rounds merged (HDR histograms); cells of one rate and ingress ran back to back. refused: answered 503 / -32005 / a QUIC ' +
    'refusal (not accepted; uni: the relay\'s QUIC ingress refusals, which a uni client cannot see); lost: accepted and never arrived; queue_full: the direct route\'s dropped:queue_full (after acceptance); ' +
    'answer: accepted transactions only; refusal p99: the refusals\' answer.\n\n';
  md += '| ingress | rate | system | sent/s | refused | lost | queue_full | wire p50 | p90 | p99 | p99.9 | max | answer p50 | answer p99 | refusal p99 | CPU us/tx | main thread us/tx |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n';
  for (const r of rows) {
    md += `| ${String(r.ingress)} | ${rateName(r.rate)} | ${String(r.system)} | ${String(r.achievedPerS)} | ${String(r.refused)} | ${r.lost === null ? '-' : String(r.lost)} | ${r.queueFull === null || r.queueFull === undefined ? '-' : String(r.queueFull)} | ${us(r.wireUs, 'p50')} | ${us(r.wireUs, 'p90')} | ${us(r.wireUs, 'p99')} | ${us(r.wireUs, 'p99.9')} | ${us(r.wireUs, 'max')} | ${us(r.answerUs, 'p50')} | ${us(r.answerUs, 'p99')} | ${us(r.refusalAnswerUs, 'p99')} | ${String(r.cpuUsPerTx)} | ${String(r.mainCpuUsPerTx)} |\n`;
  }
  md += '\n## Relay / floor per percentile\n\n| ingress | rate | wire relay/floor-a p50 | p90 | p99 | p99.9 | answer relay/floor-a p50 | p99 | answer relay/floor-b p50 | p99 |\n|---|---|---|---|---|---|---|---|---|---|\n';
  for (const r of ratios) {
    md += `| ${String(r.ingress)} | ${rateName(r.rate)} | ${us(r.wireRelayOverFloorA, 'p50')} | ${us(r.wireRelayOverFloorA, 'p90')} | ${us(r.wireRelayOverFloorA, 'p99')} | ${us(r.wireRelayOverFloorA, 'p99.9')} | ${us(r.answerRelayOverFloorA, 'p50')} | ${us(r.answerRelayOverFloorA, 'p99')} | ${us(r.answerRelayOverFloorB, 'p50')} | ${us(r.answerRelayOverFloorB, 'p99')} |\n`;
  }
  if (ratios.some((r) => r.wireRelayBOverRelay !== null)) {
    md += `\n## relay-b / relay (wire, per percentile; relay: ${JSON.stringify(values.relay)}, relay-b: ${JSON.stringify(out.relayB)})\n\n| ingress | rate | p50 | p90 | p99 | p99.9 | per round p50 | per round p99 |\n|---|---|---|---|---|---|---|---|\n`;
    for (const r of ratios) {
      const pr = r.perRound as { relayBOverRelayP50: number | null; relayBOverRelayP99: number | null }[];
      md += `| ${String(r.ingress)} | ${rateName(r.rate)} | ${us(r.wireRelayBOverRelay, 'p50')} | ${us(r.wireRelayBOverRelay, 'p90')} | ${us(r.wireRelayBOverRelay, 'p99')} | ${us(r.wireRelayBOverRelay, 'p99.9')} | ${pr.map((x) => x.relayBOverRelayP50).join(', ')} | ${pr.map((x) => x.relayBOverRelayP99).join(', ')} |\n`;
    }
  }
  md += '\n## Targets (issue #28, 5,000 tx/s)\n\n```json\n' + JSON.stringify(targets, null, 2) + '\n```\n';
  return md;
}

await main();
process.exit(0);
