// The landing report's JSON shape (CLI process; cold): what bench/results/landing.json holds and the HTML renders.
import type { RouteSet, Scenario } from './options.js';
import type { SetFigures, TimelineSeries } from './stats.js';

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
    readonly target: string;
    readonly command: string;
  };
  readonly scenarios: readonly ScenarioResult[];
  readonly notes: readonly string[];
}
