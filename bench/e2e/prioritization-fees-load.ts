// getRecentPrioritizationFees under load (issue #11 item 1): the network-wide call served from the relay's per-slot
// cache, next to the upstream (the embedded localnet's facade, which computes the answer per call, as an Agave node
// does from its PrioritizationFeeCache) answering the same call directly, in the same run. Run after `npm run build`:
//   node dist/bench/e2e/prioritization-fees-load.js [--seconds 4] [--rounds 3] [--connections 64] [--threads 1]
//        [--min-entries 150] [--json bench/results/prioritization-fees.json]
// The real relay (dist/src/cli.js start) runs as a child with its embedded localnet (another child). Before measuring,
// the localnet is left to build up `min-entries` slots of history (150, Agave's window: ~60 s at 400 ms slots) so
// both sides answer a full-size result (~6.7 KB). Load generator: wrk (Debian package); every relay answer must be
// counted "ok" by the relay's own metrics (anything else fails the run), the direct side is sampled before and after
// each run (it computes the same answer every time). A third side, "bare" (bare-uws-answer.ts), is the bound: a
// process with the relay's uWS build answering every POST with the relay's cached answer bytes and doing nothing
// else; no relay can beat it, so bare / direct is the most any relay could show against this upstream on this box.
// Rounds rotate which side goes first so the shared box's drift bills all three; each round's ratios compare runs
// seconds apart, and the medians over rounds are the figures. Targets: relay rate >= 5x direct, relay p99 < 5 ms.
// Next to each row, the answering process's CPU time per request (Linux /proc), and after the rounds each server's
// floor: the cost of its cheapest JSON-RPC exchange.
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { startBenchRelay } from '../bench-relay.js';
import { parseWrkOutput, type WrkFigures } from '../wrk-output.js';
import { startBare } from './relay-load-kit.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '64' },
    threads: { type: 'string', default: '1' },
    'min-entries': { type: 'string', default: '150' },
    json: { type: 'string' },
  },
});
const SECONDS = Number(values.seconds);
const ROUNDS = Math.max(1, Number(values.rounds));
const CONNECTIONS = Number(values.connections);
const THREADS = Number(values.threads);
const MIN_ENTRIES = Number(values['min-entries']);
const KEY = '6f1c2a4e-9b7d-4c3a-8e21-5d0f4b6a7c19';
const BODY = '{"jsonrpc":"2.0","id":1,"method":"getRecentPrioritizationFees","params":[]}';


async function feeEntries(url: string, headers: Record<string, string>): Promise<number> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: BODY });
  const j = (await res.json()) as { result?: unknown[] };
  if (!Array.isArray(j.result)) throw new Error(`no result from ${url}: ${JSON.stringify(j).slice(0, 200)}`);
  return j.result.length;
}

/** The wrk script: the body and, for the relay, the key. No per-response Lua hook: it costs wrk (on the same 2 cores) more than the relay's whole answer. */
function wrkScript(dir: string, name: string, key: string | null, body: string = BODY): string {
  const file = join(dir, `${name}.lua`);
  writeFileSync(
    file,
    'wrk.method = "POST"\nwrk.body = ' + JSON.stringify(body) + '\nwrk.headers["content-type"] = "application/json"\n' +
      (key === null ? '' : 'wrk.headers["x-api-key"] = "' + key + '"\n'),
  );
  return file;
}

/** The relay's own count of getRecentPrioritizationFees answers, by outcome (its /metrics). */
async function relayOutcomes(rpcUrl: string): Promise<{ ok: number; other: number }> {
  const text = await (await fetch(rpcUrl + '/metrics', { headers: { 'x-api-key': KEY } })).text();
  let ok = 0;
  let other = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('slotrelay_requests_total{') || !line.includes('method="getRecentPrioritizationFees"')) continue;
    const n = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (line.includes('outcome="ok"')) ok += n;
    else other += n;
  }
  return { ok, other };
}

/** CPU ticks (user + system, 1/100 s on Linux) a process has used so far, threads included; NaN where /proc is absent. */
function cpuTicks(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return Number(rest[11]) + Number(rest[12]); // utime, stime (fields 14, 15)
  } catch {
    return NaN;
  }
}

/** The embedded localnet's pid: the relay's child process. */
function childPid(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/)[0]);
  } catch {
    return NaN;
  }
}

interface Run extends WrkFigures {
  /** Answers that were not a result: the relay's metrics (relay), a sample call before and after (direct). */
  readonly badAnswers: number;
  /** CPU time of the answering process per answered request, us (a figure other load on the box moves less). */
  readonly cpuUsPerRequest: number;
}

