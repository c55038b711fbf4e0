// The one fake upstream JSON-RPC node of the tests and the rpc-route bench (cold; never loaded by the relay): a real
// HTTP listener on 127.0.0.1 that records every call (the decoded transaction bytes of sendTransaction /
// simulateTransaction sent base64), answers simulateTransaction with whatever the test sets, and can be made slow or
// failing at run time — the way tests make an upstream or the rpc route slow, instead of mocking it.
// Also emitted to dist/test/helpers/ (with wait-for.ts) because bench/egress/rpc-route.bench.ts imports it: tsc follows
// imports past tsconfig.json's `exclude: ["test"]`, which would drop the file from an "include" entry anyway.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import bs58 from 'bs58';
import { waitFor } from './wait-for.js';

export interface RecordedCall {
  readonly method: string;
  readonly params: unknown[];
  /** Decoded transaction bytes for send/simulate calls made with `encoding: 'base64'`. */
  readonly tx?: Buffer;
}

/** A sendTransaction the upstream took (answered with a result). */
export interface ReceivedTransaction {
  readonly tx: Buffer;
  readonly options: Record<string, unknown>;
  readonly id: unknown;
}

/** How sendTransaction is answered: a result; a JSON-RPC error object; status 500 with an error body. */
export type SendMode = 'ok' | 'rpc-error' | 'http-500';

export interface FakeRpcUpstream {
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  readonly url: string;
  readonly port: number;
  /** Every call, in arrival order, whatever the answer. */
  readonly calls: RecordedCall[];
  /** The sendTransaction calls answered with a result (mode 'ok', no sendError). */
  readonly received: ReceivedTransaction[];
  simulation: { err: unknown; logs: string[]; unitsConsumed: number; returnData?: unknown };
  /** Delay before every answer, ms (0 = answer at once). */
  delayMs: number;
  mode: SendMode;
  /** Answer sendTransaction with this JSON-RPC error instead of a signature (mode 'ok' only). */
  sendError: { code: number; message: string } | null;
  /**
   * Set to a map, getSignatureStatuses answers from it (Agave's status object per signature; absent = null), at
   * context slot `statusSlot`; null (the default) answers it -32601 like every method the fake does not serve.
   */
  statuses: Map<string, { slot: number; confirmations: number | null; err: unknown; confirmationStatus: string }> | null;
  statusSlot: number;
  /** Requests currently being delayed. */
  pending(): number;
  /** TCP connections accepted so far (keep-alive checks). */
  connections(): number;
  /** Transaction bytes of every sendTransaction call (answered or not). */
  sent(): Buffer[];
  waitForSends(n: number, timeoutMs?: number): Promise<Buffer[]>;
  /** Closes the listener and drops kept-alive sockets (a dead upstream). */
  close(): Promise<void>;
}

export interface FakeRpcUpstreamOptions {
  /** 0 = ephemeral; a given port brings an upstream back where a relay already points. */
  readonly port?: number;
  readonly delayMs?: number;
  readonly mode?: SendMode;
}

const SIM_LOGS = ['Program 11111111111111111111111111111111 invoke [1]', 'Program 11111111111111111111111111111111 success'];

export async function startFakeRpcUpstream(opts: FakeRpcUpstreamOptions = {}): Promise<FakeRpcUpstream> {
  const calls: RecordedCall[] = [];
  const received: ReceivedTransaction[] = [];
  let pending = 0;
  let connections = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let status = 200;
      let id: unknown = null;
      let answer: object;
      function respond(method: string, params: unknown[], tx: Buffer | undefined, options: Record<string, unknown>, reqId: unknown): object {
        if (method === 'simulateTransaction') {
          return { result: { context: { slot: 42, apiVersion: '2.2.0' }, value: { accounts: null, returnData: null, ...up.simulation } } };
        }
        if (method === 'getSignatureStatuses' && up.statuses !== null) {
          const statuses = up.statuses;
          const sigs = Array.isArray(params[0]) ? (params[0] as unknown[]) : [];
          return { result: { context: { slot: up.statusSlot, apiVersion: '2.2.0' }, value: sigs.map((s) => (typeof s === 'string' ? (statuses.get(s) ?? null) : null)) } };
        }
        if (method !== 'sendTransaction') return { error: { code: -32601, message: 'Method not found' } };
        if (up.mode === 'http-500') {
          status = 500;
          return { error: { code: -32603, message: 'Internal error' } };
        }
        if (up.mode === 'rpc-error') return { error: { code: -32002, message: 'test upstream refuses' } };
        if (up.sendError !== null) return { error: up.sendError };
        if (tx !== undefined) received.push({ tx, options, id: reqId });
        return { result: tx !== undefined && tx.length >= 65 ? bs58.encode(tx.subarray(1, 65)) : 'sig' };
      }
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: unknown; method: string; params?: unknown[] };
        id = body.id;
        const params = Array.isArray(body.params) ? body.params : [];
        const options = (params[1] ?? {}) as Record<string, unknown>;
        const tx = typeof params[0] === 'string' && options.encoding === 'base64' ? Buffer.from(params[0], 'base64') : undefined;
        calls.push({ method: body.method, params, tx });
        answer = respond(body.method, params, tx, options, id);
      } catch (err) {
        answer = { error: { code: -32700, message: String(err) } };
      }
      const reply = (): void => send(res, status, { jsonrpc: '2.0', id, ...answer });
      if (up.delayMs <= 0) return reply();
      pending++;
      setTimeout(() => {
        pending--;
        reply();
      }, up.delayMs);
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(opts.port ?? 0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  const up: FakeRpcUpstream = {
    url: `http://127.0.0.1:${port}`,
    port,
    calls,
    received,
    simulation: { err: null, logs: [...SIM_LOGS], unitsConsumed: 150 },
    delayMs: opts.delayMs ?? 0,
    mode: opts.mode ?? 'ok',
    sendError: null,
    statuses: null,
    statusSlot: 1,
    pending: () => pending,
    connections: () => connections,
    sent: () => calls.filter((c) => c.method === 'sendTransaction' && c.tx !== undefined).map((c) => c.tx!),
    waitForSends: async (n, timeoutMs = 10_000) => {
      await waitFor(`${n} sendTransaction calls at the upstream`, () => up.sent().length, (k) => k >= n, timeoutMs, 10);
      return up.sent();
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
  return up;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
