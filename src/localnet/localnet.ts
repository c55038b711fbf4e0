// startLocalnet: wires the embedded local cluster (localnet process, main thread; cold set-up and shutdown).
// bank (litesvm) <- block producer <- TPU gate <- one QUIC TPU listener per validator; slot clock -> bank,
// prioritization fees, gate (held transactions), PubSub; RPC facade (HTTP + WebSocket) over all of it. The bank is
// synchronous and CPU-bound: run this in its own process (run-localnet.ts via `slotrelay localnet`; the relay
// starts it as a child, src/localnet-child.ts), never on the relay's front thread. Tests may run it in-process.
import { createHash } from 'node:crypto';
import { Keypair } from '@solana/web3.js';
import { Bank, BLOCKHASH_WINDOW_SLOTS } from './bank.js';
import { BlockEngineServer } from './block-engine/block-engine-server.js';
import { BundleEngine } from './block-engine/bundle-engine.js';
import { localnetTipAccounts } from './block-engine/tip-accounts.js';
import { BlockProducer } from './block-producer.js';
import { Consensus, DEFAULT_CONFIRMED_DEPTH, DEFAULT_FINALITY_DELAY_MS, DEFAULT_FINALIZED_DEPTH, type ConsensusMode } from './consensus.js';
import { FacadeServer } from './facade/rpc-server.js';
import { BlockIndex } from './facade/get-block.js';
import { LOCALNET_SOLANA_CORE_VERSION, type FacadeContext, type FacadeValidator } from './facade/context.js';
import { GeyserServer } from './grpc/geyser-server.js';
import { ArrivalLog } from './arrival-log.js';
import { LandingLog } from './landings.js';
import { LeaderSchedule } from './leader-schedule.js';
import { PrioritizationFees } from './prioritization-fees.js';
import { RpcTpuSender, type RpcSendCounters, type TpuTarget } from './rpc-tpu-sender.js';
import { SlotClock } from './slot-clock.js';
import { DEFAULT_SHRED_TO_BANK_MS, ShredToBank } from './shred-to-bank.js';
import { SlotLoadLog } from './slot-load.js';
import { TpuGate } from './tpu-gate.js';
import { TpuListener } from './tpu-listener.js';
import { TpuQos } from './tpu-qos.js';
import { FlowControlQos } from './tpu-qos-flow-control.js';
import { Competitors, competitorIdentity, type CompetitorCounters, type LocalnetCompetitorOptions } from './competitors.js';
import { makeValidators } from './validators.js';
import { TpuUdpListener } from './tpu-firedancer.js';
import { versionOfKind, type ValidatorKind } from './validator-kind.js';
import { MAX_V1_TRANSACTION_BYTES } from './wire-types.js';
import type { LocalnetLinkOptions, LocalnetQosOptions, LocalnetRegionOptions, LocalnetRpcOptions, LocalnetStakedPeer } from './network-options.js';
import { RegionLinks, type LocalnetRegion } from './region-links.js';

