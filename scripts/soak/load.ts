// Steady submissions for the soak (driver process; warm: a few hundred per second). Route sets covering every route
// and every submission path are interleaved in a fixed weighted order at a fixed rate, each a fresh signed transfer.
// Counted client-side, per route set: accepted (HTTP 200 with accepted:true + signature, or a JSON-RPC result), and
// for each accepted transaction every route it goes to (the `routes` of a relay-path answer, which includes the routes
// the relay adds; for JSON-RPC, the key's default routes plus those additions); refused by reason (503
// routes_unavailable while no route of the set can deliver is a correct answer, counted like any other); transport
// failures; answers of an unexpected shape.
import type http from 'node:http';
import { isTransportFailure, keepAliveAgent, request, type HttpAnswer, type TransportFailure } from './http.js';
import type { TransferSigner } from './transactions.js';

export const ROUTES = ['rpc', 'direct', 'jito', 'static'] as const;
export type RouteName = (typeof ROUTES)[number];

/** submit: POST /v1/submit; raw: POST /v1/transactions (octet-stream); rpc-host: sendTransaction on POST /; relay-rpc: POST /v1/sendTransaction. */
export type SubmitPath = 'submit' | 'raw' | 'rpc-host' | 'relay-rpc';

export interface RouteSetSpec {
  readonly name: string;
  readonly path: SubmitPath;
  /** Routes named in a /v1/submit request; null = the key's default routes. */
  readonly routes: readonly RouteName[] | null;
  readonly weight: number;
}

export const ROUTE_SETS: readonly RouteSetSpec[] = [
  { name: 'submit[rpc]', path: 'submit', routes: ['rpc'], weight: 2 },
  { name: 'submit[direct]', path: 'submit', routes: ['direct'], weight: 1 },
  { name: 'submit[jito]', path: 'submit', routes: ['jito'], weight: 1 },
  { name: 'submit[static]', path: 'submit', routes: ['static'], weight: 1 },
  { name: 'submit[rpc,direct,jito,static]', path: 'submit', routes: ['rpc', 'direct', 'jito', 'static'], weight: 2 },
  { name: 'submit[rpc,jito]', path: 'submit', routes: ['rpc', 'jito'], weight: 1 },
  { name: 'submit[default]', path: 'submit', routes: null, weight: 1 },
  { name: 'transactions(raw)', path: 'raw', routes: null, weight: 1 },
  { name: 'sendTransaction(rpc host)', path: 'rpc-host', routes: null, weight: 2 },
  { name: 'sendTransaction(/v1/sendTransaction)', path: 'relay-rpc', routes: null, weight: 1 },
];

/** Every REBROADCAST_EVERY-th submission asks for one rebroadcast (maxRetries 1), the others for none. */
const REBROADCAST_EVERY = 10;
const REQUEST_TIMEOUT_MS = 15_000;
const TICK_MS = 10;
/** Latency buckets (ms, upper bounds) for accepted answers. */
const LATENCY_BOUNDS_MS = [0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000, Infinity] as const;
/** Timeline resolution. */
export const TIMELINE_BUCKET_S = 5;

export interface SetStats {
  issued: number;
  accepted: number;
  readonly refused: Record<string, number>;
  readonly transport: Record<string, number>;
  readonly unexpected: Record<string, number>;
  /** Accepted answers whose `routes` differ from the request's routes plus the relay's additions. */
  routeMismatch: number;
  readonly latencyBuckets: number[];
}

export interface TimelineBucket {
  readonly t: number;
  accepted: number;
  readonly refused: Record<string, number>;
  transport: number;
}

export interface LoadOptions {
  readonly relayUrl: string;
  readonly rpcUrl: string;
  readonly apiKey: string;
  readonly ratePerSecond: number;
  readonly maxInFlight: number;
  readonly signer: TransferSigner;
  /** Where a JSON-RPC or default-route submission goes (the key's default routes plus the relay's additions). */
  readonly defaultRoutes: readonly RouteName[];
  /** Routes the relay adds to every transaction of this key (static with routes.static.everyTransaction). */
  readonly addedRoutes: readonly RouteName[];
}

export class Load {
  readonly sets = new Map<string, SetStats>();
  readonly acceptedByRoute: Record<RouteName, number> = { rpc: 0, direct: 0, jito: 0, static: 0 };
  /**
   * Routes a REST answer left out of what the route set asked for (admission by delay drops a route over its target
   * sojourn from a request that has another: docs/relay-api.md "Admission by delay"). A JSON-RPC answer carries no
   * routes, so its sheds are the relay's shed counter minus these (result.ts).
   */
  readonly restShedByRoute: Record<RouteName, number> = { rpc: 0, direct: 0, jito: 0, static: 0 };
  readonly timeline: TimelineBucket[] = [];
  /** Submissions not issued because maxInFlight requests were outstanding, or the driver's loop fell behind. */
  skippedInFlight = 0;
  skippedBehind = 0;
  inFlight = 0;
  private readonly agent: http.Agent;
  private readonly order: number[] = [];
  private issuedTotal = 0;
  private startedAt = 0;
  private timer: NodeJS.Timeout | null = null;
  private stopAt = 0;
  private finish: (() => void) | null = null;

