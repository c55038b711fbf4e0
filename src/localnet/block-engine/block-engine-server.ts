// The localnet's Jito-compatible block engine over HTTP (localnet process, main thread; cold set-up, handlers per
// request): POST /api/v1/bundles and POST /api/v1/transactions, JSON-RPC bodies, on its own port. Like Jito's, it
// limits requests per client IP: over `rateLimitPerSecond` (a token bucket per IP, burst = one second's worth) a
// request gets HTTP 429 with JSON-RPC code -32097, which is what the relay must translate for its clients. A
// request carrying a configured uuid (x-jito-auth header or ?uuid=, Jito's two ways) is not limited. Bodies over
// 64 KiB get 413; other paths 404; other methods 405. node:http, not uWS: this is a test bench, not a hot path.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Errors } from '../../errors/registry.js';
import { dispatchJsonRpc, type MethodTable } from '../../jsonrpc/dispatch.js';
import { parseJsonRpcBody } from '../../jsonrpc/envelope.js';
import { errorJson } from '../../jsonrpc/response.js';
import { bundleMethods, transactionMethods, type BlockEngineContext } from './block-engine-methods.js';

/** Jito's JSON-RPC code for "rate limited" (with HTTP 429). */
export const JITO_RATE_LIMITED_CODE = -32097;
const MAX_BODY_BYTES = 64 * 1024;
const MAX_BATCH = 16;
const BUCKETS_MAX = 10_000;

export interface BlockEngineServerOptions {
  readonly host: string;
  /** 0 = ephemeral. */
  readonly port: number;
  /** Requests per second per client IP; 0 = unlimited. */
  readonly rateLimitPerSecond: number;
  /** uuids that are not rate-limited (x-jito-auth or ?uuid=). */
  readonly authUuids?: readonly string[];
  readonly onInternalError?: (err: unknown, method: string) => void;
}

interface Bucket {
  tokens: number;
  atMs: number;
}

export class BlockEngineServer {
  private readonly server: Server;
  private readonly buckets = new Map<string, Bucket>();
  private readonly uuids: ReadonlySet<string>;
  /** Requests answered 429 (tests). */
  rateLimited = 0;
  /** Rate per IP; tests may change it at run time. */
  rateLimitPerSecond: number;

  constructor(
    private readonly ctx: BlockEngineContext,
    private readonly opts: BlockEngineServerOptions,
  ) {
    this.rateLimitPerSecond = opts.rateLimitPerSecond;
    this.uuids = new Set(opts.authUuids ?? []);
    this.server = createServer((req, res) => this.handle(req, res));
    this.server.keepAliveTimeout = 60_000;
  }

  get url(): string {
    const a = this.server.address() as AddressInfo;
    return `http://${this.opts.host}:${a.port}`;
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port, this.opts.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }

  private admitted(req: IncomingMessage, url: URL): boolean {
    if (this.rateLimitPerSecond <= 0) return true;
    const auth = req.headers['x-jito-auth'];
    if ((typeof auth === 'string' && this.uuids.has(auth)) || this.uuids.has(url.searchParams.get('uuid') ?? '')) return true;
    const ip = req.socket.remoteAddress ?? '';
    const now = Date.now();
    let b = this.buckets.get(ip);
    if (b === undefined) {
      if (this.buckets.size >= BUCKETS_MAX) this.buckets.clear();
      b = { tokens: this.rateLimitPerSecond, atMs: now };
      this.buckets.set(ip, b);
    }
    b.tokens = Math.min(this.rateLimitPerSecond, b.tokens + ((now - b.atMs) / 1000) * this.rateLimitPerSecond);
    b.atMs = now;
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const table: MethodTable<BlockEngineContext> | undefined =
      url.pathname === '/api/v1/bundles' ? bundleMethods : url.pathname === '/api/v1/transactions' ? transactionMethods : undefined;
    if (table === undefined) return send(res, 404, errorJson(null, Errors.NOT_FOUND.rpcCode, 'Not found: the block engine serves POST /api/v1/bundles and /api/v1/transactions'));
    if (req.method !== 'POST') return send(res, 405, errorJson(null, Errors.METHOD_NOT_ALLOWED.rpcCode, Errors.METHOD_NOT_ALLOWED.message));
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        send(res, 413, errorJson(null, Errors.BODY_TOO_LARGE.rpcCode, Errors.BODY_TOO_LARGE.message), true);
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (res.headersSent) return;
      const parsed = parseJsonRpcBody(Buffer.concat(chunks).toString('utf8'), MAX_BATCH);
      if (!this.admitted(req, url)) {
        this.rateLimited++;
        const id = parsed.kind === 'single' ? parsed.element.id : null;
        return send(res, 429, errorJson(id, JITO_RATE_LIMITED_CODE, 'Network congested. Endpoint is globally rate limited.'));
      }
      const out = dispatchJsonRpc(parsed, table, this.ctx, { onInternalError: (err, call) => this.opts.onInternalError?.(err, call.method) });
      if (out === null || typeof out === 'string') return send(res, 200, out ?? '');
      out.then(
        (text) => send(res, 200, text ?? ''),
        () => send(res, 200, errorJson(null, Errors.INTERNAL_ERROR.rpcCode, Errors.INTERNAL_ERROR.message)),
      );
    });
  }
}

function send(res: ServerResponse, status: number, body: string, close = false): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json', ...(close ? { connection: 'close' } : {}) });
  res.end(body);
}
