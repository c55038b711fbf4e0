// The relays the landing bench starts on the localnet (CLI process; cold): `slotrelay start` children on loopback
// with ephemeral ports. The first runs the embedded localnet, shaped by the scenario through the config's `localnet:`
// section; each further fanout policy gets a relay whose upstream (and rpc route) is that same localnet, so every
// route set is measured against one cluster. One bench key with budgets the bench cannot exhaust.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { stringify } from 'yaml';
import { configSchema } from '../config/schema.js';
import type { Fanout, Scenario } from './options.js';

const START_TIMEOUT_MS = 60_000;
const READY_TIMEOUT_MS = 30_000;
const KEEP_LOG_LINES = 200;

export interface BenchRelay {
  readonly fanout: Fanout;
  readonly relayUrl: string;
  readonly apiKey: string;
  /** The relay's QUIC identity (its direct sends carry it as the client certificate). */
  readonly identity: string;
  /** The localnet's JSON-RPC URL (the embedded one's, or the upstream given). */
  readonly localnetUrl: string;
  /** Its Yellowstone gRPC URL when it serves one (localnet.grpcPort), else null. */
  readonly grpcUrl: string | null;
  readonly logs: readonly string[];
  stop(): Promise<void>;
}

/** The embedded localnet's validators (the `localnet.validators` default). */
const VALIDATORS = 4;

/** The config `localnet:` section for a scenario (docs/localnet.md, "Network model"). */
export function localnetSection(s: Scenario, relayIdentity?: string, blockEnginePort?: number): Record<string, unknown> {
  const qos: Record<string, unknown> = { enabled: s.qos };
  if (s.qosModel !== 'throttle') qos.model = s.qosModel;
  if (s.capacityTps !== null) qos.capacityTps = s.capacityTps;
  const section: Record<string, unknown> = { slotMs: s.slotMs, qos };
  if (s.blockCapacity !== null) section.blockCapacity = s.blockCapacity;
  if ((s.firedancer ?? 0) > 0) section.kinds = Array.from({ length: VALIDATORS }, (_, i) => (i < s.firedancer! ? 'firedancer' : 'agave'));
  const c = s.competitor;
  if (c !== null) {
    section.competitors = [
      {
        name: 'competitor',
        tps: c.tps,
        stakeSol: c.stakeSol,
        microLamportsPerCu: c.microLamportsPerCu,
        ...(c.hot === 'leader' ? { validator: 0 } : { everySlots: c.everySlots, hotSlots: c.hotSlots }),
      },
    ];
  }
  if (s.relayStakeSol > 0 && relayIdentity !== undefined) section.stakedPeers = [{ identity: relayIdentity, stakeSol: s.relayStakeSol }];
  // The block engine: unlimited for the bench (its 50/s per-IP default would refuse a 100 tx/s jito route), on a port
  // the relays' jito route is pointed at, forwarding with a staked identity when the scenario says so.
  if (blockEnginePort !== undefined || s.jitoStakeSol > 0) {
    section.blockEngine = { rateLimitPerSecond: 0, ...(blockEnginePort !== undefined ? { port: blockEnginePort } : {}), stakeSol: s.jitoStakeSol };
  }
  if (s.leaderLossPct > 0 || s.leaderTxDropPct > 0 || s.linkDelayMs > 0) {
    // Validator 0 has the largest stake and so leads the most slots: "a lossy leader".
    section.links = Array.from({ length: VALIDATORS }, (_, i) => ({
      oneWayDelayMs: s.linkDelayMs,
      lossPct: i === 0 ? s.leaderLossPct : 0,
      txDropPct: i === 0 ? s.leaderTxDropPct : 0,
    }));
  }
  if (s.rpcDelayMs > 0 || s.rpcStakeSol > 0) section.rpc = { oneWayDelayMs: s.rpcDelayMs, ...(s.rpcStakeSol > 0 ? { stakeSol: s.rpcStakeSol } : {}) };
  return section;
}

/**
 * Whether this build's relay has a QUIC ingress port (relayHost.quicPort). Its default (4433) would make the second
 * relay of a run, or one next to `make start`, fail to bind, so the bench turns it off (0) where the field exists;
 * a build without the field refuses it as an unknown key, so it is asked of the schema, not assumed.
 */
function hasQuicIngressPort(): boolean {
  const r = configSchema.safeParse({ relayHost: { quicPort: 0 } });
  return r.success || !r.error.issues.some((i) => i.code === 'unrecognized_keys' && i.path.join('.') === 'relayHost');
}

export interface StartRelayOptions {
  readonly fanout: Fanout;
  /** Absent: run the embedded localnet (with `localnet`). */
  readonly upstream?: string;
  readonly localnet?: Record<string, unknown>;
  readonly cliPath: string;
  /** The relay's identity keypair file (identity.keypairPath); absent: a fresh identity. */
  readonly keypairPath?: string;
  /** The jito route's block engine URL; absent: no jito route. */
  readonly jitoUrl?: string;
  /** routing.adaptive on (the `adaptive` route set; docs/adaptive-routing.md). */
  readonly adaptive?: boolean;
  /** retries.defaultMaxRetries (the relay's own rebroadcast); absent: the schema's default. */
  readonly relayRetries?: number;
  /** upstream.grpc.url for a relay on an upstream localnet (--source grpc); the first relay's comes from its localnet. */
  readonly grpcUrl?: string;
}

