// Configuration schema and defaults (cold: parsed once at start). Every object is strict: an unknown key is refused
// with a message naming it. The commented example with every field is config/slotrelay.example.yaml; the reference
// is docs/configuration.md. Egress workers receive the validated config in their Piscina task payload (and
// deep-freeze the clone on arrival); the telemetry thread gets its `telemetry` section through workerData. No worker
// reads the environment.
import { MAX_QUIC_THREADS } from '../quic/quiche-binary.js';
import { z } from 'zod';
import { MAX_IDLE_TIMEOUT_SECONDS, MIN_IDLE_TIMEOUT_SECONDS, MIN_SLOW_CLIENT_TIMEOUT_SECONDS, SLOW_CLIENT_TIMEOUT_SECONDS } from '../native/uws.js';
import { HEADER_VALUE_RE } from '../http/response.js';
import { localnetSchema } from './localnet-schema.js';
import { relayHostQuicFields } from './quic-ingress-schema.js';
import { FANOUT_POLICIES, PRODUCER_POLICIES } from './fanout-policy.js';
import { CONGESTION_CONTROLS } from '../quic/constants.js';


import { clusterSchema } from './cluster-schema.js';
import { keySchema, ROUTE_NAMES } from './keys-schema.js';
import { listener, port, positiveInt, uuid } from './schema-parts.js';
import { telemetrySchema } from './telemetry-schema.js';
import { WAIT_POLICIES } from './wait-policy.js';
import { routingSchema } from './routing-schema.js';

export { burstForRate } from './schema-parts.js';
export { keySchema, ROUTE_NAMES, type KeyConfig, type RouteName } from './keys-schema.js';
export { locationEntrySchema, type TelemetryConfig } from './telemetry-schema.js';
export type { ClusterConfig } from './cluster-schema.js';

/**
 * Passthrough reads by default: what @solana/web3.js and @solana/kit call around a send (build, price, confirm, read
 * back), docs/passthrough.md. Everything else answers -32601 unless the operator lists it.
 */
export const DEFAULT_PASSTHROUGH_METHODS = Object.freeze([
  'getLatestBlockhash',
  'isBlockhashValid',
  'getSignatureStatuses',
  'getSlot',
  'getBlockHeight',
  'getEpochInfo',
  'getBalance',
  'getAccountInfo',
  'getMultipleAccounts',
  'getMinimumBalanceForRentExemption',
  'getFeeForMessage',
  'getTransaction',
  'getVersion',
  'getHealth',
  'getGenesisHash',
  'getIdentity',
  // Agave 4.3+: which consensus the cluster runs (the Alpenglow genesis certificate, null under Tower BFT).
  'getAgGenesisCert',
] as const);
/**
 * Methods the JSON-RPC host answers itself (its cache, intake or checks): never passed through. Listing one in
 * jsonRpc.passthroughMethods is refused at load (docs/passthrough.md).
 */
