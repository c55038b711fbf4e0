// Baseline for the end-to-end bench: the SAME work as the relay's JSON-RPC host (x-request-id honoured or generated,
// key lookup, media type, rate limit, envelope, sendTransaction decode + sanitize + signature, copy into the same
// shared-memory ring drained by the same egress pool, the same answer headers, request counters and latency
// histogram) behind node:http instead of uWebSockets.js. Run only by bench/e2e/send-transaction-load.ts.
//   node dist/bench/e2e/node-http-baseline.js CONFIG_FILE
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpResponse } from 'uWebSockets.js';
import { loadConfig } from '../../src/config/load.js';
import { EgressPool } from '../../src/egress/consumer/pool.js';
import { KeyTable } from '../../src/admission/key-table.js';
import { extractKey } from '../../src/http/api-key-carrier.js';
import type { CallContext } from '../../src/admission/call-context.js';
import { RequestState } from '../../src/http/response.js';
import { Intake } from '../../src/admission/intake.js';
import { sendTransactionMethod } from '../../src/front/methods/send-transaction.js';
import { mediaType, nowMs } from '../../src/http/request.js';
import { requestIdFor } from '../../src/http/request-id.js';
import { dispatchJsonRpc, type MethodHandler } from '../../src/jsonrpc/dispatch.js';
import { parseJsonRpcBody } from '../../src/jsonrpc/envelope.js';
import { errorJson } from '../../src/jsonrpc/response.js';
import { createLogger } from '../../src/log/logger.js';
import { FrontMetrics } from '../../src/metrics/front-metrics.js';
import { createRing, RingProducer } from '../../src/shm/ring.js';

const config = loadConfig({ file: process.argv[2] });
const log = createLogger(config.log.level, 'baseline');
const rings = Array.from({ length: config.rings.workers }, () => createRing(config.rings.slotsPerRing, config.transactions.maxTransactionBytes));
const pool = new EgressPool({ config, rings, log });
pool.start();
const keys = new KeyTable(config.keys, config.routes.defaultRoutes, Date.now());
const intake = new Intake(rings.map((r) => new RingProducer(r, { coalesceWakeups: true })), config.transactions.maxTransactionBytes);
const table = new Map<string, MethodHandler<CallContext>>([['sendTransaction', sendTransactionMethod({ intake, upstream: null })]]);
const metrics = new FrontMetrics(table.keys());
const hooks = {
  onInternalError: () => undefined,
  onOutcome: (method: string | null, reason: string | null) => metrics.countRequest('rpc', metrics.methodLabel(method), reason ?? 'ok'),
};
const keepAlive = `timeout=${config.http.idleTimeoutSeconds}`;

function header(v: string | string[] | undefined): string {
  return typeof v === 'string' ? v : '';
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const st = new RequestState(null as unknown as HttpResponse, requestIdFor(header(req.headers['x-request-id'])), nowMs());
    const send = (status: number, body: string): void => {
      res.writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        'access-control-allow-origin': config.http.corsAllowOrigin,
        'x-request-id': st.requestId,
        'keep-alive': keepAlive,
        'content-length': Buffer.byteLength(body), // as uWS does; otherwise node:http answers chunked
      });
      res.end(body);
      metrics.recordLatency('/', (nowMs() - st.receivedAtMs) * 1000);
    };
    const key = keys.lookup(extractKey(header(req.headers['x-token']), header(req.headers['x-api-key']), header(req.headers.authorization), ''));
    if (key === undefined) return send(401, errorJson(null, -32600, 'Unauthorized'));
    if (mediaType(header(req.headers['content-type'])) !== 'application/json') return send(415, errorJson(null, -32600, 'Unsupported media type'));
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks); // no copy in the common one-chunk case
    const parsed = parseJsonRpcBody(body.toString('utf8'), config.http.maxBatchSize);
    if (key.submitBucket.take(parsed.kind === 'batch' ? parsed.elements.length : 1, st.receivedAtMs) > 0) {
      return send(429, errorJson(null, -32005, 'Rate limit exceeded'));
    }
    const out = dispatchJsonRpc(parsed, table, { key, state: st, routeMask: key.defaultMask }, hooks);
    if (typeof out === 'string' || out === null) send(200, out ?? '');
    else void out.then((t) => send(200, t ?? ''));
  });
});
server.keepAliveTimeout = config.http.idleTimeoutSeconds * 1000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ event: 'baseline_ready', port: (server.address() as AddressInfo).port }) + '\n');
});
process.once('SIGTERM', () => {
  server.close();
  void pool.drain(2000).then(() => process.exit(0));
});
