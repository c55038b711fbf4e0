// Client subscriptions multiplexed onto the upstream connection (front thread; subscribe/unsubscribe cold,
// notification fan-out HOT). Three tables:
// - upstream subscriptions, one per distinct (method, canonical params): clients asking for the same thing share
//   it, so a thousand slotSubscribe clients cost the upstream one subscription. Created on the first client's
//   subscribe, unsubscribed upstream when its last client leaves;
// - client subscriptions, numbered by the relay (ids the upstream never sees), held per socket;
// - open subscriptions per API key (key.config.subscriptionLimit over all the key's sockets), counted from the
//   moment a subscribe is accepted for processing, so concurrent subscribes cannot overshoot the limit.
// An upstream notification is forwarded as text with only the subscription id replaced (notification-text.ts). A
// signature subscription's final notification removes it (Agave removes it upstream after notifying) and returns
// its count to the key; a "receivedSignature" notification is not final. When the upstream connection drops,
// every socket holding a subscription is closed with CLOSE_UPSTREAM_LOST (docs/pubsub.md): clients reconnect and
// resubscribe (web3.js does so by itself), getting a fresh upstream subscription or a clear error.
import { Errors, RelayError } from '../../errors/registry.js';
import type { KeyEntry } from '../../admission/key-table.js';
import type { Logger } from '../../log/logger.js';
import { TextBuilder } from '../../metrics/prometheus.js';
import type { NotificationParts } from './notification-text.js';
import { withSubscriptionId } from './notification-text.js';
import { UpstreamConnection } from './upstream-connection.js';

/** 1013 Try Again Later (RFC 6455 registry): the upstream PubSub connection was lost. */
export const CLOSE_UPSTREAM_LOST = 1013;
export const CLOSE_UPSTREAM_LOST_REASON = 'upstream_disconnected';

/** A client WebSocket as the hub sees it (implemented over uWS by pubsub-socket.ts). */
export interface SubscriberSocket {
  readonly key: KeyEntry;
  /** Its subscriptions by client id. */
  readonly subs: Map<number, ClientSub>;
  readonly closed: boolean;
  send(text: string): void;
  close(code: number, reason: string): void;
}

interface UpstreamSub {
  readonly dedupKey: string;
  readonly method: string;
  readonly paramsJson: string;
  readonly oneShot: boolean;
  /** Set once the upstream answered the subscribe. */
  upstreamId: number | null;
  /** Resolves when the upstream answered (rejects with the reason it did not). */
  readonly ready: Promise<void>;
  /** Subscribes waiting on `ready`. */
  waiting: number;
  readonly clients: Set<ClientSub>;
}

export interface ClientSub {
  readonly id: number;
  readonly socket: SubscriberSocket;
  readonly entry: UpstreamSub;
}

/** What a subscribe asks for, validated and in the canonical form sent upstream (pubsub-params.ts). */
export interface SubscribeRequest {
  readonly method: string;
  readonly paramsJson: string;
  /** One-shot subscriptions (signatureSubscribe) end with their final notification. */
  readonly oneShot: boolean;
}

export class SubscriptionHub {
  private readonly upstream: UpstreamConnection;
  private readonly byKey = new Map<string, UpstreamSub>();
  private readonly byUpstreamId = new Map<number, UpstreamSub>();
  /** Open subscriptions per key id (KeyEntry.id); grows when keys come from the cluster engine. */
  private openPerKey: Int32Array;
  private nextClientId = 1;
  private notificationsForwarded = 0;
  private upstreamDisconnects = 0;

  constructor(
    upstreamUrl: string,
    timeoutMs: number,
    private readonly keys: readonly KeyEntry[],
    log: Logger,
  ) {
    this.openPerKey = new Int32Array(keys.length);
    this.upstream = new UpstreamConnection(upstreamUrl, timeoutMs, log, {
      onNotification: (parts) => this.onNotification(parts),
      onDisconnect: () => this.onUpstreamLost(),
    });
  }