function runWrk(url: string, script: string): WrkFigures {
  const out = spawnSync('wrk', [`-t${THREADS}`, `-c${CONNECTIONS}`, `-d${SECONDS}s`, '--latency', '-s', script, url + '/'], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`wrk failed: ${out.stderr}`);
  return parseWrkOutput(out.stdout);
}

type Target = 'direct' | 'relay' | 'bare';

/** One side's run, checked: every relay answer counted ok by the relay itself; the direct and bare sides answering results. */
async function measure(
  target: Target,
  urls: { rpcUrl: string; localnetUrl: string; bareUrl: string; relayPid: number; localnetPid: number; barePid: number },
  scripts: { relay: string; direct: string },
): Promise<Run> {
  const pid = target === 'relay' ? urls.relayPid : target === 'direct' ? urls.localnetPid : urls.barePid;
  if (target !== 'relay') {
    const url = target === 'direct' ? urls.localnetUrl : urls.bareUrl;
    await feeEntries(url, {});
    const t0 = cpuTicks(pid);
    const run = runWrk(url, scripts.direct);
    const cpu = cpuTicks(pid) - t0;
    await feeEntries(url, {});
    return { ...run, badAnswers: 0, cpuUsPerRequest: r2((cpu * 10_000) / Math.max(1, run.requests)) };
  }
  const before = await relayOutcomes(urls.rpcUrl);
  const t0 = cpuTicks(pid);
  const run = runWrk(urls.rpcUrl, scripts.relay);
  const cpu = cpuTicks(pid) - t0;
  const after = await relayOutcomes(urls.rpcUrl);
  const ok = after.ok - before.ok;
  // wrk stops counting at its deadline; the relay may have answered a few more.
  const bad = after.other - before.other + Math.max(0, run.requests - ok);
  return { ...run, badAnswers: bad, cpuUsPerRequest: r2((cpu * 10_000) / Math.max(1, ok)) };
}

const median = (v: number[]): number => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];

const r2 = (n: number): number => Math.round(n * 100) / 100;

