// The cluster's current slot as the landing bench sees it (CLI process, main thread; cold): slotSubscribe on the
// cluster's PubSub (a notification as each slot starts), with getSlot polling every 100 ms as the fallback when the
// WebSocket cannot be opened. A transaction's send slot is this slot at the moment it was sent: an observation of the
// cluster independent of the sender being measured (docs/landing.md, "slots-to-land").
// It also measures the cluster's slot duration from the same observations (src/telemetry/slot-duration.ts), for a
// remote cluster whose slot time the bench does not set (docs/slot-time.md).
import WebSocket from 'ws';
import { SlotDurationEstimator } from '../telemetry/slot-duration.js';
import { rpcCall } from './http.js';

const POLL_MS = 100;

export class SlotTracker {
  private slot = -1;
  /** Unix ms at which each slot was first seen (the timeline's time axis). */
  readonly firstSeenAt = new Map<number, number>();
  /** The slot duration measured from the slots seen (its fallback until enough were). */
  readonly slotTime = new SlotDurationEstimator();
  private ws: WebSocket | undefined;
  private poll: NodeJS.Timeout | undefined;
  private closed = false;
  source: 'slotSubscribe' | 'getSlot polling' = 'slotSubscribe';

  private constructor(
    private readonly rpcUrl: string,
    private readonly wsUrl: string,
  ) {}

  /** Resolves once the first slot is known. */
  static async start(rpcUrl: string, wsUrl: string): Promise<SlotTracker> {
    const t = new SlotTracker(rpcUrl, wsUrl);
    t.see(await rpcCall<number>(rpcUrl, 'getSlot', [{ commitment: 'processed' }]));
    try {
      await t.subscribe();
    } catch {
      t.source = 'getSlot polling';
      t.startPolling();
    }
    return t;
  }

  get current(): number {
    return this.slot;
  }

  /** The measured slot duration, waiting up to `waitMs` for enough slots to be seen; the fallback after that. */
  async measuredSlotMs(waitMs: number): Promise<{ slotMs: number; measured: boolean }> {
    const until = Date.now() + waitMs;
    while (this.slotTime.samples === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    return { slotMs: this.slotTime.slotMs, measured: this.slotTime.samples > 0 };
  }

  private see(slot: number): void {
    if (slot <= this.slot) return;
    const now = Date.now();
    this.slotTime.observe(slot, performance.now());
    for (let s = this.slot < 0 ? slot : this.slot + 1; s <= slot; s++) if (!this.firstSeenAt.has(s)) this.firstSeenAt.set(s, now);
    this.slot = slot;
  }

  private subscribe(): Promise<void> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.wsUrl);
      this.ws = ws;
      const timer = setTimeout(() => {
        ws.terminate();
        reject(new Error('slotSubscribe: no answer'));
      }, 5_000);
      ws.on('open', () => ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'slotSubscribe', params: [] })));
      ws.on('message', (data) => {
        const m = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: unknown; params?: { result?: { slot?: number } } };
        if (m.id === 1) {
          clearTimeout(timer);
          if (m.error !== undefined) reject(new Error('slotSubscribe refused'));
          else resolve();
          return;
        }
        const s = m.params?.result?.slot;
        if (typeof s === 'number') this.see(s);
      });
      ws.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      ws.on('close', () => {
        // A subscription lost mid-run: carry on by polling rather than freeze the send slot.
        if (!this.closed && this.poll === undefined) {
          this.source = 'getSlot polling';
          this.startPolling();
        }
      });
    });
  }

  private startPolling(): void {
    this.poll = setInterval(() => {
      rpcCall<number>(this.rpcUrl, 'getSlot', [{ commitment: 'processed' }]).then(
        (s) => this.see(s),
        () => undefined, // the next poll tries again
      );
    }, POLL_MS);
  }

  stop(): void {
    this.closed = true;
    if (this.poll) clearInterval(this.poll);
    this.ws?.close();
  }
}

/** Agave's convention: PubSub on the RPC port + 1, ws(s) for http(s). */
export function defaultWsUrl(rpcUrl: string): string {
  const u = new URL(rpcUrl);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  if (u.port !== '') u.port = String(Number(u.port) + 1);
  return u.toString();
}
