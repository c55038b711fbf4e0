// The relay config's `localnet:` section (cold: parsed once at start): the embedded localnet as a test bench (slot
// time, per-validator links, a down validator, the RPC node's distance, Agave's QoS). Used only when the relay runs
// the embedded localnet (no upstream.rpcUrl); passed to the child as one JSON flag (src/localnet/localnet-args.ts).
// Names match LocalnetOptions (src/localnet/network-options.ts); docs/localnet.md "Network model" explains each.
import { z } from 'zod';

const pct = z.number().min(0).max(100);
const delayMs = z.number().min(0).max(2_000);

export const localnetLinkSchema = z
  .object({
    oneWayDelayMs: delayMs.default(0),
    lossPct: pct.default(0),
    txDropPct: pct.default(0),
    down: z.boolean().default(false),
  })
  .strict();

export const localnetSchema = z
  .object({
    /** Validators (leaders); stakes split N : N-1 : ... : 1. */
    validators: z.number().int().min(1).max(64).default(4),
    /**
     * Slot time of the simulated cluster: mainnet's 250 ms (since epoch 1037; 200 ms planned). A test-bench setting,
     * not an assumption: the relay measures whatever slot time it runs on (docs/slot-time.md).
     */
    slotMs: z.number().int().min(200).max(2_000).default(250),
    /**
     * The cluster's consensus: `alpenglow` (mainnet since 2026-10-21: a block is finalized by certificate
     * finalityDelayMs after it, confirmed = finalized, a leader that misses its slot is skipped) or `tower` (Tower
     * BFT: confirmed 1 slot and finalized 32 slots behind the tip, for older clusters). docs/localnet.md "Consensus".
     */
    consensus: z.enum(['alpenglow', 'tower']).default('alpenglow'),
    /** Alpenglow: ms from a block's end to its finalization certificate (mainnet ~150). */
    finalityDelayMs: z.number().int().min(0).max(10_000).default(150),
    /**
     * The RPC node's ms from a slot's first shred (Geyser FIRST_SHRED_RECEIVED) to replay creating its bank (Geyser
     * CREATED_BANK, PubSub slotNotification); below slotMs. docs/localnet.md "When the RPC node learns of a slot".
     */
    shredToBankMs: z.number().int().min(0).max(1_999).default(5),
    /**
     * Whose TPU each validator runs, index = validator: `agave` (the QoS models) or `firedancer` (Retry on every new
     * connection, unlimited stream credit, 10 s idle, a TPU-UDP port, no stake terms); missing entries are agave.
     * docs/localnet.md "Leaders of both kinds".
     */
    kinds: z.array(z.enum(['agave', 'firedancer'])).max(64).default([]),
    /** Firedancer validators' QUIC idle timeout, ms (Firedancer's default 10,000; tests shorten it). */
    firedancerIdleTimeoutMs: z.number().int().min(100).max(600_000).default(10_000),
    /** Per validator TPU listener, index = validator (0 = largest stake); missing entries are perfect links. */
    links: z.array(localnetLinkSchema).max(64).default([]),
    rpc: z
      .object({
        /** Client <-> RPC node one-way delay, applied to requests, answers and WebSocket messages. */
        oneWayDelayMs: delayMs.default(0),
        /** Distinct upcoming leaders each sendTransaction is forwarded to (Agave: 2). */
        leaderForwardCount: z.number().int().min(1).max(8).default(2),
        /** Resend interval for a transaction not landed yet (Agave: 2000); 0 = no resends. */
        retryRateMs: z.number().int().min(0).max(60_000).default(2_000),
        /** Resends when the request sets no maxRetries; absent = until the blockhash expires (Agave). */
        defaultMaxRetries: z.number().int().min(0).max(1_000).optional(),
        /** The RPC node's stake for the QoS (0 = unstaked): "an RPC that is staked". */
        stakeSol: z.number().min(0).max(1e9).default(0),
      })
      .strict()
      .default({}),
    qos: z
      .object({
        enabled: z.boolean().default(false),
        /** `throttle` (Agave's per-100 ms unstaked stream throttle) or `flow-control` (agave PR #10666, MAX_STREAMS). */
        model: z.enum(['throttle', 'flow-control']).default('throttle'),
        /** flow-control: the leader's capacity, streams per second (absent: maxStreamsPerMs x 1000, Agave 500,000). */
        capacityTps: z.number().int().min(10).max(10_000_000).optional(),
        maxStreamsPerMs: z.number().min(0.01).max(10_000).default(500),
        baseMaxStreamsStaked: z.number().int().min(1).max(100_000).default(2048),
        baseMaxStreamsUnstaked: z.number().int().min(1).max(100_000).default(20),
        maxStakedConnections: z.number().int().min(1).max(100_000).default(2_000),
        maxUnstakedConnections: z.number().int().min(0).max(100_000).default(500),
        maxConnectionsPerUnstakedPeer: z.number().int().min(1).max(1_024).default(8),
        maxConnectionsPerStakedPeer: z.number().int().min(1).max(1_024).default(16),
        maxConnectionsPerIpPerMinute: z.number().int().min(1).max(100_000).default(8),
        unstakedStreamsPer100Ms: z.number().int().min(1).max(100_000).default(20),
      })
      .strict()
      .default({}),
    /**
     * The localnet's Yellowstone gRPC (Geyser) port (src/localnet/grpc/, docs/localnet.md "Yellowstone gRPC"); 0 =
     * ephemeral; absent = no gRPC server.
     */
    grpcPort: z.number().int().min(0).max(65_535).optional(),
    /** The localnet's Jito-compatible block engine (docs/bundles.md): requests per second per client IP, 0 = none. */
    blockEngine: z
      .object({
        rateLimitPerSecond: z.number().int().min(0).max(1_000_000).default(50),
        /** Its port (0 = ephemeral): a bench that points a relay's jito route at it picks one. */
        port: z.number().int().min(0).max(65_535).default(0),
        /** The stake of the identity its transactions reach the leaders with (Jito's relayer is staked); 0 = unstaked. */
        stakeSol: z.number().min(0).max(1e9).default(0),
      })
      .strict()
      .default({}),
    /**
     * Other senders loading the TPUs (src/localnet/competitors.ts): `tps` while hot; hot on validator `validator`'s
     * leader slots and/or in slots where slot % everySlots < hotSlots; staked with `stakeSol`; a compute-unit price.
     */
    competitors: z
      .array(
        z
          .object({
            name: z.string().regex(/^[a-z0-9_-]{1,32}$/).optional(),
            tps: z.number().min(1).max(50_000),
            stakeSol: z.number().min(0).max(1e9).default(0),
            validator: z.number().int().min(0).max(63).optional(),
            everySlots: z.number().int().min(1).max(10_000).optional(),
            hotSlots: z.number().int().min(1).max(10_000).optional(),
            microLamportsPerCu: z.number().int().min(0).max(1e12).default(0),
            connections: z.number().int().min(1).max(16).default(1),
          })
          .strict(),
      )
      .max(16)
      .default([]),
    /** Transactions a leader executes per slot, highest compute-unit price first; absent = unlimited. */
    blockCapacity: z.number().int().min(1).max(1_000_000).optional(),
    /** Identities the listeners count as staked (QoS only), e.g. the relay's identity.keypairPath public key. */
    /** Benches (bench/wire/): TPU arrivals kept for localnet_getArrivals; 0 = off (src/localnet/arrival-log.ts). */
    arrivalLog: z.number().int().min(0).max(4_000_000).default(0),
    stakedPeers: z
      .array(
        z
          .object({
            identity: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'must be a base58 public key'),
            stakeSol: z.number().positive().max(1e9),
          })
          .strict(),
      )
      .default([]),
  })
  .strict()
  .superRefine((v, ctx) => {
    v.competitors.forEach((c, i) => {
      if (c.validator !== undefined && c.validator >= v.validators) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['competitors', i, 'validator'], message: `no validator ${c.validator} of ${v.validators}` });
      }
      if (c.hotSlots !== undefined && c.everySlots === undefined) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['competitors', i, 'hotSlots'], message: 'needs everySlots' });
      }
    });
    if (v.shredToBankMs >= v.slotMs) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['shredToBankMs'], message: `must be below slotMs (${v.slotMs})` });
    }
    if (v.kinds.length > v.validators) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['kinds'], message: `has ${v.kinds.length} entries for ${v.validators} validators` });
    }
    if (v.links.length > v.validators) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['links'], message: `has ${v.links.length} entries for ${v.validators} validators` });
    }
  })
  .default({});

export type LocalnetConfig = z.infer<typeof localnetSchema>;
