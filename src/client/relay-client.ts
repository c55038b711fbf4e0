// RelayClient, the client library's one object (caller's thread): submit to the relay host over a SubmitTransport
// (HTTP by default; QUIC with transport: quicTransport() from `slotrelay/client/quic`), and the JSON-RPC host's getLeaderSlots (with the spec
// 7.3 recovery), bestRoute, getSlot and priority fees. Construction takes the relay base URL or the full submit URL
// and a key, sent as `Authorization: Bearer` and `x-api-key` (spec 5) on both hosts. The JSON-RPC host is another
// listener (spec 1: {base_url} vs {relay_url}), so its URL is an option of its own, never guessed (docs/client.md).
import { RpcError, SlotrelayError } from './errors.js';
import { checkPricePercentile, DEFAULT_PRICE_PERCENTILE, feePercentile, v1PriorityFeeConfig, type V1PriorityFeeConfig } from './fees.js';
import { httpSender, type FetchLike, type PostTarget } from './http-post.js';
import { rpcCall, type RpcTarget } from './json-rpc-call.js';
import { DEFAULT_LEADER_SLOTS_POLICY, leaderSlotsWithRecovery, pickBestRoute, type LeaderSlotsPolicy } from './leader-slots.js';
import { createTransport, type SubmitTransport, type SubmitTransportFactory } from './transport.js';
import type { BestRoute, LeaderSlotsResult, PrioritizationFee, RelayAlert, SubmitOptions, SubmitResult, TransactionReceipt, TransportKind, UnacknowledgedSubmitResult } from './types.js';
import { ROUTE_NAMES } from './types.js';
import { WireTransaction, type TransactionInput } from './wire-transaction.js';
import { isFinalUpdate, receiptStream } from './receipt-stream.js';
import type { ReceiptUpdate } from './types.js';

