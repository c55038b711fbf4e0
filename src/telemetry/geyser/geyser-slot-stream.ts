// A Yellowstone gRPC Subscribe stream for slots (telemetry thread; per update, warm: a few per slot). @grpc/grpc-js
// with the vendored geyser.proto (src/geyser/proto.ts), not the official client: see docs/geyser.md. Asks for every
// slot status (interslotUpdates), so the earliest a slot has (FIRST_SHRED_RECEIVED, before its bank is processed)
// reaches the caller. An explicit state machine: connecting -> up -> down | stalled -> connecting, reopened with
// backoff; "stalled" is no update for stallMs() (the caller passes N slot times). The x-token is a header only: it
// is never logged, and no error text from here carries it. The same stream carries the transaction statuses of the
// signatures the landing tracker waits on (watch(): one `signature` filter each, at most MAX_WATCHED, replaced as
// receipts come and go; the request goes again on every reopen).
import { credentials, Metadata, status, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js';
import type { SubscribeRequest, SubscribeUpdate } from '../../geyser/messages.js';
import { geyserProto } from '../../geyser/proto.js';
import { txErrorFromBincode, type TxErrorJson } from '../../geyser/tx-error-codec.js';
import bs58 from 'bs58';

/**
 * Signatures watched on the stream at once (one filter each). A provider may allow fewer transaction filters per
 * stream (yellowstone-grpc's filter limits are per deployment); those beyond are left to getSignatureStatuses polling.
 */
export const MAX_WATCHED = 256;

const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 5_000;
/** How often the stall check runs. */
const STALL_CHECK_MS = 50;

export type GeyserStreamState =
  | { readonly kind: 'connecting' }
  | { readonly kind: 'up'; readonly sinceMs: number }
  | { readonly kind: 'down'; readonly reason: string }
  | { readonly kind: 'stalled'; readonly silentMs: number };

export interface GeyserSlotStreamOptions {
  readonly url: string;
  readonly xToken?: string;
  /** Every slot update: slot number and SlotStatus code. */
  readonly onSlot: (slot: number, status: number) => void;
  readonly onState: (s: GeyserStreamState) => void;
  /** A watched signature's transaction status (processed: executed in `slot`; err null = succeeded). */
  readonly onTxStatus?: (signature: string, slot: number, err: TxErrorJson | null) => void;
  /** The silence that counts as a stall, now (N slot times at the measured slot time). */
  readonly stallMs: () => number;
}

type Call = ClientDuplexStream<SubscribeRequest, SubscribeUpdate>;

/** The filter this stream asks for: every status of every slot, and the watched signatures' statuses. */
function request(watched: readonly string[]): SubscribeRequest {
  const transactionsStatus: Record<string, { signature: string }> = {};
  watched.forEach((sig, i) => (transactionsStatus[`w${i}`] = { signature: sig }));
  return { slots: { slotrelay: { interslotUpdates: true } }, transactionsStatus };
}

export class GeyserSlotStream {
  private client: InstanceType<ReturnType<typeof geyserProto>['Client']>;
  private call: Call | null = null;
  private closed = false;
  private backoffMs = RECONNECT_MIN_MS;
  private timer: NodeJS.Timeout | null = null;
  private stallTimer: NodeJS.Timeout | null = null;
  private lastUpdateMs = 0;
  private state: GeyserStreamState = { kind: 'connecting' };
  private watched: readonly string[] = [];
  /**
   * How many signature filters this endpoint takes: MAX_WATCHED until it refuses a request (INVALID_ARGUMENT, a
   * provider's filter limit), then half of what it refused, down to 0 (slots only). Never back up while this runs.
   */
  private watchCap = MAX_WATCHED;
  /** Updates received (all kinds); tests and /health. */
  updates = 0;

  constructor(private readonly o: GeyserSlotStreamOptions) {
    this.client = this.newClient();
  }

  /** A channel of its own (a stalled stream's connection may be the dead part: it is not reused). */
  private newClient(): InstanceType<ReturnType<typeof geyserProto>['Client']> {
    const u = new URL(this.o.url);
    const secure = u.protocol === 'https:';
    const target = `${u.hostname.includes(':') ? `[${u.hostname}]` : u.hostname}:${u.port || (secure ? 443 : 80)}`;
    const { Client } = geyserProto();
    return new Client(target, secure ? credentials.createSsl() : credentials.createInsecure(), {
      'grpc.keepalive_time_ms': 10_000,
      'grpc.keepalive_timeout_ms': 5_000,
      'grpc.max_receive_message_length': 64 * 1024 * 1024,
    });
  }

  /** Replace the watched signatures (the first MAX_WATCHED); the open stream gets the new filters at once. */
  watch(signatures: readonly string[]): void {
    this.watched = signatures.slice(0, this.watchCap);
    if (this.call !== null) this.call.write(request(this.watched));
  }

  get current(): GeyserStreamState {
    return this.state;
  }

  start(): void {
    this.open();
    this.stallTimer = setInterval(() => this.checkStall(), STALL_CHECK_MS);
    this.stallTimer.unref();
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    if (this.stallTimer !== null) clearInterval(this.stallTimer);
    this.call?.cancel();
    this.call = null;
    this.client.close();
  }

  private setState(s: GeyserStreamState): void {
    this.state = s;
    this.o.onState(s);
  }

  private open(): void {
    if (this.closed) return;
    const md = new Metadata();
    if (this.o.xToken !== undefined) md.set('x-token', this.o.xToken);
    const subscribe = (this.client as unknown as { Subscribe(md: Metadata): Call }).Subscribe.bind(this.client);
    const call = subscribe(md);
    this.call = call;
    this.lastUpdateMs = performance.now();
    this.setState({ kind: 'connecting' });
    call.on('data', (u: SubscribeUpdate) => this.onUpdate(call, u));
    call.on('error', (err: ServiceError) => {
      // A request the endpoint refuses with watched signatures in it: too many filters for it; fewer next time, so
      // the slots (which need none) keep flowing.
      if (err.code === status.INVALID_ARGUMENT && this.watched.length > 0 && call === this.call) {
        this.watchCap = Math.floor(this.watched.length / 2);
        this.watched = this.watched.slice(0, this.watchCap);
      }
      this.lost(call, err.code === status.CANCELLED ? 'cancelled' : `grpc status ${status[err.code] ?? err.code}`);
    });
    call.on('end', () => this.lost(call, 'stream ended'));
    call.write(request(this.watched));
  }

  private onUpdate(call: Call, u: SubscribeUpdate): void {
    if (call !== this.call) return;
    this.updates++;
    this.lastUpdateMs = performance.now();
    if (this.state.kind !== 'up') {
      this.backoffMs = RECONNECT_MIN_MS;
      this.setState({ kind: 'up', sinceMs: Date.now() });
    }
    if (u.slot != null) this.o.onSlot(Number(u.slot.slot), u.slot.status);
    else if (u.transactionStatus != null) {
      const t = u.transactionStatus;
      const err = t.err != null && t.err.err.length > 0 ? txErrorFromBincode(t.err.err) : null;
      this.o.onTxStatus?.(bs58.encode(t.signature), Number(t.slot), err);
    }
    // The server's keep-alive ping: answered, so proxies in between see traffic both ways.
    else if (u.ping != null) call.write({ ping: { id: 1 } });
  }

  private checkStall(): void {
    if (this.closed || this.call === null) return;
    const silent = performance.now() - this.lastUpdateMs;
    if (silent <= this.o.stallMs()) return;
    // Connecting counts too: a server that accepts the stream and never sends is as useless as a silent one.
    const call = this.call;
    this.call = null;
    call.cancel();
    this.client.close();
    this.client = this.newClient();
    this.setState({ kind: 'stalled', silentMs: Math.round(silent) });
    this.retry();
  }

  private lost(call: Call, reason: string): void {
    if (call !== this.call) return;
    this.call = null;
    this.setState({ kind: 'down', reason });
    this.retry();
  }

  private retry(): void {
    if (this.closed || this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.open();
    }, this.backoffMs);
    this.backoffMs = Math.min(this.backoffMs * 2, RECONNECT_MAX_MS);
  }
}
