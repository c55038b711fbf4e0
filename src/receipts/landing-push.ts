// Landings by push (front thread; cold: one upstream WebSocket, a message per landing): the landing tracker's signatures
// are watched on the upstream's PubSub with signatureSubscribe, once at `processed` and once at `finalized` (both
// one-shot: the node ends each subscription with its notification). Each notification goes to the tracker's one
// status hook, statusSeen(signature, commitment, slot, err, atMs), the same hook the Geyser stream feeds; the time is
// the front's clock when the message is read (ms resolution, plus the event loop's delay: docs/receipts.md).
// Bounded: MAX_PUSH_WATCHED signatures (two subscriptions each); beyond it the poll follows them. While the socket is
// down the tracker polls getSignatureStatuses for everything (`up` false); the switch either way is counted and logged
// once; reconnects back off from RECONNECT_MIN_MS to RECONNECT_MAX_MS and resubscribe every watched signature.
// Skipped slots (issue #43, docs/receipts.md "Skipped target slots"): with a `slots` hook (given unless a Geyser stream
// tells skips: upstream.grpc) the same socket also holds
// slotSubscribe (each block's slot and parent: a parent further back than slot-1 means the slots between were skipped)
// and slotsUpdatesSubscribe (createdBank with its parent, and `dead`), whichever the node serves (a refusal is left
// alone); both are renewed on every reconnect. While the socket is down no skip is learnt (the poll cannot tell skips).
import WebSocket from 'ws';
import type { Logger } from '../log/logger.js';
import { urlForLog } from '../log/url-for-log.js';

/** Signatures watched at once (2 subscriptions each): 4,096 x 2 stays well under a node's per-socket limits. */
export const MAX_PUSH_WATCHED = 4_096;
/** First reconnect after a drop; doubled per failure up to RECONNECT_MAX_MS. */
const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 5_000;
/** A dead peer (no pong) is noticed within two periods. */
const PING_INTERVAL_MS = 10_000;
/** The largest message a signature subscription sends is small; anything past this is not for us. */
const MAX_MESSAGE_BYTES = 1024 * 1024;

export type PushCommitment = 'processed' | 'finalized';

/** The tracker's hook: a status for `signature` seen at `commitment`, the notification's slot, at `atMs` (unix ms). */
export type StatusSeen = (signature: string, commitment: PushCommitment, slot: number, err: unknown, atMs: number) => void;

/** The skip detector's hooks (skipped-slots.ts): a block for `slot` on `parent`, or a slot the node calls dead. */
export interface SlotEvidence {
  bank(slot: number, parent: number | null): void;
  dead(slot: number): void;
}

const SLOT_METHODS = ['slotSubscribe', 'slotsUpdatesSubscribe'] as const;
/** Both, with or without a Geyser stream: a stream's filter can reach the endpoint after the transaction executed. */
const COMMITMENTS: readonly PushCommitment[] = ['processed', 'finalized'];

interface Watch {
  /** Request id -> commitment while the subscribe is unanswered; subscription id once answered. */
  processedSub: number;
  finalizedSub: number;
}

export class LandingPush {
  private ws: WebSocket | null = null;
  private open = false;
  private closed = false;
  private readonly watched = new Map<string, Watch>();
  /** Our request id -> (signature, commitment) until the node answers with a subscription id. */
  private readonly requests = new Map<number, { readonly signature: string; readonly commitment: PushCommitment }>();
  /** The node's subscription id -> (signature, commitment). */
  private readonly subs = new Map<number, { readonly signature: string; readonly commitment: PushCommitment }>();
  /** Our request ids of the slot subscriptions until answered, then the node's subscription ids (slots hook only). */
  private readonly slotRequests = new Set<number>();
  private readonly slotSubs = new Set<number>();
  private nextId = 1;
  private backoffMs = RECONNECT_MIN_MS;
  private retry: NodeJS.Timeout | null = null;
  private pinger: NodeJS.Timeout | null = null;
  private alive = true;
  /** Switches: to `poll` when an open socket drops (or the first connect fails), to `push` when one opens. */
  readonly switches = { push: 0, poll: 0 };
  /** Notifications handled, by commitment. */
  readonly notifications = { processed: 0, finalized: 0 };
  /** Since when (unix ms) the current mode holds. */
  since = Date.now();
  private everFailed = false;

