// `make soak` (issue #18): a bounded fault script against the real relay (driver process; cold orchestration).
//   node dist/scripts/soak/main.js [--seconds 600] [--rate 300] [--out bench/results/soak.json] [--workers 2]
// Starts the jito and static stand-ins (stand-in.ts), then `slotrelay start` with the embedded localnet and every
// route on (rpc -> the localnet, direct -> its leaders, static -> the QUIC stand-in, jito -> the HTTP stand-in);
// submits steadily over route sets covering every route and path (load.ts) while faults run on a schedule
// (faults.ts); then stops submitting, lets the egress settle, reads /metrics, stops the relay with SIGTERM and reads
// its `relay_stopped` line. Per route: accepted = sent + failed + dropped:* must hold with 0 unaccounted; the relay's
// RSS must stay flat (rss.ts); it must not crash. Exit 0 when all hold, 1 otherwise, 2 on bad usage.
// Everything it starts binds 127.0.0.1 and is killed on every exit path.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { outcomesFromMetrics, scrapeMetrics, sumMetric, type Sample } from './accounting.js';
import { FaultRunner, planFaults } from './faults.js';
import { keepAliveAgent } from './http.js';
import { Load, ROUTES, type RouteName } from './load.js';
import { BlockhashFollower, HealthWatch, OutcomeTimeline } from './observers.js';
import { RelayChild, sleep } from './relay-child.js';
import { printReport, resultJson, type SoakResult } from './report.js';
import { closeBooks } from './result.js';
import { RssSampler } from './rss.js';
import { ThreadHeapWatch } from './thread-heaps.js';
import { StandIn } from './stand-ins.js';
import { TransferSigner } from './transactions.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = join(ROOT, 'dist/src/cli.js');
const STAND_IN = join(ROOT, 'dist/scripts/soak/stand-in.js');

/** The key's routes when a request names none (JSON-RPC, /v1/transactions, /v1/submit without routes). */
const KEY_DEFAULT_ROUTES: readonly RouteName[] = ['rpc', 'direct'];
/** routes.static.everyTransaction is on (the default): every transaction of a key allowing static also goes there. */
const ADDED_ROUTES: readonly RouteName[] = ['static'];
const HEALTH_POLL_MS = 1_000;
const BLOCKHASH_POLL_MS = 5_000;
const RSS_POLL_MS = 5_000;
const OUTCOME_POLL_MS = 5_000;
/** Before the load: the relay reports `ok` (leader data fresh, every route deliverable) within this. */
const HEALTH_OK_WAIT_MS = 60_000;
/** After the load: answers still outstanding, then the egress settling (ring depth 0, outcomes stable). */
const SETTLE_ANSWERS_MS = 20_000;
const SETTLE_EGRESS_MS = 30_000;
/** SIGTERM -> exit: the drain (10 s by default) plus the stop's own grace. */
const STOP_WAIT_MS = 40_000;
const MAX_SECONDS = 3_600;

interface Args {
  readonly seconds: number;
  readonly rate: number;
  readonly workers: number;
  readonly maxInFlight: number;
  readonly out: string | null;
  /** receipts.capacity of the relay under soak (null: the relay's default); see receiptsCapacity(). */
  readonly receiptsCapacity: number | null;
}

function parse(): Args {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '600' },
      rate: { type: 'string', default: '300' },
      workers: { type: 'string', default: '2' },
      'max-in-flight': { type: 'string', default: '256' },
      out: { type: 'string' },
      'receipts-capacity': { type: 'string' },
    },
  });
  const int = (name: string, v: string | undefined, min: number, max: number): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be an integer in [${min}, ${max}], got ${String(v)}`);
    return n;
  };
  const seconds = int('seconds', values.seconds, 10, MAX_SECONDS);
  const rate = int('rate', values.rate, 1, 5_000);
  return {
    seconds,
    rate,
    workers: int('workers', values.workers, 1, 8),
    maxInFlight: int('max-in-flight', values['max-in-flight'], 1, 4_096),
    out: values.out ?? null,
    receiptsCapacity: receiptsCapacity(values['receipts-capacity'], rate, planFaults(seconds).warmupS),
  };
}

class UsageError extends Error {}

/**
 * The receipt table is a bounded ring (receipts.capacity entries: tens of MB of front-thread heap when full at the
 * default, docs/receipts.md) that fills at the submission rate: at the default 131,072 and 300 tx/s it is still filling 7 minutes in, which a
 * memory verdict cannot tell from a leak. By default the soak sizes it to fill during the warm-up (the largest power
 * of two <= rate x warm-up, at least 1,024), so what the verdict sees after warm-up is growth no bound stops.
 * `--receipts-capacity relay` keeps the relay's default; a number sets it.
 */
function receiptsCapacity(v: string | undefined, rate: number, warmupS: number): number | null {
  if (v === 'relay') return null;
  if (v !== undefined) {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1_024 || (n & (n - 1)) !== 0) throw new UsageError(`--receipts-capacity must be 'relay' or a power of two >= 1024, got ${v}`);
    return n;
  }
  let cap = 1_024;
  while (cap * 2 <= rate * warmupS) cap *= 2;
  return cap;
}

function relayConfig(args: Args, apiKey: string, jitoPort: number, staticPort: number): Record<string, unknown> {
  return {
    rpcHost: { host: '127.0.0.1', port: 0 },
    admin: { port: 0 }, // the status page's default 8890 is one per host
    relayHost: { host: '127.0.0.1', port: 0, quicPort: 0 }, // no QUIC ingress: 4433 may be taken on the host
    rings: { workers: args.workers },
    log: { level: 'info' },
    ...(args.receiptsCapacity === null ? {} : { receipts: { capacity: args.receiptsCapacity } }),
    routes: {
      defaultRoutes: ['rpc'],
      direct: { enabled: true },
      static: { peers: [`127.0.0.1:${staticPort}`], everyTransaction: true },
      jito: { url: `http://127.0.0.1:${jitoPort}` },
    },
    keys: [
      {
        key: apiKey,
        name: 'soak-bot',
        allowedRoutes: [...ROUTES],
        defaultRoutes: [...KEY_DEFAULT_ROUTES],
        rateLimit: { perSecond: 100_000, burst: 100_000 },
        preflight: 'skip',
      },
    ],
  };
}

