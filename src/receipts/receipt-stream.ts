// receiptSubscribe: a client's receipts pushed as they change (front thread; cold per subscribe, per receipt event
// and per route scan; nothing here runs on a request unless someone subscribed). docs/receipts.md "The receipt stream".
// - By signature ([signature]) or by the whole key (no params, [] or [{"all": true}]): every receipt of the socket's
//   key. A receipt is only ever sent to a subscription of the key that submitted it (the table's key id is checked
//   on every event), so a key never sees another key's transactions, even by guessing a signature.
// - The table tells us accepted / skipped / processed / confirmed / finalized / not_executed / not_landed (its observer
//   hook, receipt-events.ts); `skipped` carries the skipped slot (target-skips.ts). Route outcomes are written by the egress workers into shared memory: the receipts someone
//   subscribed to are watched (at most MAX_WATCHED at once) and scanned every ROUTE_SCAN_MS while any is, each
//   route's first answer (sent, failed, dropped:<reason>) notified once.
// - Bounds: receiptSubscriptionsPerKey open subscriptions per key (over all its sockets: -32005 subscription_limit);
//   a socket's unsent bytes are bounded by pubsub-socket.ts (closed 1008 slow_consumer past maxBufferedBytes).
import { Errors, RelayError } from '../errors/registry.js';
import { EGRESS_OUTCOMES, ROUTE_BY_ID, ROUTE_COUNT } from '../shm/layout.js';
import type { ReceiptTable } from './receipt-table.js';
import type { ReceiptEvent, ReceiptObserver } from './receipt-events.js';
import type { TextBuilder } from '../metrics/prometheus.js';
import type { ReceiptSocket, ReceiptStreamPort } from '../rpc/pubsub/receipt-stream-port.js';

/** How often the watched receipts' route outcomes are read while any is watched (ms). */
const ROUTE_SCAN_MS = 5;
/** Receipts whose routes are watched at once; beyond it a receipt's route events are skipped (counted). */
const MAX_WATCHED = 8_192;
/** A watched receipt whose routes have not all answered after this long stops being watched (ms). */
const WATCH_FOR_MS = 30_000;

interface ReceiptSub {
  readonly id: number;
  readonly socket: ReceiptSocket;
  /** null: every receipt of the key. */
  readonly signature: string | null;
}

interface Watched {
  readonly seq: number;
  /** Routes already notified (bit per route id). */
  told: number;
}

export class ReceiptStream implements ReceiptObserver, ReceiptStreamPort {
  private readonly allByKey = new Map<number, Set<ReceiptSub>>();
  private readonly bySignature = new Map<string, Set<ReceiptSub>>();
  private readonly bySocket = new Map<ReceiptSocket, Map<number, ReceiptSub>>();
  private readonly openPerKey = new Map<number, number>();
  private watched: Watched[] = [];
  private readonly watchedSeqs = new Set<number>();
  private timer: NodeJS.Timeout | null = null;
  private subscriptions = 0;
  private notifications = 0;
  private watchSkipped = 0;

  constructor(
    private readonly table: ReceiptTable,
    /** Open receipt subscriptions a key may hold over all its sockets (jsonRpc.pubsub.receiptSubscriptionsPerKey). */
    private readonly perKeyLimit: number,
    /** Subscription ids, shared with the other PubSub subscriptions so that a socket's ids never collide. */
    private readonly nextId: () => number,
  ) {}

  /** receiptSubscribe: the subscription id. `signature` null = every receipt of the socket's key. */
  subscribe(socket: ReceiptSocket, signature: string | null): number {
    const keyId = socket.key.id;
    const open = this.openPerKey.get(keyId) ?? 0;
    if (open >= this.perKeyLimit) {
      throw new RelayError(Errors.SUBSCRIPTION_LIMIT, Errors.SUBSCRIPTION_LIMIT.message, { reason: Errors.SUBSCRIPTION_LIMIT.reason, limit: this.perKeyLimit });
    }
    const sub: ReceiptSub = { id: this.nextId(), socket, signature };
    this.openPerKey.set(keyId, open + 1);
    let mine = this.bySocket.get(socket);
    if (mine === undefined) this.bySocket.set(socket, (mine = new Map()));
    mine.set(sub.id, sub);
    if (signature === null) addTo(this.allByKey, keyId, sub);
    else addTo(this.bySignature, signature, sub);
    if (this.subscriptions++ === 0) this.table.observers.push(this);
    return sub.id;
  }

  /**
   * After the subscription id went out: a signature's receipt accepted before the subscribe is sent as it stands
   * (event "current"), and its routes still pending are watched from here on.
   */
  catchUp(socket: ReceiptSocket, id: number): void {
    const sub = this.bySocket.get(socket)?.get(id);
    if (sub === undefined || sub.signature === null) return;
    const seq = this.table.find(sub.signature, socket.key.id, Date.now());
    if (seq < 0) return;
    this.send(sub, seq, 'current', null);
    this.watch(seq, this.answeredRoutes(seq));
  }

  unsubscribe(socket: ReceiptSocket, id: number): boolean {
    const sub = this.bySocket.get(socket)?.get(id);
    if (sub === undefined) return false;
    this.remove(sub);
    return true;
  }

  socketClosed(socket: ReceiptSocket): void {
    const mine = this.bySocket.get(socket);
    if (mine === undefined) return;
    for (const sub of [...mine.values()]) this.remove(sub);
  }

