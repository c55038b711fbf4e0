// Loopback kit for egress tests and benches (cold; never used by the relay itself): a real HTTP listener acting as
// an upstream JSON-RPC node. It records every sendTransaction it receives (the exact transaction bytes, decoded
// from base64, and the options object) and can be made slow or failing at run time — the way tests make the rpc
// route slow, instead of mocking it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedTransaction {
  readonly tx: Buffer;
  readonly options: Record<string, unknown>;
  readonly id: unknown;
}

export interface FakeRpcUpstream {
  readonly url: string;
  readonly received: ReceivedTransaction[];
  /** Delay before answering, ms (0 = answer at once). */
  delayMs: number;
  /** 'ok': JSON-RPC result; 'rpc-error': JSON-RPC error object; 'http-500': status 500 with an error body. */
  mode: 'ok' | 'rpc-error' | 'http-500';
  /** Requests currently being delayed. */
  pending(): number;
  /** TCP connections accepted so far (keep-alive checks). */
  connections(): number;
  close(): Promise<void>;
}

export async function startFakeRpcUpstream(init: Partial<Pick<FakeRpcUpstream, 'delayMs' | 'mode'>> = {}): Promise<FakeRpcUpstream> {
  const received: ReceivedTransaction[] = [];
  let pending = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let id: unknown = null;
      let answer: () => void;
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: unknown; method: string; params: [string, Record<string, unknown>] };
        id = body.id;
        if (body.method !== 'sendTransaction') throw new Error(`unexpected method ${body.method}`);
        const tx = Buffer.from(body.params[0], 'base64');
        const mode = kit.mode;
        if (mode === 'ok') received.push({ tx, options: body.params[1], id });
        answer = () => {
          if (mode === 'http-500') return send(res, 500, { jsonrpc: '2.0', id, error: { code: -32603, message: 'Internal error' } });
          if (mode === 'rpc-error') return send(res, 200, { jsonrpc: '2.0', id, error: { code: -32002, message: 'test upstream refuses' } });
          send(res, 200, { jsonrpc: '2.0', id, result: tx.subarray(1, 65).toString('hex') });
        };
      } catch (err) {
        answer = () => send(res, 200, { jsonrpc: '2.0', id, error: { code: -32700, message: String(err) } });
      }
      if (kit.delayMs <= 0) return answer();
      pending++;
      setTimeout(() => {
        pending--;
        answer();
      }, kit.delayMs);
    });
  });
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const kit: FakeRpcUpstream = {
    url: `http://127.0.0.1:${port}/`,
    received,
    delayMs: init.delayMs ?? 0,
    mode: init.mode ?? 'ok',
    pending: () => pending,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return kit;
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
