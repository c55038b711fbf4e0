// What the status page costs the hot path (issue #27 item 1): sendTransaction load (wrk, distinct signed transfers,
// skipPreflight) against one real relay (embedded localnet for leader data, receipts on, routes.discard so the figure
// is "accepted and handed to a ring"), in rounds that alternate the page closed and the page open (an event-stream
// viewer on GET /events taking every frame, as a browser tab does), same relay, same run. Per run: the rate the relay
// itself counted as accepted, wrk's p50/p99, the front thread's CPU microseconds per request (Linux /proc). The ratio
// open / closed is taken per adjacent pair (this shared box drifts within minutes) and its median is the figure.
// After each open run, once the rings are empty, the page's next frame is checked against /metrics (the routes'
// totals and the key's requests): correct under load, not only fast.
// With --profile the relay runs under V8's sampling profiler (--cpu-prof): at the end the front thread's profile says
// how much of its time was spent under src/status/ (the page's own work, attributed sample by sample), a figure the
// box's noise does not move the way it moves a rate (status-profile.ts).
//   node dist/bench/status/page-cost.js [--duration 8] [--connections 64] [--rounds 3] [--profile] [--json bench/results/status-page.json]
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { get, type IncomingMessage } from 'node:http';
import { tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { stringify } from 'yaml';
import { parseWrkOutput, type WrkFigures } from '../wrk-output.js';
import { statusShare, type StatusShare } from './status-profile.js';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '8' },
    connections: { type: 'string', default: '64' },
    rounds: { type: 'string', default: '3' },
    txs: { type: 'string', default: '2000' },
    json: { type: 'string' },
    profile: { type: 'boolean', default: false },
  },
});
const DURATION_S = Number(values.duration);
const CONNECTIONS = Number(values.connections);
const ROUNDS = Math.max(1, Number(values.rounds));
const KEY = '11111111-2222-4333-8444-555555555555';

function bodies(n: number): string[] {
  const payer = Keypair.generate();
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash: Keypair.generate().publicKey.toBase58(), lastValidBlockHeight: 1 }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 + i }),
    );
    tx.sign(payer);
    out.push(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'sendTransaction', params: [tx.serialize().toString('base64'), { encoding: 'base64', skipPreflight: true }] }));
  }
  return out;
}

function wrkScript(dir: string, list: readonly string[]): string {
  const script = join(dir, 'bodies.lua');
  writeFileSync(
    script,
    'local bodies = {\n' + list.map((b) => `[==[${b}]==]`).join(',\n') + '\n}\nlocal i = 0\n' +
      'wrk.method = "POST"\nwrk.headers["content-type"] = "application/json"\nwrk.headers["x-api-key"] = "' + KEY + '"\n' +
      'request = function()\n  i = i % #bodies + 1\n  return wrk.format(nil, "/", nil, bodies[i])\nend\n',
  );
  return script;
}

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

/** CPU microseconds of the relay's main thread (the front); null off Linux. */
function frontCpuUs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1e6) / CLK_TCK;
  } catch {
    return null;
  }
}

async function scrape(url: string): Promise<string> {
  return (await fetch(`${url}/metrics`)).text();
}

const acceptedOf = (text: string): number => Number(/slotrelay_requests_total\{host="rpc",method="sendTransaction",outcome="ok"\} (\d+)/.exec(text)?.[1] ?? 0);
/** Every sendTransaction answered (any outcome): what the key's request count must equal here (one key, no batches). */
const answeredOf = (text: string): number =>
  [...text.matchAll(/slotrelay_requests_total\{host="rpc",method="sendTransaction",outcome="[^"]+"\} (\d+)/g)].reduce((s, m) => s + Number(m[1]), 0);
const outcomeOf = (text: string, outcome: string): number => Number(new RegExp(`slotrelay_egress_outcomes_total\\{route="rpc",outcome="${outcome}"\\} (\\d+)`).exec(text)?.[1] ?? 0);

interface Run extends WrkFigures {
  readonly page: 'closed' | 'open';
  /** Accepted per second, as the relay counted them (wrk's rate times the accepted share). */
  readonly acceptedPerSec: number;
  readonly frontCpuUsPerRequest: number | null;
  /** Open runs: frames the viewer received during the run. */
  readonly frames?: number;
  /** Open runs: what each frame cost the front thread (the relay's own measure, lastTickUs), median and max, us. */
  readonly tickUs?: { readonly median: number; readonly max: number };
  /** The run's start and end on CLOCK_MONOTONIC, us (the clock V8's profiler stamps its samples with). */
  readonly monoUs: readonly [number, number];
}

const monoUs = (): number => Number(process.hrtime.bigint() / 1000n);

/** A viewer of GET /events: keeps the newest frame, counts them. */
class Viewer {
  frames = 0;
  last: Record<string, unknown> | null = null;
  /** lastTickUs of every frame received. */
  readonly tickUs: number[] = [];
  private res: IncomingMessage | null = null;

  open(admin: string): Promise<void> {
    return new Promise((resolve, reject) => {
      get(`${admin}/events`, (res) => {
        this.res = res;
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          let i: number;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const ev = buf.slice(0, i);
            buf = buf.slice(i + 2);
            if (!ev.startsWith('data: ')) continue;
            this.last = JSON.parse(ev.slice(6)) as Record<string, unknown>;
            this.frames++;
            if (typeof this.last.lastTickUs === 'number') this.tickUs.push(this.last.lastTickUs);
          }
        });
        resolve();
      }).on('error', reject);
    });
  }

  close(): void {
    this.res?.destroy();
    this.res = null;
  }

  async nextFrame(): Promise<Record<string, unknown>> {
    const n = this.frames;
    const end = Date.now() + 5_000;
    while (this.frames === n) {
      if (Date.now() > end) throw new Error('no status frame within 5 s');
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.last!;
  }
}

