// The localnet's RPC facade server on uWS (localnet process, main thread; cold set-up, handlers per request).
// HTTP JSON-RPC on POST / with the relay's envelope rules (src/jsonrpc) and Agave's transport rules (415 on a
// non-JSON content type, 413 over 50 KiB, GET /health -> "ok", other GETs 405, CORS preflight). PubSub: the same
// app also serves WebSocket upgrades, and listens on TWO ports, P (HTTP, also accepts WebSocket) and P+1 (the
// WebSocket port, as Agave serves PubSub on rpc port + 1: web3.js's Connection derives its ws URL that way).
// wsUrl is ws://host:P+1. With port 0 an ephemeral P is chosen such that P+1 is free too.
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { Errors, type ErrorSpec } from '../../errors/registry.js';
import { readBody } from '../../http/body-reader.js';
import { answerCorsPreflight, JSON_TYPE, RequestState, responseOptions, TEXT_TYPE, writeResponse, type ResponseOptions } from '../../http/response.js';
import { loadUws, type Uws } from '../../native/uws.js';
import { listenExclusive } from '../../native/listen-exclusive.js';
import { mediaType } from '../../http/request.js';
import { dispatchJsonRpc, type MethodHandler, type MethodTable } from '../../jsonrpc/dispatch.js';
import { parseJsonRpcBody } from '../../jsonrpc/envelope.js';
import { errorJson } from '../../jsonrpc/response.js';
import type { FacadeContext } from './context.js';
import { getTransactionMethods } from './get-transaction.js';
import { getBlockMethods } from './get-block.js';
import { feeMethods } from './get-fee-for-message.js';
import { accountMethods } from './methods-accounts.js';
import { clusterMethods } from './methods-cluster.js';
import { localnetMethods } from './methods-localnet.js';
import { transactionMethods } from './methods-transactions.js';
import { PubSub, type SocketState } from './pubsub.js';

/** Agave MAX_REQUEST_BODY_SIZE. */
const MAX_BODY_BYTES = 50 * 1024;
/** Agave has no batch limit; the facade bounds it generously. */
const MAX_BATCH = 10_000;
const PORT_ATTEMPTS = 20;

export interface FacadeServerOptions {
  readonly host: string;
  /** 0 = ephemeral (with P+1 free as well). */
  readonly port: number;
  /** The node's one-way distance from its clients: requests are handled, and answers sent, this much later. */
  readonly oneWayDelayMs?: number;
  readonly onInternalError?: (err: unknown, method: string) => void;
  /** Region name -> that region's view (POST /regions/{name}); src/localnet/region-links.ts. */
  readonly regions?: ReadonlyMap<string, FacadeContext>;
}

export function buildMethodTable(): MethodTable<FacadeContext> {
  const all: ReadonlyArray<readonly [string, MethodHandler<FacadeContext>]> = [
    ...clusterMethods,
    ...accountMethods,
    ...transactionMethods,
    ...getTransactionMethods,
    ...getBlockMethods,
    ...feeMethods,
    ...localnetMethods,
  ];
  return new Map(all);
}

export class FacadeServer {
  readonly pubsub: PubSub;
  private readonly sockets: us_listen_socket[] = [];
  private readonly table = buildMethodTable();
  private httpPort = 0;
  private app: TemplatedApp | null = null;
  // The process's uWS (as shipped unless a relay front in this process loaded it first), taken when a server is
  // created: importing this module must not decide how uWS is loaded.
  private readonly uws: Uws;
  private readonly responseOptions: ResponseOptions;
  private readonly delayMs: number;

  constructor(
    private readonly ctx: FacadeContext,
    private readonly opts: FacadeServerOptions,
  ) {
    this.pubsub = new PubSub(ctx);
    this.delayMs = Math.max(0, opts.oneWayDelayMs ?? 0);
    this.pubsub.delayMs = this.delayMs;
    const runtime = loadUws();
    this.uws = runtime.uws;
    this.responseOptions = responseOptions('*', runtime.idleTimeoutSeconds);
  }

  get rpcUrl(): string {
    return `http://${this.opts.host}:${this.httpPort}`;
  }

  get wsUrl(): string {
    return `ws://${this.opts.host}:${this.httpPort + 1}`;
  }

  get port(): number {
    return this.httpPort;
  }

  private reject(st: RequestState, spec: ErrorSpec): void {
    writeResponse(st, this.responseOptions, spec.rpcHttpStatus, JSON_TYPE, errorJson(null, spec.rpcCode, spec.message), 0, spec === Errors.BODY_TOO_LARGE);
  }

