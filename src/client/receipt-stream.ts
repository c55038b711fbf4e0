// The receipt stream from the client side (caller's thread, cold): one WebSocket to the relay's PubSub, one
// receiptSubscribe, and its receiptNotifications as an async iterator (docs/client.md "Receipt stream"). No runtime
// dependency: the platform's WebSocket (Node 22+, browsers). The key goes in the x-api-key header where the platform
// lets a WebSocket carry headers (Node's undici WebSocket does), else in ?key= (a browser can do nothing else); the
// URL is never put in an error message.
import { RpcError, SlotrelayError } from './errors.js';
import type { ReceiptUpdate } from './types.js';

/** Updates kept while the caller does not pull them; past it the stream ends with `stream_overflow`. */
export const DEFAULT_MAX_QUEUED_UPDATES = 10_000;

export interface ReceiptStreamOptions {
  readonly pubsubUrl: string;
  readonly apiKey: string;
  /** [signature], or [] for every receipt of the key. */
  readonly params: readonly unknown[];
  /** The iteration ends after an update for which this is true (receiptsFor: the receipt's final state). */
  readonly endAfter?: (u: ReceiptUpdate) => boolean;
  readonly maxQueued?: number;
  readonly signal?: AbortSignal;
}

interface WsLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: string, fn: (ev: { data?: unknown; code?: number; reason?: string }) => void): void;
}
type WsCtor = new (url: string, init?: unknown) => WsLike;

/** The final states of a receipt: nothing more will be notified for it. */
export function isFinalUpdate(u: ReceiptUpdate): boolean {
  if (u.event === 'finalized' || u.event === 'not_landed') return true;
  const r = u.receipt;
  return u.event === 'current' && (r.status === 'not_landed' || r.landed?.confirmationStatus === 'finalized');
}

/** The stream as an async iterator; `return()` (a `break` out of for-await) unsubscribes and closes the socket. */
export function receiptStream(o: ReceiptStreamOptions): AsyncIterableIterator<ReceiptUpdate> {
  const Ws = (globalThis as { WebSocket?: WsCtor }).WebSocket;
  if (Ws === undefined) throw new SlotrelayError({ reason: 'transport_unavailable', message: 'receipt streams need a global WebSocket (Node 22 or later, or a browser)' });
  const maxQueued = o.maxQueued ?? DEFAULT_MAX_QUEUED_UPDATES;
  const queue: ReceiptUpdate[] = [];
  let waiter: { resolve: (r: IteratorResult<ReceiptUpdate>) => void; reject: (e: unknown) => void } | null = null;
  let failure: unknown = null;
  let done = false;
  let subscription: number | null = null;

  const isNode = typeof process !== 'undefined' && process.versions?.node !== undefined;
  const url = new URL(o.pubsubUrl);
  if (!isNode) url.searchParams.set('key', o.apiKey);
  const ws = isNode ? new Ws(url.toString(), { headers: { 'x-api-key': o.apiKey } }) : new Ws(url.toString());

  const finish = (err: unknown): void => {
    if (done) return;
    done = true;
    failure = err;
    if (ws.readyState <= 1) ws.close(1000, 'done');
    if (waiter !== null) {
      const w = waiter;
      waiter = null;
      if (err !== null && queue.length === 0) w.reject(err);
      else if (queue.length > 0) w.resolve({ value: queue.shift()!, done: false });
      else w.resolve({ value: undefined, done: true });
    }
  };
  const push = (u: ReceiptUpdate): void => {
    if (done) return;
    if (queue.length >= maxQueued) return finish(new SlotrelayError({ reason: 'stream_overflow', message: `more than ${maxQueued} receipt updates were not read` }));
    if (waiter !== null) {
      const w = waiter;
      waiter = null;
      w.resolve({ value: u, done: false });
    } else queue.push(u);
    if (o.endAfter?.(u) === true) finish(null);
  };

  o.signal?.addEventListener('abort', () => finish(new SlotrelayError({ reason: 'aborted', message: 'the receipt stream was aborted' })));
  ws.addEventListener('open', () => ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'receiptSubscribe', params: o.params })));
  ws.addEventListener('message', (ev) => {
    let m: { id?: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown }; method?: unknown; params?: { result: ReceiptUpdate; subscription: number } };
    try {
      m = JSON.parse(String(ev.data)) as typeof m;
    } catch {
      return finish(new SlotrelayError({ reason: 'bad_answer', message: 'a PubSub message that is not JSON' }));
    }
    if (m.id === 1) {
      if (m.error !== undefined) return finish(new RpcError({ reason: reasonOf(m.error.data), message: m.error.message, code: m.error.code, data: m.error.data }));
      subscription = typeof m.result === 'number' ? m.result : null;
      return;
    }
    if (m.method === 'receiptNotification' && m.params !== undefined && m.params.subscription === subscription) push(m.params.result);
  });
  ws.addEventListener('error', () => finish(new SlotrelayError({ reason: 'network_error', message: "the relay's PubSub WebSocket failed (refused, or the key was not accepted)" })));
  ws.addEventListener('close', (ev) =>
    finish(new SlotrelayError({ reason: 'stream_closed', message: `the relay closed the receipt stream: ${ev.code ?? 0} ${ev.reason ?? ''}`.trim(), data: { closeCode: ev.code, closeReason: ev.reason } })),
  );

  const it: AsyncIterableIterator<ReceiptUpdate> = {
    next: () => {
      if (queue.length > 0) return Promise.resolve({ value: queue.shift()!, done: false });
      if (done) return failure !== null ? Promise.reject(failure) : Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve, reject) => (waiter = { resolve, reject }));
    },
    return: () => {
      if (!done && subscription !== null && ws.readyState === 1) ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'receiptUnsubscribe', params: [subscription] }));
      queue.length = 0;
      failure = null;
      finish(null);
      return Promise.resolve({ value: undefined, done: true });
    },
    [Symbol.asyncIterator]: () => it,
  };
  return it;
}

function reasonOf(data: unknown): string {
  const r = (data as { reason?: unknown } | undefined)?.reason;
  return typeof r === 'string' ? r : 'rpc_error';
}