  constructor(private readonly opts: LoadOptions) {
    this.agent = keepAliveAgent(Math.max(8, Math.min(128, opts.maxInFlight)));
    ROUTE_SETS.forEach((s, i) => {
      for (let w = 0; w < s.weight; w++) this.order.push(i);
      this.sets.set(s.name, { issued: 0, accepted: 0, refused: {}, transport: {}, unexpected: {}, routeMismatch: 0, latencyBuckets: LATENCY_BOUNDS_MS.map(() => 0) });
    });
    // Interleave: 0,4,8,.. then 1,5,9,... so no route set comes in a run.
    const stride = 5;
    const o = this.order.slice();
    this.order.length = 0;
    for (let k = 0; k < stride; k++) for (let j = k; j < o.length; j += stride) this.order.push(o[j]);
  }

  /** Submit for `seconds`; resolves when the time is up (answers may still be in flight: see settle()). */
  run(seconds: number): Promise<void> {
    this.startedAt = Date.now();
    this.stopAt = this.startedAt + seconds * 1000;
    // A driver starved of CPU for a while (a shared box) catches up by at most half a second of submissions at once;
    // anything older is skipped and counted, not sent as one burst.
    const perTickCap = Math.max(1, Math.ceil(this.opts.ratePerSecond / 2));
    return new Promise((resolve) => {
      this.finish = resolve;
      this.timer = setInterval(() => {
        const now = Date.now();
        if (now >= this.stopAt) return this.stop();
        const due = Math.floor(((now - this.startedAt) / 1000) * this.opts.ratePerSecond) - this.issuedTotal;
        const n = Math.min(due, perTickCap);
        if (due > n) {
          this.skippedBehind += due - n;
          this.issuedTotal += due - n;
        }
        for (let i = 0; i < n; i++) {
          this.issuedTotal++;
          if (this.inFlight >= this.opts.maxInFlight) this.skippedInFlight++;
          else this.issue();
        }
      }, TICK_MS);
    });
  }

