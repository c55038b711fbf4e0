// The localnet's Yellowstone (Dragon's Mouth) gRPC server (localnet process, main thread; cold set-up, warm per
// slot and commit). @grpc/grpc-js serving geyser.proto's Geyser service (src/geyser/proto.ts): Subscribe (slots,
// transactions, transactionsStatus, blocksMeta; ping/pong), Ping, GetSlot, GetLatestBlockhash, GetVersion. The other
// methods have no handler here, and grpc-js answers UNIMPLEMENTED for them. Plaintext HTTP/2 on loopback; an
// x-token header is accepted and not checked (the localnet has no secrets).
import { Metadata, Server, ServerCredentials, status, type sendUnaryData, type ServerUnaryCall, type UntypedServiceImplementation } from '@grpc/grpc-js';
import type { Bank, TxRecord } from '../bank.js';
import type { SlotClock } from '../slot-clock.js';
import type { SubscribeRequest } from '../../geyser/messages.js';
import { CommitmentLevel, geyserProto, SlotStatus, type CommitmentCode } from '../../geyser/proto.js';
import { GeyserStream, type OfferedTx, type SubscribeCall } from './geyser-stream.js';
import { SlotFeed, type SlotEvent, type SlotFeedConsensus } from './slot-feed.js';
import { blockMetaBody, txBody, txFacts, txStatusBody } from './updates.js';

/** yellowstone-grpc-geyser sends every stream a ping this often (grpc.rs), so idle proxies keep the stream. */
const STREAM_PING_MS = 10_000;

export interface GeyserServerDeps {
  readonly bank: Bank;
  readonly clock: SlotClock;
  readonly confirmedDepth: number;
  readonly finalizedDepth: number;
  /** The localnet's consensus: Alpenglow certifies, tower goes by the depths above (./slot-feed.ts). */
  readonly consensus?: SlotFeedConsensus;
  /** The Solana version the localnet reports (getVersion's solana-core). */
  readonly solanaVersion: string;
}

/** GetVersion's JSON text, shaped like yellowstone-grpc-geyser's ({"version":{package,version,proto,solana},"extra"}). */
function versionJson(solana: string): string {
  return JSON.stringify({ version: { package: 'slotrelay-localnet-geyser', version: '0.1.0', proto: 'yellowstone-grpc-proto 0c3f357a', solana }, extra: {} });
}

export interface GeyserServerOptions {
  readonly host: string;
  /** 0 = ephemeral. */
  readonly port: number;
  /**
   * One-way delay applied to every update and request (ms): the RPC node's distance (rpc.oneWayDelayMs), since a
   * Geyser plugin runs inside that node; comparisons with PubSub then see the same link.
   */
  readonly oneWayDelayMs?: number;
  /** yellowstone-grpc's filter limit for transactions + transactionsStatus filters per request; absent = none. */
  readonly maxTransactionFilters?: number;
}

export class GeyserServer {
  readonly feed: SlotFeed;
  private readonly server = new Server();
  private readonly streams = new Set<GeyserStream>();
  /** Committed transactions of the slots not yet finalized (for streams at confirmed or finalized). */
  private readonly pending = new Map<number, OfferedTx[]>();
  /** Transactions executed per slot, for blocks meta (the slots not yet finalized). */
  private readonly counts = new Map<number, number>();
  private pingTimer: NodeJS.Timeout | null = null;
  private boundPort = 0;

  constructor(
    private readonly deps: GeyserServerDeps,
    private readonly opts: GeyserServerOptions,
  ) {
    this.feed = new SlotFeed(deps);
    this.feed.onEvent((e) => this.onSlotEvent(e));
    const impl: UntypedServiceImplementation = {
      Subscribe: (call: SubscribeCall) => this.subscribe(call),
      Ping: (call: ServerUnaryCall<{ count: number }, object>, cb: sendUnaryData<object>) => cb(null, { count: call.request.count }),
      GetSlot: (call: ServerUnaryCall<{ commitment?: number | null }, object>, cb: sendUnaryData<object>) =>
        cb(null, { slot: String(this.slotAt(call.request.commitment)) }),
      GetLatestBlockhash: (call: ServerUnaryCall<{ commitment?: number | null }, object>, cb: sendUnaryData<object>) => {
        const h = this.deps.bank.blockhashAt(this.slotAt(call.request.commitment));
        cb(null, { slot: String(h.slot), blockhash: h.blockhash, lastValidBlockHeight: String(h.slot + this.deps.bank.windowSlots) });
      },
      GetVersion: (_call: ServerUnaryCall<object, object>, cb: sendUnaryData<object>) => cb(null, { version: versionJson(this.deps.solanaVersion) }),
    };
    this.server.addService(geyserProto().service, impl);
  }

  get port(): number {
    return this.boundPort;
  }

  get url(): string {
    return `http://${this.opts.host}:${this.boundPort}`;
  }