if (spawnSync('wrk', ['--version']).error) throw new Error('wrk is not installed (apt-get install wrk)');
const started = await startBenchRelay(10_000_000);
const dir = mkdtempSync(join(os.tmpdir(), 'slotrelay-fees-bench-'));
const relayScript = wrkScript(dir, 'relay', KEY);
const directScript = wrkScript(dir, 'direct', null);
let bare: ChildProcess | null = null;
try {
  const waitStart = Date.now();
  for (;;) {
    const n = await feeEntries(started.localnetUrl, {});
    if (n >= MIN_ENTRIES) break;
    if (Date.now() - waitStart > 120_000) throw new Error(`the localnet has only ${n} slots of fees after 120 s`);
    await new Promise((r) => setTimeout(r, 1_000));
  }
  // The bound serves the relay's own answer, as it is now (the bytes a relay sends; its slot does not matter).
  const relayAnswer = await (await fetch(started.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body: BODY })).text();
  const b = await startBare(dir, relayAnswer);
  bare = b.child;
  const pids = { ...started, bareUrl: b.url, relayPid: started.child.pid ?? NaN, localnetPid: childPid(started.child.pid ?? NaN), barePid: b.child.pid ?? NaN };
  const entries = { direct: await feeEntries(started.localnetUrl, {}), relay: await feeEntries(started.rpcUrl, { 'x-api-key': KEY }), bare: await feeEntries(b.url, {}) };
  console.log(`node ${process.version}, ${os.cpus().length} cpus, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`relay ${started.rpcUrl} -> embedded localnet ${started.localnetUrl}; ${entries.direct} entries per answer; wrk -t${THREADS} -c${CONNECTIONS} -d${SECONDS}s x ${ROUNDS} rounds per side`);

  const rows: { round: number; target: string; rps: number; p50Ms: number; p90Ms: number; p99Ms: number; requests: number; cpuUsPerRequest: number; badAnswers: number; non2xx: number }[] = [];
  const ratios: number[] = [];
  const boundRatios: number[] = [];
  const sides: Target[] = ['direct', 'relay', 'bare'];
  for (let round = 1; round <= ROUNDS; round++) {
    const order = sides.map((_, i) => sides[(i + round - 1) % sides.length]);
    const got = new Map<string, Run>();
    for (const target of order) {
      const run = await measure(target, pids, { relay: relayScript, direct: directScript });
      if (run.badAnswers !== 0 || run.non2xx !== 0) throw new Error(`${target}: ${run.badAnswers} answers were not results (${run.non2xx} non-2xx)`);
      got.set(target, run);
      rows.push({ round, target, rps: Math.round(run.requestsPerSec), p50Ms: run.p50ms, p90Ms: run.p90ms, p99Ms: run.p99ms, requests: run.requests, cpuUsPerRequest: run.cpuUsPerRequest, badAnswers: run.badAnswers, non2xx: run.non2xx });
    }
    ratios.push(r2(got.get('relay')!.requestsPerSec / got.get('direct')!.requestsPerSec));
    boundRatios.push(r2(got.get('bare')!.requestsPerSec / got.get('direct')!.requestsPerSec));
  }
  console.table(rows);

  // The floor: what one tiny JSON-RPC exchange costs each server on this box (HTTP, kernel, envelope), measured once
  // after the rounds. The relay answers an unknown method (-32601: auth, rate limit, parse, dispatch, no handler); the
  // localnet answers getHealth. No server can answer the fee call for less than its floor, which bounds the ratio.
  const floorRelay = (() => {
    const t0 = cpuTicks(pids.relayPid);
    const run = runWrk(started.rpcUrl, wrkScript(dir, 'relay-floor', KEY, '{"jsonrpc":"2.0","id":1,"method":"noSuchMethod","params":[]}'));
    return { ...run, cpuUsPerRequest: r2(((cpuTicks(pids.relayPid) - t0) * 10_000) / Math.max(1, run.requests)) };
  })();
  const floorDirect = (() => {
    const t0 = cpuTicks(pids.localnetPid);
    const run = runWrk(started.localnetUrl, wrkScript(dir, 'direct-floor', null, '{"jsonrpc":"2.0","id":1,"method":"getHealth"}'));
    return { ...run, cpuUsPerRequest: r2(((cpuTicks(pids.localnetPid) - t0) * 10_000) / Math.max(1, run.requests)) };
  })();
  const floors = [
    { target: 'relay, -32601 (floor)', rps: Math.round(floorRelay.requestsPerSec), p50Ms: floorRelay.p50ms, p99Ms: floorRelay.p99ms, cpuUsPerRequest: floorRelay.cpuUsPerRequest },
    { target: 'direct, getHealth (floor)', rps: Math.round(floorDirect.requestsPerSec), p50Ms: floorDirect.p50ms, p99Ms: floorDirect.p99ms, cpuUsPerRequest: floorDirect.cpuUsPerRequest },
  ];
  console.table(floors);
  const relayRows = rows.filter((r) => r.target === 'relay');
  const directRows = rows.filter((r) => r.target === 'direct');
  const bareRows = rows.filter((r) => r.target === 'bare');
  const summary = {
    relayRpsMedian: median(relayRows.map((r) => r.rps)),
    directRpsMedian: median(directRows.map((r) => r.rps)),
    ratioPerRound: ratios,
    ratioMedian: median(ratios),
    relayCpuUsPerRequestMedian: median(relayRows.map((r) => r.cpuUsPerRequest)),
    directCpuUsPerRequestMedian: median(directRows.map((r) => r.cpuUsPerRequest)),
    relayP99MsMedian: median(relayRows.map((r) => r.p99Ms)),
    directP99MsMedian: median(directRows.map((r) => r.p99Ms)),
    // The bound: uWS answering the same bytes with no work, against the same upstream in the same rounds.
    bareRpsMedian: median(bareRows.map((r) => r.rps)),
    bareCpuUsPerRequestMedian: median(bareRows.map((r) => r.cpuUsPerRequest)),
    boundRatioPerRound: boundRatios,
    boundRatioMedian: median(boundRatios),
    // The same bound in CPU: the upstream's cost of the call over the bare answer's.
    boundCpuRatio: r2(median(directRows.map((r) => r.cpuUsPerRequest)) / median(bareRows.map((r) => r.cpuUsPerRequest))),
    // The best ratio any relay could reach against this upstream: the direct fee call's CPU over the relay's floor.
    ratioBoundByRelayFloor: r2(median(directRows.map((r) => r.cpuUsPerRequest)) / floorRelay.cpuUsPerRequest),
    targets: { ratio: 5, relayP99Ms: 5 },
    met: { ratio: median(ratios) >= 5, relayP99: median(relayRows.map((r) => r.p99Ms)) < 5 },
  };
  console.log(summary);
  if (values.json !== undefined) {
    const out = {
      bench: 'prioritization-fees-load',
      command: `node dist/bench/e2e/prioritization-fees-load.js --seconds ${SECONDS} --rounds ${ROUNDS} --connections ${CONNECTIONS} --threads ${THREADS} --min-entries ${MIN_ENTRIES}`,
      node: process.version,
      cpus: os.cpus().length,
      loadAverage: os.loadavg(),
      when: new Date().toISOString(),
      entriesPerAnswer: entries,
      rows,
      floors,
      summary,
    };
    mkdirSync(dirname(values.json), { recursive: true });
    writeFileSync(values.json, JSON.stringify(out, null, 2) + '\n');
    console.log(`wrote ${values.json}`);
  }
} finally {
  bare?.kill('SIGTERM');
  started.child.kill('SIGTERM');
}