  /** End the submissions now (also used on error paths). */
  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    const f = this.finish;
    this.finish = null;
    f?.();
  }

  /** Wait until no request is outstanding (bounded). */
  async settle(timeoutMs: number): Promise<boolean> {
    const until = Date.now() + timeoutMs;
    while (this.inFlight > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    return this.inFlight === 0;
  }

  close(): void {
    this.stop();
    this.agent.destroy();
  }

  private bucket(): TimelineBucket {
    const t = Math.floor((Date.now() - this.startedAt) / 1000 / TIMELINE_BUCKET_S) * TIMELINE_BUCKET_S;
    let b = this.timeline[this.timeline.length - 1];
    if (b === undefined || b.t !== t) {
      b = { t, accepted: 0, refused: {}, transport: 0 };
      this.timeline.push(b);
    }
    return b;
  }

  private issue(): void {
    const spec = ROUTE_SETS[this.order[this.issuedTotal % this.order.length]];
    const stats = this.sets.get(spec.name)!;
    const tx = this.opts.signer.next();
    const maxRetries = this.issuedTotal % REBROADCAST_EVERY === 0 ? 1 : 0;
    const key = { 'x-api-key': this.opts.apiKey };
    let sent: Promise<HttpAnswer | TransportFailure>;
    switch (spec.path) {
      case 'submit': {
        const body: Record<string, unknown> = { transaction: tx.base64, maxRetries };
        if (spec.routes !== null) body.routes = spec.routes;
        sent = request(this.agent, this.opts.relayUrl, 'POST', '/v1/submit', { ...key, 'content-type': 'application/json' }, JSON.stringify(body), REQUEST_TIMEOUT_MS);
        break;
      }
      case 'raw':
        sent = request(this.agent, this.opts.relayUrl, 'POST', `/v1/transactions?maxRetries=${maxRetries}`, { ...key, 'content-type': 'application/octet-stream' }, tx.bytes, REQUEST_TIMEOUT_MS);
        break;
      case 'rpc-host':
      case 'relay-rpc': {
        const body = JSON.stringify({
          jsonrpc: '2.0',
          id: this.issuedTotal,
          method: 'sendTransaction',
          params: [tx.base64, { encoding: 'base64', skipPreflight: true, maxRetries }],
        });
        const [base, path] = spec.path === 'rpc-host' ? [this.opts.rpcUrl, '/'] : [this.opts.relayUrl, '/v1/sendTransaction'];
        sent = request(this.agent, base, 'POST', path, { ...key, 'content-type': 'application/json' }, body, REQUEST_TIMEOUT_MS);
        break;
      }
    }
    stats.issued++;
    this.inFlight++;
    const t0 = performance.now();
    void sent.then((answer) => {
      this.inFlight--;
      const b = this.bucket();
      if (isTransportFailure(answer)) {
        bump(stats.transport, answer.transport);
        b.transport++;
        return;
      }
      const verdict = spec.path === 'submit' || spec.path === 'raw' ? this.restVerdict(spec, answer) : this.rpcVerdict(answer);
      if (verdict.kind === 'accepted') {
        stats.accepted++;
        b.accepted++;
        const ms = performance.now() - t0;
        stats.latencyBuckets[LATENCY_BOUNDS_MS.findIndex((bound) => ms <= bound)]++;
        for (const r of verdict.routes) this.acceptedByRoute[r]++;
        if (verdict.mismatch) stats.routeMismatch++;
      } else if (verdict.kind === 'refused') {
        bump(stats.refused, verdict.reason);
        bump(b.refused, verdict.reason);
      } else {
        bump(stats.unexpected, verdict.what);
      }
    });
  }

  /** Where a /v1/submit or /v1/transactions transaction goes, from the answer; checked against what we expect. */
  private restVerdict(spec: RouteSetSpec, a: HttpAnswer): Verdict {
    let body: { accepted?: unknown; signature?: unknown; routes?: unknown; error?: { reason?: unknown } };
    try {
      body = JSON.parse(a.body) as typeof body;
    } catch {
      return { kind: 'unexpected', what: `http_${a.status}_not_json` };
    }
    if (a.status === 200 && body.accepted === true && typeof body.signature === 'string') {
      const expected = this.expectedRoutes(spec.routes);
      if (!Array.isArray(body.routes)) return { kind: 'accepted', routes: expected, mismatch: true };
      const routes = (body.routes as unknown[]).filter((r): r is RouteName => (ROUTES as readonly unknown[]).includes(r));
      const shed = expected.filter((r) => !routes.includes(r));
      // Fewer routes than asked, none unexpected: routes shed by admission by delay, not a mismatch.
      const onlyShed = routes.length === body.routes.length && routes.every((r) => expected.includes(r)) && shed.length > 0;
      if (onlyShed) for (const r of shed) this.restShedByRoute[r]++;
      const mismatch = !onlyShed && (routes.length !== body.routes.length || !sameSet(routes, expected));
      return { kind: 'accepted', routes, mismatch };
    }
    if (body.accepted === false && typeof body.error?.reason === 'string') return { kind: 'refused', reason: `${a.status} ${body.error.reason}` };
    return { kind: 'unexpected', what: `http_${a.status}` };
  }

  private rpcVerdict(a: HttpAnswer): Verdict {
    let body: { result?: unknown; error?: { code?: unknown; data?: { reason?: unknown } } };
    try {
      body = JSON.parse(a.body) as typeof body;
    } catch {
      return { kind: 'unexpected', what: `http_${a.status}_not_json` };
    }
    if (a.status === 200 && typeof body.result === 'string') return { kind: 'accepted', routes: this.expectedRoutes(null), mismatch: false };
    if (body.error !== undefined) {
      const reason = typeof body.error.data?.reason === 'string' ? body.error.data.reason : `code_${String(body.error.code)}`;
      return { kind: 'refused', reason: `${a.status} ${reason}` };
    }
    return { kind: 'unexpected', what: `http_${a.status}` };
  }

  private expectedRoutes(requested: readonly RouteName[] | null): RouteName[] {
    const set = new Set<RouteName>(requested ?? this.opts.defaultRoutes);
    for (const r of this.opts.addedRoutes) set.add(r);
    return ROUTES.filter((r) => set.has(r));
  }
}

type Verdict =
  | { readonly kind: 'accepted'; readonly routes: readonly RouteName[]; readonly mismatch: boolean }
  | { readonly kind: 'refused'; readonly reason: string }
  | { readonly kind: 'unexpected'; readonly what: string };

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

function bump(m: Record<string, number>, key: string): void {
  m[key] = (m[key] ?? 0) + 1;
}

export const LATENCY_BUCKET_LABELS: readonly string[] = LATENCY_BOUNDS_MS.map((b) => (b === Infinity ? '>5000ms' : `<=${b}ms`));
