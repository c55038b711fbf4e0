// The admin listener (front thread; cold: nothing here runs on a request of the rpc or relay hosts). A second uWS App
// in the front thread, on its own port (admin.host:admin.port, loopback by default): GET / the status page, GET /events
// its server-sent event stream, GET /status.json one frame. The collector runs on a timer only while at least one
// event stream is open; with none, the relay does no work for the page at all. docs/status-page.md.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { listenExclusive } from '../native/listen-exclusive.js';
import { BIND_FAILED, ListenFailure } from '../native/listen-failure.js';
import type { Config } from '../config/schema.js';
import { isLoopbackHost } from '../config/load.js';
import type { Logger } from '../log/logger.js';
import type { Uws } from '../native/uws.js';
import type { StatusCollector } from './status-collector.js';
import { STATUS_PAGE_CSP, STATUS_PAGE_HTML } from './status-page-html.js';

/** Headers every admin answer carries: no caching, no sniffing, no referrer, no framing. */
const COMMON_HEADERS: readonly (readonly [string, string])[] = [
  ['cache-control', 'no-store'],
  ['x-content-type-options', 'nosniff'],
  ['referrer-policy', 'no-referrer'],
  ['x-frame-options', 'DENY'],
];

interface Viewer {
  readonly res: HttpResponse;
  /** uWS buffered a frame the client has not taken yet: later frames are skipped until it drains. */
  backlogged: boolean;
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/**
 * Our uWS build's `req.getTargetAuthority()` (vendor/uws-patches/0010): the authority of an absolute-form target
 * (`GET http://host:port/path`), '' for origin-form. The prebuilt builds lack it and answer absolute-form targets 505
 * before any handler runs, so there every request a handler sees is origin-form.
 */
interface TargetAuthority {
  getTargetAuthority?(): string;
}

export class AdminServer {
  private socket: us_listen_socket | null = null;
  private readonly viewers = new Set<Viewer>();
  private timer: NodeJS.Timeout | null = null;
  /** Host header values accepted on a loopback bind (a DNS-rebinding page names another host); null: any. */
  private allowedHosts: Set<string> | null = null;
  private readonly keyDigest: Buffer | null;
  private readonly cfg: Readonly<Config['admin']>;

  constructor(
    private readonly uws: Uws,
    config: Readonly<Config>,
    private readonly collector: StatusCollector,
    private readonly log: Logger,
  ) {
    this.cfg = config.admin;
    this.keyDigest = this.cfg.key === undefined ? null : digest(this.cfg.key);
  }

  /** The port listened on; a failed listen throws ListenFailure: a start failure like any listener's. */
  async start(): Promise<{ host: string; port: number }> {
    const app = this.buildApp();
    const { host, port } = this.cfg;
    const sock = await new Promise<us_listen_socket | false>((resolve) => listenExclusive(app, host, port, (s) => resolve(s)));
    if (sock === false) throw new ListenFailure({ kind: 'admin', field: 'admin.port', proto: 'tcp', host, port }, BIND_FAILED);
    this.socket = sock;
    const bound = this.uws.getSocketPort(sock);
    if (isLoopbackHost(host)) this.allowedHosts = new Set([`127.0.0.1:${bound}`, `localhost:${bound}`, `[::1]:${bound}`, `${host}:${bound}`]);
    return { host, port: bound };
  }

  /** Stop listening and end every event stream (the relay stops). */
  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    for (const v of this.viewers) v.res.cork(() => v.res.end());
    this.viewers.clear();
    if (this.socket !== null) this.uws.closeSocket(this.socket);
    this.socket = null;
  }

  get viewerCount(): number {
    return this.viewers.size;
  }

  private buildApp(): TemplatedApp {
    const app = this.uws.App();
    app.get('/', (res, req) => {
      if (!this.admit(res, req)) return;
      this.answer(res, '200 OK', 'text/html; charset=utf-8', STATUS_PAGE_HTML, [['content-security-policy', STATUS_PAGE_CSP]]);
    });
    app.get('/status.json', (res, req) => {
      if (!this.admit(res, req)) return;
      // One frame on demand (scripts, curl). Outside a viewer's stream it has no window: it covers 0 ms.
      const json = JSON.stringify(this.collector.frame());
      if (this.viewers.size === 0) this.collector.reset();
      this.answer(res, '200 OK', 'application/json', json);
    });
    app.get('/events', (res, req) => {
      if (!this.admit(res, req)) return;
      if (this.viewers.size >= this.cfg.maxViewers) return this.answer(res, '503 Service Unavailable', 'text/plain', `at most ${this.cfg.maxViewers} status page viewers at once (admin.maxViewers)\n`);
      this.openStream(res);
    });
    app.any('/*', (res, req) => {
      if (!this.admit(res, req)) return;
      this.answer(res, '404 Not Found', 'text/plain', 'the admin listener serves GET /, /events and /status.json\n');
    });
    return app;
  }

