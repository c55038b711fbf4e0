// `slotrelay bench landing` flags -> LandingBenchOptions (CLI process, cold). Route sets, scenarios (the localnet's
// slot time and a lossy leader), rate, duration, and the target: the embedded localnet by default, or any cluster
// and relay with --rpc / --relay / --keypair (docs/landing.md).
import { parseArgs } from 'node:util';
import { ConfigError } from '../config/load.js';
import { FALLBACK_SLOT_MS } from '../telemetry/slot-duration.js';
import type { TransferFormat } from './payers.js';

export const FANOUTS = ['window-aware', 'next-leaders'] as const;
export type Fanout = (typeof FANOUTS)[number];
export const SET_ROUTES = ['direct', 'rpc', 'jito', 'static'] as const;
export type SetRoute = (typeof SET_ROUTES)[number];

/** One route set: the routes each transaction names, and (on the localnet) the fanout policy of the relay it goes to. */
export interface RouteSet {
  /** Stable label: `direct (window-aware)`, `rpc`, `direct+rpc`, ... */
  readonly name: string;
  readonly routes: readonly SetRoute[];
  /** null: the relay's own setting (a relay given with --relay, or a set without the direct route). */
  readonly fanout: Fanout | null;
  /**
   * The `adaptive` set: `direct` sent to a relay of its own with routing.adaptive on (docs/adaptive-routing.md), its
   * key allowing every route, so the relay may add rpc and jito for a leader that parks it. Absent: false.
   */
  readonly adaptive?: boolean;
  /**
   * With `--source pubsub,grpc`: the slot source of the relay this set goes to (its name then ends `@pubsub` /
   * `@grpc` after the routes). Absent: the run's one source.
   */
  readonly source?: BenchSource;
}

/** The same set on a relay of the given source, named `direct@grpc (window-aware)`, `adaptive@pubsub`, ... */
export function onSource(set: RouteSet, source: BenchSource): RouteSet {
  const head = set.adaptive === true ? 'adaptive' : set.routes.join('+');
  return { ...set, name: `${head}@${source}${set.name.slice(head.length)}`, source };
}

/** One localnet condition every route set is run under. */
export interface Scenario {
  readonly name: string;
  readonly slotMs: number;
  /** Packet loss (%) on the largest-stake validator's TPU listener: the leader of most slots. 0 = none. */
  readonly leaderLossPct: number;
  /** Transactions that leader drops after reading them (%). 0 = none. */
  readonly leaderTxDropPct: number;
  /** Agave's QoS for unstaked peers on every TPU listener (the relay and the RPC node are unstaked peers). */
  readonly qos: boolean;
  /** One-way delay between this host and every validator's TPU (ms). */
  readonly linkDelayMs: number;
  /** One-way delay between the clients (the relay's rpc route, the bench) and the RPC node (ms). */
  readonly rpcDelayMs: number;
  /** With qos: Agave's older per-100 ms throttle, or the flow-control model of agave PR #10666. */
  readonly qosModel: 'throttle' | 'flow-control';
  /** flow-control: each leader's capacity, streams per second (null: Agave's 500,000). */
  readonly capacityTps: number | null;
  /** Transactions a leader executes per slot, highest fee first (null: no limit). */
  readonly blockCapacity: number | null;
  /** A competing sender, or null. */
  readonly competitor: CompetitorSpec | null;
  /** The relay identity's stake (SOL) in the QoS stake table; 0 = unstaked. */
  readonly relayStakeSol: number;
  /** The RPC node's and the block engine's stakes (SOL); 0 = unstaked. */
  readonly rpcStakeSol: number;
  readonly jitoStakeSol: number;
  /** Validators (the largest stakes first) running Firedancer's TPU (docs/localnet.md "Leaders of both kinds"); absent = 0. */
  readonly firedancer?: number;
}