export interface LocalnetOptions {
  /** Interface for the facade and every TPU listener; default 127.0.0.1. */
  readonly host?: string;
  /** Facade HTTP port (PubSub on port + 1); 0 = ephemeral pair. Default 0. */
  readonly rpcPort?: number;
  /** Number of validators; default 4. */
  readonly validators?: number;
  /** Stake per validator in lamports; default 1M SOL split N : N-1 : ... : 1. */
  readonly stakes?: readonly bigint[];
  /** Slot duration; default 250 ms, mainnet's since epoch 1037 (the relay measures it, docs/slot-time.md). */
  readonly slotMs?: number;
  /**
   * Consensus: `alpenglow` (default, mainnet since 2026-10-21: finalized by certificate `finalityDelayMs` after the
   * block, confirmed = finalized, a missed leader slot is skipped) or `tower` (confirmed / finalized by depth).
   */
  readonly consensus?: ConsensusMode;
  /** Alpenglow: ms from a block's end to its finalization certificate; default 150 (mainnet). */
  readonly finalityDelayMs?: number;
  /** Default 8192 (must be a multiple of 4). */
  readonly slotsPerEpoch?: number;
  /** Seed for identities and the leader schedule; default "slotrelay". */
  readonly seed?: string;
  /** One-way delay per validator's TPU listener (ms), index = validator; default 0. links[i].oneWayDelayMs wins. */
  readonly oneWayDelaysMs?: readonly number[];
  /** Per validator TPU listener network model (delay, datagram loss, transaction drops, down), index = validator. */
  readonly links?: readonly LocalnetLinkOptions[];
  /** The RPC facade's distance from its clients and its send-transaction service (leaders, resends). */
  readonly rpc?: LocalnetRpcOptions;
  /** Regions on this host, each with its own delays to the validators (facade /regions/{name}; region-links.ts). */
  readonly regions?: readonly LocalnetRegionOptions[];
  /** Agave's QoS on every TPU listener (per-peer connections, connection rate, unstaked stream throttle). */
  readonly qos?: LocalnetQosOptions;
  /**
   * Whose TPU each validator runs, index = validator; missing entries are Agave (tpu-firedancer.ts, docs/localnet.md
   * "Leaders of both kinds").
   */
  readonly kinds?: readonly ValidatorKind[];
  /** Firedancer validators' QUIC idle timeout (ms); default 10,000 (Firedancer's default). */
  readonly firedancerIdleTimeoutMs?: number;
  /** Peers counted as staked by the QoS besides the validators (not in the leader schedule). */
  readonly stakedPeers?: readonly LocalnetStakedPeer[];
  /** Other senders loading the validators' TPUs (competitors.ts): hot leader, hot window, stake, priority fee. */
  readonly competitors?: readonly LocalnetCompetitorOptions[];
  /** Transactions a leader executes per slot, highest priority first (tpu-gate.ts); absent = no limit. */
  readonly blockCapacity?: number;
  /** How long before its window the next leader accepts transactions; default half a slot. */
  readonly graceMs?: number;
  /**
   * Largest transaction a listener stream, the facade and the block engine accept; default 4096 (SIMD-0296, v1).
   * The parser still caps legacy and v0 at 1232 whatever this is (docs/localnet-v1.md).
   */
  readonly maxTransactionBytes?: number;
  /** Concurrent uni streams per connection on each listener; default 128 (unstaked peer). */
  readonly maxStreams?: number;
  /** Benches: TPU arrivals kept for localnet_getArrivals (src/localnet/arrival-log.ts); 0 or absent = off. */
  readonly arrivalLog?: number;
  /** Tower mode: slots until a committed transaction is confirmed / finalized; default 1 / 32. */
  readonly confirmedDepth?: number;
  readonly finalizedDepth?: number;
  /** Blockhash validity in slots; default 150 (Agave). */
  readonly blockhashWindowSlots?: number;
  /** The Jito-compatible block engine's port (src/localnet/block-engine/); 0 = ephemeral. Default 0. */
  readonly blockEnginePort?: number;
  /** Its per-IP request limit (HTTP 429 / -32097 above it); 0 = unlimited. Default 50 per second. */
  readonly blockEngineRateLimitPerSecond?: number;
  /** Yellowstone gRPC (src/localnet/grpc/): its port, 0 = ephemeral; absent = no gRPC server. */
  readonly grpcPort?: number;
  /** Its limit on transaction filters per request (a provider's yellowstone-grpc filter limit); absent = none. */
  readonly grpcMaxTransactionFilters?: number;
  /**
   * The RPC node's ms from a slot's first shred (Geyser FIRST_SHRED_RECEIVED) to its bank (CREATED_BANK, PubSub's
   * slotNotification): src/localnet/shred-to-bank.ts; 0..slotMs-1, default 5.
   */
  readonly shredToBankMs?: number;
  /** The stake of the identity the block engine forwards transactions with (Jito's relayer); 0 = unstaked. */
  readonly blockEngineStake?: bigint;
  readonly onInternalError?: (err: unknown, method: string) => void;
}

export interface LocalnetValidator {
  readonly identity: string;
  readonly votePubkey: string;
  /** Lamports. */
  readonly stake: number;
  /** "host:port" of its TPU QUIC listener. */
  readonly tpuQuic: string;
  /** Its TPU kind and the version it publishes in getClusterNodes. */
  readonly kind: ValidatorKind;
  readonly version: string;
  /** "host:port" of its plain UDP TPU port (Firedancer's TPU-UDP), null for Agave. */
  readonly tpu: string | null;
  readonly oneWayDelayMs: number;
  /** Its link (docs/localnet.md "Network model"). */
  readonly lossPct: number;
  readonly txDropPct: number;
  readonly down: boolean;
}

