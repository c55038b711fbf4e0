// The JSON-RPC host's PubSub WebSocket endpoint on uWS (front thread; upgrade and messages per client, cold-ish;
// forwarding lives in subscription-hub.ts). Served on its own port (rpcHost.port + 1 by default, where web3.js's
// Connection looks for it) and on the rpc port itself (an upgrade on any path of either).
// - Auth on the upgrade, from the same carriers as HTTP (x-token, x-api-key, Authorization: Bearer, ?key=; browsers
//   can only use ?key=): no or an unknown key -> HTTP 401 with the JSON-RPC host's 401 body, never an upgrade.
// - Each text message is a JSON-RPC body with the envelope rules of src/jsonrpc (batches in order, ids echoed,
//   notifications unanswered: web3.js's and kit's `ping`s), dispatched to the methods below; anything else -32601.
// - Each subscribe is charged to the key's readLimit (refused: -32005 rate_limited inside the JSON-RPC answer).
import { isUtf8 } from 'node:buffer';
import type { HttpRequest, HttpResponse, TemplatedApp, us_socket_context_t, WebSocketBehavior } from 'uWebSockets.js';
import { Errors, Failure, type ErrorSpec } from '../../errors/registry.js';
import type { KeyTable } from '../../admission/key-table.js';
import { extractKey } from '../../http/api-key-carrier.js';
import { JSON_TYPE, RequestState, writeResponse, type ResponseOptions } from '../../http/response.js';
import { nowMs } from '../../http/request.js';
import { requestIdFor } from '../../http/request-id.js';
import { dispatchJsonRpc, type DispatchHooks, type MethodHandler, type MethodTable } from '../../jsonrpc/dispatch.js';
import { parseJsonRpcBody, type JsonRpcCall, type ParsedBody } from '../../jsonrpc/envelope.js';
import { errorJson } from '../../jsonrpc/response.js';
import type { Logger } from '../../log/logger.js';
import { summarizedLog } from '../../log/summarized-log.js';
import type { TextBuilder } from '../../metrics/prometheus.js';
import type { Uws } from '../../native/uws.js';
import {
  accountSubscribeRequest,
  INVALID_SUBSCRIPTION_ID,
  receiptSubscribeSignature,
  rootSubscribeRequest,
  slotsUpdatesSubscribeRequest,
  signatureSubscribeRequest,
  slotSubscribeRequest,
  unsubscribeId,
} from './pubsub-params.js';
import { CLOSE_SHUTTING_DOWN, PubsubSocket, type PubsubUserData, type PubsubWs } from './pubsub-socket.js';
import type { SubscribeRequest, SubscriptionHub } from './subscription-hub.js';
import type { ReceiptStreamPort } from './receipt-stream-port.js';

/** uWS closes an idle socket after this many seconds, pinging it first (web3.js and kit also ping every 5 s). */
const IDLE_TIMEOUT_S = 120;

export interface PubsubServerDeps {
  readonly keys: KeyTable;
  readonly hub: SubscriptionHub;
  readonly log: Logger;
  readonly responseOptions: ResponseOptions;
  /** Largest message a client may send (beyond it uWS drops the connection, no close frame): http.maxBodyBytes. */
  readonly maxMessageBytes: number;
  readonly maxBatchSize: number;
  /** Unsent bytes uWS may hold for one client before it is closed 1008 slow_consumer (jsonRpc.pubsub.maxBufferedBytes). */
  readonly maxBufferedBytes: number;
  /** receiptSubscribe (docs/receipts.md "The receipt stream"); null when the relay keeps no receipts. */
  readonly receiptStream: ReceiptStreamPort | null;
  /** A refusal before any method ran (the 401 of an upgrade), by registry reason: the front's rejection counter. */
  countRejection(reason: string): void;
}

const NOT_UTF8: ParsedBody = Object.freeze({ kind: 'fatal', error: Errors.PARSE_ERROR });

type Handler = MethodHandler<PubsubSocket>;

