// A JSON-RPC upstream that knows no signature (bench process's child, cold): getSignatureStatuses answers a null per
// signature asked, as an RPC node does for transactions it has not seen; anything else -32601. Its own process, so
// that its work is not the measured thread's. Prints `ready <port>`; ends with its parent's SIGTERM.
//   node dist/bench/wire/null-status-upstream.js
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const call = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number; method: string; params?: unknown[] };
    const sigs = call.method === 'getSignatureStatuses' && Array.isArray(call.params?.[0]) ? (call.params[0] as unknown[]) : null;
    const body =
      sigs === null
        ? { jsonrpc: '2.0', id: call.id, error: { code: -32601, message: 'Method not found' } }
        : { jsonrpc: '2.0', id: call.id, result: { context: { apiVersion: '2.2.0', slot: 1 }, value: sigs.map(() => null) } };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`ready ${(server.address() as AddressInfo).port}\n`));
