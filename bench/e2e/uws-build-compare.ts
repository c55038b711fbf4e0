// Our uWS build vs the prebuilt one, same run (issue #29; harness process, cold). Two relays from one config, one on
// each build (SLOTRELAY_UWS_BUILD=source / maintained), both idle while the other is loaded; sendTransaction
// (skipPreflight, base64, 2,000 distinct real signed transfers) with wrk, rounds paired and interleaved: each round
// runs both, the order alternating (source first in odd rounds), so each pair compares two runs seconds apart on this
// shared, drifting box. Counted like bench-e2e: wrk's rate times the share the relay itself counted as accepted into a
// ring (routes.discard), plus the relay's CPU per request from /proc (front thread and whole process), a figure other
// load moves less. Before each run both relays must be idle (their CPU over 0.5 s under 5%, bounded at 15 s): a first
// attempt without that wait showed the relay run second in a pair slower by 2-4x, whichever build it was (the first
// one still draining its ring). Per-round ratios source / prebuilt; their median, and their geometric mean (in which
// a remaining first/second position effect cancels, the order alternating), are the figures to quote.
// With --baseline-cli, the same pairing compares this checkout with another build of the relay (its dist/src/cli.js),
// both on our source uWS: a before/after of a change to the front, in one run.
//   node dist/bench/e2e/uws-build-compare.js [--rounds 6] [--duration 8] [--connections 64] [--prebuilt maintained]
//                                           [--baseline-cli other/dist/src/cli.js] [--client-headers wrk|web3js]
//                                           [--json bench/results/uws-build.json]
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { parseWrkOutput, type WrkFigures } from '../wrk-output.js';
import { cpuTimes, makeBodies, relayCounts, waitForLine, WEB3JS_HEADERS, writeScript } from './relay-load-kit.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '6' },
    duration: { type: 'string', default: '8' },
    connections: { type: 'string', default: '64' },
    prebuilt: { type: 'string', default: 'maintained' },
    /** `web3js`: every request carries the 11 headers @solana/web3.js sends (relay-load-kit.ts), not wrk's 4. */
    'client-headers': { type: 'string', default: 'wrk' },
    /** Another build's dist/src/cli.js: compare this checkout with it (both on the source uWS build). */
    'baseline-cli': { type: 'string' },
    json: { type: 'string' },
  },
});
const ROUNDS = Math.max(1, Number(values.rounds));
const DURATION_S = Number(values.duration);
const CONNECTIONS = Number(values.connections);
/** The two relays compared: a (this checkout, our source uWS build) and b (the prebuilt build, or another checkout). */
interface Side {
  readonly label: string;
  readonly cli: string;
  readonly build: string;
}
const SIDES: readonly [Side, Side] =
  values['baseline-cli'] === undefined
    ? [
        { label: 'source', cli: 'dist/src/cli.js', build: 'source' },
        { label: values.prebuilt ?? 'maintained', cli: 'dist/src/cli.js', build: values.prebuilt ?? 'maintained' },
      ]
    : [
        { label: 'this build', cli: 'dist/src/cli.js', build: 'source' },
        { label: 'baseline', cli: values['baseline-cli'], build: 'source' },
      ];
const KEY = '11111111-2222-4333-8444-555555555555';

interface Run extends WrkFigures {
  readonly label: string;
  /** wrk's rate times the share of requests the relay counted as accepted. */
  readonly acceptedPerSec: number;
  readonly frontCpuUsPerRequest: number;
  readonly relayCpuUsPerRequest: number;
}

interface Relay {
  readonly label: string;
  readonly url: string;
  readonly child: ChildProcess;
  readonly runtime: string;
}

async function startRelay(side: Side, config: string): Promise<Relay> {
  const { build } = side;
  const child = spawn(process.execPath, [side.cli, 'start', '--config', config], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, SLOTRELAY_UWS_BUILD: build } });
  const ready = await waitForLine(child, 'relay_ready');
  const url = `http://127.0.0.1:${(ready.listeners as { port: number }[])[0]!.port}`;
  const detail = (await (await fetch(`${url}/health?detail`)).json()) as { http: { build: string; uws: string; package: string; packageVersion: string } };
  if (detail.http.build !== build) throw new Error(`asked for ${build}, the relay runs ${detail.http.build}`);
  return { label: side.label, url, child, runtime: `${side.label}: ${detail.http.build}: ${detail.http.uws} (${detail.http.package} ${detail.http.packageVersion})` };
}

