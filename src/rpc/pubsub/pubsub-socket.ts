// One client WebSocket of the PubSub endpoint, over uWS (front thread; send() is HOT: once per forwarded
// notification). Owns the socket's subscriptions (the hub fills them) and its bounded send buffer: a client that reads
// more slowly than its notifications arrive is closed with CLOSE_SLOW_CONSUMER once uWS holds more than
// maxBufferedBytes (config jsonRpc.pubsub.maxBufferedBytes) unsent for it, instead of the relay buffering without bound (docs/pubsub.md).
import type { WebSocket } from 'uWebSockets.js';
import type { KeyEntry } from '../../admission/key-table.js';
import type { ClientSub, SubscriberSocket } from './subscription-hub.js';
import { sendText } from './uws-send.js';

/** 1008 Policy Violation: the client did not read its notifications fast enough. */
export const CLOSE_SLOW_CONSUMER = 1008;
export const CLOSE_SLOW_CONSUMER_REASON = 'slow_consumer';
/** 1001 Going Away: the relay is shutting down. */
export const CLOSE_SHUTTING_DOWN = 1001;

/** uWS's send() result when it dropped the message because of backpressure (not expected: no uWS limit is set). */
const SEND_DROPPED = 2;

/** What uWS keeps per socket: a holder, so the socket object is ours whether or not uWS copies user data. */
export interface PubsubUserData {
  readonly socket: PubsubSocket;
}

export type PubsubWs = WebSocket<PubsubUserData>;

export class PubsubSocket implements SubscriberSocket {
  readonly subs = new Map<number, ClientSub>();
  closed = false;
  private ws: PubsubWs | null = null;

  constructor(
    readonly key: KeyEntry,
    /** Unsent bytes uWS may hold for this client before it is closed as a slow consumer. */
    private readonly maxBufferedBytes: number,
    private readonly onSlowConsumer: () => void,
  ) {}

  /** uWS opened it (the upgrade only created this object). */
  opened(ws: PubsubWs): void {
    this.ws = ws;
  }

  send(text: string): void {
    const ws = this.ws;
    if (this.closed || ws === null) return;
    // Never ws.send() directly: large messages need uws-send.ts's fragmenting (a uWS bug loses their bytes).
    const status = sendText(ws, text);
    if (status === SEND_DROPPED || ws.getBufferedAmount() > this.maxBufferedBytes) {
      this.onSlowConsumer();
      this.close(CLOSE_SLOW_CONSUMER, CLOSE_SLOW_CONSUMER_REASON);
    }
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.ws?.end(code, reason); // uWS calls the close handler, which releases the subscriptions
  }

  /** uWS closed it (any reason): the socket must not be touched again. */
  markClosed(): void {
    this.closed = true;
    this.ws = null;
  }
}
