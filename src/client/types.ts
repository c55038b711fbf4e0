// The client library's own types (caller's thread, cold): what a user of `slotrelay/client` sees. Nothing here is
// imported from the server (src/config, src/front, ...): the package entry must not pull server modules or their
// dependencies into a user's bundle (test/unit/client/import-graph.test.ts). Shapes follow docs/relay-api.md,
// docs/get-leader-slots.md and spec 2.2-2.4; test/unit/client/types-match-server.test.ts keeps the route names and
// reasons in step with the server's tables.

/** The relay's route names (docs/relay-api.md, config `routes`). Same list as the server's ROUTE_NAMES. */
export const ROUTE_NAMES = ['rpc', 'direct', 'jito', 'static'] as const;
export type RouteName = (typeof ROUTE_NAMES)[number];

/** How submit reaches the relay host: HTTP (this entry), or QUIC through quicTransport() of `slotrelay/client/quic`. */
export type TransportKind = 'http' | 'quic';

/** Answer of a submit the relay accepted (spec 2.6, docs/relay-api.md). */
export interface SubmitResult {
  readonly accepted: true;
  /** Base-58 first signature of the transaction. */
  readonly signature: string;
  /** Everywhere the transaction goes: the request's routes ∩ the key's policy ∩ what the relay can deliver now, plus
   *  the routes the relay adds itself (static everyTransaction). */
  readonly routes: readonly RouteName[];
  /** The relay's request id (x-request-id), also in its logs. */
  readonly requestId?: string;
}

/** Answer of a fire-and-forget submit (QUIC uni stream): written to the relay's connection, nothing acknowledged. */
export interface UnacknowledgedSubmitResult {
  /** Not known: the relay answers no uni stream (it may still refuse the transaction; watch its signature). */
  readonly accepted: 'unacknowledged';
  /** Base-58 first signature, read from the transaction itself. */
  readonly signature: string;
}

export interface SubmitOptions {
  /** Route names, or 'default' (the default) for the key's default routes. */
  readonly routes?: readonly RouteName[] | 'default';
  /** Carried with the transaction: the relay's rebroadcast policy (docs/relay-api.md). Not a client-side retry. */
  readonly maxRetries?: number;
  /** Sent as x-request-id (1-64 printable ASCII characters); the relay generates one otherwise. */
  readonly requestId?: string;
  /** Abort this submit (its outcome is then unknown, as after a timeout). */
  readonly signal?: AbortSignal;
  /**
   * QUIC only: send on a unidirectional stream and resolve once written, with no answer from the relay
   * (UnacknowledgedSubmitResult). The key's default routes apply: `routes`, `maxRetries` and `requestId` cannot go with it.
   */
  readonly fireAndForget?: boolean;
}

/** getRecentPrioritizationFees element (spec 2.2): micro-lamports per compute unit paid in one recent slot. */
export interface PrioritizationFee {
  readonly slot: number;
  readonly prioritizationFee: number;
}

/** getLeaderSlots `location` (spec 2.4); omitted when the relay does not know where the leader is. */
export interface LeaderLocation {
  readonly dataCenterKey: string;
  readonly region: string;
  readonly latitude: number;
  readonly longitude: number;
}

export interface PingToLeader {
  readonly region: string;
  /** Round trip, ms. */
  readonly latencyMs: number;
  readonly estimated: boolean;
}

export interface TxPath {
  /** 'direct', 'jito', or a static peer ('static:<ip:port>' or the operator's name for it). */
  readonly provider: string;
  readonly pathRegion: string;
  /** One way relay -> leader over this path, ms. */
  readonly latencyMs: number;
  readonly measured: boolean;
  readonly doublezeroAvailable: boolean;
  readonly selected: boolean;
}

export interface RouteScore {
  readonly active_region: string;
  readonly market_latency_ms: number;
  readonly tx_latency_ms: number;
  /** market_latency_ms + tx_latency_ms; lower is better. Advisory. */
  readonly score_ms: number;
  readonly selected: boolean;
}

/** One upcoming leader slot (spec 2.4, docs/get-leader-slots.md "Row"). */
export interface LeaderSlotRow {
  readonly slot: number;
  readonly identity: string;
  /** Activated stake, lamports. */
  readonly stake: number;
  readonly location?: LeaderLocation;
  readonly pingToLeaders: readonly PingToLeader[];
  readonly txPaths: readonly TxPath[];
  readonly routeScores: readonly RouteScore[];
}

/** getLeaderSlots result (spec 2.3). */
export interface LeaderSlotsResult {
  readonly success: boolean;
  readonly total: number;
  readonly data: readonly LeaderSlotRow[];
  readonly snapshotSlot: number;
  readonly snapshotGeneratedAtUnixMs: number;
  readonly snapshotAgeMs: number;
}

/** bestRoute(): where to send for one slot, or "use the default path" (spec 7.3) when the relay cannot say. */
export type BestRoute =
  | {
      readonly useDefaultPath: false;
      readonly slot: number;
      /** The slot's leader. */
      readonly identity: string;
      /** For submit({routes}): the route of the selected txPath, or 'default' when the relay lists no path. */
      readonly routes: readonly RouteName[] | 'default';
      /** The path the transaction is expected to reach the leader over first (txPaths[].selected). */
      readonly path: TxPath | undefined;
      /** This client's region's score (RelayClientOptions.region), else the lowest score_ms of the row. */
      readonly score: RouteScore | undefined;
    }
  | {
      readonly useDefaultPath: true;
      readonly routes: 'default';
      /** Why: leader_snapshot_missing, leader_snapshot_stale or leader_range_not_covered. */
      readonly reason: string;
    };