/** Waits until no relay uses more than 5% of a core over 0.5 s (bounded at 15 s); the ms waited. */
async function settle(relays: readonly Relay[]): Promise<number> {
  const t0 = Date.now();
  while (Date.now() - t0 < 15_000) {
    const before = relays.map((r) => cpuTimes(r.child.pid ?? -1)?.process ?? 0);
    await new Promise((res) => setTimeout(res, 500));
    const busy = relays.some((r, i) => ((cpuTimes(r.child.pid ?? -1)?.process ?? 0) - before[i]!) / 500_000 > 0.05);
    if (!busy) break;
  }
  return Date.now() - t0;
}

async function run(relay: Relay, script: string, all: readonly Relay[]): Promise<Run> {
  await settle(all);
  const pid = relay.child.pid ?? -1;
  const before = await relayCounts(relay.url);
  const cpuBefore = cpuTimes(pid);
  const out = spawnSync('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${DURATION_S}s`, '--latency', '-s', script, relay.url], { encoding: 'utf8' });
  const cpuAfter = cpuTimes(pid);
  const after = await relayCounts(relay.url);
  const figures = parseWrkOutput(out.stdout);
  const accepted = after.ok - before.ok;
  const perRequest = (us: number): number => Number((us / Math.max(1, figures.requests)).toFixed(2));
  return {
    label: relay.label,
    ...figures,
    acceptedPerSec: Math.round(figures.requestsPerSec * Math.min(1, accepted / Math.max(1, figures.requests))),
    frontCpuUsPerRequest: cpuBefore && cpuAfter ? perRequest(cpuAfter.front - cpuBefore.front) : NaN,
    relayCpuUsPerRequest: cpuBefore && cpuAfter ? perRequest(cpuAfter.process - cpuBefore.process) : NaN,
  };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

async function main(): Promise<void> {
  if (spawnSync('wrk', ['--version']).error) throw new Error('wrk is not installed (apt-get install wrk)');
  const dir = mkdtempSync(join(tmpdir(), 'slotrelay-uws-bench-'));
  if (values['client-headers'] !== 'wrk' && values['client-headers'] !== 'web3js') throw new Error('--client-headers: wrk or web3js');
  const script = writeScript(dir, 'bodies', makeBodies(2000).valid, KEY, values['client-headers'] === 'web3js' ? WEB3JS_HEADERS : {});
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    stringify({
      rpcHost: { host: '127.0.0.1', port: 0 },
      admin: { port: 0 },
      relayHost: { enabled: false },
      upstream: { rpcUrl: 'http://127.0.0.1:9' },
      rings: { workers: 1, slotsPerRing: 65536 },
      routes: { discard: true },
      log: { level: 'warn' },
      keys: [{ key: KEY, name: 'bench', rateLimit: { perSecond: 10_000_000, burst: 10_000_000 }, preflight: 'skip' }],
    }),
  );
  const relays = [await startRelay(SIDES[0], config), await startRelay(SIDES[1], config)] as const;
  for (const r of relays) console.log(`relay on ${r.runtime}`);
  try {
    for (const r of relays) await run(r, script, relays); // warm-up, not counted
    const rounds: { a: Run; b: Run }[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const order = i % 2 === 0 ? [relays[0], relays[1]] : [relays[1], relays[0]];
      const first = await run(order[0]!, script, relays);
      const second = await run(order[1]!, script, relays);
      const a = first.label === SIDES[0].label ? first : second;
      const b = first.label === SIDES[0].label ? second : first;
      rounds.push({ a, b });
      console.log(
        `round ${i + 1} (${order[0]!.label} first): ${a.label} ${a.acceptedPerSec}/s p99 ${a.p99ms} ms cpu ${a.relayCpuUsPerRequest} us/req front ${a.frontCpuUsPerRequest}; ` +
          `${b.label} ${b.acceptedPerSec}/s p99 ${b.p99ms} ms cpu ${b.relayCpuUsPerRequest} us/req front ${b.frontCpuUsPerRequest}; ` +
          `rate ratio ${(a.acceptedPerSec / b.acceptedPerSec).toFixed(3)}`,
      );
    }
    const ratios = (f: (r: Run) => number): number[] => rounds.map((r) => f(r.a) / f(r.b));
    const geomean = (xs: readonly number[]): number => Number(Math.exp(xs.reduce((s, x) => s + Math.log(x), 0) / xs.length).toFixed(3));
    const rate = (r: Run): number => r.acceptedPerSec;
    const cpu = (r: Run): number => r.relayCpuUsPerRequest;
    const front = (r: Run): number => r.frontCpuUsPerRequest;
    const summary = {
      sides: SIDES.map((s) => s.label),
      aAcceptedPerSec: Math.round(median(rounds.map((r) => r.a.acceptedPerSec))),
      bAcceptedPerSec: Math.round(median(rounds.map((r) => r.b.acceptedPerSec))),
      rateRatio: Number(median(ratios(rate)).toFixed(3)),
      rateRatioGeomean: geomean(ratios(rate)),
      rateRatioRange: [Math.min(...ratios(rate)), Math.max(...ratios(rate))].map((x) => Number(x.toFixed(3))),
      aP99ms: median(rounds.map((r) => r.a.p99ms)),
      bP99ms: median(rounds.map((r) => r.b.p99ms)),
      aRelayCpuUsPerRequest: median(rounds.map((r) => r.a.relayCpuUsPerRequest)),
      bRelayCpuUsPerRequest: median(rounds.map((r) => r.b.relayCpuUsPerRequest)),
      cpuRatio: Number(median(ratios(cpu)).toFixed(3)),
      cpuRatioGeomean: geomean(ratios(cpu)),
      aFrontCpuUsPerRequest: median(rounds.map((r) => r.a.frontCpuUsPerRequest)),
      bFrontCpuUsPerRequest: median(rounds.map((r) => r.b.frontCpuUsPerRequest)),
      frontCpuRatio: Number(median(ratios(front)).toFixed(3)),
      frontCpuRatioGeomean: geomean(ratios(front)),
    };
    const [la, lb] = summary.sides;
    console.log(
      `medians over ${ROUNDS} paired rounds: ${la} ${summary.aAcceptedPerSec}/s vs ${lb} ${summary.bAcceptedPerSec}/s ` +
        `(ratio median ${summary.rateRatio}, geomean ${summary.rateRatioGeomean}, per round ${summary.rateRatioRange.join('-')}); p99 ${summary.aP99ms} vs ${summary.bP99ms} ms; ` +
        `relay CPU ${summary.aRelayCpuUsPerRequest} vs ${summary.bRelayCpuUsPerRequest} us/req (ratio median ${summary.cpuRatio}, geomean ${summary.cpuRatioGeomean}); ` +
        `front CPU ${summary.aFrontCpuUsPerRequest} vs ${summary.bFrontCpuUsPerRequest} us/req (ratio median ${summary.frontCpuRatio}, geomean ${summary.frontCpuRatioGeomean})  (wrk -t1 -c${CONNECTIONS} -d${DURATION_S}s per run, ${values['client-headers']} headers, same 2 cores)`,
    );
    if (values.json !== undefined) {
      mkdirSync(dirname(values.json), { recursive: true });
      writeFileSync(
        values.json,
        `${JSON.stringify({ date: new Date().toISOString(), node: process.versions.node, runtimes: relays.map((r) => r.runtime), durationS: DURATION_S, connections: CONNECTIONS, clientHeaders: values['client-headers'], rounds, summary }, null, 2)}\n`,
      );
    }
  } finally {
    for (const r of relays) r.child.kill('SIGTERM');
    await Promise.all(relays.map((r) => new Promise((res) => (r.child.exitCode === null ? r.child.once('exit', res) : res(null)))));
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
