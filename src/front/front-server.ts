// The uWS front: both hosts of the spec from one thread (cold: set-up and shutdown; handlers live elsewhere).
// JSON-RPC host: POST / (method table), GET /health, GET /metrics, WebSocket PubSub upgrades (also on its own
// port: src/rpc/pubsub/). Relay host: POST /v1/submit, /v1/transactions,
// /v1/sendTransaction, GET /health, GET /metrics. Either host can be disabled. OPTIONS anywhere answers CORS.
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { listenExclusive } from '../native/listen-exclusive.js';
import { BIND_FAILED, ListenFailure } from '../native/listen-failure.js';
import { Errors } from '../errors/registry.js';
import type { MethodTable } from '../jsonrpc/dispatch.js';
import type { CallContext } from '../admission/call-context.js';
import type { FrontDeps } from './front-deps.js';
import { answerCorsPreflight, restErrorBody, RequestState, writeResponse, JSON_TYPE, TEXT_TYPE } from '../http/response.js';
import type { Uws } from '../native/uws.js';
import { receiptEndpoint } from './receipt-endpoint.js';
import { leadersEndpoint } from './leaders-endpoint.js';
import { jsonRpcEndpoint } from './json-rpc-endpoint.js';
import { submitEndpoint, transactionsEndpoint } from './relay-endpoints.js';
import { requestIdFor } from '../http/request-id.js';
import { requestDeclaresBody } from '../http/request.js';
import { errorJson } from '../jsonrpc/response.js';
import { listenRpcAndPubsub } from '../rpc/pubsub/listen-pubsub.js';
import type { PubsubServer } from '../rpc/pubsub/pubsub-server.js';

export interface ListenInfo {
  readonly name: 'rpc' | 'relay' | 'pubsub' | 'quic' | 'admin';
  readonly host: string;
  readonly port: number;
}

/** A synchronous answer with no body to read (health, metrics, 404/405): echoes or generates x-request-id. */
function plain(res: HttpResponse, req: HttpRequest, deps: FrontDeps, status: number, type: string, body: string): void {
  const st = new RequestState(res, requestIdFor(req.getHeader('x-request-id')), 0);
  st.bodyPending = requestDeclaresBody(req); // never read here: a body still arriving closes the connection
  writeResponse(st, deps.responseOptions, status, type, body);
}

/**
 * GET /health (docs/health.md): the simple check stays Agave-compatible — 200 "ok" while the relay can deliver (also
 * when degraded), 503 "unhealthy" when no route can, 503 "shutting_down" while it stops. `?detail` answers the JSON
 * report (same statuses) with the reasons per route, the upstream, the localnet and the leader data.
 */
function health(res: HttpResponse, req: HttpRequest, deps: FrontDeps): void {
  const report = deps.health();
  const status = report.status === 'ok' || report.status === 'degraded' ? 200 : 503;
  if (new URLSearchParams(req.getQuery() ?? '').has('detail')) {
    return plain(res, req, deps, status, JSON_TYPE, JSON.stringify(deps.httpRuntime === undefined ? report : { ...report, http: deps.httpRuntime }));
  }
  plain(res, req, deps, status, TEXT_TYPE, status === 200 ? 'ok' : report.status);
}

function commonRoutes(app: TemplatedApp, deps: FrontDeps, notFoundBody: () => string, notFoundStatus: number): void {
  app.get('/health', (res, req) => health(res, req, deps));
  if (deps.config.http.metrics) {
    app.get('/metrics', (res, req) => plain(res, req, deps, 200, 'text/plain; version=0.0.4; charset=utf-8', deps.renderMetrics()));
  }
  app.options('/*', (res, req) => answerCorsPreflight(res, deps.responseOptions, requestIdFor(req.getHeader('x-request-id')), requestDeclaresBody(req)));
  app.any('/*', (res, req) => {
    deps.metrics.countRejection(notFoundStatus === 405 ? Errors.METHOD_NOT_ALLOWED.reason : Errors.NOT_FOUND.reason);
    plain(res, req, deps, notFoundStatus, JSON_TYPE, notFoundBody());
  });
}

