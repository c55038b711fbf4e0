// `slotrelay bench landing` (CLI process; cold): per scenario, start the relays on the embedded localnet (or use the
// given cluster and relay), fund payers, run the route sets interleaved in the same slots (a short warm-up, then the
// measured phase, --repeat times, merged) or one after another (--sequential), and write {out}.json and {out}.html
// with each set's landed share, its 95% interval and its difference from the best set (docs/landing.md).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os, { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Keypair } from '@solana/web3.js';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../config/load.js';
import { closeHttp, rpcCall } from './http.js';
import { parseLandingArgs, type BenchSource, type Fanout, type LandingBenchOptions, type RouteSet, type Scenario } from './options.js';
import { airdropPayers, loadKeypair, TransferFactory } from './payers.js';
import { againstBest, pct2, wilson } from './intervals.js';
import { mergePhases, runPhase, type PhaseLane, type PhaseResult, type PhaseTarget } from './phase.js';
import { localnetSection, startBenchRelay, waitRelayReady, type BenchRelay } from './relays.js';
import type { Interleave, LandingReport, ScenarioResult, SetResult, ValidatorInfo } from './report.js';
import { renderHtml } from './report-html.js';
import { SET_COLOURS } from './report-svg.js';
import { defaultWsUrl, SlotTracker } from './slot-tracker.js';
import { runCounters, setFigures, timelineSeries, type SlotLoad } from './stats.js';

/** How long a remote run waits for the cluster's slot time to be measured (~16 slots at 250 ms) before the fallback. */
const SLOT_TIME_WAIT_MS = 4_000;

/** The warm-up's default length (--warmup). */
const WARMUP_MS = 1_000;
const WARMUP_RATE = 20;
const LEGEND_VALIDATORS = 7;

type Log = (line: string) => void;

/** The localnet's per-slot leader load from `from` on (an older localnet without the method: none). */
async function slotLoadOf(rpcUrl: string, from: number): Promise<SlotLoad[] | undefined> {
  try {
    return (await rpcCall<{ slots: SlotLoad[] }>(rpcUrl, 'localnet_getSlotLoad', [{ from }])).slots;
  } catch {
    return undefined;
  }
}

/** A TCP port free on 127.0.0.1 now (the block engine binds it a moment later). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      const port = typeof a === 'object' && a !== null ? a.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function validatorsOf(rpcUrl: string, scenario: Scenario | null): Promise<ValidatorInfo[]> {
  const va = await rpcCall<{ current: { nodePubkey: string; activatedStake: number }[] }>(rpcUrl, 'getVoteAccounts');
  const sorted = [...va.current].sort((a, b) => b.activatedStake - a.activatedStake);
  const total = sorted.reduce((a, v) => a + v.activatedStake, 0) || 1;
  return sorted.slice(0, LEGEND_VALIDATORS).map((v, i) => {
    const lossy = i === 0 && scenario !== null && (scenario.leaderLossPct > 0 || scenario.leaderTxDropPct > 0);
    return {
      identity: v.nodePubkey,
      stake: v.activatedStake,
      label: `${v.nodePubkey.slice(0, 4)} (${Math.round((v.activatedStake / total) * 100)}% stake)${lossy ? ' LOSSY' : ''}`,
    };
  });
}

interface Driver {
  readonly target: (set: RouteSet) => PhaseTarget & { readonly identity: string | null };
  readonly rpcUrl: string;
  readonly wsUrl: string;
  readonly payers: () => Promise<import('@solana/web3.js').Keypair[]>;
  readonly localnet: Record<string, unknown> | null;
  stop(): Promise<void>;
}

/** A relay the bench starts: its fanout policy, whether its adaptive routing is on, and its slot source. */
interface RelayVariant {
  readonly fanout: Fanout;
  readonly adaptive: boolean;
  readonly source: BenchSource;
}

function variantKey(v: RelayVariant): string {
  return `${v.fanout}${v.adaptive ? ', adaptive' : ''}, ${v.source}`;
}