  /** Host check on loopback (DNS rebinding), then the admin key when one is configured. False: already answered. */
  private admit(res: HttpResponse, req: HttpRequest): boolean {
    if (this.allowedHosts !== null && !this.addressedHere(req, this.allowedHosts)) {
      this.answer(res, '403 Forbidden', 'text/plain', 'the admin listener answers requests addressed to its loopback address only\n');
      return false;
    }
    if (this.keyDigest === null) return true;
    const auth = req.getHeader('authorization').trim();
    const ok = auth.length > 7 && auth.slice(0, 7).toLowerCase() === 'bearer ' && timingSafeEqual(digest(auth.slice(7).trim()), this.keyDigest);
    if (!ok) this.answer(res, '401 Unauthorized', 'text/plain', 'the admin listener needs Authorization: Bearer <admin.key>\n', [['www-authenticate', 'Bearer realm="slotrelay admin"']]);
    return ok;
  }

  /**
   * Host names this listener, and so does an absolute-form target's authority: RFC 9112 3.2.2 makes the target's
   * authority the request's host, so `GET http://evil.example/status.json` with our Host is addressed elsewhere. Both
   * must name it (a client sends Host identical to the authority, RFC 9112 3.2); userinfo never matches.
   */
  private addressedHere(req: HttpRequest, allowed: ReadonlySet<string>): boolean {
    if (!allowed.has(req.getHeader('host').toLowerCase())) return false;
    const authority = (req as unknown as TargetAuthority).getTargetAuthority?.() ?? '';
    return authority === '' || allowed.has(authority.toLowerCase());
  }

  private answer(res: HttpResponse, status: string, type: string, body: string, extra: readonly (readonly [string, string])[] = []): void {
    res.cork(() => {
      res.writeStatus(status).writeHeader('content-type', type);
      for (const [k, v] of COMMON_HEADERS) res.writeHeader(k, v);
      for (const [k, v] of extra) res.writeHeader(k, v);
      res.end(body);
    });
  }

  private openStream(res: HttpResponse): void {
    const v: Viewer = { res, backlogged: false };
    res.onAborted(() => this.drop(v));
    res.onWritable(() => {
      v.backlogged = false;
      return true;
    });
    this.viewers.add(v);
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('content-type', 'text/event-stream');
      for (const [k, val] of COMMON_HEADERS) res.writeHeader(k, val);
      // A reconnect after 2 s if the stream breaks (EventSource retries on its own).
      res.write('retry: 2000\n\n');
    });
    if (this.timer === null) {
      this.timer = setInterval(() => this.tick(), this.cfg.intervalMs);
      this.log.info({ event: 'status_page_open' }, 'status page opened: gathering its figures');
    }
    this.tick();
  }

  private drop(v: Viewer): void {
    this.viewers.delete(v);
    if (this.viewers.size > 0 || this.timer === null) return;
    clearInterval(this.timer);
    this.timer = null;
    this.collector.reset();
    this.log.info({ event: 'status_page_closed' }, 'status page closed: no figures gathered until it opens again');
  }

  private tick(): void {
    if (this.viewers.size === 0) return;
    const t0 = process.hrtime.bigint();
    // The previous tick's whole cost on this thread (gather, stringify, writes): shown on the page, read by the bench.
    const text = 'data: ' + JSON.stringify({ ...this.collector.frame(), lastTickUs: this.lastTickUs }) + '\n\n';
    for (const v of this.viewers) {
      if (v.backlogged) continue;
      v.res.cork(() => {
        if (!v.res.write(text)) v.backlogged = true;
      });
    }
    this.lastTickUs = Number(process.hrtime.bigint() - t0) / 1000;
  }

  /** Microseconds the last tick took on the front thread (null before the first). */
  private lastTickUs: number | null = null;
}