/** The competing load of a scenario (src/localnet/competitors.ts). */
export interface CompetitorSpec {
  readonly tps: number;
  readonly stakeSol: number;
  /** Compute-unit price (micro-lamports). */
  readonly microLamportsPerCu: number;
  /** `leader`: hot on the largest-stake validator's leader slots; `window`: hot in slots where slot % every < hotSlots. */
  readonly hot: 'leader' | 'window';
  readonly everySlots: number;
  readonly hotSlots: number;
}

export interface RemoteTarget {
  readonly rpcUrl: string;
  readonly wsUrl?: string;
  readonly relayUrl: string;
  readonly apiKey: string;
  readonly keypairPath: string;
}

export interface LandingBenchOptions {
  readonly sets: readonly RouteSet[];
  /** Localnet scenarios; ignored (one scenario named "remote") with a remote target. */
  readonly scenarios: readonly Scenario[];
  readonly ratePerSecond: number;
  readonly durationMs: number;
  /** After the last send, how long statuses are still polled: a transaction landing later counts as not landed. */
  readonly tailMs: number;
  /** Payers transfers are signed by (localnet: airdropped). */
  readonly payers: number;
  /** The transfers' wire format: legacy, v1 (SIMD-0385), or the two alternately (docs/landing.md). */
  readonly txFormat: TransferFormat;
  /** maxRetries sent with every submission; undefined = the relay's default (retries.defaultMaxRetries). */
  readonly maxRetries?: number;
  /**
   * The bench relays' own rebroadcast (their retries.defaultMaxRetries, for submissions without maxRetries);
   * undefined = the schema's default (-1: every 2 s until landed or expired). Unlike --max-retries it is not carried
   * to the rpc route, so the RPC node keeps its own send-transaction-service retries (docs/landing.md).
   */
  readonly relayRetries?: number;
  /**
   * The uncounted warm-up before each set, at 20 tx/s through the same relay and routes (--warmup seconds; default
   * 1 s): connections, leader data, and for the adaptive set what its scoreboard learns before it is measured.
   */
  readonly warmupMs?: number;
  /** Output path without extension: {out}.json and {out}.html. */
  readonly out: string;
  readonly remote?: RemoteTarget;
  /** Print progress lines to stderr. */
  readonly quiet: boolean;
  /**
   * Where the bench relays take slots (and the landing tracker its first statuses) from: `pubsub` (slotSubscribe and
   * getSignatureStatuses polls, the default) or `grpc` (the localnet's Yellowstone gRPC server, docs/geyser.md).
   */
  readonly source?: BenchSource;
  /** Every source of the run (`--source pubsub,grpc`: each set runs on both, interleaved); absent: [source]. */
  readonly sources?: readonly BenchSource[];
  /**
   * Sets one after another (the method before issue #44) instead of interleaved in the same slots. Default false.
   */
  readonly sequential?: boolean;
  /** How interleaved transactions are dealt to the sets: in turn (default) or at random from a seed. */
  readonly assign?: { readonly kind: 'round-robin' } | { readonly kind: 'random'; readonly seed: number };
  /** Measured phases per scenario, merged (counts add up); default 1. */
  readonly repeat?: number;
}

export const BENCH_SOURCES = ['pubsub', 'grpc'] as const;
export type BenchSource = (typeof BENCH_SOURCES)[number];

export const DEFAULT_SETS = 'direct:window-aware,direct:next-leaders,rpc,direct+rpc';