async function localDriver(o: LandingBenchOptions, sc: Scenario, log: Log): Promise<Driver> {
  const cliPath = fileURLToPath(new URL('../cli.js', import.meta.url));
  // One relay per fanout policy and source, and one more per policy for the adaptive set (its own config:
  // routing.adaptive). Sets without the direct route go to the first relay of their source.
  const sources = sourcesOf(o);
  const sourceOf = (s: RouteSet): BenchSource => s.source ?? sources[0];
  const variants: RelayVariant[] = [];
  const want = (v: RelayVariant): void => {
    if (!variants.some((x) => variantKey(x) === variantKey(v))) variants.push(v);
  };
  for (const s of o.sets) if (s.fanout !== null) want({ fanout: s.fanout, adaptive: s.adaptive === true, source: sourceOf(s) });
  for (const s of o.sets) if (s.fanout === null && !variants.some((v) => v.source === sourceOf(s))) want({ fanout: 'window-aware', adaptive: false, source: sourceOf(s) });
  // The relay that runs the embedded localnet takes its slots from the localnet's gRPC server when it serves one, so
  // with grpc among the sources it is a grpc relay; the pubsub relays stand on the same localnet without upstream.grpc.
  const grpc = sources.includes('grpc');
  variants.sort((a, b) => Number(grpc && b.source === 'grpc') - Number(grpc && a.source === 'grpc'));
  // One identity for every relay of the run (a file, so a scenario can stake it before the localnet starts), and a
  // port for the block engine when a set names the jito route (its URL must be in the relays' config at start).
  const idDir = mkdtempSync(join(tmpdir(), 'slotrelay-landing-id-'));
  const keypair = Keypair.generate();
  const keypairPath = join(idDir, 'relay-identity.json');
  writeFileSync(keypairPath, JSON.stringify(Array.from(keypair.secretKey)));
  // The adaptive set's relay may add jito, so it has the route too.
  const jitoPort = o.sets.some((s) => s.routes.includes('jito') || s.adaptive === true) ? await freePort() : undefined;
  const jitoUrl = jitoPort === undefined ? undefined : `http://127.0.0.1:${jitoPort}`;
  // --source grpc: the localnet serves Yellowstone gRPC and every relay of the run takes its slots from it.
  const section = { ...localnetSection(sc, keypair.publicKey.toBase58(), jitoPort), ...(grpc ? { grpcPort: 0 } : {}) };
  const relays = new Map<string, BenchRelay>();
  const stopAll = async (): Promise<void> => {
    for (const r of [...relays.values()].reverse()) await r.stop();
    rmSync(idDir, { recursive: true, force: true });
  };
  try {
    const v0 = variants[0];
    log(`[${sc.name}] starting the relay (${variantKey(v0)}) with its embedded localnet ${JSON.stringify(section)}`);
    const first = await startBenchRelay({ fanout: v0.fanout, localnet: section, cliPath, keypairPath, jitoUrl, adaptive: v0.adaptive, relayRetries: o.relayRetries });
    relays.set(variantKey(v0), first);
    for (const v of variants.slice(1)) {
      log(`[${sc.name}] starting a relay (${variantKey(v)}) on the same localnet`);
      const grpcUrl = v.source === 'grpc' ? (first.grpcUrl ?? undefined) : undefined;
      relays.set(variantKey(v), await startBenchRelay({ fanout: v.fanout, upstream: first.localnetUrl, grpcUrl, cliPath, keypairPath, jitoUrl, adaptive: v.adaptive, relayRetries: o.relayRetries }));
    }
    for (const r of relays.values()) await waitRelayReady(r.relayUrl);
  } catch (err) {
    await stopAll();
    throw err;
  }
  const first = relays.get(variantKey(variants[0]))!;
  return {
    rpcUrl: first.localnetUrl,
    wsUrl: defaultWsUrl(first.localnetUrl),
    localnet: section,
    payers: () => airdropPayers(first.localnetUrl, o.payers),
    target: (set) => {
      const r =
        set.fanout === null
          ? relays.get(variantKey(variants.find((v) => v.source === sourceOf(set))!))!
          : relays.get(variantKey({ fanout: set.fanout, adaptive: set.adaptive === true, source: sourceOf(set) }))!;
      return { rpcUrl: first.localnetUrl, relayUrl: r.relayUrl, apiKey: r.apiKey, localnet: true, identity: r.identity || null };
    },
    stop: stopAll,
  };
}

function remoteDriver(o: LandingBenchOptions): Driver {
  const t = o.remote!;
  return {
    rpcUrl: t.rpcUrl,
    wsUrl: t.wsUrl ?? defaultWsUrl(t.rpcUrl),
    localnet: null,
    payers: () => Promise.resolve([loadKeypair(t.keypairPath)]),
    target: () => ({ rpcUrl: t.rpcUrl, relayUrl: t.relayUrl.replace(/\/+$/, ''), apiKey: t.apiKey, localnet: false, identity: null }),
    stop: () => Promise.resolve(),
  };
}