export interface Localnet {
  readonly rpcUrl: string;
  readonly wsUrl: string;
  /** Base URL of the Jito-compatible block engine (POST {url}/api/v1/bundles, /api/v1/transactions). */
  readonly blockEngineUrl: string;
  /** The Yellowstone gRPC endpoint (http://host:port), null when options.grpcPort is absent. */
  readonly grpcUrl: string | null;
  /** Its server (slot statuses, streams), null when off. */
  readonly geyser: GeyserServer | null;
  readonly validators: readonly LocalnetValidator[];
  /** In-process access for tests and benches. */
  readonly bank: Bank;
  readonly schedule: LeaderSchedule;
  readonly clock: SlotClock;
  readonly gate: TpuGate;
  readonly landings: LandingLog;
  /** Commitments, skips and the genesis certificate (Alpenglow or Tower: src/localnet/consensus.ts). */
  readonly consensus: Consensus;
  /** Make validator `index` miss (or stop missing) its leader slots: under Alpenglow each is skipped, its TPU's
   * transactions dropped as `skipped`. Takes effect from the next slot that starts. */
  setMissingSlots(index: number, missing: boolean): void;
  /** Each validator's TPU listener (index = validator): counters for tests and benches. */
  readonly listeners: readonly TpuListener[];
  /** Each Firedancer validator's TPU-UDP port (index = validator), null for Agave validators. */
  readonly udpListeners: readonly (TpuUdpListener | null)[];
  /** Each listener's QoS state (index = validator); empty without options.qos.enabled. */
  readonly qos: readonly (TpuQos | FlowControlQos)[];
  readonly slotMs: number;
  /** Ms from a slot's first shred to its bank (src/localnet/shred-to-bank.ts). */
  readonly shredToBankMs: number;
  /** The competing senders' counters (one per options.competitors entry). */
  readonly competitors: readonly CompetitorCounters[];
  /** The facade's send-transaction service: sends, resends and why transactions left its retry pool. */
  readonly rpcSend: RpcSendCounters;
  readonly bundles: BundleEngine;
  readonly blockEngine: BlockEngineServer;
  /** options.regions, with each region's URL and addresses. */
  readonly regions: readonly LocalnetRegion[];
  /** Change a region's one-way delays while it runs (one for all validators, or one per validator). */
  setRegionDelay(name: string, oneWayDelayMs: number | readonly number[]): void;
  stop(): Promise<void>;
}