/** `direct:window-aware` | `direct:next-leaders` | `rpc` | `direct+rpc` | `direct+rpc:next-leaders` | `adaptive` ... */
export function parseRouteSet(spec: string, remote: boolean): RouteSet {
  const [routePart, fanoutPart, ...extra] = spec.trim().split(':');
  if (routePart === 'adaptive' && extra.length === 0) {
    // The relay's adaptive routing: a relay the bench starts, so not with --relay (that relay's own config decides).
    if (remote) throw new ConfigError(`--sets: "adaptive" is a relay the bench starts with routing.adaptive on; with --relay, turn it on in that relay's config and name routes only`);
    if (fanoutPart !== undefined && !(FANOUTS as readonly string[]).includes(fanoutPart)) throw new ConfigError(`--sets: unknown fanout "${fanoutPart}" (${FANOUTS.join(', ')})`);
    const fanout = (fanoutPart ?? 'window-aware') as Fanout;
    return { name: fanout === 'window-aware' ? 'adaptive' : `adaptive (${fanout})`, routes: ['direct'], fanout, adaptive: true };
  }
  if (extra.length > 0 || routePart === undefined || routePart === '') throw new ConfigError(`--sets: bad route set "${spec}"`);
  const routes = routePart.split('+').map((r) => r.trim());
  for (const r of routes) {
    if (!(SET_ROUTES as readonly string[]).includes(r)) throw new ConfigError(`--sets: unknown route "${r}" in "${spec}" (${SET_ROUTES.join(', ')})`);
  }
  if (new Set(routes).size !== routes.length) throw new ConfigError(`--sets: a route repeated in "${spec}"`);
  let fanout: Fanout | null = null;
  if (fanoutPart !== undefined) {
    if (!(FANOUTS as readonly string[]).includes(fanoutPart)) throw new ConfigError(`--sets: unknown fanout "${fanoutPart}" (${FANOUTS.join(', ')})`);
    if (!routes.includes('direct')) throw new ConfigError(`--sets: a fanout applies to the direct route only ("${spec}")`);
    // A relay's fanout is its config (routes.direct.fanout), not a request field: only relays we start can differ.
    if (remote) throw new ConfigError(`--sets: with --relay the fanout is that relay's routes.direct.fanout; name routes only ("${spec}")`);
    fanout = fanoutPart as Fanout;
  } else if (routes.includes('direct') && !remote) {
    fanout = 'window-aware'; // the schema's default
  }
  const name = routes.join('+') + (fanout !== null && routes.length === 1 ? ` (${fanout})` : fanout === 'next-leaders' ? ` (${fanout})` : '');
  return { name, routes: routes as SetRoute[], fanout };
}

const SCENARIO_KEYS =
  'slot-ms, lossy-leader, leader-drop, qos, qos-model, capacity, block, competitor-tps, competitor-stake, competitor-fee, hot, every, hot-slots, relay-stake, rpc-stake, jito-stake, link-delay-ms, rpc-delay-ms, firedancer, name';

/**
 * Named scenarios (docs/landing.md "Congestion scenarios"): a name alone, or a name then overrides
 * (`hot-leader,relay-stake=50000`). All run the flow-control QoS with a small leader capacity and a block capacity,
 * so a competitor can saturate a leader; the RPC node and the block engine are staked as on mainnet (a staked RPC,
 * Jito's relayer), the relay is unstaked unless said otherwise. The validators are 25 ms away (RTT 50 ms): the
 * model's credit scales with RTT, and at a loopback RTT (clamped to 1 ms) an unstaked connection would get 20 x 1/100
 * -> 1 stream per ms, five times Agave's unstaked 200 TPS at 100 ms.
 */
