// A stand-in peer for the soak run, as its own process so a fault can kill it outright (SIGKILL) and a restart
// binds the same port again (cold: set-up; warm per transaction, a few hundred per second).
//   node dist/scripts/soak/stand-in.js --kind jito --port 0      a block engine: POST /api/v1/transactions answers
//                                                              the first signature, like the Jito block engine
//   node dist/scripts/soak/stand-in.js --kind static --port 0    a counting QUIC TPU listener (ALPN solana-tpu)
// Prints {"event":"stand_in_ready","kind","port"} once listening, then {"event":"stand_in_stats","received"} every
// second (transactions received by this process), on 127.0.0.1 only. SIGTERM closes it and exits 0; so does the end
// of its stdin (the soak driver that spawned it is gone), so no stand-in outlives its run.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { base58Encode } from '../../src/quic/index.js';
import { TpuListener } from '../../src/localnet/tpu-listener.js';

/** A sendTransaction body: one base64 transaction (<= 1232 bytes) plus the envelope; more is refused. */
const MAX_BODY_BYTES = 8192;
const STATS_INTERVAL_MS = 1000;

type Kind = 'jito' | 'static';

function answer(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(body);
}

/** The block engine's sendTransaction: result = the transaction's first signature (base58). */
function handleJito(req: IncomingMessage, res: ServerResponse, count: () => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (size > MAX_BODY_BYTES) {
      req.destroy();
      return;
    }
    chunks.push(c);
  });
  req.on('end', () => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'POST' || path !== '/api/v1/transactions') {
      answer(res, 404, '{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":null}');
      return;
    }
    let body: { id?: unknown; method?: unknown; params?: unknown } = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
    } catch {
      answer(res, 400, '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}');
      return;
    }
    const id = JSON.stringify(body.id ?? null);
    const first = Array.isArray(body.params) ? (body.params as unknown[])[0] : undefined;
    const tx = body.method === 'sendTransaction' && typeof first === 'string' ? Buffer.from(first, 'base64') : null;
    if (tx === null || tx.length < 65) {
      answer(res, 200, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"invalid transaction"},"id":${id}}`);
      return;
    }
    count();
    answer(res, 200, `{"jsonrpc":"2.0","result":"${base58Encode(tx.subarray(1, 65))}","id":${id}}`);
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { kind: { type: 'string' }, port: { type: 'string', default: '0' } } });
  const kind = values.kind as Kind | undefined;
  if (kind !== 'jito' && kind !== 'static') throw new Error('--kind jito|static is required');
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`bad --port ${String(values.port)}`);
  let received = 0;
  let close: () => Promise<void>;
  let bound: number;
  if (kind === 'jito') {
    const server = createServer((req, res) => handleJito(req, res, () => void received++));
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    bound = (server.address() as AddressInfo).port;
    close = () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
  } else {
    const listener = new TpuListener({
      host: '127.0.0.1',
      port,
      validatorIdentity: '11111111111111111111111111111111',
      copy: false,
      onTransaction: () => void received++,
    });
    await listener.start();
    bound = listener.address().port;
    close = () => listener.stop();
  }
  process.stdout.write(JSON.stringify({ event: 'stand_in_ready', kind, port: bound }) + '\n');
  const stats = setInterval(() => process.stdout.write(JSON.stringify({ event: 'stand_in_stats', kind, received }) + '\n'), STATS_INTERVAL_MS);
  let closing = false;
  const stop = (): void => {
    if (closing) return;
    closing = true;
    clearInterval(stats);
    process.stdout.write(JSON.stringify({ event: 'stand_in_stats', kind, received }) + '\n');
    void close().finally(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.stdin.once('end', stop);
  process.stdin.once('error', stop);
  process.stdin.resume();
}

main().catch((err: unknown) => {
  process.stderr.write(`stand-in: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
