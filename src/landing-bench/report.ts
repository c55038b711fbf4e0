// The landing report's JSON shape (CLI process; cold): what bench/results/landing.json holds and the HTML renders.
import type { RouteSet, Scenario } from './options.js';
import type { RunCounters, SetFigures, TimelineSeries } from './stats.js';

export interface ValidatorInfo {
  readonly identity: string;
  /** Lamports of activated stake. */
  readonly stake: number;
  /** "v0 (40% stake)" and a marker for the scenario's lossy leader. */
  readonly label: string;
}

export interface SetResult {
  readonly set: RouteSet;
  readonly colour: string;
  readonly startedAt: string;
  readonly endedAt: string;
  /** The relay's QUIC identity, when the bench started it. */
  readonly relayIdentity: string | null;
  readonly figures: SetFigures;
  readonly timeline: TimelineSeries;
}

export interface ScenarioResult {
  readonly scenario: Scenario;
  readonly validators: readonly ValidatorInfo[];
  /** How the bench saw slots: slotSubscribe, or getSlot polling when the WebSocket failed. */
  readonly slotSource: string;
  /** The localnet's own settings as the relay applied them (null: a remote cluster). */
  readonly localnet: Record<string, unknown> | null;
  readonly sets: readonly SetResult[];
  /** How the sets met the schedule (absent in reports from before issue #44: sequential). */
  readonly interleave?: Interleave;
  /** Each set against the best landed share: difference (points) with its 95% Newcombe interval. */
  readonly comparisons?: readonly SetComparison[];
  /** Interleaved sets: the localnet TPU counters over the whole run (they cannot be split by set). */
  readonly runCounters?: RunCounters;
}

export interface Interleave {
  /** `interleaved`: every set in the same slots; `sequential`: one after another (--sequential). */
  readonly method: 'interleaved' | 'sequential';
  readonly assign: { readonly kind: 'round-robin' } | { readonly kind: 'random'; readonly seed: number };
  /** Measured phases merged (--repeat). */
  readonly repeat: number;
  /** Distinct cluster slots the run sent in (sequential: the sum over the sets). */
  readonly slots: number;
  /** Of those, the slots in which every set sent at least one transaction. */
  readonly slotsWithEverySet: number;
}

export interface SetComparison {
  readonly set: string;
  /** The best set's name (highest landed share). */
  readonly against: string;
  /** set - best, percentage points, and the 95% interval's bounds. */
  readonly diffPct: number;
  readonly lo: number;
  readonly hi: number;
  /** false: the interval holds 0 ("not significant"). */
  readonly significant: boolean;
}

export interface LandingReport {
  readonly tool: 'slotrelay bench landing';
  readonly version: 1;
  readonly createdAt: string;
  readonly commit: string | null;
  /** loadAvg1m: the machine's 1-minute load average when the run started and ended (other work on the box). */
  readonly host: { readonly cpus: number; readonly node: string; readonly platform: string; readonly loadAvg1m: readonly [number, number] };
  readonly params: {
    readonly ratePerSecond: number;
    readonly durationMs: number;
    readonly tailMs: number;
    readonly payers: number;
    readonly maxRetries: number | null;
    /** The bench relays' retries.defaultMaxRetries (--relay-retries); null/absent: the relay's default. */
    readonly relayRetries?: number | null;
    /** The uncounted warm-up before each set (--warmup), ms. */
    readonly warmupMs?: number;
    /** Where the bench relays took slots from (--source): pubsub, or the localnet's Yellowstone gRPC. Absent: pubsub. */
    readonly source?: 'pubsub' | 'grpc';
    /** Every source of the run (--source pubsub,grpc: each set on both). */
    readonly sources?: readonly ('pubsub' | 'grpc')[];
    /** interleaved (default since issue #44) or sequential (--sequential). */
    readonly method?: 'interleaved' | 'sequential';
    readonly repeat?: number;
    readonly target: string;
    readonly command: string;
  };
  readonly scenarios: readonly ScenarioResult[];
  readonly notes: readonly string[];
}