  /** One JSON-RPC POST, answered with `ctx` (the node's, or a region's view of it). */
  private serve(res: HttpResponse, req: HttpRequest, ctx: FacadeContext): void {
    const st = new RequestState(res, '', 0);
    res.onAborted(() => {
      st.aborted = true;
    });
    const cl = req.getHeader('content-length');
    if (mediaType(req.getHeader('content-type')) !== 'application/json') return this.reject(st, Errors.UNSUPPORTED_MEDIA_TYPE);
    readBody(res, st, cl === '' ? -1 : Number(cl), MAX_BODY_BYTES, (body) => {
      const text = body.toString('utf8'); // now: the body may be a view into uWS's chunk, valid only in this call
      const handle = (): void => {
        if (st.aborted) return;
        const parsed = parseJsonRpcBody(text, MAX_BATCH);
        const out = dispatchJsonRpc(parsed, this.table, ctx, {
          onInternalError: (err, call) => this.opts.onInternalError?.(err, call.method),
        });
        const write = (text: string | null): void => writeResponse(st, this.responseOptions, 200, JSON_TYPE, text ?? '');
        const finish = this.delayMs > 0 ? (text: string | null): void => void setTimeout(() => write(text), this.delayMs) : write;
        if (out === null || typeof out === 'string') finish(out);
        else out.then(finish, () => finish(errorJson(null, Errors.INTERNAL_ERROR.rpcCode, Errors.INTERNAL_ERROR.message)));
      };
      // The request reaches the node oneWayDelayMs after the client sent it.
      if (this.delayMs > 0) setTimeout(handle, this.delayMs);
      else handle();
    }, () => this.reject(st, Errors.BODY_TOO_LARGE));
  }

  private build(): TemplatedApp {
    const app = this.uws.App();
    app.post('/', (res, req) => this.serve(res, req, this.ctx));
    // A region's view of the node (src/localnet/region-links.ts): the same methods on a context whose validators
    // have that region's TPU addresses.
    app.post('/regions/:name', (res, req) => {
      const ctx = this.opts.regions?.get(req.getParameter(0) ?? '');
      if (ctx === undefined) return writeResponse(new RequestState(res, '', 0), this.responseOptions, 404, TEXT_TYPE, 'no such localnet region');
      this.serve(res, req, ctx);
    });
    app.get('/health', (res) => writeResponse(new RequestState(res, '', 0), this.responseOptions, 200, TEXT_TYPE, 'ok'));
    app.options('/*', (res) => answerCorsPreflight(res, this.responseOptions));
    app.ws<SocketState>('/*', {
      maxPayloadLength: MAX_BODY_BYTES,
      idleTimeout: 120,
      sendPingsAutomatically: true,
      upgrade: (res, req, context) => {
        res.upgrade<SocketState>(
          { subs: new Set() },
          req.getHeader('sec-websocket-key'),
          req.getHeader('sec-websocket-protocol'),
          req.getHeader('sec-websocket-extensions'),
          context,
        );
      },
      message: (ws, message) => this.pubsub.message(ws, Buffer.from(message).toString('utf8')), // delayed inside
      close: (ws) => this.pubsub.close(ws),
    });
    app.any('/*', (res: HttpResponse) => this.reject(new RequestState(res, '', 0), Errors.METHOD_NOT_ALLOWED));
    return app;
  }

  private listenOn(app: TemplatedApp, port: number): Promise<us_listen_socket | null> {
    return new Promise((resolve) => listenExclusive(app, this.opts.host, port, (s) => resolve(s || null)));
  }

  async start(): Promise<void> {
    const app = this.build();
    this.app = app;
    for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
      let first = await this.listenOn(app, this.opts.port);
      if (first === null) throw new Error(`localnet facade cannot listen on ${this.opts.host}:${this.opts.port}`);
      const port = this.uws.getSocketPort(first);
      if (this.opts.port === 0) {
        // uSockets sets SO_REUSEADDR only when listening on an explicit port, and the connections a listener accepts
        // inherit it. Without it, a localnet restarted on this port (the relay's supervisor does that) cannot bind
        // while the old connections sit in TIME_WAIT (60 s). So: take the number, then listen on it explicitly.
        this.uws.closeSocket(first);
        first = await this.listenOn(app, port);
        if (first === null) continue; // taken in between: try another pair
      }
      const second = await this.listenOn(app, port + 1);
      if (second !== null) {
        this.sockets.push(first, second);
        this.httpPort = port;
        this.ctx.rpcAddress = `${this.opts.host}:${port}`;
        this.ctx.pubsubAddress = `${this.opts.host}:${port + 1}`;
        return;
      }
      this.uws.closeSocket(first);
      if (this.opts.port !== 0) throw new Error(`localnet facade: the PubSub port ${port + 1} (rpc port + 1) is in use`);
    }
    throw new Error('localnet facade: no free pair of ports (P, P+1) found');
  }

  /** Stop listening and close every open connection (HTTP keep-alive and WebSocket). */
  stop(): void {
    for (const s of this.sockets.splice(0)) this.uws.closeSocket(s);
    // App#close (closes all sockets) exists at runtime in this uWS build but is missing from its typings.
    (this.app as unknown as { close?: () => void } | null)?.close?.();
    this.app = null;
  }
}