export const SCENARIO_PRESETS: Readonly<Record<string, string>> = Object.freeze({
  // The model alone: the relay's own load (100 tx/s at the bench's default rate) above a small leader capacity.
  'flow-control': 'qos-model=flow-control,capacity=80,block=40,rpc-stake=20000,jito-stake=20000,link-delay-ms=25',
  // A staked competitor (the cluster's staked senders: 27 M SOL, 90% of the stake with the validators' 1 M and the
  // RPC node's and block engine's 1 M each) saturates the largest-stake leader in every one of its slots: its stake
  // share keeps the leader saturated (the load debt barely refills), so an unstaked relay is parked there. The block
  // (200 tx per 250 ms slot, 800/s) is larger than the leader's stream capacity (600/s): the QoS, not the block, is
  // the bottleneck, and the competitor's fee matters only when a block fills.
  'hot-leader':
    'qos-model=flow-control,capacity=600,block=200,competitor-tps=1000,competitor-stake=27000000,competitor-fee=10000,hot=leader,rpc-stake=1000000,jito-stake=1000000,link-delay-ms=25',
  // The same competitor on whoever leads, 4 slots of every 12.
  'hot-window':
    'qos-model=flow-control,capacity=600,block=200,competitor-tps=1000,competitor-stake=27000000,competitor-fee=10000,hot=window,every=12,hot-slots=4,rpc-stake=1000000,jito-stake=1000000,link-delay-ms=25',
  // hot-leader with the relay staked: 30 M SOL, half of the 60 M total, i.e. 300 of the leader's 600 streams/s while
  // saturated, 150/s per connection with the bench's two relays connected (one identity): more than the 100 tx/s it
  // sends. The leader's capacity is ~800x below Agave's 500,000 streams/s, so the share a 100 tx/s sender needs is
  // ~800x mainnet's (100 of 500,000 streams/s: 0.02% of the stake).
  // A mixed cluster, as mainnet's: the two largest-stake validators run Firedancer's TPU (a Retry per new connection,
  // no stream limit, no stake terms, 10 s idle), the others Agave's flow-control QoS; hot-leader's competitor on the
  // largest (a Firedancer leader: the competitor's stake buys it nothing there).
  'mixed-cluster':
    'qos-model=flow-control,capacity=600,block=200,competitor-tps=1000,competitor-stake=27000000,competitor-fee=10000,hot=leader,rpc-stake=1000000,jito-stake=1000000,link-delay-ms=25,firedancer=2',
  'unstaked-vs-staked':
    'qos-model=flow-control,capacity=600,block=200,competitor-tps=1000,competitor-stake=27000000,competitor-fee=10000,hot=leader,rpc-stake=1000000,jito-stake=1000000,relay-stake=30000000,link-delay-ms=25',
});

/**
 * The localnet's slot time when a scenario names none: mainnet's documented figure (FALLBACK_SLOT_MS, 250 ms late
 * 2026; docs/slot-time.md), so the default run looks like mainnet, not like the 400 ms slots mainnet left behind.
 */
export const DEFAULT_SCENARIO_SLOT_MS = FALLBACK_SLOT_MS;