/** What onAlert receives: something an operator must look at (spec 7.3 "raise an alert"). */
export interface RelayAlert {
  readonly reason: 'leader_snapshot_unsupported_schema';
  readonly message: string;
  /** The relay's error data, e.g. {schemaVersion, supportedSchemaVersions}. */
  readonly data: unknown;
}

/** What a landed transaction did (docs/receipts.md): executed; processed with an on-chain error, fee charged
 *  (`failed`); or in a block without being executed, no fee and no effect (`not_executed`: SIMD-0290's invalid fee
 *  payer). */
export type ReceiptExecution = 'executed' | 'failed' | 'not_executed';

/** One route's part in a receipt (docs/receipts.md). */
export interface RouteReceipt {
  /** `pending`, then `sent`, `failed` or `dropped:<reason>`. */
  readonly outcome: string;
  readonly firstSentAt: number | null;
  readonly targets: number;
  readonly leaderSlot: number | null;
}

/** Where and how a transaction landed, per the cluster's getSignatureStatuses (and getTransaction). */
export interface ReceiptLanding {
  readonly slot: number;
  readonly leader: string | null;
  readonly slotsToLand: number | null;
  readonly msToLand: number;
  /** The on-chain error as the cluster reports it (Agave's TransactionError JSON), null on success. */
  readonly err: unknown;
  readonly confirmationStatus: string | null;
  readonly firstRoute: string | null;
  readonly execution: ReceiptExecution;
  /** `status`: from the status's err alone; `transaction`: from getTransaction's meta (its fee). */
  readonly executionSource: 'status' | 'transaction';
}

/** A landing receipt: GET {relay_url}/v1/transactions/{signature}, JSON-RPC getTransactionReceipt (docs/receipts.md). */
export interface TransactionReceipt {
  readonly signature: string;
  readonly requestId: string;
  readonly acceptedAt: number;
  readonly acceptedSlot: number | null;
  readonly routes: Readonly<Record<string, RouteReceipt>>;
  readonly rebroadcasts: number;
  readonly bundle: { readonly id: string; readonly index: number } | null;
  /** `landed_failed` covers both `failed` and `not_executed`: read landed.execution to tell them apart. */
  readonly status: 'pending' | 'landed' | 'landed_failed' | 'not_landed' | 'untracked';
  /**
   * Why it did not land, as far as the relay knows (docs/receipts.md "Why it did not land"): set when `status` is
   * not_landed, and while pending once no route sent it; null otherwise. Absent from relays before issue #26.
   */
  readonly reason?: NotLandedReason | null;
  /**
   * What the relay's adaptive routing did for it (docs/adaptive-routing.md), null when nothing. Absent from relays
   * before issue #26 item 3.
   */
  readonly adaptive?: AdaptiveDecision | null;
  /** The routes that sent it, first sender first. Absent from relays before issue #26 item 3. */
  readonly routesTried?: readonly string[];
  /**
   * The slot its direct route aimed at first was skipped while it had not landed, and when the relay learnt it (unix
   * ms); null otherwise. It may still land later (a rebroadcast to a later leader). Absent from relays before it.
   */
  readonly targetSkipped?: { readonly slot: number; readonly at: number } | null;
  readonly landed: ReceiptLanding | null;
}

/**
 * One state change of a receipt, as the relay pushes it (receiptSubscribe, docs/receipts.md "The receipt stream"):
 * `current` is the receipt as it stood when a signature subscription began; `route` is one route's first answer.
 */
export interface ReceiptUpdate {
  /** `skipped`: the slot its direct route aimed at was skipped before it landed (it may still land later). */
  readonly event: 'current' | 'accepted' | 'route' | 'skipped' | 'processed' | 'confirmed' | 'finalized' | 'not_executed' | 'not_landed';
  readonly signature: string;
  /** The relay's clock (unix ms) when it noticed the change. */
  readonly at: number;
  /** `route` events: which route and how it answered (sent, failed, dropped:<reason>). */
  readonly route?: string;
  readonly outcome?: string;
  /** `skipped` events: the skipped slot (the direct route's `leaderSlot`). */
  readonly slot?: number;
  /** The whole receipt after the change. */
  readonly receipt: TransactionReceipt;
}

/** The adaptive routing's decision for one transaction (docs/adaptive-routing.md). */
export interface AdaptiveDecision {
  /** The leader that was parking the relay when the transaction was accepted. */
  readonly leader: string;
  /** `widen` (the direct route reached more leaders) and/or `add_route` (partner routes added). */
  readonly decisions: readonly string[];
  /** Leaders the direct route reached beyond its fanout policy. */
  readonly extraCopies: number;
  /** Routes added: only routes the key allows and the relay runs. */
  readonly addedRoutes: readonly string[];
}

/** A receipt's reason for not landing (`code` is one of docs/receipts.md's table; new codes may appear). */
export interface NotLandedReason {
  readonly code: string;
  /** Whether any route handed it to a leader, peer or endpoint. */
  readonly sent: boolean;
  /** The route whose failure is the reason (not sent). */
  readonly route: string | null;
  /** connection_refused: the leader's QUIC close code (Agave: 1 dropped, 2 disallowed, 4 too_many) and its name. */
  readonly closeCode: number | null;
  readonly closeReason: string | null;
  /** route_failed: `HTTP <status>`, `JSON-RPC -<code>`, `timeout` or `network`. */
  readonly detail: string | null;
}