export const RELAY_SERVED_METHODS = Object.freeze(['sendTransaction', 'simulateTransaction', 'getLeaderSlots', 'getRecentPrioritizationFees'] as const);
export const configSchema = z
  .object({
    /** The JSON-RPC host ({base_url}): POST / with the JSON-RPC envelope, GET /health, GET /metrics. */
    rpcHost: listener(8899),
    /** The relay host ({relay_url}): /v1/submit, /v1/transactions, /v1/sendTransaction; QUIC ingress on quicPort. */
    relayHost: listener(8080).removeDefault().extend(relayHostQuicFields).default({}),
    /**
     * The admin listener: the live status page (GET /, GET /events, GET /status.json; docs/status-page.md). Its own port,
     * served by the front thread's uWS. Loopback by default; bound to any other interface it requires `key`
     * (Authorization: Bearer), refused at load otherwise.
     */
    admin: z
      .object({
        enabled: z.boolean().default(true),
        host: z.string().min(1).default('127.0.0.1'),
        /** TCP port; 0 picks a free one (printed at start, `relay_ready` lists it as `admin`). */
        port: port.default(8890),
        /** The admin key (any 32..128 visible ASCII characters): required when host is not a loopback address. */
        key: z
          .string()
          .regex(/^[\x21-\x7e]{32,128}$/, 'must be 32 to 128 visible ASCII characters (no spaces)')
          .optional(),
        /** How often the page's figures are gathered while at least one viewer is connected (never otherwise). */
        intervalMs: z.number().int().min(250).max(10_000).default(1_000),
        /** Viewers at once (SSE streams); one more is answered 503. */
        maxViewers: z.number().int().min(1).max(64).default(8),
      })
      .strict()
      .default({}),
    http: z
      .object({
        /** Largest request body accepted; larger gets HTTP 413 (Agave: 50 KiB). */
        maxBodyBytes: positiveInt.default(51_200),
        /** Largest JSON-RPC batch; larger gets one -32600 error. Agave has none; geth 1000, Bor 100. */
        maxBatchSize: positiveInt.default(100),
        /** Access-Control-Allow-Origin sent on every response and CORS preflight. */
        corsAllowOrigin: z
          .string()
          .regex(HEADER_VALUE_RE, 'must be one header value: visible ASCII, no line breaks')
          .default('*'),
        /** Whether GET /metrics is served on the hosts (unauthenticated; bind to a private interface). */
        metrics: z.boolean().default(true),
        /**
         * An idle keep-alive connection stays open at least this long (closed within 4 s after it), announced as
         * `keep-alive: timeout=N`. Above web3.js's 19 s so its pooled sockets are never closed under it.
         */
        idleTimeoutSeconds: z.number().int().min(MIN_IDLE_TIMEOUT_SECONDS).max(MAX_IDLE_TIMEOUT_SECONDS).default(60),
        /**
         * Slow-client bound: a connection that has not sent a whole request line and headers, or whose body stalls, is
         * closed 4 * (floor((N + 3) / 4) - 1) to 4 * floor((N + 3) / 4) s in (uSockets' 4 s sweep): 10, uWS's own,
         * at 8-12 s. Lower values close sooner (5: 4-8 s, what a suite test uses to wait less; 4: at the next sweep,
         * which may be a moment after a connection opened); the legacy build keeps its compiled-in 10.
         */
        slowClientTimeoutSeconds: z.number().int().min(MIN_SLOW_CLIENT_TIMEOUT_SECONDS).max(MAX_IDLE_TIMEOUT_SECONDS).default(SLOW_CLIENT_TIMEOUT_SECONDS),
      })
      .strict()
      .default({}),
    transactions: z
      .object({
        /**
         * Largest transaction accepted, bytes: 4096, the v1 limit (SIMD-0296, mainnet since 2026-09-15). Legacy and v0
         * stay at 1232 (PACKET_DATA_SIZE) whatever this says; a lower value caps v1 too and shrinks the rings' slots.
         */
        maxTransactionBytes: z.number().int().min(1232).max(4096).default(4096),
      })
      .strict()
      .default({}),
    upstream: z
      .object({
        /** JSON-RPC endpoint used for preflight simulation (and cluster data). Empty: the embedded localnet. */
        rpcUrl: z.string().url().optional(),
        /** Give up on an upstream preflight after this long (answered -32005). */
        preflightTimeoutMs: positiveInt.default(5_000),
        /**
         * Give up on any other upstream call made for a client (passthrough reads, simulateTransaction, fee fetches)
         * after this long: answered -32005 with data.reason "upstream_timeout", never a hang.
         */
        requestTimeoutMs: positiveInt.default(5_000),
        /** The upstream's PubSub WebSocket. Default: rpcUrl with ws(s):// and port + 1 (Agave's convention). */
        wsUrl: z.string().url().optional(),
        /**
         * A Yellowstone (Dragon's Mouth) gRPC Geyser endpoint (docs/geyser.md): slots for leader targeting from its
         * Subscribe stream, PubSub and getSlot polling as the fallback. Absent: PubSub and polling only.
         */
        grpc: z
          .object({
            /** http://host:port (plaintext HTTP/2) or https://host[:port] (TLS). */
            url: z.string().url().refine((u) => /^https?:\/\//.test(u), 'must be http:// or https://'),
            /** Sent as the x-token header; never logged, never in a metric label or an error message. */
            xToken: z.string().min(1).optional(),
            /** No update for this many slot times: the stream is stalled (PubSub takes over, the stream is reopened). */
            stallSlots: z.number().int().min(2).max(100).default(4),
            /** PubSub this many slots ahead of the stream: it lags (PubSub takes over until the stream catches up). */
            lagSlots: z.number().int().min(1).max(100).default(2),
          })
          .strict()
          .optional(),
      })
      .strict()
      .default({}),
    rings: z
      .object({
        /** Egress workers (Piscina threads); one ring each. */
        workers: z.number().int().min(1).max(64).default(2),
        /** Records per ring (power of two). Full ring -> HTTP 503 + Retry-After, never a silent drop. */
        slotsPerRing: z
          .number()
          .int()
          .min(2)
          .max(1 << 20)
          .refine((n) => (n & (n - 1)) === 0, 'must be a power of two')
          .default(4096),
        /**
         * Adaptive polling (latency over CPU): after taking a record, an egress worker keeps checking its ring once
         * per event-loop turn (setImmediate: its QUIC I/O keeps running) for this many microseconds before it parks
         * in Atomics.waitAsync. A parked worker is woken by a cross-thread notify, measured at p50 60 us / p99 240 us
         * on the 2-core reference box; a polling one sees a record within one loop turn. It costs up to one core per
         * worker while transactions keep arriving closer together than this. 0 (default) = park at once.
         */
        pollBeforeParkUs: z.number().int().min(0).max(1_000_000).default(0),
        /**
         * How each ring consumer waits for records (src/config/wait-policy.ts): park, spin-then-park (bounded by
         * pollBeforeParkUs, 2,000 us when that is 0), spin (never park: a core per consumer), or auto (default):
         * spin-then-park only where the host's core count leaves a core to spare, else park.
         */
        waitPolicy: z.enum(WAIT_POLICIES).default('auto'),
        /**
         * QUIC threads (docs/quic-sharding.md). 1 (default): one thread owns every QUIC socket of the process. N > 1:
         * thread 0 keeps the QUIC ring, the routes, the ingress listener and the probe, and each leader or static peer
         * is owned by exactly one of the N threads (by a hash of its address), which holds its one connection and does
         * its QUIC I/O; thread 0 hands sends for the others' targets over shared-memory links. For hosts with cores to
         * spare whose one QUIC thread is the limit (bench/results/quic-threads.md).
         */
        quicThreads: z.number().int().min(1).max(MAX_QUIC_THREADS).default(1),
      })
      .strict()
      .default({}),
    routes: z
      .object({
        /**
         * Benchmark only: egress workers release every record without sending it (counted as dropped:discarded).
         * Lets bench/e2e measure the front and the ring hand-off alone. Never enable in production.
         */
        discard: z.boolean().default(false),
        /** Routes for keys that set no defaultRoutes. */
        defaultRoutes: z.array(z.enum(ROUTE_NAMES)).min(1).default(['rpc']),
        rpc: z
          .object({
            /** JSON-RPC endpoints every transaction on the rpc route is forwarded to (sendTransaction, base64). */
            endpoints: z.array(z.string().url()).default([]),
            /** Per-request timeout to an endpoint. */
            timeoutMs: positiveInt.default(5_000),
            /** Keep-alive connections per endpoint, per worker. */
            connections: positiveInt.default(16),
          })
          .strict()
          .default({}),
        /** Direct-to-leader QUIC egress (src/egress/quic/direct-route.ts). Leader data from upstream.rpcUrl. */
        direct: z
          .object({
            /** Offer the direct route (requests naming it are refused while false). */
            enabled: z.boolean().default(false),
            /**
             * next-leaders: the current leader and the next `leaders` distinct leaders, always (Agave tpu-client-next).
             * window-aware: the current leader; in the last `windowTailSlots` slots of its window also the next
             * `leaders` (Yellowstone Jet SmartFanout).
             */
            fanout: z.enum(FANOUT_POLICIES).default('window-aware'),
            /**
             * A slot with several block producers (concurrent proposers; one per slot today): `all` sends to each of
             * them, `first` to the slot's leader alone. Applies to the current slot and to every next leader's slot.
             */
            producers: z.enum(PRODUCER_POLICIES).default('all'),
            /** How many leaders after the current one get each transaction (when the policy includes them). */
            leaders: z.number().int().min(0).max(16).default(1),
            /** window-aware: the last N slots of a 4-slot leader window also go to the next leaders. */
            windowTailSlots: z.number().int().min(0).max(4).default(2),
            /** Leader windows ahead whose connections are opened in advance (no handshake on a transaction's path). */
            lookahead: z.number().int().min(0).max(64).default(4),
            /** Open QUIC connections per worker (least recently used beyond it are evicted). */
            maxConnections: positiveInt.default(64),
            /** An evicted connection gets this long to write what it has queued before it is closed. */
            evictionGraceMs: positiveInt.default(5_000),
            /** Close a connection not used and not pre-warmed for this long. */
            idleCloseMs: positiveInt.default(30_000),
            /** QUIC max idle timeout we offer (Agave 60 s; the effective value is the smaller of both peers'). */
            maxIdleTimeoutMs: positiveInt.default(60_000),
            /** QUIC keep-alive PING interval (Agave 45 s; capped at half the negotiated idle timeout). */
            keepAliveMs: positiveInt.default(45_000),
            /** A handshake not done by then fails (Agave servers drop it after 2 s anyway). */
            connectTimeoutMs: positiveInt.default(2_000),
            /** After a failed connection: first retry delay, doubled up to retryMaxMs. */
            retryMinMs: positiveInt.default(100),
            retryMaxMs: positiveInt.default(5_000),
            /**
             * Rebroadcasts waiting for stream credit per connection; beyond it a rebroadcast answers dropped:queue_full.
             * First sends are not counted here: each holds its ring slot until answered, so the ring bounds them, and an
             * accepted transaction is never dropped:queue_full (admission by delay keeps their wait short).
             */
            maxQueuedPerConnection: positiveInt.default(4096),
            /**
             * A transaction waiting on a connection (handshake, stream credit, congestion room) longer than this ends as
             * dropped:stale, which releases its ring slot. Unset: one leader window plus one slot (5 slots) at the
             * measured slot time: after that the leader it was aimed at has moved on, and a rebroadcast sends a fresh
             * copy (docs/slot-time.md).
             */
            staleAfterMs: positiveInt.optional(),
            /** quiche congestion control of every egress connection (direct and static): cubic | reno | bbr. */
            congestionControl: z.enum(CONGESTION_CONTROLS).default('cubic'),
            /** Leader data older than this: transactions answer dropped:no_leader (fail closed). */
            staleLeaderMs: positiveInt.default(10_000),
            /** How often the in-worker leader source polls getSlot (only when the telemetry thread is disabled). */
            slotPollMs: positiveInt.default(200),
          })
          .strict()
          .default({}),
        /** Fixed QUIC peers that get every transaction on the static route (like Jet's extra fanout). */
        static: z
          .object({
            /** "ip:port" TPU QUIC addresses. */
            peers: z.array(z.string().regex(/^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:]+\]):\d{1,5}$/, 'must be "ip:port"')).default([]),
            /**
             * With peers set: every accepted transaction also takes the static route, whatever routes the request
             * named, when its key's allowedRoutes include `static` (added by the egress workers). false: only
             * requests (or key defaults) naming `static`.
             */
            everyTransaction: z.boolean().default(true),
          })
          .strict()
          .default({}),
        /** The Jito block engine route (sendTransaction on {url}/api/v1/transactions). Absent: route unavailable. */
        jito: z
          .object({
            /** Block engine base URL, e.g. https://mainnet.block-engine.jito.wtf (logs show origin + path only). */
            url: z.string().url(),
            /** Sent as the x-jito-auth header when set. Never logged. */
            authUuid: uuid.optional(),
            /** Append ?bundleOnly=true: the block engine forwards the transaction only inside a bundle. */
            bundleOnly: z.boolean().default(false),
            /** Per-request timeout. */
            timeoutMs: positiveInt.default(5_000),
            /** Keep-alive connections to the block engine, per worker. */
            connections: positiveInt.default(8),
          })
          .strict()
          .optional(),
      })
      .strict()
      .default({}),
    /**
     * Rebroadcast (egress workers, src/egress/rebroadcast/retry-scheduler.ts): a transaction with maxRetries != 0 is copied out of
     * the ring after its first send and sent again every intervalMs to the routes of its route set (∩ retries.routes)
     * until it lands (confirmed/finalized per getSignatureStatuses on upstream.rpcUrl), its blockhash expires, or its
     * retries run out.
     */
    retries: z
      .object({
        /**
         * Time between two sends of one transaction. Unset: 5 slots at the measured slot time (Agave's
         * send-transaction-service rate, 2000 ms, at the 400 ms slots it was set for; docs/slot-time.md).
         */
        intervalMs: positiveInt.optional(),
        /** Transactions held for rebroadcast per egress worker; beyond it new ones are shed (counted, logged). */
        maxQueue: positiveInt.default(10_000),
        /** maxRetries when the client gave none. -1 = until it lands or its blockhash expires (Agave's default). */
        defaultMaxRetries: z.number().int().min(-1).default(-1),
        /**
         * How often queued signatures are checked with getSignatureStatuses (256 per call) and blockhashes with
         * isBlockhashValid. Unset: 2.5 slots at the measured slot time (was 1000 ms at 400 ms slots).
         */
        statusPollMs: positiveInt.optional(),
        /**
         * Blockhash lifetime after the relay received the transaction when the upstream cannot say (no
         * isBlockhashValid answer). Unset: 225 slots at the measured slot time (150 blocks, plus skipped slots and the
         * time before the client signed: 45 s at 200 ms slots, 90 s at 400 ms).
         */
        blockhashTtlMs: positiveInt.optional(),
        /** Routes rebroadcasts go to (intersected with each transaction's route set). */
        routes: z.array(z.enum(ROUTE_NAMES)).default(['rpc', 'direct', 'jito', 'static']),
      })
      .strict()
      .default({}),
    /**
     * The relay's identity: a Solana keypair JSON file (64-number array). Its public key is the client certificate
     * every QUIC connection presents; validators grant QoS by its stake. Absent: a fresh keypair is generated at
     * start (unstaked, with a warning); a path that does not exist yet is created with a fresh keypair.
     */
    identity: z
      .object({
        keypairPath: z.string().min(1).optional(),
        /**
         * How often each egress worker looks at the keypair file (stat: mtime, size); 0 = never. A file now holding
         * another keypair becomes the identity of every new connection; open ones are closed within
         * routes.direct.evictionGraceMs and reopened with it (no restart).
         */
        reloadCheckMs: z.number().int().min(0).default(1_000),
      })
      .strict()
      .default({}),
    /** What the JSON-RPC host serves besides sendTransaction and getLeaderSlots (docs/json-rpc-host.md). */
    jsonRpc: z
      .object({
        /**
         * Standard Solana methods forwarded to the upstream RPC as they are (docs/passthrough.md), charged to the
         * key's readLimit. A method not listed here (nor served by the relay itself) answers -32601.
         */
        passthroughMethods: z
          .array(
            z
              .string()
              .regex(/^[A-Za-z][A-Za-z0-9]*$/, 'must be a method name')
              .refine((m) => !(RELAY_SERVED_METHODS as readonly string[]).includes(m), (m) => ({ message: `"${m}" is served by the relay itself and is never passed through; remove it from the list` })),
          )
          .default([...DEFAULT_PASSTHROUGH_METHODS]),
        /** getRecentPrioritizationFees: address-scoped answers kept per (sorted address set, slot), LRU (docs/fees.md). */
        feeCacheEntries: z.number().int().min(1).max(1_000_000).default(1_024),
        pubsub: z
          .object({
            /** Serve Solana's PubSub WebSocket (docs/pubsub.md). */
            enabled: z.boolean().default(true),
            /** Port; default rpcHost.port + 1, where web3.js's Connection looks for it. Same interface as rpcHost. */
            port: port.optional(),
            /**
             * Unsent bytes the relay lets a client's socket hold (uWS getBufferedAmount) before closing it with 1008
             * slow_consumer: a client that stops reading cannot grow the relay's memory past this (docs/pubsub.md).
             */
            maxBufferedBytes: z.number().int().min(64 * 1024).max(1024 * 1024 * 1024).default(16 * 1024 * 1024),
            /** Open receiptSubscribe subscriptions per API key, over all its sockets (docs/receipts.md). */
            receiptSubscriptionsPerKey: z.number().int().min(0).max(100_000).default(100),
          })
          .strict()
          .default({}),
      })
      .strict()
      .default({}),
    /** The telemetry thread and getLeaderSlots (docs/get-leader-slots.md). */
    telemetry: telemetrySchema,
    /** Several relays as one service over an engine (Redis 7; docs/multi-region.md). No url: this relay alone. */
    cluster: clusterSchema,
    /** The embedded localnet as a test bench (used only without upstream.rpcUrl; docs/localnet.md "Network model"). */
    localnet: localnetSchema,
    /** API keys inline (or in keysFile). */
    keys: z.array(keySchema).default([]),
    /** YAML/JSON file with more keys (a list in the same shape as `keys`), relative to the config file. */
    keysFile: z.string().optional(),
    log: z
      .object({
        level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
      })
      .strict()
      .default({}),
    /**
     * Bundles (docs/bundles.md): sendBundle, getBundleStatuses, getInflightBundleStatuses and getTipAccounts on the
     * JSON-RPC host and POST /v1/bundles, forwarded to a Jito-compatible bundle service for keys with `bundles: true`.
     */
    bundles: z
      .object({
        /**
         * The bundle service's base URL (a Jito block engine, e.g. https://frankfurt.mainnet.block-engine.jito.wtf;
         * bundles go to {url}/api/v1/bundles). Absent: the embedded localnet's block engine when the relay runs on it,
         * else the bundle methods answer -32601.
         */
        url: z.string().url().optional(),
        /** Sent as the x-jito-auth header when set. Never logged. */
        authUuid: uuid.optional(),
        /** Per-request timeout (answered -32005 upstream_timeout). */
        timeoutMs: positiveInt.default(5_000),
        /** Keep-alive connections to the bundle service. */
        connections: positiveInt.default(16),
        /** Smallest total tip (lamports to the service's tip accounts) a bundle must pay; Jito's minimum is 1,000. */
        minTipLamports: z.number().int().min(0).default(1_000),
        /** How long the service's tip accounts (getTipAccounts) are cached. */
        tipAccountsTtlMs: positiveInt.default(600_000),
      })
      .strict()
      .default({}),
    /** Adaptive routing (docs/adaptive-routing.md): a leader that parks the direct route gets a wider fanout and partner routes. */
    routing: routingSchema,
    /** Landing receipts (docs/receipts.md): what became of every accepted transaction, per route, and where it landed. */
    receipts: z
      .object({
        enabled: z.boolean().default(true),
        /** Receipts kept (a power of two); the oldest is overwritten first. ~0.5 KB each. */
        capacity: z
          .number()
          .int()
          .min(1_024)
          .max(1 << 22)
          .refine((n) => (n & (n - 1)) === 0, 'must be a power of two')
          .default(131_072),
        /** A receipt older than this answers 404. */
        ttlMs: positiveInt.default(600_000),
        /**
         * How often pending receipts are checked with getSignatureStatuses: for everything while the push below is
         * off or its socket down (then the resolution of msToLand), for what the push does not watch otherwise.
         */
        pollMs: z.number().int().min(50).max(10_000).default(200),
        /**
         * Landings by push (docs/receipts.md): the tracker watches followed signatures on the upstream's PubSub
         * (upstream.wsUrl, else rpcUrl's port + 1) with signatureSubscribe at processed and finalized; the poll is the
         * fallback while that socket is down. false: the poll alone (the 200 ms resolution of before).
         */
        push: z.boolean().default(true),
        /**
         * Followed this long after acceptance at most; then not_landed. A blockhash lives 150 blocks: ~45 s at 200 ms
         * slots with skips, ~90 s at 400 ms; 90 s covers every slot time mainnet has run, and following longer only
         * costs a status poll while ending early would report not_landed for one that could still land.
         */
        trackForMs: positiveInt.default(90_000),
        /** Receipts followed at once at most; beyond it new ones are `untracked` (counted). */
        maxTracked: positiveInt.default(20_000),
        /**
         * The landing poll's getSignatureStatuses calls run in their own thread (src/rpc/status/), not on the front:
         * ~8 ms of front time per poll at 20,000 followed receipts moves there. false: the front makes them (one
         * thread less; on a 2-core host at saturation the thread's CPU competes with the quic-egress thread's).
         */
        statusThread: z.boolean().default(true),
        /**
         * Per-leader counters (GET /v1/leaders, the status page; docs/leader-counters.md): the leaders of this many
         * slots back from the current one (256 slots: ~100 s, 64 leader windows). Memory: one identity per slot; a
         * report scans the receipts of the window.
         */
        leaderSlots: z.number().int().min(4).max(4_096).default(256),
      })
      .strict()
      .default({}),
    health: z
      .object({
        /**
         * How often the front thread re-evaluates what the relay can deliver (GET /health, intake refusals) and probes
         * the upstream and the rpc route's endpoints with one getHealth call each (any HTTP answer = reachable).
         */
        probeIntervalMs: z.number().int().min(100).max(60_000).default(1_000),
        /**
         * A probe with no answer after this long counts as unreachable. As long as the rpc route's own timeout by
         * default: a slow endpoint is not a dead one (a refused or reset connection is reported at once).
         */
        probeTimeoutMs: z.number().int().min(50).max(30_000).default(5_000),
        /**
         * A route that in the last failingWindowMs had at least failingMinOutcomes outcomes and not one `sent` is
         * failing: transactions that only it could carry are refused (503 routes_unavailable) until it recovers.
         */
        failingWindowMs: z.number().int().min(500).max(600_000).default(5_000),
        failingMinOutcomes: z.number().int().min(1).max(1_000_000).default(3),
      })
      .strict()
      .default({}),
    /**
     * Admission by delay (docs/relay-api.md "Admission by delay"): the relay accepts a transaction for a route only
     * while that route's accepted transactions leave within a target sojourn (acceptance -> the route's send answer:
     * for direct/static the QUIC stream write), judged as CoDel judges a queue: the minimum sojourn over an interval
     * above the target means a standing queue. A route over its target is left out of a request that has another
     * route that is not; a request with none left is refused at intake (503 + Retry-After, JSON-RPC -32005, the QUIC
     * refusal code), before anything is accepted.
     */
    admission: z
      .object({
        /**
         * Target sojourn per route, ms; 0 = no bound for that route. direct/static default 100 ms (a fraction of a
         * 250-400 ms slot). rpc/jito default 0: their answer is the upstream's HTTP reply, whose round trip is not a queue.
         */
        targetSojournMs: z
          .object({
            direct: z.number().int().min(0).max(60_000).default(100),
            static: z.number().int().min(0).max(60_000).default(100),
            rpc: z.number().int().min(0).max(60_000).default(0),
            jito: z.number().int().min(0).max(60_000).default(0),
          })
          .strict()
          .default({}),
        /** CoDel's interval: a route is over its target once every sojourn measured for this long was above it. */
        intervalMs: z.number().int().min(5).max(10_000).default(100),
        /**
         * CoDel's maxpacket guard: a ring holding fewer records than this, or fewer than its route answered in the
         * last interval scaled to the target (what drains within the target), is not a standing queue, whatever they
         * wait on (a handshake to a new leader, a host stall); refusing would not shorten that wait. 0 (the
         * default) = no guard: plain CoDel, as the end-to-end refusal test runs it; 4 suits a loaded, stalling host.
         */
        minBacklog: z.number().int().min(0).max(1_000_000).default(0),
      })
      .strict()
      .default({}),
    shutdown: z
      .object({
        /** On SIGINT/SIGTERM, how long to wait for the rings to drain into the routes before exiting. */
        drainTimeoutMs: positiveInt.default(10_000),
      })
      .strict()
      .default({}),
  })
  .strict();

export type ConfigInput = z.input<typeof configSchema>;
export type Config = z.infer<typeof configSchema>;

/** upstream.grpc: the Yellowstone gRPC Geyser source (docs/geyser.md). */
export type GeyserSourceConfig = NonNullable<Config['upstream']['grpc']>;