/** `slot-ms=250,lossy-leader=20,leader-drop=10,qos=on,link-delay-ms=0,rpc-delay-ms=0,name=...` */
export function parseScenario(spec: string): Scenario {
  const s = {
    slotMs: DEFAULT_SCENARIO_SLOT_MS,
    leaderLossPct: 0,
    leaderTxDropPct: 0,
    qos: true,
    linkDelayMs: 0,
    rpcDelayMs: 0,
    qosModel: 'throttle' as 'throttle' | 'flow-control',
    capacityTps: null as number | null,
    blockCapacity: null as number | null,
    relayStakeSol: 0,
    rpcStakeSol: 0,
    jitoStakeSol: 0,
  };
  const comp = { tps: 0, stakeSol: 0, microLamportsPerCu: 0, hot: 'leader' as 'leader' | 'window', everySlots: 12, hotSlots: 4 };
  let name: string | undefined;
  let firedancer = 0;
  const head = spec.split(',')[0].trim();
  if (!head.includes('=')) {
    const preset = SCENARIO_PRESETS[head];
    if (preset === undefined) throw new ConfigError(`--scenario: unknown scenario "${head}" (${Object.keys(SCENARIO_PRESETS).join(', ')}, or key=value pairs)`);
    name = head;
    spec = [preset, ...spec.split(',').slice(1)].join(',');
  }
  for (const part of spec.split(',')) {
    const [k, v] = part.split('=').map((x) => x.trim());
    if (k === undefined || v === undefined || v === '') throw new ConfigError(`--scenario: expected key=value in "${spec}"`);
    if (k === 'name') name = v;
    else if (k === 'slot-ms') s.slotMs = num('slot-ms', v, 200, 2_000);
    else if (k === 'lossy-leader') s.leaderLossPct = num('lossy-leader', v, 0, 100);
    else if (k === 'leader-drop') s.leaderTxDropPct = num('leader-drop', v, 0, 100);
    else if (k === 'link-delay-ms') s.linkDelayMs = num('link-delay-ms', v, 0, 2_000);
    else if (k === 'rpc-delay-ms') s.rpcDelayMs = num('rpc-delay-ms', v, 0, 2_000);
    else if (k === 'firedancer') firedancer = num('firedancer', v, 0, 4);
    else if (k === 'qos-model') {
      if (v !== 'throttle' && v !== 'flow-control') throw new ConfigError('--scenario: qos-model=throttle or qos-model=flow-control');
      s.qosModel = v;
    } else if (k === 'capacity') s.capacityTps = num('capacity', v, 10, 10_000_000);
    else if (k === 'block') s.blockCapacity = num('block', v, 1, 1_000_000);
    else if (k === 'competitor-tps') comp.tps = num('competitor-tps', v, 0, 50_000);
    else if (k === 'competitor-stake') comp.stakeSol = num('competitor-stake', v, 0, 1e9);
    else if (k === 'competitor-fee') comp.microLamportsPerCu = num('competitor-fee', v, 0, 1e12);
    else if (k === 'every') comp.everySlots = num('every', v, 1, 10_000);
    else if (k === 'hot-slots') comp.hotSlots = num('hot-slots', v, 1, 10_000);
    else if (k === 'relay-stake') s.relayStakeSol = num('relay-stake', v, 0, 1e9);
    else if (k === 'rpc-stake') s.rpcStakeSol = num('rpc-stake', v, 0, 1e9);
    else if (k === 'jito-stake') s.jitoStakeSol = num('jito-stake', v, 0, 1e9);
    else if (k === 'hot') {
      if (v !== 'leader' && v !== 'window') throw new ConfigError('--scenario: hot=leader or hot=window');
      comp.hot = v;
    } else if (k === 'qos') {
      if (v !== 'on' && v !== 'off') throw new ConfigError('--scenario: qos=on or qos=off');
      s.qos = v === 'on';
    } else throw new ConfigError(`--scenario: unknown key "${k}" (${SCENARIO_KEYS})`);
  }
  if (s.capacityTps !== null && s.qosModel !== 'flow-control') throw new ConfigError('--scenario: capacity needs qos-model=flow-control');
  const competitor: CompetitorSpec | null = comp.tps > 0 ? comp : null;
  const full = { ...s, competitor, ...(firedancer > 0 ? { firedancer } : {}) };
  return { name: name ?? scenarioName(full), ...full };
}

export function scenarioName(s: Omit<Scenario, 'name'>): string {
  const parts = [`${s.slotMs} ms slots`];
  if (s.leaderLossPct > 0) parts.push(`leader ${s.leaderLossPct}% packet loss`);
  if (s.leaderTxDropPct > 0) parts.push(`leader drops ${s.leaderTxDropPct}% of txs`);
  if (s.linkDelayMs > 0) parts.push(`validators ${s.linkDelayMs} ms away`);
  if (s.rpcDelayMs > 0) parts.push(`RPC node ${s.rpcDelayMs} ms away`);
  if (!s.qos) parts.push('no QoS');
  else if (s.qosModel === 'flow-control') parts.push(`flow-control QoS${s.capacityTps !== null ? ` (${s.capacityTps} streams/s per leader)` : ''}`);
  if (s.blockCapacity !== null) parts.push(`${s.blockCapacity} tx per block`);
  if ((s.firedancer ?? 0) > 0) parts.push(`${s.firedancer} Firedancer leader(s)`);
  const c = s.competitor;
  if (c !== null) {
    parts.push(
      `${c.stakeSol > 0 ? `staked (${c.stakeSol} SOL)` : 'unstaked'} competitor ${c.tps} tx/s at ${c.microLamportsPerCu} µL/CU on ` +
        (c.hot === 'leader' ? 'the largest-stake leader' : `${c.hotSlots} of every ${c.everySlots} slots`),
    );
  }
  if (s.relayStakeSol > 0) parts.push(`relay staked (${s.relayStakeSol} SOL)`);
  return parts.join(', ');
}

