// The one WebSocket from the relay to the upstream's PubSub that every client subscription rides on (front thread;
// connect and requests cold, notifications HOT). Uses the `ws` package. Opened on the first subscribe, not at start
// (a relay nobody subscribes through holds no upstream socket); after it drops, the next subscribe opens a new one.
// - Requests (subscribe, unsubscribe) carry our own ids; the answer resolves the caller. A subscribe is answered
//   within `timeoutMs` from the call, connecting included: no connection by then (refused, reset, silent) is
//   upstream_unavailable, an open connection with no answer is upstream_timeout. The upstream's own JSON-RPC error is
//   passed on (UpstreamRpcError). A subscribe answered after its caller gave up is unsubscribed at once.
// - Notifications go to `onNotification` with the text split around the subscription id (notification-text.ts).
// - Liveness: a ping every PING_INTERVAL_MS; no pong by the next one and the socket is terminated. Any close or
//   error after the open calls `onDisconnect` once (the hub closes the clients' sockets: docs/pubsub.md).
import WebSocket from 'ws';
import { Errors, RelayError, UpstreamRpcError } from '../../errors/registry.js';
import type { Logger } from '../../log/logger.js';
import { summarizedLog } from '../../log/summarized-log.js';
import { urlForLog } from '../../log/url-for-log.js';
import { parseNotification, splitNotification, type NotificationParts } from './notification-text.js';

/** Ping period on the upstream socket; a dead peer is noticed within two periods. */
const PING_INTERVAL_MS = 15_000;
/** Upstream requests without an answer at once; more is refused as upstream_unavailable (bounded memory). */
const MAX_PENDING_REQUESTS = 10_000;
/** Largest upstream message accepted (a getAccountInfo-sized account of 10 MiB, base64, with room). */
const MAX_UPSTREAM_MESSAGE_BYTES = 64 * 1024 * 1024;

export interface UpstreamEvents {
  onNotification(parts: NotificationParts, text: string): void;
  /** The open connection was lost (not called for a connection that never opened). */
  onDisconnect(why: string): void;
}

interface Pending {
  readonly method: string;
  resolve(result: unknown): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout | null;
  /** The caller has been answered (timeout): a late subscribe result is unsubscribed. */
  abandoned: boolean;
}

const UNSUBSCRIBE_OF: Readonly<Record<string, string>> = {
  slotSubscribe: 'slotUnsubscribe',
  rootSubscribe: 'rootUnsubscribe',
  slotsUpdatesSubscribe: 'slotsUpdatesUnsubscribe',
  signatureSubscribe: 'signatureUnsubscribe',
  accountSubscribe: 'accountUnsubscribe',
};

function unavailable(): RelayError {
  return new RelayError(Errors.UPSTREAM_UNAVAILABLE);
}

