// What the status page shows, as one JSON frame (types only; built by status-collector.ts on the front thread, cold,
// rendered by the page's script in status-page-html.ts). Every figure comes from a counter the relay already keeps:
// docs/status-page.md names the source of each.
import type { HealthReport } from '../health/health-monitor.js';
import type { LeaderReport } from '../receipts/leader-counters.js';

export interface RouteFigures {
  readonly sent: number;
  readonly failed: number;
  /** Every dropped:* outcome (dropped:discarded, a bench's discard mode, included). */
  readonly dropped: number;
  /** dropped by reason (non-zero ones). */
  readonly droppedBy: Readonly<Record<string, number>>;
}

export interface RouteRow {
  readonly route: string;
  /** Over the window (frame.windowMs). */
  readonly window: RouteFigures;
  /** Since the relay started: what slotrelay_egress_outcomes_total says. */
  readonly total: RouteFigures;
  /** Landed in the window with this route sending first (receipts), and that over `window.sent`; null: nothing sent. */
  readonly landed: number;
  readonly landedShare: number | null;
  /** Slots from acceptance to landing over the window's landings: the bucket bound the median / p90 falls in. */
  readonly slotsToLand: { readonly p50: number | null; readonly p90: number | null; readonly n: number };
}

export interface LeaderWindow {
  readonly firstSlot: number;
  readonly lastSlot: number;
  readonly identity: string;
  readonly stake: number;
  readonly txPaths: readonly { readonly provider: string; readonly latencyMs: number; readonly measured: boolean; readonly selected: boolean }[];
  readonly routeScores: readonly { readonly region: string; readonly scoreMs: number; readonly selected: boolean }[];
}

export interface KeyRow {
  readonly name: string;
  readonly requests: number;
  readonly refused: number;
  readonly rateLimited: number;
  /** The same three over the window. */
  readonly window: { readonly requests: number; readonly refused: number; readonly rateLimited: number };
}

export interface FailureRow {
  readonly atMs: number;
  readonly traceId: string;
  readonly signature: string;
  readonly keyName: string;
  /** route -> outcome, for the routes that did not deliver. */
  readonly outcomes: Readonly<Record<string, string>>;
  readonly notLanded: boolean;
}

export interface StatusFrame {
  readonly v: 1;
  readonly atMs: number;
  /** The span the window figures cover: up to a minute, less while the page has been open for less. */
  readonly windowMs: number;
  readonly health: HealthReport;
  readonly routes: readonly RouteRow[];
  readonly leaders: { readonly slot: number | null; readonly windows: readonly LeaderWindow[] };
  readonly rings: readonly { readonly ring: string; readonly depth: number }[];
  readonly quic: {
    readonly perThread: readonly number[];
    readonly byState: Readonly<Record<string, number>>;
    readonly queued: number;
    /**
     * The QUIC ingress (clients' connections to relayHost.quicPort, in QUIC thread 0); null when off. `held`: its
     * connections held by back-pressure now (the queue to the front full).
     */
    readonly ingress: { readonly connections: number; readonly queueDepth: number; readonly held: number } | null;
  };
  readonly keys: readonly KeyRow[];
  readonly failures: readonly FailureRow[];
  /** Per-leader counters of the last receipts.leaderSlots slots, every key's transactions (src/receipts/leader-counters.ts); null: no receipts or leader data. */
  readonly leaderCounters: LeaderReport | null;
  /** Set by the event stream (admin-server.ts): what the previous frame cost the front thread, microseconds. */
  readonly lastTickUs?: number | null;
}