export class FrontServer {
  private readonly listenSockets: us_listen_socket[] = [];

  constructor(
    /** The process's uWS (src/native/uws.ts: loaded with the configured idle timeout). */
    private readonly uws: Uws,
    private readonly deps: FrontDeps,
    private readonly rpcMethods: MethodTable<CallContext>,
    private readonly relayRpcMethods: MethodTable<CallContext>,
    /** The JSON-RPC host's PubSub (docs/pubsub.md): its own port and upgrades on the rpc port; null when off. */
    private readonly pubsub: PubsubServer | null = null,
    /** The bundle methods for POST /v1/bundles (src/bundles/); empty when no bundle service is configured. */
    private readonly bundleMethods: MethodTable<CallContext> = new Map(),
  ) {}

  private buildRpcApp(): TemplatedApp {
    const app = this.uws.App();
    app.post('/', jsonRpcEndpoint(this.deps, this.rpcMethods, 'rpc', '/'));
    this.pubsub?.attach(app); // WebSocket upgrades on any path; other GETs fall through to the routes below
    // Agave: any GET other than /health is 405; unknown POST paths likewise get the JSON-RPC error body.
    commonRoutes(app, this.deps, () => errorJson(null, Errors.METHOD_NOT_ALLOWED.rpcCode, Errors.METHOD_NOT_ALLOWED.message), 405);
    return app;
  }

  private buildRelayApp(): TemplatedApp {
    const app = this.uws.App();
    app.post('/v1/submit', submitEndpoint(this.deps));
    app.post('/v1/transactions', transactionsEndpoint(this.deps));
    app.post('/v1/sendTransaction', jsonRpcEndpoint(this.deps, this.relayRpcMethods, 'relay', '/v1/sendTransaction'));
    app.get('/v1/transactions/:signature', receiptEndpoint(this.deps));
    app.get('/v1/leaders', leadersEndpoint(this.deps));
    app.post('/v1/bundles', jsonRpcEndpoint(this.deps, this.bundleMethods, 'relay', '/v1/bundles', true));
    commonRoutes(app, this.deps, () => restErrorBody(Errors.NOT_FOUND, 'Not found: the relay host serves POST /v1/submit, /v1/transactions, /v1/sendTransaction, /v1/bundles, GET /v1/transactions/{signature}, /v1/leaders'), 404);
    return app;
  }

  private listen(app: TemplatedApp, name: 'rpc' | 'relay', host: string, port: number): Promise<ListenInfo> {
    return new Promise((resolve, reject) => {
      listenExclusive(app, host, port, (sock) => {
        if (!sock) return reject(new ListenFailure({ kind: name, field: `${name}Host.port`, proto: 'tcp', host, port }, BIND_FAILED));
        this.listenSockets.push(sock);
        resolve({ name, host, port: this.uws.getSocketPort(sock) });
      });
    });
  }

  async start(): Promise<ListenInfo[]> {
    const out: ListenInfo[] = [];
    const c = this.deps.config;
    if (c.rpcHost.enabled && this.pubsub !== null) {
      const pair = await listenRpcAndPubsub(this.uws, this.buildRpcApp(), this.pubsub.buildApp(this.uws), c.rpcHost.host, c.rpcHost.port, c.jsonRpc.pubsub.port);
      this.listenSockets.push(pair.rpc, pair.pubsub);
      out.push({ name: 'rpc', host: c.rpcHost.host, port: pair.rpcPort }, { name: 'pubsub', host: c.rpcHost.host, port: pair.pubsubPort });
    } else if (c.rpcHost.enabled) {
      out.push(await this.listen(this.buildRpcApp(), 'rpc', c.rpcHost.host, c.rpcHost.port));
    }
    if (c.relayHost.enabled) out.push(await this.listen(this.buildRelayApp(), 'relay', c.relayHost.host, c.relayHost.port));
    return out;
  }

  /** Stop accepting new connections (existing ones finish their current request). */
  stopListening(): void {
    for (const s of this.listenSockets.splice(0)) this.uws.closeSocket(s);
  }
}