  async start(): Promise<void> {
    this.boundPort = await new Promise<number>((resolve, reject) => {
      this.server.bindAsync(`${this.opts.host}:${this.opts.port}`, ServerCredentials.createInsecure(), (err, port) =>
        err === null ? resolve(port) : reject(err),
      );
    });
    this.pingTimer = setInterval(() => {
      for (const s of this.streams) s.ping();
    }, STREAM_PING_MS);
    this.pingTimer.unref();
  }

  /** First-shred listener (src/localnet/shred-to-bank.ts, at the slot clock's tick, after the bank's listener). */
  onSlot(slot: number): void {
    this.feed.onSlot(slot);
  }

  /** Bank listener (src/localnet/shred-to-bank.ts): CREATED_BANK. */
  onBankCreated(slot: number): void {
    this.feed.onBankCreated(slot);
  }

  /** Commit listener: processed streams now; kept for the others until the slot reaches their commitment. */
  onCommit(rec: TxRecord): void {
    this.counts.set(rec.slot, (this.counts.get(rec.slot) ?? 0) + 1);
    const facts = txFacts(rec);
    let body: object | null = null;
    let statusBody: object | null = null;
    const offered: OfferedTx = {
      facts,
      body: () => (body ??= txBody(rec, facts)),
      statusBody: () => (statusBody ??= txStatusBody(rec, facts)),
    };
    let later = false;
    for (const s of this.streams) {
      if (s.commitment === CommitmentLevel.PROCESSED) s.onTx(offered);
      else later = true;
    }
    if (later) {
      let list = this.pending.get(rec.slot);
      if (list === undefined) this.pending.set(rec.slot, (list = []));
      list.push(offered);
    }
  }

  async stop(): Promise<void> {
    if (this.pingTimer !== null) clearInterval(this.pingTimer);
    for (const s of this.streams) s.close();
    this.streams.clear();
    await new Promise<void>((resolve) => this.server.tryShutdown(() => resolve()));
    this.server.forceShutdown();
  }

  private subscribe(call: SubscribeCall): void {
    // Response headers now, as tonic sends them: grpc-js would hold them until the first update, and tonic clients
    // (the official Node client's native side) wait for them before subscribe() returns.
    call.sendMetadata(new Metadata());
    const delayMs = this.opts.oneWayDelayMs ?? 0;
    const s = new GeyserStream(call, delayMs, this.opts.maxTransactionFilters);
    this.streams.add(s);
    const drop = (): void => {
      this.streams.delete(s);
    };
    call.on('data', (req: SubscribeRequest) => {
      const apply = (): void => {
        if (s.open && !s.apply(req)) drop();
      };
      if (delayMs > 0) setTimeout(apply, delayMs);
      else apply();
    });
    call.on('cancelled', drop);
    call.on('close', drop);
    call.on('error', drop);
    // The client half-closed: keep sending until it cancels, as the real server does.
    call.on('end', () => undefined);
  }

  private onSlotEvent(e: SlotEvent): void {
    for (const s of this.streams) s.onSlot(e);
    if (e.status === SlotStatus.PROCESSED || e.status === SlotStatus.CONFIRMED || e.status === SlotStatus.FINALIZED) {
      const meta = this.blockMeta(e.slot);
      const txs = e.status === SlotStatus.PROCESSED ? undefined : this.pending.get(e.slot);
      for (const s of this.streams) {
        if (s.commitmentStatus !== e.status) continue;
        if (txs !== undefined) for (const t of txs) s.onTx(t);
        s.onBlockMeta(meta);
      }
      if (e.status === SlotStatus.FINALIZED) {
        this.pending.delete(e.slot);
        this.counts.delete(e.slot);
      }
    }
    // Nothing older than the finalized depth is still waited for.
    if (e.status === SlotStatus.CREATED_BANK) {
      for (const slot of this.pending.keys()) if (slot < e.slot - this.deps.finalizedDepth - 1) this.pending.delete(slot);
    }
  }

  private blockMeta(slot: number): object {
    const bank = this.deps.bank;
    return blockMetaBody({
      slot,
      blockhash: bank.blockhashAt(slot).blockhash,
      parentBlockhash: bank.blockhashAt(Math.max(0, slot - 1)).blockhash,
      blockTime: bank.blockTime(slot),
      executedTransactionCount: this.executedIn(slot),
    });
  }

  private executedIn(slot: number): number {
    return this.counts.get(slot) ?? 0;
  }

  private slotAt(commitment: number | null | undefined): number {
    // geyser.proto's optional commitment reads as PROCESSED when absent (the enum's zero), as the real server has it.
    const c = (commitment ?? CommitmentLevel.PROCESSED) as CommitmentCode;
    return this.feed.newestAt(c === CommitmentLevel.PROCESSED ? SlotStatus.PROCESSED : c === CommitmentLevel.CONFIRMED ? SlotStatus.CONFIRMED : SlotStatus.FINALIZED);
  }
}
