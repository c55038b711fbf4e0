// The front's JSON-RPC endpoint without the network, for the front-thread micro benches (cold set-up; the request
// path it drives is the relay's real hot path): the real handler (key lookup, rate limit, envelope, method table,
// sendTransaction, intake into a real ring, response text, metrics) with stand-in uWS request/response objects that
// hand over the body at once and record the answer. Used by handler-js.bench.ts and refusal-cost.bench.ts.
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import type { CallContext } from '../../src/admission/call-context.js';
import type { MethodHandler } from '../../src/jsonrpc/dispatch.js';
import { configSchema } from '../../src/config/schema.js';
import { KeyTable } from '../../src/admission/key-table.js';
import type { FrontDeps } from '../../src/front/front-deps.js';
import { responseOptions } from '../../src/http/response.js';
import { Intake } from '../../src/admission/intake.js';
import { jsonRpcEndpoint } from '../../src/front/json-rpc-endpoint.js';
import { rpcHostMethods } from '../../src/front/method-table.js';
import { createLogger } from '../../src/log/logger.js';
import { FrontMetrics } from '../../src/metrics/front-metrics.js';
import { createRing, RingConsumer, RingProducer } from '../../src/shm/ring.js';

/** A key with a bucket no bench exhausts. */
export const KEY = '11111111-2222-4333-8444-555555555555';
/** A key whose bucket holds one token refilled every 1,000 s: every request after its first is answered 429. */
export const LIMITED_KEY = '11111111-2222-4333-8444-666666666666';
/** Well-formed, not in the key table: 401. */
export const UNKNOWN_KEY = '11111111-2222-4333-8444-777777777777';

export interface StandInFront {
  /** One POST / with this body and x-api-key through the real handler; the answer is recorded below. */
  request(body: ArrayBuffer, apiKey: string): void;
  /** Hand every published ring record back (the egress side of the ring), so the ring never fills. */
  drain(): void;
  /**
   * Let the front's parked work run, then drain(): a submission is handed to the ring and answered from setImmediate
   * (src/http/after-read.ts), as in the relay, where one turn of the event loop runs every request its reads carried.
   * A bench times a batch of requests and this, per request: timing request() alone would leave that work out.
   */
  settle(): Promise<void>;
  /**
   * Answers written, and those with a status other than 200 (uWS's default, the only one the relay leaves unwritten).
   * The last status line is kept as the front wrote it (statusText() reads it): decoding it per request would bill
   * the refusal rows for the stand-in's work.
   */
  readonly answers: { total: number; non200: number; lastStatus: string | ArrayBuffer; lastBody: string; lastBytes: Uint8Array | null };
  readonly deps: FrontDeps;
}