  constructor(
    private readonly url: string,
    private readonly seen: StatusSeen,
    private readonly log: Logger,
    /** Skipped slots: block and dead-slot evidence from the same socket (null: not subscribed). */
    private readonly slots: SlotEvidence | null = null,
  ) {}

  /** True while the socket is open: the push tells landings and the poll can leave the watched ones alone. */
  get up(): boolean {
    return this.open;
  }

  get size(): number {
    return this.watched.size;
  }

  /** Whether `signature` is watched (its landing comes by push while `up`). */
  watching(signature: string): boolean {
    return this.watched.has(signature);
  }

  start(): void {
    this.connect();
  }

  stop(): void {
    this.closed = true;
    if (this.retry !== null) clearTimeout(this.retry);
    if (this.pinger !== null) clearInterval(this.pinger);
    this.ws?.terminate();
  }

  /** Watch a signature (false when the bound is reached: the poll follows it). */
  watch(signature: string): boolean {
    if (this.watched.has(signature)) return true;
    if (this.watched.size >= MAX_PUSH_WATCHED) return false;
    const w: Watch = { processedSub: -1, finalizedSub: -1 };
    this.watched.set(signature, w);
    if (this.open) this.subscribeBoth(signature);
    return true;
  }

  /** Stop watching (finalized, concluded, or overwritten): ends its open subscriptions. */
  unwatch(signature: string): void {
    const w = this.watched.get(signature);
    if (w === undefined) return;
    this.watched.delete(signature);
    for (const id of [w.processedSub, w.finalizedSub]) {
      if (id < 0) continue;
      this.subs.delete(id);
      this.send('signatureUnsubscribe', `[${id}]`);
    }
  }

  private connect(): void {
    if (this.closed) return;
    const ws = new WebSocket(this.url, { perMessageDeflate: false, handshakeTimeout: 5_000, maxPayload: MAX_MESSAGE_BYTES });
    this.ws = ws;
    ws.on('open', () => this.opened(ws));
    ws.on('message', (data, isBinary) => {
      if (!isBinary) this.onMessage(data.toString());
    });
    ws.on('pong', () => {
      this.alive = true;
    });
    ws.on('error', () => undefined); // 'close' follows every error
    ws.on('close', () => this.dropped(ws));
  }

  private opened(ws: WebSocket): void {
    if (this.ws !== ws) return;
    this.open = true;
    this.backoffMs = RECONNECT_MIN_MS;
    this.switches.push++;
    this.since = Date.now();
    this.log.info({ event: 'receipts_landing_source', source: 'push', url: urlForLog(this.url) }, 'receipts: landings by push (upstream PubSub signatureSubscribe)');
    this.alive = true;
    this.pinger = setInterval(() => {
      if (!this.alive) return void ws.terminate();
      this.alive = false;
      ws.ping();
    }, PING_INTERVAL_MS);
    this.pinger.unref();
    if (this.slots !== null) {
      for (const method of SLOT_METHODS) {
        const id = this.nextId++;
        this.slotRequests.add(id);
        this.send(method, '[]', id);
      }
    }
    for (const signature of this.watched.keys()) this.subscribeBoth(signature);
  }

