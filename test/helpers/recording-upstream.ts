// A real JSON-RPC HTTP listener standing in for an upstream RPC node: it records every call (with the decoded
// transaction bytes of sendTransaction / simulateTransaction) and answers simulateTransaction with whatever the test
// sets. `delayMs` holds every answer back (used to fill the rings).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedCall {
  readonly method: string;
  readonly params: unknown[];
  /** Decoded transaction bytes for send/simulate calls. */
  readonly tx?: Buffer;
}

export interface RecordingUpstream {
  readonly url: string;
  readonly calls: RecordedCall[];
  simulation: { err: unknown; logs: string[]; unitsConsumed: number; returnData?: unknown };
  delayMs: number;
  /** Answer sendTransaction with this JSON-RPC error instead of a signature. */
  sendError: { code: number; message: string } | null;
  sent(): Buffer[];
  waitForSends(n: number, timeoutMs?: number): Promise<Buffer[]>;
  close(): Promise<void>;
}

/** `port` 0 = ephemeral; a given port brings an upstream back where a relay already points. */
export async function startRecordingUpstream(port = 0): Promise<RecordingUpstream> {
  const calls: RecordedCall[] = [];
  const up: RecordingUpstream = {
    url: '',
    calls,
    simulation: { err: null, logs: ['Program 11111111111111111111111111111111 invoke [1]', 'Program 11111111111111111111111111111111 success'], unitsConsumed: 150 },
    delayMs: 0,
    sendError: null,
    sent: () => calls.filter((c) => c.method === 'sendTransaction').map((c) => c.tx!),
    waitForSends: async (n, timeoutMs = 10_000) => {
      const until = Date.now() + timeoutMs;
      while (up.sent().length < n) {
        if (Date.now() > until) throw new Error(`upstream saw ${up.sent().length} sendTransaction calls, expected ${n}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return up.sent();
    },
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections(); // a dead upstream: kept-alive sockets go too
      }),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: unknown; method: string; params: unknown[] };
      const txText = body.params?.[0];
      const enc = (body.params?.[1] as { encoding?: string } | undefined)?.encoding;
      const tx = typeof txText === 'string' && enc === 'base64' ? Buffer.from(txText, 'base64') : undefined;
      calls.push({ method: body.method, params: body.params, tx });
      let answer: unknown;
      if (body.method === 'simulateTransaction') {
        answer = { result: { context: { slot: 42, apiVersion: '2.2.0' }, value: { accounts: null, returnData: null, ...up.simulation } } };
      } else if (body.method === 'sendTransaction') {
        answer = up.sendError ? { error: up.sendError } : { result: 'sig' };
      } else {
        answer = { error: { code: -32601, message: 'Method not found' } };
      }
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, ...(answer as object) }));
      }, up.delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  (up as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return up;
}
