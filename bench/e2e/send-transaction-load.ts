// End-to-end load bench: sendTransaction (skipPreflight, base64, 2,000 distinct real signed transactions) against
// the relay's uWS JSON-RPC host and, in the same run, against the node:http baseline doing the same work. The egress
// workers drain the rings into a discarding route (routes.discard: benchmark only), so the figure is
// "accepted and handed to the ring": the relay's req/s are wrk's rate times the share of its requests the relay counted
// as accepted (its own metrics, read before and after each round). Load generator: wrk (Debian package).
// Both servers run side by side (each idle while the other is loaded) and the rounds alternate relay, baseline,
// relay, ...: on a shared box whose speed drifts by 1.5x within minutes, each round's ratio compares two runs
// seconds apart, and the medians over rounds are the figures to quote.
// The bound (issue #28: relay / bare uWS >= 0.75): in each round, next to the relay row, the same uWS build answering
// the relay's own sendTransaction answer as a constant (bare-uws-answer.ts: no key, no parse, no ring), loaded with the
// same wrk script; relay / bare is what the relay's work costs against what uWS alone costs on this box. The pair is
// run again with the 11 headers @solana/web3.js sends (wrk's own requests carry 4): the relay reads headers through
// JavaScript, bare uWS only parses them, so that ratio is the one a web3.js client's requests see.
// The parse bound (bare-uws-answer.ts `parse`), in each round right after the bare row: bare uWS that also runs the
// least JavaScript a JSON-RPC front must (JSON.parse, base64 decode, base58 signature, answer text). Parse bound / bare
// is the best relay / bare any front that parses requests in JavaScript could show on this box; relay / parse bound is
// what the relay spends past that least.
// Refusal rows (issue #18 defect 9: a flood of garbage is the cheapest attack, so refusing must cost no more than
// accepting): in each round, after the accept and baseline rows, the same relay is loaded with an undecodable
// transaction (-32602, HTTP 200), an unknown key (401) and a rate-limited key (429), each counted from the relay's own
// metrics for that reason. Each refusal run is paired with an accept run right next to it (accept first in odd
// rounds, refusal first in even ones, the kinds' order rotated per round) and its ratio is refusal / that accept run:
// on this shared box the load drifts within the ~40 s of a round, and only adjacent runs compare (target: >= 1).
// Next to each relay row, the relay's CPU time per answered request (Linux /proc: its main thread, which is the front,
// and the whole process with the egress workers): a figure that other load on the box does not move much.
//   node dist/bench/e2e/send-transaction-load.js [--duration 8] [--connections 64] [--rounds 3] [--relay-cli other/dist/src/cli.js]
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { parseWrkOutput, type WrkFigures } from '../wrk-output.js';
import { cpuTimes, makeBodies, relayCounts, startBare, waitForLine, WEB3JS_HEADERS, writeScript, type RelayCounts } from './relay-load-kit.js';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '8' },
    connections: { type: 'string', default: '64' },
    rounds: { type: 'string', default: '3' },
    txs: { type: 'string', default: '2000' },
    /** Node flags for the relay, e.g. "--cpu-prof --cpu-prof-dir=DIR" (profiles of its threads). */
    'relay-node-args': { type: 'string', default: '' },
    /** The relay's cli.js (default this checkout's dist/src/cli.js): another build's, for a paired before/after. */
    'relay-cli': { type: 'string', default: 'dist/src/cli.js' },
  },
});
const DURATION_S = Number(values.duration);
const CONNECTIONS = Number(values.connections);
const ROUNDS = Math.max(1, Number(values.rounds));
const KEY = '11111111-2222-4333-8444-555555555555';
/** A key whose bucket holds one token refilled every 1,000 s: every request after the first is answered 429. */
/** Accepted transactions after which the relay is in steady state: receipts.capacity (default) + the rings' slots. */
const RECEIPTS_CAPACITY = 131_072;
const SLOTS_PER_RING = 65_536;
const STEADY_AFTER_ACCEPTED = RECEIPTS_CAPACITY + SLOTS_PER_RING;
const LIMITED_KEY = '11111111-2222-4333-8444-666666666666';
/** Well-formed, not in the key table: 401. */
const UNKNOWN_KEY = '11111111-2222-4333-8444-777777777777';