export async function startLocalnet(options: LocalnetOptions = {}): Promise<Localnet> {
  const host = options.host ?? '127.0.0.1';
  const slotMs = options.slotMs ?? 250;
  const n = options.validators ?? 4;
  const seed = options.seed ?? 'slotrelay';
  const maxTransactionBytes = options.maxTransactionBytes ?? MAX_V1_TRANSACTION_BYTES;
  const specs = makeValidators(n, seed, options.stakes);
  const identities = specs.map((v) => v.identity.publicKey.toBase58());

  const bank = new Bank({ blockhashWindowSlots: options.blockhashWindowSlots ?? BLOCKHASH_WINDOW_SLOTS, slotMs });
  const fees = new PrioritizationFees();
  const landings = new LandingLog(identities);
  const arrivals = (options.arrivalLog ?? 0) > 0 ? new ArrivalLog(options.arrivalLog!) : null;
  const producer = new BlockProducer(bank, fees, landings);
  const schedule = new LeaderSchedule(
    specs.map((v, i) => ({ identity: identities[i], stake: v.stake })),
    options.slotsPerEpoch ?? 8192,
    seed,
  );
  const clock = new SlotClock(slotMs);
  // When the RPC node learns of each slot: first shred at the tick, the bank (slotSubscribe) shredToBankMs later.
  const shredToBank = new ShredToBank(clock, options.shredToBankMs ?? Math.min(DEFAULT_SHRED_TO_BANK_MS, Math.ceil(slotMs) - 1));
  // A leader misses its slots when it is down or told to (setMissingSlots); only Alpenglow turns that into skips.
  const missing = new Set<string>((options.links ?? []).flatMap((l, i) => (l.down === true && i < n ? [identities[i]] : [])));
  const consensus = new Consensus(clock, {
    mode: options.consensus ?? 'alpenglow',
    confirmedDepth: options.confirmedDepth ?? DEFAULT_CONFIRMED_DEPTH,
    finalizedDepth: options.finalizedDepth ?? DEFAULT_FINALIZED_DEPTH,
    finalityDelayMs: options.finalityDelayMs ?? DEFAULT_FINALITY_DELAY_MS,
    leaderMisses: (slot) => missing.has(schedule.leaderAt(slot)),
    seed,
    validators: n,
  });
  const gate = new TpuGate(schedule, clock, producer, landings, {
    isSkipped: (slot) => consensus.isSkipped(slot),
    graceMs: options.graceMs ?? slotMs / 2,
    maxTransactionBytes,
    blockCapacity: options.blockCapacity,
    slotMs,
  });

  const listeners: TpuListener[] = [];
  const udpListeners: (TpuUdpListener | null)[] = [];
  const stopUdp = async (): Promise<void> => {
    for (const u of udpListeners) await u?.stop();
  };
  if ((options.kinds?.length ?? 0) > n) throw new Error(`kinds has ${options.kinds?.length} entries for ${n} validators`);
  const qosList: (TpuQos | FlowControlQos)[] = [];
  const validators: LocalnetValidator[] = [];
  const targets = new Map<string, TpuTarget>();
  // The QoS stake table: the validators' identities and any extra staked peers (Agave's StakedNodes).
  const stakes = new Map<string, bigint>(specs.map((v, i) => [identities[i], v.stake]));
  for (const p of options.stakedPeers ?? []) stakes.set(p.identity, (stakes.get(p.identity) ?? 0n) + p.stake);
  // The RPC node's and the block engine's own TPU identities (seeded): staked when given a stake.
  const rpcSeed = createHash('sha256').update(`slotrelay-localnet/${seed}/rpc-node`).digest();
  const engineSeed = createHash('sha256').update(`slotrelay-localnet/${seed}/block-engine`).digest();
  if ((options.rpc?.stake ?? 0n) > 0n) stakes.set(Keypair.fromSeed(rpcSeed).publicKey.toBase58(), options.rpc!.stake!);
  if ((options.blockEngineStake ?? 0n) > 0n) stakes.set(Keypair.fromSeed(engineSeed).publicKey.toBase58(), options.blockEngineStake!);
  (options.competitors ?? []).forEach((c, i) => {
    if ((c.stake ?? 0n) > 0n) stakes.set(competitorIdentity(seed, i).publicKey.toBase58(), c.stake!);
  });
  if ((options.links?.length ?? 0) > n) throw new Error(`links has ${options.links?.length} entries for ${n} validators`);
  try {
    for (let i = 0; i < n; i++) {
      const link = options.links?.[i] ?? {};
      const oneWayDelayMs = link.oneWayDelayMs ?? options.oneWayDelaysMs?.[i] ?? 0;
      const qos =
        options.qos?.enabled !== true
          ? undefined
          : options.qos.model === 'flow-control'
            ? new FlowControlQos(options.qos, stakes, 2 * oneWayDelayMs)
            : new TpuQos(options.qos, stakes);
      if (qos !== undefined) qosList.push(qos);
      const kind = options.kinds?.[i] ?? 'agave';
      const l = new TpuListener({
        host,
        port: 0,
        validatorIdentity: identities[i],
        kind,
        idleTimeoutMs: options.firedancerIdleTimeoutMs,
        maxStreams: options.maxStreams,
        maxTransactionBytes,
        oneWayDelayMs,
        lossPct: link.lossPct,
        txDropPct: link.txDropPct,
        down: link.down,
        qos,
        copy: false, // the gate copies what it keeps
        onTransaction: (view, info) => {
          if (arrivals !== null) arrivals.add(view, info.arrivalNs);
          gate.submit(view, info);
        },
      });
      await l.start();
      listeners.push(l);
      let udp: TpuUdpListener | null = null;
      if (kind === 'firedancer') {
        const validatorIdentity = identities[i];
        udp = new TpuUdpListener({
          host,
          port: 0,
          maxTransactionBytes,
          onTransaction: (tx, arrivalNs) => {
            if (arrivals !== null) arrivals.add(tx, arrivalNs);
            gate.submit(tx, { validatorIdentity, senderIdentity: null, arrivalNs });
          },
        });
        await udp.start();
      }
      udpListeners.push(udp);
      const udpAddr = udp?.address() ?? null;
      const addr = l.address();
      targets.set(identities[i], { identity: identities[i], host: addr.host, port: addr.port });
      validators.push({
        identity: identities[i],
        votePubkey: specs[i].vote.publicKey.toBase58(),
        stake: Number(specs[i].stake),
        tpuQuic: `${addr.host}:${addr.port}`,
        kind,
        version: versionOfKind(kind),
        tpu: udpAddr === null ? null : `${udpAddr.host}:${udpAddr.port}`,
        oneWayDelayMs,
        lossPct: link.lossPct ?? 0,
        txDropPct: link.txDropPct ?? 0,
        down: link.down ?? false,
      });
    }
  } catch (err) {
    for (const l of listeners) await l.stop();
    await stopUdp();
    throw err;
  }

  const slotLoad = new SlotLoadLog(schedule, identities, listeners, landings, (i) => {
    const q = qosList[i];
    return q instanceof FlowControlQos ? q.saturatedSinceLastAsked() : false;
  });
  const sender = new RpcTpuSender(targets, schedule, clock, bank, maxTransactionBytes, options.rpc, rpcSeed);
  // The block engine's forwarding (Jito's relayer): its own identity, staked or not; resends like the RPC node's.
  const engineSender = new RpcTpuSender(targets, schedule, clock, bank, maxTransactionBytes, options.rpc, engineSeed);
  const blocks = new BlockIndex();
  producer.onCommit((rec) => blocks.onCommit(rec));
  const ctx: FacadeContext = {
    slotLoad,
    bank,
    producer,
    schedule,
    clock,
    gate,
    fees,
    landings,
    arrivals,
    validators: validators.map((v): FacadeValidator => ({ identity: v.identity, votePubkey: v.votePubkey, stake: BigInt(v.stake), tpuQuic: v.tpuQuic, tpu: v.tpu, version: v.version })),
    consensus,
    blocks,
    maxTransactionBytes,
    rpcAddress: '',
    pubsubAddress: '',
    sendToTpu: (tx, signature, maxRetries) => sender.send(tx, signature, maxRetries),
  };
  const links: RegionLinks[] = [];
  const regionCtx = new Map<string, FacadeContext>();
  const server = new FacadeServer(ctx, {
    host,
    port: options.rpcPort ?? 0,
    oneWayDelayMs: options.rpc?.oneWayDelayMs ?? 0,
    onInternalError: options.onInternalError,
    regions: regionCtx,
  });
  try {
    for (const o of options.regions ?? []) {
      if (regionCtx.has(o.name)) throw new Error(`localnet region "${o.name}" is listed twice`);
      const r = await RegionLinks.start(o, host, validators);
      links.push(r);
      // The node's context with this region's TPU addresses; everything else (rpcAddress, set at listen) inherited.
      const view: FacadeContext = Object.create(ctx, {
        validators: { value: ctx.validators.map((v) => ({ ...v, tpuQuic: r.tpuQuicOf.get(v.tpuQuic) ?? v.tpuQuic })) },
      });
      regionCtx.set(o.name, view);
    }
    await server.start();
  } catch (err) {
    for (const r of links) r.stop();
    for (const l of listeners) await l.stop();
    await stopUdp();
    throw err;
  }
  const regionInfo = (r: RegionLinks): LocalnetRegion => ({
    name: r.name,
    rpcUrl: `${server.rpcUrl}/regions/${r.name}`,
    validators: validators.map((v, i) => ({ identity: v.identity, tpuQuic: r.tpuQuicOf.get(v.tpuQuic) ?? v.tpuQuic, oneWayDelayMs: r.delaysMs[i] })),
  });

  const bundles = new BundleEngine(producer, localnetTipAccounts(seed));
  const blockEngine = new BlockEngineServer(
    {
      engine: bundles,
      producer,
      clock,
      consensus,
      maxTransactionBytes,
      sendToTpu: (tx, signature, maxRetries) => engineSender.send(tx, signature, maxRetries),
    },
    { host, port: options.blockEnginePort ?? 0, rateLimitPerSecond: options.blockEngineRateLimitPerSecond ?? 50, onInternalError: options.onInternalError },
  );
  try {
    await blockEngine.start();
  } catch (err) {
    server.stop();
    for (const r of links) r.stop();
    for (const l of listeners) await l.stop();
    await stopUdp();
    throw err;
  }

  const geyser =
    options.grpcPort === undefined
      ? null
      : new GeyserServer(
          { bank, clock, confirmedDepth: options.confirmedDepth ?? DEFAULT_CONFIRMED_DEPTH, finalizedDepth: options.finalizedDepth ?? DEFAULT_FINALIZED_DEPTH, consensus, solanaVersion: LOCALNET_SOLANA_CORE_VERSION },
          { host, port: options.grpcPort, oneWayDelayMs: options.rpc?.oneWayDelayMs ?? 0, maxTransactionFilters: options.grpcMaxTransactionFilters },
        );
  try {
    await geyser?.start();
  } catch (err) {
    server.stop();
    await blockEngine.stop();
    for (const r of links) r.stop();
    for (const l of listeners) await l.stop();
    await stopUdp();
    throw err;
  }

  // Order per slot: the consensus marks the slot (skipped or not) and certifies the previous one, the bank's new blockhash, then what the new leader held, then the bundles queued for it,
  // then subscribers.
  clock.onSlot((slot) => consensus.onSlot(slot));
  clock.onSlot((slot) => producer.startSlot(slot));
  clock.onSlot((slot) => slotLoad.onSlot(slot));
  clock.onSlot((slot) => gate.onSlot(slot));
  clock.onSlot((slot) => {
    if (!consensus.isSkipped(slot)) bundles.onSlot(slot); // no block: the queued bundles wait for the next one
  });
  clock.onSlot((slot) => shredToBank.onSlot(slot));
  shredToBank.onFirstShred((slot) => server.pubsub.onSlot(slot));
  shredToBank.onBankCreated((slot) => server.pubsub.onBankCreated(slot));
  clock.onSlot((slot) => sender.onSlot(slot));
  clock.onSlot((slot) => engineSender.onSlot(slot));
  producer.onCommit((rec) => server.pubsub.onCommit(rec));
  consensus.onFinalized(() => server.pubsub.onFinalized());
  if (geyser !== null) {
    shredToBank.onFirstShred((slot) => geyser.onSlot(slot));
    shredToBank.onBankCreated((slot) => geyser.onBankCreated(slot));
    producer.onCommit((rec) => geyser.onCommit(rec));
  }
  clock.start();
  const competitors = await Competitors.start(options.competitors ?? [], seed, targets, identities, schedule, clock, bank);

  let stopped = false;
  return {
    rpcUrl: server.rpcUrl,
    wsUrl: server.wsUrl,
    blockEngineUrl: blockEngine.url,
    grpcUrl: geyser?.url ?? null,
    geyser,
    validators,
    bank,
    schedule,
    clock,
    gate,
    landings,
    consensus,
    setMissingSlots(index: number, on: boolean): void {
      const id = identities[index];
      if (id === undefined) throw new RangeError(`no validator ${index}`);
      if (on) missing.add(id);
      else missing.delete(id);
    },
    listeners,
    udpListeners,
    qos: qosList,
    slotMs,
    shredToBankMs: shredToBank.shredToBankMs,
    competitors: competitors.counters,
    rpcSend: sender.counters,
    bundles,
    blockEngine,
    get regions(): LocalnetRegion[] {
      return links.map(regionInfo);
    },
    setRegionDelay(name: string, oneWayDelayMs: number | readonly number[]): void {
      const r = links.find((x) => x.name === name);
      if (r === undefined) throw new Error(`no localnet region "${name}"`);
      r.setOneWayDelayMs(oneWayDelayMs);
    },
    async stop(): Promise<void> {
      if (stopped) return;
      stopped = true;
      clock.stop();
      shredToBank.stop();
      consensus.stop();
      gate.stop();
      await competitors.stop();
      server.stop();
      await geyser?.stop();
      await blockEngine.stop();
      await sender.stop();
      await engineSender.stop();
      for (const r of links) r.stop();
      for (const l of listeners) await l.stop();
      await stopUdp();
    },
  };
}