/** `methods`: entries put over the relay's method table (a bench's own getRecentPrioritizationFees with a cache it fills). */
export function standInFront(methods: ReadonlyMap<string, MethodHandler<CallContext>> = new Map()): StandInFront {
  const config = configSchema.parse({
    upstream: { rpcUrl: 'http://127.0.0.1:9' },
    keys: [
      { key: KEY, name: 'bench', rateLimit: { perSecond: 1e12, burst: 1e9 }, preflight: 'skip' },
      { key: LIMITED_KEY, name: 'bench-limited', rateLimit: { perSecond: 0.001, burst: 1 }, preflight: 'skip' },
    ],
  });
  const ring = createRing(4096, config.transactions.maxTransactionBytes);
  const consumer = new RingConsumer(ring);
  const intake = new Intake([new RingProducer(ring)], config.transactions.maxTransactionBytes);
  const table = new Map([...rpcHostMethods({ config, intake, upstream: null }, null), ...methods]);
  const deps: FrontDeps = {
    config,
    keys: new KeyTable(config.keys, config.routes.defaultRoutes, Date.now()),
    intake,
    upstream: null,
    metrics: new FrontMetrics(table.keys()),
    log: createLogger('silent', 'bench'),
    availableRouteMask: 1,
    addedRouteMasks: new Uint32Array(config.keys.length),
    responseOptions: responseOptions('*', 60),
    renderMetrics: () => '',
    health: () => ({ status: 'ok', reasons: [], routes: {}, upstream: { configured: false, reachable: false, lastAnswerAgoMs: null, error: null }, localnet: null, consensus: null, leaderData: null }),
    receipts: null,
  };
  const handler = jsonRpcEndpoint(deps, table, 'rpc', '/');

  let current = new ArrayBuffer(0);
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-api-key': KEY };
  // The front passes header names as pre-encoded ArrayBuffers (src/http/off-heap-bytes.ts), which uWS accepts; the
  // stand-in maps each one to its name once.
  const names = new WeakMap<ArrayBuffer, string>();
  const nameOf = (h: string | ArrayBuffer): string => {
    if (typeof h === 'string') return h;
    let s = names.get(h);
    if (s === undefined) names.set(h, (s = Buffer.from(h).toString('latin1')));
    return s;
  };
  // forEach: the maintained uWS build's header walk (src/http/request.ts walkHeaders, the Content-Length check).
  const req = {
    getHeader: (h: string | ArrayBuffer) => headers[nameOf(h)] ?? '',
    getQuery: () => undefined,
    forEach: (cb: (name: string, value: string) => void) => {
      for (const name in headers) cb(name, headers[name]);
    },
  } as unknown as HttpRequest;
  const answers: StandInFront['answers'] = { total: 0, non200: 0, lastStatus: '200 OK', lastBody: '', lastBytes: null };
  let status: string | ArrayBuffer = '200 OK';
  const res = {
    onAborted() {},
    onData(cb: (chunk: ArrayBuffer, last: boolean) => void) {
      cb(current, true);
    },
    cork(cb: () => void) {
      cb();
    },
    writeStatus(s: string | ArrayBuffer) {
      status = s;
      answers.non200++;
    },
    writeHeader() {},
    end(body: string | Uint8Array) {
      answers.total++;
      answers.lastStatus = status;
      // An answer written as bytes (src/jsonrpc/encoded-result.ts) is kept as given: decoding it would bill the bench.
      if (typeof body === 'string') {
        answers.lastBody = body;
        answers.lastBytes = null;
      } else {
        answers.lastBody = '';
        answers.lastBytes = body;
      }
      status = '200 OK';
    },
  } as unknown as HttpResponse;

  const drain = (): void => {
    let slot: number;
    while ((slot = consumer.take()) >= 0) consumer.complete(slot);
  };
  return {
    request(body, apiKey) {
      current = body;
      headers['x-api-key'] = apiKey;
      headers['content-length'] = String(body.byteLength);
      handler(res, req);
    },
    drain,
    async settle() {
      await new Promise<void>((resolve) => setImmediate(resolve));
      drain();
    },
    answers,
    deps,
  };
}

/** A status line as written to the stand-in response. */
export function statusText(s: string | ArrayBuffer): string {
  return typeof s === 'string' ? s : Buffer.from(s).toString('latin1');
}

function arrayBufferOf(text: string): ArrayBuffer {
  const b = Buffer.from(text);
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.length);
}

/**
 * `n` sendTransaction bodies (skipPreflight, base64), each with a distinct signed transfer; `truncate` bytes cut off
 * the end of transaction i (0: valid) make it undecodable ("failed to fill whole buffer").
 */
export function sendTransactionBodies(n: number, truncate: (i: number) => number = () => 0): ArrayBuffer[] {
  const payer = Keypair.generate();
  const bodies: ArrayBuffer[] = [];
  for (let i = 0; i < n; i++) {
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash: Keypair.generate().publicKey.toBase58(), lastValidBlockHeight: 1 }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 + i }),
    );
    tx.sign(payer);
    const wire = tx.serialize();
    const sent = Buffer.from(wire.subarray(0, wire.length - truncate(i))).toString('base64');
    bodies.push(arrayBufferOf(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'sendTransaction', params: [sent, { encoding: 'base64', skipPreflight: true }] })));
  }
  return bodies;
}

/** Any text as a request body. */
export function body(text: string): ArrayBuffer {
  return arrayBufferOf(text);
}