export class PubsubServer {
  private readonly table: MethodTable<PubsubSocket>;
  private readonly sockets = new Set<PubsubSocket>();
  private readonly hooks: DispatchHooks;
  private closing = false;
  private slowConsumerCloses = 0;
  /** method (the table's names, else "unknown") -> outcome ("ok" or a registry reason) -> count. */
  private readonly outcomes = new Map<string, Map<string, number>>();

  constructor(private readonly deps: PubsubServerDeps) {
    const subscribe =
      (make: (params: unknown) => SubscribeRequest): Handler =>
      (params, socket) => this.subscribe(socket, make(params));
    const unsubscribe: Handler = (params, socket) => (deps.hub.unsubscribe(socket, unsubscribeId(params)) ? 'true' : INVALID_SUBSCRIPTION_ID);
    const table = new Map<string, Handler>([
      ['slotSubscribe', subscribe(slotSubscribeRequest)],
      ['slotUnsubscribe', unsubscribe],
      ['signatureSubscribe', subscribe(signatureSubscribeRequest)],
      ['signatureUnsubscribe', unsubscribe],
      ['accountSubscribe', subscribe(accountSubscribeRequest)],
      ['accountUnsubscribe', unsubscribe],
      ['rootSubscribe', subscribe(rootSubscribeRequest)],
      ['rootUnsubscribe', unsubscribe],
      ['slotsUpdatesSubscribe', subscribe(slotsUpdatesSubscribeRequest)],
      ['slotsUpdatesUnsubscribe', unsubscribe],
    ]);
    const stream = deps.receiptStream;
    if (stream !== null) {
      table.set('receiptSubscribe', (params, socket) => {
        const signature = receiptSubscribeSignature(params);
        const waitMs = socket.key.readBucket.take(1, nowMs());
        if (waitMs > 0) return new Failure(Errors.RATE_LIMITED, Errors.RATE_LIMITED.message, { reason: Errors.RATE_LIMITED.reason, retryAfterMs: Math.ceil(waitMs) });
        const id = stream.subscribe(socket, signature);
        // After the answer (sent synchronously once this returns): the receipt as it stands, if it exists already.
        if (signature !== null) queueMicrotask(() => stream.catchUp(socket, id));
        return String(id);
      });
      table.set('receiptUnsubscribe', (params, socket) => (stream.unsubscribe(socket, unsubscribeId(params)) ? 'true' : INVALID_SUBSCRIPTION_ID));
    }
    this.table = table;
    this.hooks = {
      onInternalError: (err: unknown, call: JsonRpcCall) =>
        summarizedLog(deps.log).note('error', 'pubsub_internal_error ' + call.method, { err, method: call.method }, 'internal error in a PubSub method'),
      onOutcome: (method: string | null, reason: string | null) => this.countOutcome(method, reason),
    };
  }

  private subscribe(socket: PubsubSocket, req: SubscribeRequest): string | Promise<string> | Failure {
    const waitMs = socket.key.readBucket.take(1, nowMs());
    if (waitMs > 0) return new Failure(Errors.RATE_LIMITED, Errors.RATE_LIMITED.message, { reason: Errors.RATE_LIMITED.reason, retryAfterMs: Math.ceil(waitMs) });
    return this.deps.hub.subscribe(socket, req);
  }