/**
 * The adaptive set's policy: faster and more eager than the schema's defaults, because a bench set runs for seconds,
 * not hours: a transaction is judged 4 slots of 250 ms after acceptance, 4 of evidence suffice, and a leader where
 * fewer than 80% of the direct route's transactions land parks the relay. Evidence halves every 10 s (the schema's
 * default; 5 s before): a steadier share for a leader that is congested only part of the time (hot-window).
 */
export const BENCH_ADAPTIVE = Object.freeze({ enabled: true, judgeAfterMs: 1_000, halfLifeMs: 10_000, minEvidence: 4, parkedBelow: 0.8 });

export async function startBenchRelay(o: StartRelayOptions): Promise<BenchRelay> {
  const dir = mkdtempSync(join(tmpdir(), 'slotrelay-landing-'));
  const file = join(dir, 'config.yaml');
  const apiKey = randomUUID();
  const budget = { perSecond: 1_000_000, burst: 1_000_000 };
  const config: Record<string, unknown> = {
    rpcHost: { host: '127.0.0.1', port: 0 },
    admin: { port: 0 }, // the status page's default 8890 is one per host
    relayHost: { host: '127.0.0.1', port: 0, ...(hasQuicIngressPort() ? { quicPort: 0 } : {}) },
    rings: { workers: 1, slotsPerRing: 8192 },
    log: { level: 'info' },
    routes: {
      direct: { enabled: true, fanout: o.fanout },
      defaultRoutes: ['direct'],
      ...(o.upstream !== undefined ? { rpc: { endpoints: [o.upstream] } } : {}),
      ...(o.jitoUrl !== undefined ? { jito: { url: o.jitoUrl } } : {}),
    },
    keys: [{ key: apiKey, name: 'landing-bench', rateLimit: budget, readLimit: budget, simulateLimit: budget, preflight: 'skip' }],
  };
  if (o.relayRetries !== undefined) config.retries = { defaultMaxRetries: o.relayRetries };
  if (o.adaptive === true) config.routing = { adaptive: BENCH_ADAPTIVE };
  if (o.upstream !== undefined) config.upstream = { rpcUrl: o.upstream, ...(o.grpcUrl !== undefined ? { grpc: { url: o.grpcUrl } } : {}) };
  if (o.keypairPath !== undefined) config.identity = { keypairPath: o.keypairPath };
  if (o.localnet !== undefined) config.localnet = o.localnet;
  writeFileSync(file, stringify(config));
  const child: ChildProcess = spawn(process.execPath, [o.cliPath, 'start', '--config', file], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH } });
  const logs: string[] = [];
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let relayUrl = '';
  let identity = '';
  let localnetUrl = o.upstream ?? '';
  let grpcUrl: string | null = o.grpcUrl ?? null;
  await new Promise<void>((resolve, reject) => {
    const fail = (why: string): void => reject(new Error(`relay (${o.fanout}) ${why}; last log lines:\n${logs.slice(-30).join('\n')}`));
    const timer = setTimeout(() => fail('did not start'), START_TIMEOUT_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(`exited with ${String(code)}`);
    });
    const onLine = (l: string): void => {
      logs.push(l);
      if (logs.length > KEEP_LOG_LINES) logs.shift();
      if (!l.startsWith('{')) return;
      let m: { event?: string; rpcUrl?: string; grpcUrl?: string | null; identity?: string; listeners?: { name: string; host: string; port: number }[] };
      try {
        m = JSON.parse(l) as typeof m;
      } catch {
        return;
      }
      if (m.event === 'localnet_started' && m.rpcUrl) {
        localnetUrl = m.rpcUrl;
        grpcUrl = m.grpcUrl ?? null;
      }
      if (m.event === 'relay_identity' && m.identity) identity = m.identity;
      if (m.event === 'relay_ready' && m.listeners) {
        const r = m.listeners.find((x) => x.name === 'relay');
        if (r) relayUrl = `http://${r.host}:${r.port}`;
        clearTimeout(timer);
        if (relayUrl === '' || localnetUrl === '') fail('is ready without a relay listener or a localnet URL');
        else resolve();
      }
    };
    createInterface({ input: child.stdout! }).on('line', onLine);
    createInterface({ input: child.stderr! }).on('line', onLine);
  });
  return {
    fanout: o.fanout,
    relayUrl,
    apiKey,
    identity,
    localnetUrl,
    grpcUrl,
    logs,
    async stop(): Promise<void> {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await closed;
      clearTimeout(killer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits until GET /health?detail says ok with fresh leader data (the direct route can aim). */
export async function waitRelayReady(relayUrl: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${relayUrl}/health?detail`);
      last = await res.text();
      const h = JSON.parse(last) as { status?: string; leaderData?: { fresh?: boolean } };
      if (h.status === 'ok' && h.leaderData?.fresh !== false) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`relay at ${relayUrl} not healthy within ${READY_TIMEOUT_MS} ms: ${last}`);
}