  /** A fresh client subscription id (receipt-stream.ts's share the numbering, so a socket's ids never collide). */
  allocateId(): number {
    return this.nextClientId++;
  }

  openFor(key: KeyEntry): number {
    return this.openPerKey[key.id] ?? 0;
  }

  /**
   * Subscribe `socket`: the client's subscription id as JSON text, synchronously when the upstream subscription
   * already exists. Throws / rejects with a RelayError (limit, upstream unavailable or slow) or UpstreamRpcError.
   */
  subscribe(socket: SubscriberSocket, req: SubscribeRequest): string | Promise<string> {
    const key = socket.key;
    const limit = key.config.subscriptionLimit;
    if (key.id >= this.openPerKey.length) {
      const grown = new Int32Array(Math.max(key.id + 1, 2 * this.openPerKey.length));
      grown.set(this.openPerKey);
      this.openPerKey = grown;
    }
    if (this.openPerKey[key.id] >= limit) {
      throw new RelayError(Errors.SUBSCRIPTION_LIMIT, Errors.SUBSCRIPTION_LIMIT.message, { reason: Errors.SUBSCRIPTION_LIMIT.reason, limit });
    }
    const dedupKey = req.method + req.paramsJson;
    const existing = this.byKey.get(dedupKey);
    if (existing !== undefined && existing.upstreamId !== null) return String(this.attach(socket, existing).id);
    this.openPerKey[key.id]++;
    const entry = existing ?? this.create(dedupKey, req);
    entry.waiting++;
    return entry.ready.then(
      () => {
        entry.waiting--;
        this.openPerKey[key.id]--; // attach() counts it again
        if (socket.closed || this.byKey.get(dedupKey) !== entry) {
          // The socket went away while waiting (or the upstream connection was lost): nothing to attach to.
          this.releaseIfUnused(entry);
          return '0';
        }
        return String(this.attach(socket, entry).id);
      },
      (err: unknown) => {
        entry.waiting--;
        this.openPerKey[key.id]--;
        throw err;
      },
    );
  }

  /** Unsubscribe a client id of this socket; false when the socket holds no such subscription. */
  unsubscribe(socket: SubscriberSocket, clientId: number): boolean {
    const sub = socket.subs.get(clientId);
    if (sub === undefined) return false;
    this.detach(sub);
    this.releaseIfUnused(sub.entry);
    return true;
  }

  /** The socket closed: every subscription it held is released (upstream too when it was the last client). */
  socketClosed(socket: SubscriberSocket): void {
    for (const sub of socket.subs.values()) {
      this.detach(sub);
      this.releaseIfUnused(sub.entry);
    }
  }

  /** Relay shutdown. */
  close(): void {
    this.upstream.close();
  }

  private create(dedupKey: string, req: SubscribeRequest): UpstreamSub {
    let entry!: UpstreamSub;
    const ready = this.upstream.subscribe(req.method, req.paramsJson).then(
      (upstreamId) => {
        entry.upstreamId = upstreamId;
        this.byUpstreamId.set(upstreamId, entry);
      },
      (err: unknown) => {
        if (this.byKey.get(dedupKey) === entry) this.byKey.delete(dedupKey);
        throw err;
      },
    );
    // Every waiter handles the rejection; this keeps an entry whose waiters all left from an unhandled rejection.
    ready.catch(() => undefined);
    entry = { dedupKey, method: req.method, paramsJson: req.paramsJson, oneShot: req.oneShot, upstreamId: null, ready, waiting: 0, clients: new Set() };
    this.byKey.set(dedupKey, entry);
    return entry;
  }

  private attach(socket: SubscriberSocket, entry: UpstreamSub): ClientSub {
    const sub: ClientSub = { id: this.nextClientId++, socket, entry };
    entry.clients.add(sub);
    socket.subs.set(sub.id, sub);
    this.openPerKey[socket.key.id]++;
    return sub;
  }

