// Floor (a) of the wire-to-wire bench (its own process, ONE thread, hot): the least a relay can do between a request
// and the leader's TPU with this codebase's parts. The same uWS build as the relay's front (POST / as JSON-RPC
// sendTransaction with a base64 transaction, POST /v1/transactions with the raw wire transaction as body), the same
// quiche client connection as the relay's egress (src/quic/client-connection.ts) to the current leader's TPU, and a
// QUIC uni-stream ingress on the same quiche server endpoint the relay's ingress listener is built on (ALPN
// solana-tpu: no key, no certificate check; uni streams only, so no bidi row). No key, rate limit, sanitize, ring, accounting, receipt or metrics:
// parse just enough to get the transaction bytes, tryWrite() them on the leader's connection in the same callback,
// answer. Leader: src/egress/quic/polling-leader-source.ts against the localnet's RPC (current slot's leader; connections
// to every leader of the next 64 slots opened at start). A write that meets no credit / no room waits in one FIFO
// drained on onWritable (no loss: the bench counts arrivals).
//   node dist/bench/wire/min-forwarder.js <localnet rpc url>   prints {"event":"ready","httpPort":..,"quicPort":..}
import { createRandomIdentityCertificate, type IdentityCertificate } from '../../src/quic/identity-certificate.js';
import { QuicClientConnection } from '../../src/quic/client-connection.js';
import { QuicServerEndpoint } from '../../src/localnet/tpu-endpoint.js';
import { PollingLeaderSource } from '../../src/egress/quic/polling-leader-source.js';
import { createLogger } from '../../src/log/logger.js';
import { loadUws } from '../../src/native/uws.js';
import { encodeSignatureBase58 } from '../../src/tx/base58.js';

const rpcUrl = process.argv[2];
if (rpcUrl === undefined) throw new Error('usage: min-forwarder <localnet rpc url>');
const log = createLogger('warn', 'min-forwarder');
const leaders = new PollingLeaderSource({ rpcUrl, slotPollMs: 100, log });
leaders.start();
await leaders.ready;
const identity: IdentityCertificate = await createRandomIdentityCertificate();
const conns = new Map<string, QuicClientConnection>();
const waiting: { conn: QuicClientConnection; tx: Uint8Array }[] = [];

function drain(): void {
  while (waiting.length > 0) {
    const w = waiting[0];
    const r = w.conn.tryWrite(w.tx);
    if (r === 'no-credit' || r === 'no-room') return;
    waiting.shift();
  }
}

async function open(tpu: string): Promise<QuicClientConnection> {
  const i = tpu.lastIndexOf(':');
  const c = await QuicClientConnection.connect({ host: tpu.slice(0, i), port: Number(tpu.slice(i + 1)), identity, maxTransactionBytes: 4096, onWritable: drain });
  conns.set(tpu, c);
  return c;
}
const now = leaders.currentSlot();
const tpus = new Set<string>();
for (let s = now; s < now + 64; s++) {
  const t = leaders.leaderAt(s)?.tpuQuic;
  if (t != null) tpus.add(t);
}
await Promise.all([...tpus].map(open));

/** HOT: the transaction on the current leader's connection, now or after what already waits. */
function forward(tx: Uint8Array): void {
  const tpu = leaders.leaderAt(leaders.currentSlot())?.tpuQuic;
  const conn = tpu == null ? undefined : conns.get(tpu);
  if (conn === undefined) {
    if (tpu != null) void open(tpu); // a leader not seen at start: this transaction is lost, the next ones are not
    return;
  }
  if (waiting.length === 0) {
    const r = conn.tryWrite(tx);
    if (r !== 'no-credit' && r !== 'no-room') return;
  }
  waiting.push({ conn, tx: new Uint8Array(tx) });
}

const { uws } = loadUws();
const app = uws.App();
const enc = new TextEncoder();
app.post('/', (res) => {
  res.onAborted(() => undefined);
  const parts: Buffer[] = [];
  res.onData((chunk, isLast) => {
    parts.push(Buffer.from(chunk.slice(0)));
    if (!isLast) return;
    const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { id: unknown; params: [string] };
    const tx = Buffer.from(body.params[0], 'base64');
    forward(tx);
    res.cork(() => res.writeHeader('content-type', 'application/json').end(enc.encode(`{"jsonrpc":"2.0","result":"${encodeSignatureBase58(tx, 1)}","id":${JSON.stringify(body.id)}}`)));
  });
});
app.post('/v1/transactions', (res) => {
  res.onAborted(() => undefined);
  const parts: Buffer[] = [];
  res.onData((chunk, isLast) => {
    parts.push(Buffer.from(chunk.slice(0)));
    if (!isLast) return;
    const tx = parts.length === 1 ? parts[0] : Buffer.concat(parts);
    forward(tx);
    res.cork(() => res.writeHeader('content-type', 'application/json').end(enc.encode(`{"accepted":true,"signature":"${encodeSignatureBase58(tx, 1)}"}`)));
  });
});
const httpPort = await new Promise<number>((resolve, reject) =>
  app.listen('127.0.0.1', 0, (s) => (s === false ? reject(new Error('min-forwarder: listen failed')) : resolve(uws.getSocketPort(s)))),
);
const quic = await QuicServerEndpoint.listen({
  host: '127.0.0.1',
  port: 0,
  certificate: await createRandomIdentityCertificate(),
  maxConcurrentUniStreams: 512,
  maxTransactionBytes: 4096,
  maxIdleTimeoutMs: 600_000, // the bench's clients sit idle through the HTTP cells
  onTransaction: (tx) => forward(tx),
});
process.stdout.write(JSON.stringify({ event: 'ready', httpPort, quicPort: quic.address().port, leaders: conns.size }) + '\n');
process.on('SIGTERM', () => {
  leaders.close();
  for (const c of conns.values()) c.close();
  void quic.close().then(() => process.exit(0));
});