  private countOutcome(method: string | null, reason: string | null): void {
    const label = method === null ? 'none' : this.table.has(method) ? method : 'unknown';
    let byOutcome = this.outcomes.get(label);
    if (byOutcome === undefined) this.outcomes.set(label, (byOutcome = new Map()));
    const outcome = reason ?? 'ok';
    byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1);
  }

  private refuse(res: HttpResponse, req: HttpRequest, spec: ErrorSpec): void {
    this.deps.countRejection(spec.reason);
    const st = new RequestState(res, requestIdFor(req.getHeader('x-request-id')), 0);
    writeResponse(st, this.deps.responseOptions, spec.rpcHttpStatus, JSON_TYPE, errorJson(null, spec.rpcCode, spec.message));
  }

  private upgrade(res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void {
    if (this.closing) return this.refuse(res, req, Errors.SHUTTING_DOWN);
    const candidate = extractKey(req.getHeader('x-token'), req.getHeader('x-api-key'), req.getHeader('authorization'), req.getQuery('key') ?? '');
    const key = this.deps.keys.lookup(candidate);
    if (key === undefined) return this.refuse(res, req, Errors.UNAUTHORIZED);
    const socket = new PubsubSocket(key, this.deps.maxBufferedBytes, () => this.slowConsumerCloses++);
    res.upgrade<PubsubUserData>(
      { socket },
      req.getHeader('sec-websocket-key'),
      req.getHeader('sec-websocket-protocol'),
      req.getHeader('sec-websocket-extensions'),
      context,
    );
  }

  private message(ws: PubsubWs, message: ArrayBuffer): void {
    const socket = ws.getUserData().socket;
    // The ArrayBuffer is only valid during this callback: decoded to a string before anything else.
    const bytes = Buffer.from(message);
    const parsed = isUtf8(bytes) ? parseJsonRpcBody(bytes.toString('utf8'), this.deps.maxBatchSize) : NOT_UTF8;
    const out = dispatchJsonRpc(parsed, this.table, socket, this.hooks);
    if (out === null) return;
    if (typeof out === 'string') return socket.send(out);
    out.then(
      (text) => {
        if (text !== null) socket.send(text);
      },
      () => socket.send(errorJson(null, Errors.INTERNAL_ERROR.rpcCode, Errors.INTERNAL_ERROR.message)),
    );
  }

  /** The uWS WebSocket behaviour, for app.ws(). */
  behavior(): WebSocketBehavior<PubsubUserData> {
    return {
      maxPayloadLength: this.deps.maxMessageBytes,
      // No uWS limit (0): uWS would silently drop messages over it, the close frame included. The limit is
      // maxBufferedBytes, checked after every send (pubsub-socket.ts), so a socket holds at most that plus one message.
      maxBackpressure: 0,
      idleTimeout: IDLE_TIMEOUT_S,
      sendPingsAutomatically: true,
      upgrade: (res, req, context) => this.upgrade(res, req, context),
      open: (ws) => {
        const socket = ws.getUserData().socket;
        socket.opened(ws);
        this.sockets.add(socket);
      },
      message: (ws, message) => this.message(ws, message),
      close: (ws) => {
        const socket = ws.getUserData().socket;
        socket.markClosed();
        this.sockets.delete(socket);
        this.deps.hub.socketClosed(socket);
        this.deps.receiptStream?.socketClosed(socket);
      },
    };
  }

  /** Serve PubSub upgrades on any path of `app` (registered before the app's catch-all routes). */
  attach(app: TemplatedApp): void {
    app.ws<PubsubUserData>('/*', this.behavior());
  }

  /** The app of the PubSub port: upgrades only; any other request is refused like a GET on the JSON-RPC host (405). */
  buildApp(uws: Uws): TemplatedApp {
    const app = uws.App();
    this.attach(app);
    app.any('/*', (res, req) => this.refuse(res, req, Errors.METHOD_NOT_ALLOWED));
    return app;
  }

  /** Relay shutdown: every client is closed with 1001, the upstream connection too. */
  close(): void {
    this.closing = true;
    for (const s of [...this.sockets]) s.close(CLOSE_SHUTTING_DOWN, 'shutting_down');
    this.deps.hub.close();
  }

  render(tb: TextBuilder): void {
    tb.declare('slotrelay_pubsub_connections', 'gauge', 'Open PubSub WebSocket connections.');
    tb.sample('slotrelay_pubsub_connections', {}, this.sockets.size);
    tb.declare('slotrelay_pubsub_requests_total', 'counter', 'PubSub JSON-RPC calls answered (batch elements count one each), by method and outcome.');
    for (const [method, byOutcome] of this.outcomes) {
      for (const [outcome, v] of byOutcome) tb.sample('slotrelay_pubsub_requests_total', { method, outcome }, v);
    }
    tb.declare('slotrelay_pubsub_slow_consumer_closes_total', 'counter', 'Clients closed with 1008 for not reading their notifications.');
    tb.sample('slotrelay_pubsub_slow_consumer_closes_total', {}, this.slowConsumerCloses);
    this.deps.hub.render(tb);
    this.deps.receiptStream?.render(tb);
  }
}