/** A refusal row: what wrk sends and the relay's own counter for the answer (outcome or rejection reason). */
interface Refusal {
  readonly name: string;
  readonly target: string;
  readonly reason: string;
  readonly script: string;
}

interface LoadResult extends WrkFigures {
  readonly target: string;
  /**
   * Relay rows: CPU microseconds per answered request, of the front thread and of the whole relay process. Bound rows
   * (bare uWS): of the bound's main thread, its only one doing work.
   */
  readonly frontCpuUsPerRequest?: number;
  readonly relayCpuUsPerRequest?: number;
}

function runWrk(target: string, url: string, script: string, durationS = DURATION_S): LoadResult {
  const out = spawnSync('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${durationS}s`, '--latency', '-s', script, url], { encoding: 'utf8' });
  return { target, ...parseWrkOutput(out.stdout) };
}

/** One wrk run with the CPU microseconds per answered request that process `pid` spent on it (main thread, whole process). */
function measuredRun(target: string, url: string, pid: number, script: string): { run: LoadResult; cpu: { front: number; process: number } | null } {
  const before = cpuTimes(pid);
  const run = runWrk(target, url, script);
  const after = cpuTimes(pid);
  if (before === null || after === null) return { run, cpu: null };
  const perRequest = (us: number): number => Number((us / Math.max(1, run.requests)).toFixed(2));
  return { run, cpu: { front: perRequest(after.front - before.front), process: perRequest(after.process - before.process) } };
}

/** One wrk run against a bound's server (one thread doing work), with that thread's CPU per answered request. */
function boundRun(target: string, url: string, pid: number, script: string): LoadResult {
  const { run, cpu } = measuredRun(target, url, pid, script);
  return cpu === null ? run : { ...run, frontCpuUsPerRequest: cpu.front };
}

/**
 * One wrk run against the relay, its rate scaled by the share of requests the relay itself counted under `reason`
 * ('ok' = accepted into a ring): a faster answer of another kind must not flatter the row.
 */
async function relayRun(target: string, url: string, pid: number, script: string, reason: string): Promise<{ run: LoadResult; others: Record<string, number> }> {
  const before = await relayCounts(url);
  const { run: wrkRun, cpu: cpuPerRequest } = measuredRun(target, url, pid, script);
  const after = await relayCounts(url);
  const delta = (c: RelayCounts): Record<string, number> => ({ ok: c.ok, ...c.rejected });
  const b = delta(before);
  const a = delta(after);
  const counted = (a[reason] ?? 0) - (b[reason] ?? 0);
  const others = Object.fromEntries(
    Object.entries(a).map(([k, v]) => [k, v - (b[k] ?? 0)] as const).filter(([k, v]) => k !== reason && v > 0),
  );
  const cpu = cpuPerRequest === null ? {} : { frontCpuUsPerRequest: cpuPerRequest.front, relayCpuUsPerRequest: cpuPerRequest.process };
  return { run: { ...wrkRun, requestsPerSec: wrkRun.requestsPerSec * Math.min(1, counted / Math.max(1, wrkRun.requests)), ...cpu }, others };
}

interface RefusalResult extends LoadResult {
  /** The accept run paired with this refusal run (adjacent in time). */
  readonly accept: LoadResult;
  /** This row's counted rate over its paired accept run's. */
  readonly ratio: number;
}

interface Round {
  readonly relay: LoadResult;
  readonly baseline: LoadResult;
  readonly ratio: number;
  /** The bare uWS bound's run (same round, right after the relay row) and relay / bare. */
  readonly bare: LoadResult;
  readonly bareRatio: number;
  /**
   * The parse bound (bare-uws-answer.ts `parse`: JSON.parse, base64 decode, base58 signature, answer text; right after
   * the bare row), relay / it, and it / bare: what the least JavaScript a JSON-RPC front must run costs against uWS alone.
   */
  readonly parseBound: LoadResult;
  readonly parseBoundRatio: number;
  readonly parseBoundOfBare: number;
  /** The same pair with the 11 headers @solana/web3.js sends on every request (wrk's own requests carry 4). */
  readonly relayWeb3js: LoadResult;
  readonly bareWeb3js: LoadResult;
  readonly bareRatioWeb3js: number;
  readonly refusals: Record<string, RefusalResult>;
}

async function main(): Promise<void> {
  if (spawnSync('wrk', ['--version']).error) throw new Error('wrk is not installed (apt-get install wrk)');
  const dir = mkdtempSync(join(tmpdir(), 'slotrelay-bench-'));
  const bodies = makeBodies(Number(values.txs));
  // wrk rotates through the bodies (Lua), so every request carries a distinct transaction.
  const script = writeScript(dir, 'bodies', bodies.valid, KEY);
  const web3jsScript = writeScript(dir, 'bodies-web3js', bodies.valid, KEY, WEB3JS_HEADERS);
  const refusals: Refusal[] = [
    { name: 'undecodable', target: 'relay refuses: undecodable tx (-32602)', reason: 'tx_undecodable', script: writeScript(dir, 'undecodable', bodies.undecodable, KEY) },
    { name: 'unknownKey', target: 'relay refuses: unknown key (401)', reason: 'unauthorized', script: writeScript(dir, 'unknown-key', bodies.valid, UNKNOWN_KEY) },
    { name: 'rateLimited', target: 'relay refuses: rate limited (429)', reason: 'rate_limited', script: writeScript(dir, 'rate-limited', bodies.valid, LIMITED_KEY) },
  ];
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    stringify({
      rpcHost: { host: '127.0.0.1', port: 0 },
      admin: { port: 0 }, // the status page's default 8890 is one per host
      relayHost: { enabled: false },
      upstream: { rpcUrl: 'http://127.0.0.1:9' },
      rings: { workers: 1, slotsPerRing: SLOTS_PER_RING },
      receipts: { capacity: RECEIPTS_CAPACITY },
      routes: { discard: true },
      log: { level: 'warn' },
      keys: [
        { key: KEY, name: 'bench', rateLimit: { perSecond: 10_000_000, burst: 10_000_000 }, preflight: 'skip' },
        { key: LIMITED_KEY, name: 'bench-limited', rateLimit: { perSecond: 0.001, burst: 1 }, preflight: 'skip' },
      ],
    }),
  );

  const relay = spawn(process.execPath, [...values['relay-node-args'].split(' ').filter((x) => x !== ''), values['relay-cli'], 'start', '--config', config], { stdio: ['ignore', 'pipe', 'inherit'] });
  const base = spawn(process.execPath, ['dist/bench/e2e/node-http-baseline.js', config], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [ready, bReady] = await Promise.all([waitForLine(relay, 'relay_ready'), waitForLine(base, 'baseline_ready')]);
  const relayUrl = `http://127.0.0.1:${(ready.listeners as { port: number }[])[0].port}`;
  const relayPid = relay.pid ?? -1;
  const baseUrl = `http://127.0.0.1:${bReady.port as number}`;
  // The bound answers with the relay's own answer to the same request (one of the bodies; its signature is fixed).
  const relayAnswer = await (await fetch(relayUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body: bodies.valid[0] })).text();
  const bareServer = await startBare(dir, relayAnswer);
  const parseServer = await startBare(dir, relayAnswer, 'parse');
  // The parse bound answers what the relay answers (same signature, same id), or its rate would not compare.
  const parseAnswer = await (await fetch(parseServer.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bodies.valid[0] })).text();
  if (parseAnswer !== relayAnswer) throw new Error(`the parse bound answers ${parseAnswer}, the relay ${relayAnswer}`);
  runWrk('warmup', relayUrl, script);
  // Steady state, as a relay that has run a while is: every ring slot written once (first writes fault the pages in)
  // and the receipt table full, so that accepting overwrites the oldest receipt (its Map and the old generation stop
  // growing). Before this the first relay row of round 1 still paid that fill: 40 us of front CPU per request against
  // 25-27 us in the rows after it, i.e. the quoted relay / bare uWS was the fill's, not the relay's.
  for (let i = 0; i < 20 && (await relayCounts(relayUrl)).ok < STEADY_AFTER_ACCEPTED; i++) runWrk('warmup', relayUrl, script, 3);
  runWrk('warmup', baseUrl, script);
  runWrk('warmup', bareServer.url, script);
  runWrk('warmup', parseServer.url, script);
  runWrk('warmup', relayUrl, web3jsScript, Math.min(DURATION_S, 3));
  runWrk('warmup', bareServer.url, web3jsScript, Math.min(DURATION_S, 3));
  // The refusal paths get their own (shorter) warm-up, so no row is measured while its code is still being compiled.
  for (const f of refusals) runWrk('warmup', relayUrl, f.script, Math.min(DURATION_S, 3));
  const rounds: Round[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    // What counts is what the relay accepted into a ring, not what wrk got an answer to: an overload or rate-limit
    // answer is fast and would flatter the figure. The relay's own ok counter over the round gives the share.
    const accept = await relayRun('uWS relay (JSON-RPC host)', relayUrl, relayPid, script, 'ok');
    if (Object.keys(accept.others).length > 0) console.log(`round ${r + 1}: relay rejections`, accept.others);
    const relayResult = accept.run;
    const baseRun = runWrk('node:http baseline (same work)', baseUrl, script);
    const bareRun = boundRun('bare uWS (constant answer)', bareServer.url, bareServer.child.pid ?? -1, script);
    const parseRun = boundRun('bare uWS + parse (JSON, base64, base58)', parseServer.url, parseServer.child.pid ?? -1, script);
    const acceptWeb3js = await relayRun('uWS relay, web3.js headers', relayUrl, relayPid, web3jsScript, 'ok');
    if (Object.keys(acceptWeb3js.others).length > 0) console.log(`round ${r + 1}: relay rejections (web3.js headers)`, acceptWeb3js.others);
    const bareWeb3js = runWrk('bare uWS, web3.js headers', bareServer.url, web3jsScript);
    // Each refusal kind next to its own accept run (see the header); order of kinds rotated, of each pair alternated.
    const refused: Record<string, RefusalResult> = {};
    for (let k = 0; k < refusals.length; k++) {
      const f = refusals[(k + r) % refusals.length];
      const acceptFirst = r % 2 === 0;
      const pairedAccept = acceptFirst ? await relayRun('  accept (paired)', relayUrl, relayPid, script, 'ok') : undefined;
      const { run, others } = await relayRun(f.target, relayUrl, relayPid, f.script, f.reason);
      const paired = pairedAccept ?? (await relayRun('  accept (paired)', relayUrl, relayPid, script, 'ok'));
      if (Object.keys(others).length > 0) console.log(`round ${r + 1}: ${f.name}: answers of another kind`, others);
      if (Object.keys(paired.others).length > 0) console.log(`round ${r + 1}: accept paired with ${f.name}: relay rejections`, paired.others);
      refused[f.name] = { ...run, accept: paired.run, ratio: run.requestsPerSec / paired.run.requestsPerSec };
    }
    rounds.push({
      relay: relayResult,
      baseline: baseRun,
      ratio: relayResult.requestsPerSec / baseRun.requestsPerSec,
      bare: bareRun,
      bareRatio: relayResult.requestsPerSec / bareRun.requestsPerSec,
      parseBound: parseRun,
      parseBoundRatio: relayResult.requestsPerSec / parseRun.requestsPerSec,
      parseBoundOfBare: parseRun.requestsPerSec / bareRun.requestsPerSec,
      relayWeb3js: acceptWeb3js.run,
      bareWeb3js,
      bareRatioWeb3js: acceptWeb3js.run.requestsPerSec / bareWeb3js.requestsPerSec,
      refusals: refused,
    });
  }
  const metrics = await (await fetch(`${relayUrl}/metrics`)).text();
  relay.kill('SIGTERM');
  base.kill('SIGTERM');
  bareServer.child.kill('SIGTERM');
  parseServer.child.kill('SIGTERM');
  await Promise.all([relay, base, bareServer.child, parseServer.child].map((c) => new Promise((r) => c.once('exit', r))));

  const handed = Number(/slotrelay_egress_records_total\{stage="consumed"\} (\d+)/.exec(metrics)?.[1] ?? NaN);
  console.table(
    rounds.flatMap((r, i) => [
      { round: i + 1, ...r.relay, requestsPerSec: Math.round(r.relay.requestsPerSec) },
      { round: i + 1, ...r.baseline, requestsPerSec: Math.round(r.baseline.requestsPerSec), ratio: r.ratio.toFixed(2) },
      { round: i + 1, ...r.bare, requestsPerSec: Math.round(r.bare.requestsPerSec), ratio: r.bareRatio.toFixed(2) },
      { round: i + 1, ...r.parseBound, requestsPerSec: Math.round(r.parseBound.requestsPerSec), ratio: r.parseBoundRatio.toFixed(2) },
      { round: i + 1, ...r.relayWeb3js, requestsPerSec: Math.round(r.relayWeb3js.requestsPerSec) },
      { round: i + 1, ...r.bareWeb3js, requestsPerSec: Math.round(r.bareWeb3js.requestsPerSec), ratio: r.bareRatioWeb3js.toFixed(2) },
      ...refusals.flatMap((f) => {
        const { accept, ratio, ...x } = r.refusals[f.name];
        return [
          { round: i + 1, ...accept, requestsPerSec: Math.round(accept.requestsPerSec) },
          { round: i + 1, ...x, requestsPerSec: Math.round(x.requestsPerSec), ratio: ratio.toFixed(2) },
        ];
      }),
    ]),
  );
  console.log('ratio: node:http row = relay / node:http; bare uWS rows = the relay row above / bare uWS (same headers); parse row = that relay row / the parse bound; refusal rows = refusal / the accept run paired with it (listed above it)');
  const median = (xs: number[]): number => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const refusalSummary = Object.fromEntries(
    refusals.map((f) => {
      const xs = rounds.map((r) => r.refusals[f.name]);
      const ratio = Number(median(xs.map((x) => x.ratio)).toFixed(2));
      return [
        f.name,
        {
          requestsPerSec: Math.round(median(xs.map((x) => x.requestsPerSec))),
          p99ms: median(xs.map((x) => x.p99ms)),
          acceptRequestsPerSec: Math.round(median(xs.map((x) => x.accept.requestsPerSec))),
          acceptP99ms: median(xs.map((x) => x.accept.p99ms)),
          ratio,
          /** Front-thread CPU per request, refusal / paired accept (median of per-round ratios); NaN off Linux. */
          frontCpuRatio: Number(median(xs.map((x) => (x.frontCpuUsPerRequest ?? NaN) / (x.accept.frontCpuUsPerRequest ?? NaN))).toFixed(2)),
          met: ratio >= 1,
        },
      ] as const;
    }),
  );
  const summary = {
    relayRequestsPerSec: Math.round(median(rounds.map((r) => r.relay.requestsPerSec))),
    relayP99ms: median(rounds.map((r) => r.relay.p99ms)),
    baselineRequestsPerSec: Math.round(median(rounds.map((r) => r.baseline.requestsPerSec))),
    ratio: Number(median(rounds.map((r) => r.ratio)).toFixed(2)),
    bareRequestsPerSec: Math.round(median(rounds.map((r) => r.bare.requestsPerSec))),
    bareP99ms: median(rounds.map((r) => r.bare.p99ms)),
    /** relay / bare uWS, median of the per-round ratios (issue #28: >= 0.75). */
    bareRatio: Number(median(rounds.map((r) => r.bareRatio)).toFixed(2)),
    bareFrontCpuUsPerRequest: median(rounds.map((r) => r.bare.frontCpuUsPerRequest ?? NaN)),
    parseBoundRequestsPerSec: Math.round(median(rounds.map((r) => r.parseBound.requestsPerSec))),
    parseBoundFrontCpuUsPerRequest: median(rounds.map((r) => r.parseBound.frontCpuUsPerRequest ?? NaN)),
    relayFrontCpuUsPerRequest: median(rounds.map((r) => r.relay.frontCpuUsPerRequest ?? NaN)),
    /** relay / the parse bound: the relay's work past the least JavaScript a JSON-RPC front runs. */
    parseBoundRatio: Number(median(rounds.map((r) => r.parseBoundRatio)).toFixed(2)),
    /** The parse bound / bare uWS: the best relay / bare any front that parses in JavaScript could show here. */
    parseBoundOfBare: Number(median(rounds.map((r) => r.parseBoundOfBare)).toFixed(2)),
    relayWeb3jsRequestsPerSec: Math.round(median(rounds.map((r) => r.relayWeb3js.requestsPerSec))),
    relayWeb3jsFrontCpuUsPerRequest: median(rounds.map((r) => r.relayWeb3js.frontCpuUsPerRequest ?? NaN)),
    bareWeb3jsRequestsPerSec: Math.round(median(rounds.map((r) => r.bareWeb3js.requestsPerSec))),
    /** The same ratio with @solana/web3.js's 11 request headers: what a web3.js client's requests cost. */
    bareRatioWeb3js: Number(median(rounds.map((r) => r.bareRatioWeb3js)).toFixed(2)),
    refusals: refusalSummary,
  };
  console.log(
    `medians over ${ROUNDS} rounds: relay ${summary.relayRequestsPerSec} req/s p99 ${summary.relayP99ms} ms; node:http ${summary.baselineRequestsPerSec} req/s; ` +
      `uWS / node:http = ${summary.ratio}x; bare uWS ${summary.bareRequestsPerSec} req/s p99 ${summary.bareP99ms} ms, relay / bare = ${summary.bareRatio}x  (wrk -t1 -c${CONNECTIONS} -d${DURATION_S}s per run, load generator on the same 2 cores)`,
  );
  console.log(
    `  parse bound (JSON.parse, base64, base58, answer text on bare uWS) ${summary.parseBoundRequestsPerSec} req/s: parse bound / bare = ${summary.parseBoundOfBare}x, ` +
      `relay / parse bound = ${summary.parseBoundRatio}x; CPU per request of the serving thread: bare ${summary.bareFrontCpuUsPerRequest} us, parse bound ${summary.parseBoundFrontCpuUsPerRequest} us, relay front ${summary.relayFrontCpuUsPerRequest} us`,
  );
  console.log(
    `  with @solana/web3.js's 11 request headers: relay ${summary.relayWeb3jsRequestsPerSec} req/s (front CPU ${summary.relayWeb3jsFrontCpuUsPerRequest} us/request), ` +
      `bare uWS ${summary.bareWeb3jsRequestsPerSec} req/s, relay / bare = ${summary.bareRatioWeb3js}x`,
  );
  for (const f of refusals) {
    const x = refusalSummary[f.name];
    console.log(
      `  ${f.target}: ${x.requestsPerSec} req/s p99 ${x.p99ms} ms; paired accept runs ${x.acceptRequestsPerSec} req/s p99 ${x.acceptP99ms} ms; ` +
        `refusal / accept = ${x.ratio}x (median of per-round ratios); front CPU per request refusal / accept = ${x.frontCpuRatio}x`,
    );
  }
  const met = (ok: boolean): string => (ok ? 'met' : 'NOT met');
  console.log(
    `targets (median): >= 25,000 req/s ${met(summary.relayRequestsPerSec >= 25_000)}; p99 < 5 ms ${met(summary.relayP99ms < 5)}; >= 1.5x ${met(summary.ratio >= 1.5)}; relay / bare uWS >= 0.75 ${met(summary.bareRatio >= 0.75)}`,
  );
  console.log(
    `refusing no dearer than accepting (each refusal row >= its paired accept run, median ratio): ` +
      refusals.map((f) => `${f.name} ${met(refusalSummary[f.name].met)} (${refusalSummary[f.name].ratio}x)`).join('; '),
  );
  if (!Number.isNaN(handed)) console.log(`records consumed from the rings by the relay's workers (incl. warm-up): ${handed}`);
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(
    'bench/results/send-transaction-load.json',
    JSON.stringify({ date: new Date().toISOString(), durationS: DURATION_S, connections: CONNECTIONS, rounds, summary }, null, 2) + '\n',
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