/** The relay's slot source as /health?detail says it (`grpc`, `pubsub`, `poll`), or `unknown`. */
async function slotSourceOf(relayUrl: string): Promise<string> {
  try {
    const h = (await (await fetch(`${relayUrl}/health?detail`)).json()) as { slotSource?: { active?: string } | null };
    return h.slotSource?.active ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

async function runScenario(o: LandingBenchOptions, sc: Scenario, log: Log): Promise<ScenarioResult> {
  const driver = o.remote ? remoteDriver(o) : await localDriver(o, sc, log);
  let slots: SlotTracker | undefined;
  let factory: TransferFactory | undefined;
  try {
    slots = await SlotTracker.start(driver.rpcUrl, driver.wsUrl);
    const payers = await driver.payers();
    factory = await TransferFactory.start(driver.rpcUrl, payers, o.txFormat);
    const validators = await validatorsOf(driver.rpcUrl, o.remote ? null : sc);
    // The slot time: the scenario's on the embedded localnet (the bench set it), measured from the cluster's slot
    // notifications on a remote one (docs/slot-time.md). Landing polls run once a slot, 100..400 ms apart: no faster
    // than 10/s against an RPC node, and a ms-to-land resolution of at most 400 ms on slow localnet scenarios.
    const slotMs = o.remote ? (await slots.measuredSlotMs(SLOT_TIME_WAIT_MS)).slotMs : sc.slotMs;
    const pollMs = Math.max(100, Math.min(400, slotMs));
    // Cold paths off the clock: connections, leader data and the relay's first QUIC handshakes.
    const targets = o.sets.map((set) => driver.target(set));
    const lanes: PhaseLane[] = o.sets.map((set, i) => ({ relayUrl: targets[i].relayUrl, apiKey: targets[i].apiKey, routes: set.routes }));
    const base = { rpcUrl: driver.rpcUrl, relayUrl: lanes[0].relayUrl, apiKey: lanes[0].apiKey, localnet: targets[0].localnet };
    const repeat = o.repeat ?? 1;
    const warm = (names: string, l: readonly PhaseLane[]): Promise<PhaseResult> => {
      log(`[${sc.name}] ${names}: warm-up`);
      return runPhase(base, factory!, slots!, { lanes: l, assign: o.assign, ratePerSecond: Math.min(WARMUP_RATE, o.ratePerSecond), durationMs: o.warmupMs ?? WARMUP_MS, tailMs: 5_000, pollMs, maxRetries: o.maxRetries });
    };
    const measure = async (names: string, l: readonly PhaseLane[]): Promise<PhaseResult[]> => {
      const runs: PhaseResult[] = [];
      for (let r = 0; r < repeat; r++) {
        log(`[${sc.name}] ${names}: ${o.ratePerSecond} tx/s${l.length > 1 ? ` per set (${o.ratePerSecond * l.length} tx/s in all)` : ''} for ${o.durationMs / 1000} s${repeat > 1 ? ` (repeat ${r + 1}/${repeat})` : ''}`);
        runs.push(await runPhase(base, factory!, slots!, { lanes: l, assign: o.assign, ratePerSecond: o.ratePerSecond, durationMs: o.durationMs, tailMs: o.tailMs, pollMs, maxRetries: o.maxRetries, progress: log }));
      }
      return runs;
    };
    // Per set: its phases (its own, or the run's when interleaved) and its lane in them (undefined: alone).
    const perSet: { runs: PhaseResult[]; lane: number | undefined; startedAt: string }[] = [];
    let shared: PhaseResult | undefined;
    if (o.sequential === true || o.sets.length === 1) {
      for (const [i, set] of o.sets.entries()) {
        await warm(set.name, [lanes[i]]);
        const startedAt = new Date().toISOString();
        perSet.push({ runs: await measure(set.name, [lanes[i]]), lane: undefined, startedAt });
      }
    } else {
      // Interleaved (issue #44 item 1): every set in every slot, one warm-up and one measured phase for them all.
      const names = `${o.sets.length} sets interleaved (${o.assign?.kind ?? 'round-robin'})`;
      await warm(names, lanes);
      const startedAt = new Date().toISOString();
      const runs = await measure(names, lanes);
      shared = mergePhases(runs);
      for (let i = 0; i < o.sets.length; i++) perSet.push({ runs, lane: i, startedAt });
    }
    const sets: SetResult[] = [];
    for (const [i, set] of o.sets.entries()) {
      const target = targets[i];
      const { runs, lane, startedAt } = perSet[i];
      const merged = shared ?? mergePhases(runs);
      const figures = setFigures(merged, target.identity, lane);
      const ci = wilson(figures.landed, figures.sent);
      if (!o.remote) log(`[${sc.name}] ${set.name}: the relay's slot source at the end: ${await slotSourceOf(target.relayUrl)}`);
      log(
        `[${sc.name}] ${set.name}: landed ${figures.landedPct}% (${figures.landed}/${figures.sent}; 95% ${pct2(ci.lo)}-${pct2(ci.hi)}%), slots-to-land p50/p90/p99 ` +
          `${figures.slotsToLand.p50}/${figures.slotsToLand.p90}/${figures.slotsToLand.p99}, ms p50/p90/p99 ${figures.msToLand.p50}/${figures.msToLand.p90}/${figures.msToLand.p99}; ` +
          `submit p50/p99 ${figures.submitMs.p50}/${figures.submitMs.p99} ms, bench loop delay p99/max ${figures.benchLoopDelayMs.p99}/${figures.benchLoopDelayMs.max} ms`,
      );
      sets.push({
        set,
        colour: SET_COLOURS[i % SET_COLOURS.length],
        startedAt,
        endedAt: new Date(merged.endedAt).toISOString(),
        relayIdentity: target.identity,
        figures: { ...figures, landedCi95: { lo: pct2(ci.lo), hi: pct2(ci.hi) } },
        // The timeline draws the first repeat (the repeats' slots are far apart).
        timeline: timelineSeries(runs[0], o.remote ? undefined : await slotLoadOf(driver.rpcUrl, runs[0].leadersFrom), lane),
      });
    }
    const comparisons = againstBest(sets.map((x) => ({ name: x.set.name, share: wilson(x.figures.landed, x.figures.sent) }))).map((c) => ({
      set: c.set,
      against: c.against,
      diffPct: pct2(c.diff),
      lo: pct2(c.lo),
      hi: pct2(c.hi),
      significant: c.significant,
    }));
    for (const c of comparisons) log(`[${sc.name}] ${c.set} - ${c.against}: ${c.diffPct} points (95% ${c.lo} to ${c.hi})${c.significant ? '' : ': not significant'}`);
    const interleave = interleaveOf(o, sets, shared);
    const measured = await slots.measuredSlotMs(0);
    log(`[${sc.name}] cluster slot time measured from its slot notifications over the run: ${measured.measured ? `${measured.slotMs.toFixed(1)} ms` : 'not measured'}`);
    // A remote cluster's scenario carries the slot time measured for it (the bench set none).
    const counters = shared !== undefined ? runCounters(shared) : null;
    return {
      scenario: o.remote ? { ...sc, slotMs: Math.round(slotMs * 10) / 10 } : sc,
      validators,
      slotSource: slots.source,
      localnet: driver.localnet,
      sets,
      interleave,
      comparisons,
      ...(counters !== null ? { runCounters: counters } : {}),
    };
  } finally {
    factory?.stop();
    slots?.stop();
    await driver.stop();
  }
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

function sourcesOf(o: LandingBenchOptions): readonly BenchSource[] {
  return o.sources ?? [o.source ?? 'pubsub'];
}

/** How the sets shared the schedule: the run's distinct send slots and those in which every set sent. */
function interleaveOf(o: LandingBenchOptions, sets: readonly SetResult[], shared: PhaseResult | undefined): Interleave {
  const method = shared !== undefined ? 'interleaved' : 'sequential';
  const bySlot = new Map<number, Set<number>>();
  if (shared !== undefined) for (const r of shared.records) (bySlot.get(r.sendSlot) ?? bySlot.set(r.sendSlot, new Set()).get(r.sendSlot)!).add(r.lane);
  const all = shared !== undefined ? bySlot.size : sets.reduce((a, x) => a + (x.figures.slotsPresent ?? 0), 0);
  const everySet = shared !== undefined ? [...bySlot.values()].filter((l) => l.size === sets.length).length : sets.length > 1 ? 0 : all;
  return { method, assign: o.assign ?? { kind: 'round-robin' }, repeat: o.repeat ?? 1, slots: all, slotsWithEverySet: everySet };
}

function commit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

export const REPORT_NOTES = [
  'Landed: a confirmed (or finalized) status without error from getSignatureStatuses on the cluster, seen before the tail after the last send ended.',
  'Slots-to-land: landed slot minus the cluster slot the bench had seen (slotSubscribe) when it sent the request; percentiles are nearest-rank over landed transactions; the CDF is over all sent, so it levels off at the landed share.',
  'Ms-to-land: on the localnet, from the send to the localnet executing the transaction (CLOCK_MONOTONIC on both sides); elsewhere, to the first status poll that saw it (resolution: the poll interval).',
  'Route sets run interleaved in the same slots (transaction i to set i mod K, or to a seeded random set), after one uncounted warm-up; with --sequential, one after another, each after its own warm-up. Interleaved sets share the TPU counters: duplicates, copies read and validator drops are then the run\'s (runCounters), not a set\'s.',
  'Landed share: a 95% Wilson interval; each set against the best set: the difference of landed shares with a 95% Newcombe (hybrid score) interval, "not significant" where it holds 0. No correction for several comparisons.',
  'Duplicates: copies that reached a leader after the transaction had landed (refused AlreadyProcessed). Copies read per tx: every copy a validator read, including those dropped as not_leader.',
];

export async function runLandingBench(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  // `--render FILE.json [--out PATH]`: the HTML again from a report's JSON (after a change to the charts), no run.
  const render = argv.indexOf('--render');
  if (render >= 0) {
    const file = argv[render + 1];
    if (file === undefined) throw new ConfigError('--render needs the report JSON file');
    const outAt = argv.indexOf('--out');
    const out = outAt >= 0 && argv[outAt + 1] !== undefined ? argv[outAt + 1] : file.replace(/\.json$/, '');
    writeFileSync(`${out}.html`, renderHtml(JSON.parse(readFileSync(file, 'utf8')) as LandingReport));
    return 0;
  }
  const o = parseLandingArgs(argv, env);
  const log: Log = o.quiet ? () => undefined : (l) => process.stderr.write(l + '\n');
  const loadAtStart = os.loadavg()[0];
  const scenarios: ScenarioResult[] = [];
  try {
    for (const sc of o.scenarios) {
      scenarios.push(await runScenario(o, sc, log));
      // Written after each scenario, so a long matrix stopped half way keeps what it measured.
      writeReport(o, argv, scenarios, loadAtStart);
    }
  } finally {
    await closeHttp();
  }
  log(`wrote ${o.out}.json and ${o.out}.html`);
  return 0;
}

function writeReport(o: LandingBenchOptions, argv: readonly string[], scenarios: readonly ScenarioResult[], loadAtStart: number): void {
  const report: LandingReport = {
    tool: 'slotrelay bench landing',
    version: 1,
    createdAt: new Date().toISOString(),
    commit: commit(),
    host: { cpus: os.cpus().length, node: process.version, platform: `${os.platform()} ${os.arch()}`, loadAvg1m: [round2(loadAtStart), round2(os.loadavg()[0])] },
    params: {
      ratePerSecond: o.ratePerSecond,
      durationMs: o.durationMs,
      tailMs: o.tailMs,
      payers: o.payers,
      maxRetries: o.maxRetries ?? null,
      relayRetries: o.relayRetries ?? null,
      warmupMs: o.warmupMs ?? WARMUP_MS,
      source: o.source ?? 'pubsub',
      sources: [...sourcesOf(o)],
      method: o.sequential === true ? 'sequential' : 'interleaved',
      repeat: o.repeat ?? 1,
      target: o.remote ? `cluster ${new URL(o.remote.rpcUrl).host}, relay ${new URL(o.remote.relayUrl).host}` : 'embedded localnet (4 validators)',
      command: ['slotrelay bench landing', ...argv].join(' '),
    },
    scenarios,
    notes: REPORT_NOTES,
  };
  mkdirSync(dirname(o.out), { recursive: true });
  writeFileSync(`${o.out}.json`, JSON.stringify(report, null, 1) + '\n');
  writeFileSync(`${o.out}.html`, renderHtml(report));
}
