// A real HTTP listener mimicking a Jito block engine's transaction endpoint for tests:
// POST /api/v1/transactions[?bundleOnly=true] with JSON-RPC sendTransaction [base64, {encoding: "base64"}].
// Records every request (path, query, x-jito-auth header, decoded transaction bytes) and answers either the first
// signature (base58, like the block engine), HTTP 429 with -32097 (its per-IP rate limit), a JSON-RPC error, or
// nothing for `delayMs`. Tests switch `mode` at run time.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import bs58 from 'bs58';
import { waitFor } from './wait-for.js';

export interface JitoRequest {
  readonly path: string;
  readonly bundleOnly: string | null;
  readonly auth: string | undefined;
  readonly method: string;
  readonly params: unknown[];
  readonly tx?: Buffer;
}

export interface JitoBlockEngine {
  /** Base URL (routes.jito.url). */
  readonly url: string;
  readonly requests: JitoRequest[];
  /** 'ok': result = signature; 'rate-limited': HTTP 429 + -32097; 'error': HTTP 200 + -32602 error. */
  mode: 'ok' | 'rate-limited' | 'error';
  delayMs: number;
  /** When > 0: every n-th sendTransaction (n, 2n, ...) is answered 429 / -32097 whatever the mode. */
  rateLimitEvery: number;
  /** Transactions received on sendTransaction, in arrival order. */
  sent(): Buffer[];
  waitForSends(n: number, timeoutMs?: number): Promise<Buffer[]>;
  close(): Promise<void>;
}

export async function startJitoBlockEngine(): Promise<JitoBlockEngine> {
  const requests: JitoRequest[] = [];
  const engine: JitoBlockEngine = {
    url: '',
    requests,
    mode: 'ok',
    delayMs: 0,
    rateLimitEvery: 0,
    sent: () => requests.filter((r) => r.method === 'sendTransaction' && r.tx !== undefined).map((r) => r.tx!),
    waitForSends: async (n, timeoutMs = 10_000) => {
      await waitFor(`${n} sendTransaction calls at the block engine`, () => engine.sent().length, (k) => k >= n, timeoutMs, 10);
      return engine.sent();
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      let body: { id?: unknown; method?: string; params?: unknown[] } = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        /* recorded with method '' */
      }
      const params = Array.isArray(body.params) ? body.params : [];
      const enc = (params[1] as { encoding?: string } | undefined)?.encoding;
      // The block engine's default encoding is base58, like Agave's.
      const tx = typeof params[0] === 'string' ? (enc === 'base64' ? Buffer.from(params[0], 'base64') : Buffer.from(bs58.decode(params[0]))) : undefined;
      const auth = req.headers['x-jito-auth'];
      requests.push({
        path: url.pathname,
        bundleOnly: url.searchParams.get('bundleOnly'),
        auth: Array.isArray(auth) ? auth[0] : auth,
        method: body.method ?? '',
        params,
        tx,
      });
      const answer = (): void => {
        if (url.pathname !== '/api/v1/transactions') {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end('{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":null}');
          return;
        }
        const nth = requests.length;
        if (engine.mode === 'rate-limited' || (engine.rateLimitEvery > 0 && nth % engine.rateLimitEvery === 0)) {
          res.writeHead(429, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32097, message: 'Rate limit exceeded. Limit: 1 per second for txn requests' }, id: body.id ?? null }));
          return;
        }
        if (engine.mode === 'error' || tx === undefined || tx.length < 65) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32602, message: 'invalid transaction' }, id: body.id ?? null }));
          return;
        }
        // The first signature, after the compact-u16 signature count (1 byte for < 128 signatures).
        const signature = bs58.encode(tx.subarray(1, 65));
        res.writeHead(200, { 'content-type': 'application/json', 'x-bundle-id': 'b'.repeat(64) });
        res.end(JSON.stringify({ jsonrpc: '2.0', result: signature, id: body.id ?? null }));
      };
      if (engine.delayMs > 0) setTimeout(answer, engine.delayMs);
      else answer();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  (engine as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return engine;
}
