// One Subscribe stream of the localnet's Geyser server (localnet process, main thread; per update it is offered,
// warm). Holds the stream's current filters, replaced whole by each request as yellowstone-grpc's server does (a
// request that carries a ping is answered with a pong and changes nothing); answers filters it does not serve
// (accounts, blocks, entry) with UNIMPLEMENTED and bad ones with INVALID_ARGUMENT, ending the stream, as the real
// server's "failed to create filter". Slot filters follow interslotUpdates (FIRST_SHRED_RECEIVED, CREATED_BANK,
// COMPLETED only when set) and filterByCommitment; transactions and blocks meta come at the stream's commitment.
import { status, type ServerDuplexStream } from '@grpc/grpc-js';
import type { SubscribeRequest } from '../../geyser/messages.js';
import { CommitmentLevel, SlotStatus, type CommitmentCode } from '../../geyser/proto.js';
import type { SlotEvent } from './slot-feed.js';
import { compileTxFilter, FilterError, txMatches, type CompiledTxFilter, type TxFacts } from './tx-filter.js';
import { slotBody } from './updates.js';

export type SubscribeCall = ServerDuplexStream<SubscribeRequest, object>;

interface SlotsFilterState {
  readonly name: string;
  readonly byCommitment: boolean;
  readonly interslot: boolean;
}

/** A committed transaction as the hub offers it: facts for filters, bodies built on first use. */
export interface OfferedTx {
  readonly facts: TxFacts;
  body(): object;
  statusBody(): object;
}

const COMMITMENT_STATUS: Record<CommitmentCode, number> = {
  [CommitmentLevel.PROCESSED]: SlotStatus.PROCESSED,
  [CommitmentLevel.CONFIRMED]: SlotStatus.CONFIRMED,
  [CommitmentLevel.FINALIZED]: SlotStatus.FINALIZED,
};

/**
 * Updates queued for a stream that does not read (HTTP/2 flow control holds them in this process). yellowstone-grpc
 * bounds each client's channel and drops a client that lags past it; here the stream ends RESOURCE_EXHAUSTED. A
 * client that closed its reader without resetting the stream (the official Node client's destroy() half-closes)
 * ends this way too instead of growing the localnet's memory.
 */
const MAX_QUEUED_UPDATES = 20_000;

const nonEmpty = (m: Readonly<Record<string, unknown>> | undefined): boolean => m !== undefined && Object.keys(m).length > 0;

export class GeyserStream {
  commitment: CommitmentCode = CommitmentLevel.PROCESSED;
  private slots: SlotsFilterState[] = [];
  private txs: CompiledTxFilter[] = [];
  private txStatus: CompiledTxFilter[] = [];
  private blocksMeta: string[] = [];
  private ended = false;

  constructor(
    private readonly call: SubscribeCall,
    /** The link's one-way delay: each update leaves this much later (same delay for all: order kept). */
    private readonly delayMs = 0,
    /** Transaction filters (both kinds) a request may carry, as a provider's yellowstone-grpc limits them. */
    private readonly maxTxFilters = Number.POSITIVE_INFINITY,
  ) {}

  get open(): boolean {
    return !this.ended;
  }

  /** The slot status at which this stream's transactions and blocks meta are sent. */
  get commitmentStatus(): number {
    return COMMITMENT_STATUS[this.commitment];
  }

  /** A request from the client. Returns false when the stream was ended for it. */
  apply(req: SubscribeRequest): boolean {
    if (req.ping !== undefined && req.ping !== null) {
      this.write({ filters: [], pong: { id: req.ping.id } });
      return true;
    }
    for (const kind of ['accounts', 'blocks', 'entry'] as const) {
      if (nonEmpty(req[kind])) return this.fail(status.UNIMPLEMENTED, `${kind} filters are not served by the slotrelay localnet`);
    }
    try {
      const nTx = Object.keys(req.transactions ?? {}).length + Object.keys(req.transactionsStatus ?? {}).length;
      if (nTx > this.maxTxFilters) throw new FilterError(`Max amount of filters reached, only ${this.maxTxFilters} allowed`);
      const txs = Object.entries(req.transactions ?? {}).map(([n, f]) => compileTxFilter(n, f));
      const txStatus = Object.entries(req.transactionsStatus ?? {}).map(([n, f]) => compileTxFilter(n, f));
      const c = req.commitment ?? CommitmentLevel.PROCESSED;
      if (!(c in COMMITMENT_STATUS)) throw new FilterError(`commitment ${c} is not a CommitmentLevel`);
      this.commitment = c as CommitmentCode;
      this.txs = txs;
      this.txStatus = txStatus;
    } catch (err) {
      if (err instanceof FilterError) return this.fail(status.INVALID_ARGUMENT, `failed to create filter: ${err.message}`);
      throw err;
    }
    this.slots = Object.entries(req.slots ?? {}).map(([name, f]) => ({
      name,
      byCommitment: f.filterByCommitment === true,
      interslot: f.interslotUpdates === true,
    }));
    this.blocksMeta = Object.keys(req.blocksMeta ?? {});
    return true;
  }

  onSlot(e: SlotEvent): void {
    if (this.slots.length === 0) return;
    const interslot = e.status !== SlotStatus.PROCESSED && e.status !== SlotStatus.CONFIRMED && e.status !== SlotStatus.FINALIZED;
    const names: string[] = [];
    for (const f of this.slots) {
      if (interslot && !f.interslot) continue;
      if (f.byCommitment && e.status !== this.commitmentStatus) continue;
      names.push(f.name);
    }
    if (names.length > 0) this.write({ filters: names, slot: slotBody(e) });
  }

  /** A transaction at this stream's commitment. */
  onTx(tx: OfferedTx): void {
    if (this.txs.length > 0) {
      const names = this.txs.filter((f) => txMatches(f, tx.facts)).map((f) => f.name);
      if (names.length > 0) this.write({ filters: names, transaction: tx.body() });
    }
    if (this.txStatus.length > 0) {
      const names = this.txStatus.filter((f) => txMatches(f, tx.facts)).map((f) => f.name);
      if (names.length > 0) this.write({ filters: names, transactionStatus: tx.statusBody() });
    }
  }

  onBlockMeta(body: object): void {
    if (this.blocksMeta.length > 0) this.write({ filters: this.blocksMeta, blockMeta: body });
  }

  ping(): void {
    this.write({ filters: [], ping: {} });
  }

  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.call.end();
  }

  private write(update: Record<string, unknown>): void {
    if (this.ended || this.call.destroyed) return;
    if (this.call.writableLength > MAX_QUEUED_UPDATES) {
      this.fail(status.RESOURCE_EXHAUSTED, `lagged: more than ${MAX_QUEUED_UPDATES} updates queued`);
      return;
    }
    const msg = { ...update, createdAt: nowTimestamp() };
    if (this.delayMs > 0) {
      setTimeout(() => {
        if (!this.ended && !this.call.destroyed) this.call.write(msg);
      }, this.delayMs);
    } else this.call.write(msg);
  }

  private fail(code: status, details: string): false {
    this.ended = true;
    // grpc-js turns an 'error' on a server stream into the call's status and ends it.
    this.call.emit('error', Object.assign(new Error(details), { code, details }));
    return false;
  }
}

function nowTimestamp(): { seconds: string; nanos: number } {
  const ms = Date.now();
  return { seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1e6 };
}