  private detach(sub: ClientSub): void {
    if (!sub.socket.subs.delete(sub.id)) return;
    sub.entry.clients.delete(sub);
    this.openPerKey[sub.socket.key.id]--;
  }

  /** Drop an upstream subscription nobody holds or waits for any more. */
  private releaseIfUnused(entry: UpstreamSub): void {
    if (entry.clients.size > 0 || entry.waiting > 0) return;
    if (this.byKey.get(entry.dedupKey) === entry) this.byKey.delete(entry.dedupKey);
    if (entry.upstreamId === null) return;
    if (this.byUpstreamId.get(entry.upstreamId) === entry) {
      this.byUpstreamId.delete(entry.upstreamId);
      this.upstream.unsubscribe(entry.method, entry.upstreamId);
    }
  }

  private onNotification(parts: NotificationParts): void {
    const entry = this.byUpstreamId.get(parts.upstreamId);
    if (entry === undefined) return; // unsubscribed a moment ago
    for (const sub of entry.clients) {
      sub.socket.send(withSubscriptionId(parts.head, sub.id));
      this.notificationsForwarded++;
    }
    if (entry.oneShot && !parts.head.includes('"receivedSignature"')) {
      // Final: the upstream has removed it; so do we, returning each client's count to its key.
      this.byUpstreamId.delete(parts.upstreamId);
      if (this.byKey.get(entry.dedupKey) === entry) this.byKey.delete(entry.dedupKey);
      for (const sub of entry.clients) this.detach(sub);
    }
  }

  private onUpstreamLost(): void {
    this.upstreamDisconnects++;
    const sockets = new Set<SubscriberSocket>();
    for (const entry of this.byUpstreamId.values()) {
      for (const sub of entry.clients) {
        sockets.add(sub.socket);
        this.detach(sub);
      }
    }
    this.byUpstreamId.clear();
    // Entries still waiting for their upstream answer are rejected by the connection (upstream_unavailable).
    for (const [k, entry] of this.byKey) if (entry.upstreamId !== null) this.byKey.delete(k);
    for (const s of sockets) s.close(CLOSE_UPSTREAM_LOST, CLOSE_UPSTREAM_LOST_REASON);
  }

  render(tb: TextBuilder): void {
    // By key name, never the key: names may repeat, so their counts are summed.
    const byName = new Map<string, number>();
    for (const k of this.keys) byName.set(k.name, (byName.get(k.name) ?? 0) + (this.openPerKey[k.id] ?? 0));
    tb.declare('slotrelay_pubsub_subscriptions', 'gauge', 'Open PubSub subscriptions (including ones waiting for the upstream), by API key name.');
    for (const [name, v] of byName) tb.sample('slotrelay_pubsub_subscriptions', { key_name: name }, v);
    tb.declare('slotrelay_pubsub_upstream_subscriptions', 'gauge', 'Subscriptions held on the upstream PubSub connection (clients asking the same share one).');
    tb.sample('slotrelay_pubsub_upstream_subscriptions', {}, this.byUpstreamId.size);
    tb.declare('slotrelay_pubsub_notifications_total', 'counter', 'Notifications forwarded to clients.');
    tb.sample('slotrelay_pubsub_notifications_total', {}, this.notificationsForwarded);
    tb.declare('slotrelay_pubsub_upstream_connected', 'gauge', '1 while the upstream PubSub connection is open.');
    tb.sample('slotrelay_pubsub_upstream_connected', {}, this.upstream.connected ? 1 : 0);
    tb.declare('slotrelay_pubsub_upstream_disconnects_total', 'counter', 'Upstream PubSub connections lost (clients holding subscriptions were closed with 1013).');
    tb.sample('slotrelay_pubsub_upstream_disconnects_total', {}, this.upstreamDisconnects);
  }
}