  private remove(sub: ReceiptSub): void {
    const keyId = sub.socket.key.id;
    const mine = this.bySocket.get(sub.socket);
    mine?.delete(sub.id);
    if (mine?.size === 0) this.bySocket.delete(sub.socket);
    if (sub.signature === null) removeFrom(this.allByKey, keyId, sub);
    else removeFrom(this.bySignature, sub.signature, sub);
    this.openPerKey.set(keyId, (this.openPerKey.get(keyId) ?? 1) - 1);
    if (--this.subscriptions === 0) {
      const i = this.table.observers.indexOf(this);
      if (i >= 0) this.table.observers.splice(i, 1);
      this.watched = [];
      this.watchedSeqs.clear();
      this.stopTimer();
    }
  }

  /** The table's hook: only for receipts whose key or signature has a subscription. */
  receiptChanged(seq: number, event: ReceiptEvent): void {
    const keyId = this.table.keyIdOf(seq);
    const all = this.allByKey.get(keyId);
    const bySig = this.bySignature.size === 0 ? undefined : this.bySignature.get(this.table.signatureOf(seq));
    if (all === undefined && bySig === undefined) return;
    // A route answered before its transaction landed: with landings by push (ms after the block) a landing can come
    // before the next route scan, so the routes are read first and their events keep that order.
    if (event !== 'accepted' && this.watchedSeqs.has(seq)) this.scan();
    let any = false;
    const detail = event === 'skipped' ? { slot: this.table.targetSkippedOf(seq) } : null;
    if (all !== undefined) for (const sub of all) any = this.send(sub, seq, event, detail) || any;
    if (bySig !== undefined) for (const sub of bySig) if (sub.socket.key.id === keyId) any = this.send(sub, seq, event, detail) || any;
    if (any && event === 'accepted') this.watch(seq, 0);
  }

  private answeredRoutes(seq: number): number {
    let told = 0;
    for (let id = 0; id < ROUTE_COUNT; id++) if (this.table.outcomeByte(seq, id) !== 0) told |= 1 << id;
    return told;
  }

  private watch(seq: number, told: number): void {
    if (this.watchedSeqs.has(seq)) return;
    if (this.watched.length >= MAX_WATCHED) {
      this.watchSkipped++;
      return;
    }
    this.watched.push({ seq, told });
    this.watchedSeqs.add(seq);
    if (this.timer === null) {
      this.timer = setInterval(() => this.scan(), ROUTE_SCAN_MS);
      this.timer.unref();
    }
  }

  private stopTimer(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Every ROUTE_SCAN_MS while receipts are watched: each route's first answer, once. */
  private scan(): void {
    const now = Date.now();
    const kept: Watched[] = [];
    for (const w of this.watched) {
      const seq = w.seq;
      if (!this.table.current(seq) || now - this.table.acceptedAt(seq) > WATCH_FOR_MS) {
        this.watchedSeqs.delete(seq);
        continue;
      }
      const mask = this.table.routeMaskOf(seq);
      for (let id = 0; id < ROUTE_COUNT; id++) {
        const bit = 1 << id;
        if ((w.told & bit) !== 0 || this.table.outcomeByte(seq, id) === 0) continue;
        w.told |= bit;
        this.routeAnswered(seq, id);
      }
      // Done once every route it went with answered (a route the relay added on its own is notified if it answered
      // by then).
      if ((w.told & mask) === mask) this.watchedSeqs.delete(seq);
      else kept.push(w);
    }
    this.watched = kept;
    if (kept.length === 0) this.stopTimer();
  }

  private routeAnswered(seq: number, route: number): void {
    const keyId = this.table.keyIdOf(seq);
    const detail = { route: ROUTE_BY_ID[route], outcome: EGRESS_OUTCOMES[this.table.outcomeByte(seq, route) - 1] };
    const all = this.allByKey.get(keyId);
    if (all !== undefined) for (const sub of all) this.send(sub, seq, 'route', detail);
    const bySig = this.bySignature.get(this.table.signatureOf(seq));
    if (bySig !== undefined) for (const sub of bySig) if (sub.socket.key.id === keyId) this.send(sub, seq, 'route', detail);
  }

  /** One receiptNotification; false when the socket is gone. */
  private send(sub: ReceiptSub, seq: number, event: ReceiptEvent | 'current', detail: { route: string; outcome: string } | { slot: number } | null): boolean {
    if (sub.socket.closed) return false;
    const result = { event, signature: this.table.signatureOf(seq), at: Date.now(), ...(detail ?? {}), receipt: this.table.toJson(seq) };
    this.notifications++;
    sub.socket.send(`{"jsonrpc":"2.0","method":"receiptNotification","params":{"result":${JSON.stringify(result)},"subscription":${sub.id}}}`);
    return true;
  }

  render(tb: TextBuilder): void {
    tb.declare('slotrelay_pubsub_receipt_subscriptions', 'gauge', 'Open receiptSubscribe subscriptions.');
    tb.sample('slotrelay_pubsub_receipt_subscriptions', {}, this.subscriptions);
    tb.declare('slotrelay_pubsub_receipt_notifications_total', 'counter', 'receiptNotification messages sent.');
    tb.sample('slotrelay_pubsub_receipt_notifications_total', {}, this.notifications);
    tb.declare('slotrelay_pubsub_receipt_watch_skipped_total', 'counter', 'Receipts whose route events were not streamed because too many were watched.');
    tb.sample('slotrelay_pubsub_receipt_watch_skipped_total', {}, this.watchSkipped);
  }
}

function addTo<K>(m: Map<K, Set<ReceiptSub>>, k: K, sub: ReceiptSub): void {
  let s = m.get(k);
  if (s === undefined) m.set(k, (s = new Set()));
  s.add(sub);
}

function removeFrom<K>(m: Map<K, Set<ReceiptSub>>, k: K, sub: ReceiptSub): void {
  const s = m.get(k);
  s?.delete(sub);
  if (s?.size === 0) m.delete(k);
}