async function run(page: Run['page'], rpcUrl: string, pid: number, script: string, viewer: Viewer | null): Promise<Run> {
  const before = acceptedOf(await scrape(rpcUrl));
  const cpu0 = frontCpuUs(pid);
  const m0 = monoUs();
  const frames0 = viewer?.frames ?? 0;
  const ticks0 = viewer?.tickUs.length ?? 0;
  const out = spawnSync('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${DURATION_S}s`, '--latency', '-s', script, rpcUrl], { encoding: 'utf8' });
  const cpu1 = frontCpuUs(pid);
  const m1 = monoUs();
  const w = parseWrkOutput(out.stdout);
  const accepted = acceptedOf(await scrape(rpcUrl)) - before;
  return {
    page,
    ...w,
    acceptedPerSec: w.requestsPerSec * Math.min(1, accepted / Math.max(1, w.requests)),
    frontCpuUsPerRequest: cpu0 === null || cpu1 === null ? null : Number(((cpu1 - cpu0) / Math.max(1, w.requests)).toFixed(2)),
    monoUs: [m0, m1],
    ...(viewer === null ? {} : { frames: viewer.frames - frames0, tickUs: spread(viewer.tickUs.slice(ticks0)) }),
  };
}

/** After a run, the rings drained: the page's next frame against /metrics (route totals, the key's requests). */
async function check(rpcUrl: string, viewer: Viewer): Promise<{ match: boolean; page: Record<string, number>; metrics: Record<string, number> }> {
  await new Promise((r) => setTimeout(r, 1_500));
  const m = await scrape(rpcUrl);
  const f = (await viewer.nextFrame()) as { routes: { route: string; total: { sent: number; dropped: number } }[]; keys: { name: string; requests: number }[] };
  const m2 = await scrape(rpcUrl);
  const rpc = f.routes.find((r) => r.route === 'rpc')!;
  const page = { sent: rpc.total.sent, dropped: rpc.total.dropped, keyRequests: f.keys.find((k) => k.name === 'bench')!.requests };
  const metrics = { sent: outcomeOf(m, 'sent'), dropped: outcomeOf(m, 'dropped:discarded'), keyRequests: answeredOf(m) };
  // The frame was gathered between the two scrapes; nothing moved between them when the relay is quiet.
  const quiet = m === m2 || (outcomeOf(m2, 'dropped:discarded') === metrics.dropped && answeredOf(m2) === metrics.keyRequests);
  return { match: quiet && page.sent === metrics.sent && page.dropped === metrics.dropped && page.keyRequests === metrics.keyRequests, page, metrics };
}

function spread(xs: number[]): { median: number; max: number } {
  return { median: Number(median(xs).toFixed(0)), max: Number(Math.max(...xs).toFixed(0)) };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function main(): Promise<void> {
  if (spawnSync('wrk', ['--version']).error) throw new Error('wrk is not installed (apt-get install wrk)');
  const dir = mkdtempSync(join(tmpdir(), 'slotrelay-status-bench-'));
  const script = wrkScript(dir, bodies(Number(values.txs)));
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    stringify({
      rpcHost: { host: '127.0.0.1', port: 0 },
      relayHost: { host: '127.0.0.1', port: 0, quicPort: 0 },
      admin: { host: '127.0.0.1', port: 0 },
      rings: { workers: 1, slotsPerRing: 4096 },
      routes: { discard: true },
      log: { level: 'warn' },
      keys: [{ key: KEY, name: 'bench', rateLimit: { perSecond: 10_000_000, burst: 10_000_000 } }],
    }),
  );
  const profDir = join(dir, 'profile');
  const nodeArgs = values.profile ? ['--cpu-prof', '--cpu-prof-dir', profDir] : [];
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, 'dist/src/cli.js', 'start', '--config', config], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = await new Promise<{ listeners: { name: string; host: string; port: number }[] }>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('relay_ready not seen')), 60_000);
    createInterface({ input: child.stdout! }).on('line', (l) => {
      if (!l.startsWith('{')) return;
      const m = JSON.parse(l) as { event?: string; listeners?: { name: string; host: string; port: number }[] };
      if (m.event === 'relay_ready' && m.listeners) {
        clearTimeout(t);
        resolve({ listeners: m.listeners });
      }
    });
  });
  const url = (name: string): string => {
    const l = ready.listeners.find((x) => x.name === name)!;
    return `http://${l.host}:${l.port}`;
  };
  const rpcUrl = url('rpc');
  const admin = url('admin');
  try {
    // Warm-up: JIT and connection pools, not measured.
    spawnSync('wrk', ['-t1', `-c${CONNECTIONS}`, '-d3s', '-s', script, rpcUrl]);
    const rounds: { closed: Run; open: Run; ratio: number; check: Awaited<ReturnType<typeof check>> }[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      // Alternate which comes first, so a drift of the box does not favour one side.
      let closed: Run;
      let open: Run;
      const viewer = new Viewer();
      const runOpen = async (): Promise<Run> => {
        await viewer.open(admin);
        await viewer.nextFrame();
        return run('open', rpcUrl, child.pid!, script, viewer);
      };
      if (i % 2 === 0) {
        closed = await run('closed', rpcUrl, child.pid!, script, null);
        open = await runOpen();
      } else {
        open = await runOpen();
      }
      const c = await check(rpcUrl, viewer);
      viewer.close();
      await new Promise((r) => setTimeout(r, 500));
      if (i % 2 === 1) closed = await run('closed', rpcUrl, child.pid!, script, null);
      const ratio = open.acceptedPerSec / closed!.acceptedPerSec;
      rounds.push({ closed: closed!, open, ratio: Number(ratio.toFixed(3)), check: c });
      console.log(
        `round ${i + 1}: closed ${closed!.acceptedPerSec.toFixed(0)}/s p99 ${closed!.p99ms} ms front ${closed!.frontCpuUsPerRequest} us/req | open ${open.acceptedPerSec.toFixed(0)}/s p99 ${open.p99ms} ms front ${open.frontCpuUsPerRequest} us/req, ${open.frames} frames of ${open.tickUs?.median} us (max ${open.tickUs?.max}) | ratio ${ratio.toFixed(3)} | page = /metrics: ${c.match}`,
      );
    }
    const result = {
      bench: 'status page open vs closed (sendTransaction, wrk, discarding route)',
      date: new Date().toISOString(),
      node: process.versions.node,
      cpus: cpus().length,
      durationS: DURATION_S,
      connections: CONNECTIONS,
      rounds,
      medianAcceptedPerSec: { closed: Number(median(rounds.map((r) => r.closed.acceptedPerSec)).toFixed(0)), open: Number(median(rounds.map((r) => r.open.acceptedPerSec)).toFixed(0)) },
      medianRatioOpenOverClosed: median(rounds.map((r) => r.ratio)),
      medianFrontCpuUsPerRequest: {
        closed: median(rounds.map((r) => r.closed.frontCpuUsPerRequest ?? NaN)),
        open: median(rounds.map((r) => r.open.frontCpuUsPerRequest ?? NaN)),
      },
      pageMatchedMetricsEveryRound: rounds.every((r) => r.check.match),
      /** The page's own cost, measured inside the relay: front-thread microseconds per frame (one frame a second). */
      medianTickUs: median(rounds.map((r) => r.open.tickUs?.median ?? NaN)),
      maxTickUs: Math.max(...rounds.map((r) => r.open.tickUs?.max ?? NaN)),
    };
    console.log(JSON.stringify({ medianAcceptedPerSec: result.medianAcceptedPerSec, medianRatioOpenOverClosed: result.medianRatioOpenOverClosed, medianFrontCpuUsPerRequest: result.medianFrontCpuUsPerRequest, pageMatchedMetricsEveryRound: result.pageMatchedMetricsEveryRound, medianTickUs: result.medianTickUs, maxTickUs: result.maxTickUs }));
    let profile: StatusShare | null = null;
    if (values.profile) {
      // The profile is written when the relay exits: stop it, wait, read the front thread's.
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000))]);
      const windows = rounds.flatMap((r) => [r.closed, r.open].map((x) => ({ page: x.page, fromUs: x.monoUs[0], toUs: x.monoUs[1], requests: x.requests })));
      profile = statusShare(profDir, windows);
      console.log(JSON.stringify({ profile }));
    }
    if (values.json) writeFileSync(values.json, JSON.stringify(profile === null ? result : { ...result, profile }, null, 2) + '\n');
  } finally {
    child.kill('SIGTERM');
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