/** `round-robin` | `random` | `random:SEED` (a seed repeats the same dealing). */
function parseAssign(v: string | undefined): NonNullable<LandingBenchOptions['assign']> {
  if (v === undefined || v === 'round-robin') return { kind: 'round-robin' };
  const m = /^random(?::(\d{1,10}))?$/.exec(v);
  if (m === null) throw new ConfigError('--assign: round-robin, random or random:SEED');
  return { kind: 'random', seed: m[1] === undefined ? 1 : Number(m[1]) };
}

function num(name: string, v: string, min: number, max: number): number {
  const n = Number(v);
  if (!/^\d+(\.\d+)?$/.test(v) || n < min || n > max) throw new ConfigError(`--${name} must be a number in [${min}, ${max}]`);
  return n;
}

export const USAGE = `usage: slotrelay bench landing [--sets ${DEFAULT_SETS}] [--rate 100] [--duration 60]
         [--slot-ms 250] [--lossy-leader PCT] [--leader-drop PCT]
         [--scenario slot-ms=200,lossy-leader=20,leader-drop=10,qos=on,link-delay-ms=0,rpc-delay-ms=0 ...]
         [--scenario hot-leader|hot-window|unstaked-vs-staked|flow-control|mixed-cluster[,key=value...] ...]
         [--tail 20] [--payers 8] [--max-retries N] [--relay-retries N] [--warmup 1] [--tx-format legacy|v1|mixed] [--source pubsub|grpc|pubsub,grpc] [--out bench/results/landing] [--quiet]
         [--repeat N] [--assign round-robin|random[:SEED]] [--sequential]
       against any cluster and relay (nothing is started):
         --rpc URL [--ws URL] --relay URL --keypair FILE [--key KEY (default $SLOTRELAY_KEY)]
       the HTML again from a report's JSON: --render FILE.json [--out PATH]`;