export class UpstreamConnection {
  private socket: WebSocket | null = null;
  private opening: Promise<WebSocket> | null = null;
  /** The socket being opened (terminated if the relay stops meanwhile). */
  private openingSocket: WebSocket | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private pingTimer: NodeJS.Timeout | null = null;
  private alive = false;
  private closedForGood = false;

  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
    private readonly log: Logger,
    private readonly events: UpstreamEvents,
  ) {}

  get connected(): boolean {
    return this.socket !== null;
  }

  /** Subscribe upstream: resolves with the upstream's subscription id. */
  async subscribe(method: string, paramsJson: string): Promise<number> {
    const deadline = Date.now() + this.timeoutMs;
    const socket = await this.open(deadline);
    const result = await this.request(socket, method, paramsJson, deadline);
    if (typeof result !== 'number' || !Number.isSafeInteger(result)) throw new RelayError(Errors.INTERNAL_ERROR, 'Internal error: the upstream answered a subscribe without a subscription id');
    return result;
  }

  /** Fire and forget: the relay's answer to its client does not wait for the upstream's. */
  unsubscribe(subscribeMethod: string, upstreamId: number): void {
    const socket = this.socket;
    const method = UNSUBSCRIBE_OF[subscribeMethod];
    if (socket === null || method === undefined) return;
    this.request(socket, method, `[${upstreamId}]`, Date.now() + this.timeoutMs).catch(() => undefined);
  }

  /** Close for good (relay shutdown). */
  close(): void {
    this.closedForGood = true;
    this.socket?.terminate();
    this.openingSocket?.terminate();
  }

  private open(deadline: number): Promise<WebSocket> {
    if (this.closedForGood) return Promise.reject(unavailable());
    if (this.socket !== null) return Promise.resolve(this.socket);
    if (this.opening !== null) return this.opening;
    const opening = new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(this.url, {
        perMessageDeflate: false,
        handshakeTimeout: Math.max(1, deadline - Date.now()),
        maxPayload: MAX_UPSTREAM_MESSAGE_BYTES,
        // One message per event-loop turn: the microtasks that attach waiting clients to a subscription the upstream
        // has just answered run before its first notification is handled, even when both came in one TCP read.
        allowSynchronousEvents: false,
      });
      let opened = false;
      this.openingSocket = ws;
      ws.once('open', () => {
        opened = true;
        this.opening = null;
        this.openingSocket = null;
        this.socket = ws;
        this.startPings(ws);
        this.log.info({ event: 'pubsub_upstream_connected', url: urlForLog(this.url) }, 'upstream PubSub connected');
        resolve(ws);
      });
      ws.on('message', (data, isBinary) => this.onMessage(isBinary ? '' : data.toString()));
      ws.on('pong', () => {
        this.alive = true;
      });
      ws.on('error', (err) => {
        if (!opened) {
          this.opening = null;
          this.openingSocket = null;
          summarizedLog(this.log).note('warn', 'pubsub_upstream_unreachable', { event: 'pubsub_upstream_unreachable', url: urlForLog(this.url), err: err.message }, 'upstream PubSub unreachable');
          reject(unavailable());
          ws.terminate();
        }
        // After the open, 'close' follows every error: handled there.
      });
      ws.once('close', (code) => {
        if (!opened) {
          this.opening = null;
          this.openingSocket = null;
          reject(unavailable());
          return;
        }
        this.dropped(ws, `closed with code ${code}`);
      });
    });
    this.opening = opening;
    return opening;
  }

  private startPings(ws: WebSocket): void {
    this.alive = true;
    this.pingTimer = setInterval(() => {
      if (!this.alive) {
        ws.terminate(); // 'close' follows
        return;
      }
      this.alive = false;
      ws.ping();
    }, PING_INTERVAL_MS);
    this.pingTimer.unref();
  }

  private dropped(ws: WebSocket, why: string): void {
    if (this.socket !== ws) return;
    this.socket = null;
    if (this.pingTimer !== null) clearInterval(this.pingTimer);
    this.pingTimer = null;
    for (const p of this.pending.values()) {
      if (p.timer !== null) clearTimeout(p.timer);
      if (!p.abandoned) p.reject(unavailable());
    }
    this.pending.clear();
    if (!this.closedForGood) this.log.warn({ event: 'pubsub_upstream_disconnected', url: urlForLog(this.url), why }, 'upstream PubSub connection lost');
    this.events.onDisconnect(why);
  }

  private request(ws: WebSocket, method: string, paramsJson: string, deadline: number): Promise<unknown> {
    if (this.pending.size >= MAX_PENDING_REQUESTS) return Promise.reject(unavailable());
    const id = this.nextId++;
    return new Promise<unknown>((resolve, reject) => {
      const p: Pending = { method, resolve, reject, timer: null, abandoned: false };
      p.timer = setTimeout(() => {
        p.timer = null;
        p.abandoned = true;
        reject(new RelayError(Errors.UPSTREAM_TIMEOUT));
      }, Math.max(1, deadline - Date.now()));
      this.pending.set(id, p);
      ws.send(`{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${paramsJson}}`);
    });
  }

  private onMessage(text: string): void {
    const fast = splitNotification(text);
    if (fast !== null) return this.events.onNotification(fast, text);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return summarizedLog(this.log).note('warn', 'pubsub_upstream_bad_message', { event: 'pubsub_upstream_bad_message', bytes: text.length }, 'upstream PubSub sent a message that is not JSON');
    }
    const parsed = parseNotification(value);
    if (parsed !== null) return this.events.onNotification(parsed, text);
    const answer = value as { id?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } } | null;
    const id = answer?.id;
    const p = typeof id === 'number' ? this.pending.get(id) : undefined;
    if (p === undefined) return;
    this.pending.delete(id as number);
    if (p.timer !== null) clearTimeout(p.timer);
    if (p.abandoned) {
      // The client was already told upstream_timeout: a subscription made after all is not left running upstream.
      if (typeof answer?.result === 'number') this.unsubscribe(p.method, answer.result);
      return;
    }
    const err = answer?.error;
    if (err !== undefined && err !== null) {
      const code = typeof err.code === 'number' ? err.code : Errors.INTERNAL_ERROR.rpcCode;
      p.reject(new UpstreamRpcError(code, typeof err.message === 'string' ? err.message : 'upstream error', err.data));
    } else {
      p.resolve(answer?.result);
    }
  }
}