export interface RelayClientOptions {
  /** Relay host: its base URL (`http://host:8080`) or the full submit URL (`http://host:8080/v1/submit`). */
  readonly url: string;
  /** The API key (a UUID). Sent in headers only, never in a URL or an error message. */
  readonly apiKey: string;
  /** JSON-RPC host (`http://host:8899`): needed by getLeaderSlots, bestRoute, getSlot and the fee methods. */
  readonly rpcUrl?: string;
  /**
   * 'http' (default), or a transport factory: quicTransport({...}) from `slotrelay/client/quic` (docs/client.md, "QUIC
   * transport"). The string 'quic' throws TransportUnavailableError: this entry does not load quiche.
   */
  readonly transport?: 'http' | 'quic' | SubmitTransportFactory;
  /** Per request, ms (default 10,000). A submit that times out has an unknown outcome. */
  readonly timeoutMs?: number;
  /** A fetch of your own (e.g. undici's fetch); default globalThis.fetch. */
  readonly fetch?: FetchLike;
  /**
   * An undici Dispatcher (Agent, Pool, Client): your keep-alive pool and its size. Without `fetch`, requests go
   * through its request() API (about half the CPU of fetch per submit: the fast path); with `fetch`, it is handed to
   * fetch as `dispatcher`.
   */
  readonly dispatcher?: unknown;
  /**
   * The JSON-RPC host's PubSub WebSocket (`ws://host:8900`), for receipts() / receiptsFor(); default rpcUrl with
   * ws(s):// and port + 1, where the relay serves it by default.
   */
  readonly pubsubUrl?: string;
  /** This client's region (telemetry region names): bestRoute uses its routeScores entry. */
  readonly region?: string;
  /** getLeaderSlots recovery for a missing or stale snapshot (default 2 retries, 250 ms apart). */
  readonly leaderSlots?: Partial<LeaderSlotsPolicy>;
  /** Called when the relay needs an operator (unsupported leader-slot schema), before the error is thrown. */
  readonly onAlert?: (alert: RelayAlert) => void;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
const SUBMIT_PATH = '/v1/submit';
/** Printable ASCII without spaces: anything else cannot be a header value or is not a key (spec 5: a UUID). */
const KEY_RE = /^[\x21-\x7e]{1,256}$/;

/** `url` as the submit URL: kept when it already ends in /v1/submit, else /v1/submit appended to its path. */
export function submitUrlOf(url: string): string {
  const u = parseHttpUrl(url, 'url');
  if (!u.pathname.endsWith(SUBMIT_PATH)) u.pathname = u.pathname.replace(/\/+$/, '') + SUBMIT_PATH;
  return u.toString();
}

function parseHttpUrl(url: string, name: string): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new TypeError(`${name} must be an absolute http(s) URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new TypeError(`${name} must be an http(s) URL, got ${u.protocol}`);
  return u;
}

/** The relay's default PubSub for a JSON-RPC host URL: ws(s)://, port + 1 (docs/pubsub.md). */
export function pubsubUrlOf(rpcUrl: string): string {
  const u = new URL(rpcUrl);
  const port = u.port === '' ? (u.protocol === 'https:' ? 443 : 80) : Number(u.port);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  u.port = String(port + 1);
  return u.toString();
}

function positive(v: number | undefined, name: string, fallback: number): number {
  if (v === undefined) return fallback;
  if (!Number.isFinite(v) || v <= 0) throw new TypeError(`${name} must be a positive number of ms`);
  return v;
}

function checkRoutes(routes: SubmitOptions['routes']): void {
  if (routes === undefined || routes === 'default') return;
  if (!Array.isArray(routes) || routes.length === 0 || routes.some((r) => !(ROUTE_NAMES as readonly string[]).includes(r))) {
    throw new TypeError(`routes must be 'default' or a non-empty array of ${ROUTE_NAMES.join(', ')}`);
  }
}

export class RelayClient {
  /** Where submits go over HTTP. */
  readonly submitUrl: string;
  readonly rpcUrl: string | undefined;
  readonly transport: TransportKind;
  private readonly sender: SubmitTransport;
  private readonly http: PostTarget;
  private readonly policy: LeaderSlotsPolicy;
  private readonly region: string | undefined;
  private readonly onAlert: ((alert: RelayAlert) => void) | undefined;
  private readonly apiKey: string;
  private readonly pubsubUrl: string | undefined;

  constructor(opts: RelayClientOptions) {
    if (typeof opts.apiKey !== 'string' || !KEY_RE.test(opts.apiKey)) throw new TypeError('apiKey must be 1-256 printable ASCII characters without spaces');
    this.submitUrl = submitUrlOf(opts.url);
    this.rpcUrl = opts.rpcUrl === undefined ? undefined : parseHttpUrl(opts.rpcUrl, 'rpcUrl').toString();
    this.http = Object.freeze({
      send: httpSender(opts.fetch, opts.dispatcher),
      headers: Object.freeze({ 'content-type': 'application/json', authorization: `Bearer ${opts.apiKey}`, 'x-api-key': opts.apiKey }),
      timeoutMs: positive(opts.timeoutMs, 'timeoutMs', DEFAULT_TIMEOUT_MS),
    });
    const submitUrl = new URL(this.submitUrl);
    this.sender = createTransport(opts.transport ?? 'http', { ...this.http, submitUrl }, { apiKey: opts.apiKey, submitUrl, timeoutMs: this.http.timeoutMs });
    this.transport = this.sender.kind;
    this.policy = Object.freeze({
      retries: opts.leaderSlots?.retries ?? DEFAULT_LEADER_SLOTS_POLICY.retries,
      retryDelayMs: opts.leaderSlots?.retryDelayMs ?? DEFAULT_LEADER_SLOTS_POLICY.retryDelayMs,
    });
    if (!Number.isInteger(this.policy.retries) || this.policy.retries < 0) throw new TypeError('leaderSlots.retries must be a non-negative integer');
    if (!(this.policy.retryDelayMs >= 0)) throw new TypeError('leaderSlots.retryDelayMs must be >= 0');
    this.region = opts.region;
    this.onAlert = opts.onAlert;
    this.apiKey = opts.apiKey;
    this.pubsubUrl = opts.pubsubUrl ?? (this.rpcUrl === undefined ? undefined : pubsubUrlOf(this.rpcUrl));
    if (opts.pubsubUrl !== undefined && !/^wss?:$/.test(new URL(opts.pubsubUrl).protocol)) throw new TypeError('pubsubUrl must be a ws(s) URL');
  }

  /**
   * Every receipt of this key as it changes (receiptSubscribe over the relay's PubSub): `for await (const u of
   * relay.receipts())`. Runs until you break out (which unsubscribes) or the relay closes the socket (SlotrelayError
   * `stream_closed`, data.closeCode). Receipts accepted before the subscription are not replayed.
   */
  receipts(opts: { readonly signal?: AbortSignal; readonly maxQueued?: number } = {}): AsyncIterableIterator<ReceiptUpdate> {
    return receiptStream({ pubsubUrl: this.pubsubTarget(), apiKey: this.apiKey, params: [], ...opts });
  }

  /**
   * One transaction's receipt as it changes, ending after its final state (finalized or not_landed). Subscribed after
   * the submit, it starts with the receipt as it stands (event `current`).
   */
  receiptsFor(signature: string, opts: { readonly signal?: AbortSignal } = {}): AsyncIterableIterator<ReceiptUpdate> {
    if (typeof signature !== 'string' || signature.length === 0) throw new TypeError('signature must be a base-58 string');
    return receiptStream({ pubsubUrl: this.pubsubTarget(), apiKey: this.apiKey, params: [signature], endAfter: isFinalUpdate, ...opts });
  }

  private pubsubTarget(): string {
    if (this.pubsubUrl === undefined) throw new SlotrelayError({ reason: 'rpc_url_missing', message: 'receipt streams are served by the JSON-RPC host\'s PubSub: construct the client with rpcUrl or pubsubUrl' });
    return this.pubsubUrl;
  }

  /**
   * Submits a signed transaction: a base64 string, wire bytes, a web3.js Transaction / VersionedTransaction or a kit
   * Transaction. Resolves with {accepted: true, signature, routes}; rejects with a RelaySubmitError (its `reason`
   * is the relay's, or timeout / network_error / aborted / bad_answer). No client-side retry: a trader decides.
   */
  submit(tx: TransactionInput, options: SubmitOptions & { readonly fireAndForget: true }): Promise<UnacknowledgedSubmitResult>;
  submit(tx: TransactionInput, options?: SubmitOptions & { readonly fireAndForget?: false }): Promise<SubmitResult>;
  submit(tx: TransactionInput, options?: SubmitOptions): Promise<SubmitResult | UnacknowledgedSubmitResult>;
  async submit(tx: TransactionInput, options: SubmitOptions = {}): Promise<SubmitResult | UnacknowledgedSubmitResult> {
    checkRoutes(options.routes);
    const m = options.maxRetries;
    if (m !== undefined && !(Number.isSafeInteger(m) && m >= 0)) throw new TypeError('maxRetries must be a non-negative integer');
    const fireAndForget = options.fireAndForget === true;
    if (fireAndForget) {
      // A uni stream carries the wire transaction alone: nothing else can travel with it.
      if (this.transport !== 'quic') throw new TypeError('fireAndForget needs the QUIC transport (quicTransport() from slotrelay/client/quic)');
      if ((options.routes !== undefined && options.routes !== 'default') || m !== undefined || options.requestId !== undefined) {
        throw new TypeError('fireAndForget sends the transaction alone: routes, maxRetries and requestId need an acknowledged submit');
      }
    }
    return this.sender.submit({
      tx: WireTransaction.from(tx),
      routes: options.routes ?? 'default',
      maxRetries: m,
      requestId: options.requestId,
      signal: options.signal,
      fireAndForget,
    });
  }

  /** One JSON-RPC call to the JSON-RPC host; RpcError on an error answer. */
  async rpc(method: string, params: readonly unknown[] = [], signal?: AbortSignal): Promise<unknown> {
    return rpcCall(this.rpcTarget(method), method, params, signal);
  }

  /**
   * The landing receipt of a transaction this key submitted (JSON-RPC getTransactionReceipt, docs/receipts.md), or
   * null when the relay has none for this key. `landed.execution` tells executed, failed and not_executed apart.
   */
  async getTransactionReceipt(signature: string, signal?: AbortSignal): Promise<TransactionReceipt | null> {
    if (typeof signature !== 'string' || signature.length === 0) throw new TypeError('signature must be a base-58 string');
    const out = await this.rpc('getTransactionReceipt', [signature], signal);
    if (out !== null && (typeof out !== 'object' || typeof (out as { signature?: unknown }).signature !== 'string')) {
      throw new RpcError({ reason: 'bad_answer', message: 'getTransactionReceipt: the result is not a receipt' });
    }
    return out as TransactionReceipt | null;
  }

  /** The cluster's processed slot through the JSON-RPC host (getSlot, passed through to its upstream). */
  async getSlot(): Promise<number> {
    const slot = await this.rpc('getSlot', [{ commitment: 'processed' }]);
    if (typeof slot !== 'number') throw new RpcError({ reason: 'bad_answer', message: 'getSlot: the result is not a number' });
    return slot;
  }

  /**
   * Upcoming leader slots with route scores (spec 2.3), recovered as spec 7.3 says (docs/client.md): throws
   * LeaderSlotsUnavailableError ("use the default path") or IncompatibleRelayError (after onAlert). Without
   * `startSlot`, starts at the current slot (getSlot; when the host does not serve it, the snapshot's own slot).
   */
  async getLeaderSlots(startSlot?: number, limit?: number): Promise<LeaderSlotsResult> {
    if (startSlot !== undefined && !(Number.isSafeInteger(startSlot) && startSlot >= 0)) throw new TypeError('startSlot must be a non-negative integer');
    if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 1)) throw new TypeError('limit must be a positive integer');
    const target = this.rpcTarget('getLeaderSlots');
    const start = startSlot ?? (await this.currentSlotOrZero());
    return leaderSlotsWithRecovery({ call: (p) => rpcCall(target, 'getLeaderSlots', p), policy: this.policy, onAlert: this.onAlert }, start, limit);
  }

  /**
   * Where to send for `slot` (default: the current slot): the route of the leader's selected txPath and this
   * client's region's score, or {useDefaultPath: true, routes: 'default'} when the relay cannot say (snapshot missing,
   * stale, or not covering that slot). Either way `routes` goes straight into submit().
   */
  async bestRoute(slot?: number): Promise<BestRoute> {
    let res: LeaderSlotsResult;
    try {
      res = await this.getLeaderSlots(slot, 1);
    } catch (err) {
      if (err instanceof SlotrelayError && 'useDefaultPath' in err) return { useDefaultPath: true, routes: 'default', reason: err.reason };
      throw err;
    }
    const row = res.data[0];
    // The range recovery may have moved to another slot: for a slot asked by name that means "not covered".
    if (row === undefined || (slot !== undefined && row.slot !== slot)) return { useDefaultPath: true, routes: 'default', reason: 'leader_range_not_covered' };
    return pickBestRoute(row, this.region);
  }

  /** getRecentPrioritizationFees (spec 4.2): per recent slot, micro-lamports per compute unit. Up to 128 addresses. */
  async getRecentPrioritizationFees(addresses?: readonly string[]): Promise<PrioritizationFee[]> {
    const out = await this.rpc('getRecentPrioritizationFees', addresses === undefined ? [] : [addresses]);
    if (!Array.isArray(out)) throw new RpcError({ reason: 'bad_answer', message: 'getRecentPrioritizationFees: the result is not an array' });
    return out as PrioritizationFee[];
  }

  /**
   * A compute-unit price in micro-lamports: the `percentile` (75..90, default 75; spec 4.2) of recent
   * prioritizationFee, network-wide or over the slots touching `addresses`.
   */
  async computeUnitPrice(opts: { percentile?: number; addresses?: readonly string[] } = {}): Promise<number> {
    const p = opts.percentile ?? DEFAULT_PRICE_PERCENTILE;
    checkPricePercentile(p);
    return feePercentile(await this.getRecentPrioritizationFees(opts.addresses), p);
  }

  /**
   * For a v1 transaction: the config a percentile price buys for `computeUnitLimit` units, {priorityFeeLamports,
   * computeUnitLimit} (a total in lamports: ceil(price x limit / 1,000,000)). Set both on the kit message with
   * setTransactionMessagePriorityFeeLamports and setTransactionMessageComputeUnitLimit (docs/client.md).
   */
  async v1PriorityFee(opts: { computeUnitLimit: number; percentile?: number; addresses?: readonly string[] }): Promise<V1PriorityFeeConfig> {
    const price = await this.computeUnitPrice({ percentile: opts.percentile, addresses: opts.addresses });
    return v1PriorityFeeConfig(price, opts.computeUnitLimit);
  }

  /** Releases the transport (QUIC: its connection). An HTTP client holds nothing of its own. */
  async close(): Promise<void> {
    await this.sender.close();
  }

  private rpcTarget(method: string): RpcTarget {
    if (this.rpcUrl === undefined) {
      throw new SlotrelayError({ reason: 'rpc_url_missing', message: `${method} is served by the JSON-RPC host: construct the client with rpcUrl` });
    }
    return { ...this.http, rpcUrl: new URL(this.rpcUrl) };
  }

  /** getSlot; when the JSON-RPC host does not serve it (not passed through, upstream down), 0, which the range
   *  recovery turns into the snapshot's own slot. Key and rate-limit refusals are thrown as they are. */
  private async currentSlotOrZero(): Promise<number> {
    try {
      return await this.getSlot();
    } catch (err) {
      if (err instanceof RpcError && err.status !== 401 && err.status !== 429) return 0;
      throw err;
    }
  }
}