  private dropped(ws: WebSocket): void {
    if (this.ws !== ws) return;
    this.ws = null;
    if (this.pinger !== null) clearInterval(this.pinger);
    this.pinger = null;
    this.requests.clear();
    this.subs.clear();
    this.slotRequests.clear();
    this.slotSubs.clear();
    for (const w of this.watched.values()) {
      w.processedSub = -1;
      w.finalizedSub = -1;
    }
    // Logged once per switch: a socket that was open, or the first failure to open one.
    if (this.open || !this.everFailed) {
      this.switches.poll++;
      this.since = Date.now();
      if (!this.closed) this.log.warn({ event: 'receipts_landing_source', source: 'poll', url: urlForLog(this.url) }, 'receipts: upstream PubSub down; landings by getSignatureStatuses poll until it is back');
    }
    this.everFailed = true;
    this.open = false;
    if (this.closed) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.connect();
    }, this.backoffMs);
    this.retry.unref();
    this.backoffMs = Math.min(RECONNECT_MAX_MS, this.backoffMs * 2);
  }

  private subscribeBoth(signature: string): void {
    for (const commitment of COMMITMENTS) {
      const id = this.nextId++;
      this.requests.set(id, { signature, commitment });
      this.send('signatureSubscribe', `["${signature}",{"commitment":"${commitment}"}]`, id);
    }
  }

  private send(method: string, params: string, id = this.nextId++): void {
    if (this.ws === null || !this.open) return;
    this.ws.send(`{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${params}}`);
  }

  private onMessage(text: string): void {
    const atMs = Date.now();
    let m: { id?: unknown; result?: unknown; method?: unknown; params?: { subscription?: unknown; result?: { context?: { slot?: unknown }; value?: unknown } } };
    try {
      m = JSON.parse(text) as typeof m;
    } catch {
      return;
    }
    if (this.slots !== null && this.onSlotMessage(m)) return;
    if (typeof m.id === 'number') {
      const req = this.requests.get(m.id);
      if (req === undefined) return;
      this.requests.delete(m.id);
      const w = this.watched.get(req.signature);
      if (typeof m.result !== 'number') return; // refused: the poll follows it
      if (w === undefined) return void this.send('signatureUnsubscribe', `[${m.result}]`);
      if (req.commitment === 'processed') w.processedSub = m.result;
      else w.finalizedSub = m.result;
      this.subs.set(m.result, req);
      return;
    }
    if (m.method !== 'signatureNotification' || typeof m.params?.subscription !== 'number') return;
    const sub = this.subs.get(m.params.subscription);
    if (sub === undefined) return;
    const value = m.params.result?.value;
    const slot = m.params.result?.context?.slot;
    // 'receivedSignature' (enableReceivedNotification) says nothing about landing; we never ask for it.
    if (typeof value !== 'object' || value === null || typeof slot !== 'number') return;
    this.subs.delete(m.params.subscription); // one-shot: the node ended it
    const w = this.watched.get(sub.signature);
    if (w !== undefined) {
      if (sub.commitment === 'processed') w.processedSub = -1;
      else w.finalizedSub = -1;
    }
    this.notifications[sub.commitment]++;
    this.seen(sub.signature, sub.commitment, slot, (value as { err?: unknown }).err ?? null, atMs);
  }

  /** A slot subscription's answer or notification (true: handled here). */
  private onSlotMessage(m: { id?: unknown; result?: unknown; method?: unknown; params?: { subscription?: unknown; result?: unknown } }): boolean {
    if (typeof m.id === 'number') {
      if (!this.slotRequests.delete(m.id)) return false;
      if (typeof m.result === 'number') this.slotSubs.add(m.result); // refused (unstable method off): the other one serves
      return true;
    }
    if (m.method !== 'slotNotification' && m.method !== 'slotsUpdatesNotification') return false;
    if (typeof m.params?.subscription !== 'number' || !this.slotSubs.has(m.params.subscription)) return true;
    const r = m.params.result as { type?: unknown; slot?: unknown; parent?: unknown } | undefined;
    if (typeof r?.slot !== 'number') return true;
    const parent = typeof r.parent === 'number' ? r.parent : null;
    if (m.method === 'slotNotification' || r.type === 'createdBank') this.slots!.bank(r.slot, parent);
    else if (r.type === 'dead') this.slots!.dead(r.slot);
    return true;
  }
}