/** Everything started, so every exit path can stop it. */
interface Started {
  relay: RelayChild | null;
  readonly standIns: StandIn[];
  readonly stoppers: (() => void)[];
  tmp: string | null;
}

function cleanup(s: Started): void {
  for (const stop of s.stoppers) stop();
  s.relay?.killAll();
  for (const p of s.standIns) p.kill('SIGKILL');
  if (s.tmp !== null) rmSync(s.tmp, { recursive: true, force: true });
  s.tmp = null;
}

async function scrape(base: string): Promise<Sample[] | null> {
  const agent = keepAliveAgent(1);
  try {
    return await scrapeMetrics(agent, base, 5_000);
  } finally {
    agent.destroy();
  }
}

/** Poll /metrics until the rings are empty, the retry queues too, and the outcome counters stop moving (bounded). */
async function settledMetrics(base: string, timeoutMs: number): Promise<{ samples: Sample[] | null; settled: boolean }> {
  const until = Date.now() + timeoutMs;
  let prev = '';
  let last: Sample[] | null = null;
  while (Date.now() < until) {
    const s = await scrape(base);
    if (s !== null) {
      last = s;
      const key = JSON.stringify(outcomesFromMetrics(s));
      const idle = sumMetric(s, 'slotrelay_ring_depth') === 0 && sumMetric(s, 'slotrelay_retry_queue_depth') === 0;
      if (idle && key === prev) return { samples: s, settled: true };
      prev = key;
    }
    await sleep(1_000);
  }
  return { samples: last, settled: false };
}