export function parseLandingArgs(argv: readonly string[], env: NodeJS.ProcessEnv): LandingBenchOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      sets: { type: 'string' },
      rate: { type: 'string' },
      duration: { type: 'string' },
      tail: { type: 'string' },
      payers: { type: 'string' },
      'max-retries': { type: 'string' },
      'relay-retries': { type: 'string' },
      warmup: { type: 'string' },
      'tx-format': { type: 'string' },
      'slot-ms': { type: 'string' },
      'lossy-leader': { type: 'string' },
      'leader-drop': { type: 'string' },
      scenario: { type: 'string', multiple: true },
      out: { type: 'string' },
      rpc: { type: 'string' },
      ws: { type: 'string' },
      relay: { type: 'string' },
      keypair: { type: 'string' },
      key: { type: 'string' },
      quiet: { type: 'boolean' },
      source: { type: 'string' },
      repeat: { type: 'string' },
      assign: { type: 'string' },
      sequential: { type: 'boolean' },
    },
    strict: true,
  });
  const remoteFlags = [values.rpc, values.relay, values.keypair].filter((v) => v !== undefined).length;
  if (remoteFlags !== 0 && remoteFlags !== 3) throw new ConfigError('--rpc, --relay and --keypair go together (a cluster, a relay on it, a funded payer)');
  let remote: RemoteTarget | undefined;
  if (remoteFlags === 3) {
    const apiKey = values.key ?? env.SLOTRELAY_KEY;
    if (apiKey === undefined || apiKey === '') throw new ConfigError('--relay needs --key KEY (or SLOTRELAY_KEY)');
    remote = { rpcUrl: values.rpc!, wsUrl: values.ws, relayUrl: values.relay!, apiKey, keypairPath: values.keypair! };
    if (values.scenario !== undefined || values['slot-ms'] !== undefined || values['lossy-leader'] !== undefined) {
      throw new ConfigError('--scenario, --slot-ms and --lossy-leader shape the embedded localnet; not with --rpc/--relay');
    }
  }
  const sets = (values.sets ?? (remote ? 'direct,rpc,direct+rpc' : DEFAULT_SETS)).split(',').map((s) => parseRouteSet(s, remote !== undefined));
  if (new Set(sets.map((s) => s.name)).size !== sets.length) throw new ConfigError('--sets: a route set is named twice');
  let scenarios: Scenario[];
  if (values.scenario !== undefined && values.scenario.length > 0) {
    if (values['slot-ms'] !== undefined || values['lossy-leader'] !== undefined || values['leader-drop'] !== undefined) {
      throw new ConfigError('--scenario replaces --slot-ms / --lossy-leader / --leader-drop');
    }
    scenarios = values.scenario.map(parseScenario);
  } else {
    const parts = [`slot-ms=${values['slot-ms'] ?? DEFAULT_SCENARIO_SLOT_MS}`];
    if (values['lossy-leader'] !== undefined) parts.push(`lossy-leader=${values['lossy-leader']}`);
    if (values['leader-drop'] !== undefined) parts.push(`leader-drop=${values['leader-drop']}`);
    scenarios = [parseScenario(parts.join(','))];
  }
  // slotMs 0: not set by the bench; runScenario measures the remote cluster's (main.ts).
  if (remote) {
    scenarios = [
      {
        name: 'remote',
        slotMs: 0,
        leaderLossPct: 0,
        leaderTxDropPct: 0,
        qos: false,
        linkDelayMs: 0,
        rpcDelayMs: 0,
        qosModel: 'throttle',
        capacityTps: null,
        blockCapacity: null,
        competitor: null,
        relayStakeSol: 0,
        rpcStakeSol: 0,
        jitoStakeSol: 0,
      },
    ];
  }
  const maxRetries = values['max-retries'] === undefined ? undefined : num('max-retries', values['max-retries'], 0, 1_000_000);
  const relayRetries = values['relay-retries'] === undefined ? undefined : num('relay-retries', values['relay-retries'], 0, 1_000_000);
  if (relayRetries !== undefined && remote) throw new ConfigError('--relay-retries: with --relay the rebroadcast is that relay\'s retries.defaultMaxRetries');
  const txFormat = values['tx-format'] ?? 'legacy';
  if (txFormat !== 'legacy' && txFormat !== 'v1' && txFormat !== 'mixed') throw new ConfigError('--tx-format: legacy, v1 or mixed');
  const sources = (values.source ?? 'pubsub').split(',').map((x) => x.trim());
  for (const x of sources) if (!(BENCH_SOURCES as readonly string[]).includes(x)) throw new ConfigError('--source: pubsub or grpc');
  if (new Set(sources).size !== sources.length) throw new ConfigError('--source: a source named twice');
  if (sources.includes('grpc') && remote) throw new ConfigError('--source grpc is the embedded localnet\'s gRPC server; with --relay, set upstream.grpc in that relay\'s config');
  const both = sources.length > 1;
  const assign = parseAssign(values.assign);
  return {
    source: sources[0] as BenchSource,
    sources: sources as BenchSource[],
    // Both sources: each set once per source, named after it, interleaved like any other sets.
    sets: both ? sets.flatMap((st) => sources.map((x) => onSource(st, x as BenchSource))) : sets,
    sequential: values.sequential === true,
    assign,
    repeat: values.repeat === undefined ? 1 : num('repeat', values.repeat, 1, 100),
    scenarios,
    ratePerSecond: values.rate === undefined ? 100 : num('rate', values.rate, 0.1, 5_000),
    durationMs: Math.round((values.duration === undefined ? 60 : num('duration', values.duration, 1, 3_600)) * 1000),
    tailMs: Math.round((values.tail === undefined ? 20 : num('tail', values.tail, 1, 600)) * 1000),
    payers: values.payers === undefined ? 8 : num('payers', values.payers, 1, 256),
    maxRetries,
    relayRetries,
    warmupMs: values.warmup === undefined ? undefined : Math.round(num('warmup', values.warmup, 1, 600) * 1000),
    txFormat,
    out: values.out ?? 'bench/results/landing',
    remote,
    quiet: values.quiet === true,
  };
}