async function run(args: Args, started: Started): Promise<SoakResult> {
  for (const f of [CLI, STAND_IN]) if (!existsSync(f)) throw new UsageError(`${f} is missing: run make build first`);
  const startedAt = new Date().toISOString();
  const jito = new StandIn('jito', STAND_IN);
  const staticPeer = new StandIn('static', STAND_IN);
  started.standIns.push(jito, staticPeer);
  const [jitoPort, staticPort] = await Promise.all([jito.start(), staticPeer.start()]);

  const apiKey = randomUUID();
  started.tmp = mkdtempSync(join(tmpdir(), 'slotrelay-soak-'));
  const configFile = join(started.tmp, 'config.yaml');
  writeFileSync(configFile, stringify(relayConfig(args, apiKey, jitoPort, staticPort)));
  const relay = new RelayChild(CLI, configFile, ROOT);
  started.relay = relay;
  await relay.ready();
  const rpcUrl = relay.url('rpc');
  const relayUrl = relay.url('relay');
  const upstream = relay.upstream;
  if (upstream === null) throw new Error('relay_ready names no upstream (the embedded localnet)');

  const agent = keepAliveAgent(4);
  started.stoppers.push(() => agent.destroy());
  let loadStartMs = Date.now();
  const now = (): number => Math.round((Date.now() - loadStartMs) / 100) / 10;
  const health = new HealthWatch(agent, rpcUrl, now);
  const signer = new TransferSigner();
  const blockhash = new BlockhashFollower(agent, upstream, signer);
  await blockhash.refresh();
  const okBy = Date.now() + HEALTH_OK_WAIT_MS;
  let status = await health.poll();
  while (status !== 'ok' && Date.now() < okBy && relay.exit === null) {
    await sleep(500);
    status = await health.poll();
  }
  if (status !== 'ok') throw new Error(`relay not healthy before the load (status ${status}):\n${relay.tail.slice(-20).join('\n')}`);

  const plan = planFaults(args.seconds);
  const load = new Load({
    relayUrl,
    rpcUrl,
    apiKey,
    ratePerSecond: args.rate,
    maxInFlight: args.maxInFlight,
    signer,
    defaultRoutes: KEY_DEFAULT_ROUTES,
    addedRoutes: ADDED_ROUTES,
  });
  const rss = new RssSampler(relay.pid, () => relay.localnetPid, () => loadStartMs);
  const outcomeTimeline = new OutcomeTimeline(agent, rpcUrl, now);
  const heaps = new ThreadHeapWatch(agent, rpcUrl, now);
  const faults = new FaultRunner({ relay, jito, staticPeer, now });
  started.stoppers.push(
    () => load.close(),
    () => rss.stop(),
    () => health.stop(),
    () => blockhash.stop(),
    () => outcomeTimeline.stop(),
    () => heaps.stop(),
  );
  // A relay that dies under the load ends the run at once (and is reported as a crash).
  let sigtermSent = false;
  let crashedAtS: number | null = null;
  relay.child.once('exit', () => {
    if (crashedAtS === null && !sigtermSent) {
      crashedAtS = now();
      load.stop();
    }
  });

  loadStartMs = Date.now();
  rss.start(RSS_POLL_MS);
  heaps.start(RSS_POLL_MS);
  health.start(HEALTH_POLL_MS);
  blockhash.start(BLOCKHASH_POLL_MS);
  await outcomeTimeline.poll();
  outcomeTimeline.start(OUTCOME_POLL_MS);
  faults.schedule(plan);
  const progress = setInterval(() => {
    process.stderr.write(`soak: t=${now()} s accepted ${[...load.sets.values()].reduce((a, s) => a + s.accepted, 0)}, in flight ${load.inFlight}\n`);
  }, 60_000);
  started.stoppers.push(() => clearInterval(progress));
  await load.run(args.seconds);
  const loadEndS = now();
  clearInterval(progress);
  await faults.finish(30_000);
  // Whatever a fault left down comes back before the books are closed (a stopped peer would fail the drain).
  if (!jito.running) await jito.start();
  if (!staticPeer.running) await staticPeer.start();
  const answersSettled = await load.settle(SETTLE_ANSWERS_MS);
  rss.sample();
  await heaps.poll();
  const rssEndS = now();
  const { samples: finalMetrics, settled: egressSettled } = relay.exit === null ? await settledMetrics(rpcUrl, SETTLE_EGRESS_MS) : { samples: null, settled: false };
  health.stop();
  blockhash.stop();
  rss.stop();
  heaps.stop();
  outcomeTimeline.stop();

  const sigtermAt = Date.now();
  sigtermSent = true;
  relay.signal('SIGTERM');
  const exit = await relay.waitExit(STOP_WAIT_MS);
  const stopDurationS = exit === null ? null : Math.round((exit.atMs - sigtermAt) / 100) / 10;
  if (exit === null) relay.killAll();
  await Promise.all([jito.stop('SIGTERM'), staticPeer.stop('SIGTERM')]);

  return closeBooks({
    args,
    startedAt,
    plan,
    faults,
    load,
    relay,
    finalMetrics,
    egressSettled,
    answersSettled,
    settleAnswersMs: SETTLE_ANSWERS_MS,
    loadEndS,
    loadStartMs,
    heaps,
    rss,
    rssEndS,
    exit,
    stopDurationS,
    crashedAtS,
    standIns: [jito, staticPeer],
    health,
    blockhash,
    outcomeTimeline,
    keyDefaultRoutes: KEY_DEFAULT_ROUTES,
  });
}

async function main(): Promise<number> {
  let args: Args;
  try {
    args = parse();
  } catch (err) {
    process.stderr.write(`soak: ${(err as Error).message}\n`);
    return 2;
  }
  const started: Started = { relay: null, standIns: [], stoppers: [], tmp: null };
  const onSignal = (sig: NodeJS.Signals): void => {
    process.stderr.write(`soak: ${sig}: stopping everything it started\n`);
    cleanup(started);
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // Hard bound on the whole run: load + settle + stop + start-up margins.
  const hardLimitMs = (args.seconds + 300) * 1000;
  const hard = setTimeout(() => {
    process.stderr.write(`soak: still running after ${hardLimitMs / 1000} s: giving up\n`);
    cleanup(started);
    process.exit(1);
  }, hardLimitMs);
  hard.unref();
  try {
    const result = await run(args, started);
    process.stdout.write(printReport(result) + '\n');
    if (args.out !== null) {
      mkdirSync(dirname(args.out), { recursive: true });
      writeFileSync(args.out, resultJson(result) + '\n');
      process.stdout.write(`written ${args.out}\n`);
    }
    return result.verdict.ok ? 0 : 1;
  } catch (err) {
    process.stderr.write(`soak: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    if (started.relay !== null) process.stderr.write(`relay's last lines:\n${started.relay.tail.slice(-30).join('\n')}\n`);
    return err instanceof UsageError ? 2 : 1;
  } finally {
    cleanup(started);
    clearTimeout(hard);
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`soak: ${String(err)}\n`);
    process.exit(1);
  },
);
