// Egress QUIC bench for the direct/static routes: (1) tx/s through the route's connection worker over ONE connection
// into a TPU listener with a 128-stream limit; (2) ring entry -> datagram handed to the kernel, p50/p99, at a fixed
// 5,000 tx/s: records are published into a real shared-memory ring and consumed by the real consumer loop
// (runEgressConsumer) into the static route; the time is taken when the route reports the write (its datagram has
// then been passed to sock.send). Next to each: @matrixai/quic's high-level API in the same run (QUICClient +
// newStream('uni'), as in bench/quic/egress-throughput.bench.ts). Bounded: ~3 s + ~2 s per case.
// Producer and consumer share one thread here (the relay runs them on two), so the ring wake-up is an event-loop
// turn of the same process: on 2 shared cores that is the pessimistic case.
// Run: npx tsc -p tsconfig.json && node dist/bench/egress/quic-egress.bench.js
import { webcrypto } from 'node:crypto';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QUICClient } from '@matrixai/quic';
import hdr from 'hdr-histogram-js';
import { configSchema } from '../../src/config/schema.js';
import { runEgressConsumer } from '../../src/egress/consumer-loop.js';
import { generateKeypairSecret } from '../../src/egress/identity.js';
import { QuicEgress } from '../../src/egress/quic-egress.js';
import type { EgressOutcome, EgressRoute, TxView } from '../../src/egress/route.js';
import { StaticRoute } from '../../src/egress/static-route.js';
import { Worker } from 'node:worker_threads';
import { createLogger } from '../../src/log/logger.js';
import { createWorkerCounters } from '../../src/metrics/worker-counters.js';
import { createIdentityCertificate } from '../../src/quic/index.js';
import { ROUTE_COUNT, ROUTE_IDS } from '../../src/shm/layout.js';
import { createRing, requestStop, RingProducer } from '../../src/shm/ring.js';

const TX_BYTES = 1232;
const THROUGHPUT_MS = 3_000;
const RATE = 5_000;
const RATE_MS = 2_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const wall = () => performance.timeOrigin + performance.now();
const log = createLogger('silent', 'bench');

// The receiving listener runs in its own thread (as a validator would be another process): the sender's numbers
// are then not mixed with the receiver's work on the same event loop.
const sinkWorker = new Worker(new URL('./tpu-sink-worker.js', import.meta.url));
const sinkPort: number = await new Promise((r) => sinkWorker.once('message', (m: { port: number }) => r(m.port)));
const receivedNow = (): Promise<number> =>
  new Promise((r) => {
    sinkWorker.once('message', (m: { received: number }) => r(m.received));
    sinkWorker.postMessage('count');
  });
const peer = `127.0.0.1:${sinkPort}`;
const tx = new Uint8Array(TX_BYTES).fill(3);
const secret = generateKeypairSecret();
const keypairPath = join(mkdtempSync(join(tmpdir(), 'slotrelay-bench-')), 'id.json');
writeFileSync(keypairPath, JSON.stringify(Array.from(secret)));
const config = configSchema.parse({ identity: { keypairPath }, routes: { direct: { maxQueuedPerConnection: 4096 }, static: { peers: [peer] } } });

function view(bytes: Uint8Array): TxView {
  return { bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length), sab: new SharedArrayBuffer(0), byteOffset: 0, length: bytes.length, signatureOffset: 1, keyId: 0, maxRetries: -1, traceId: 'b', receivedAtMs: 0 };
}

async function oursThroughput(): Promise<void> {
  const quic = new QuicEgress(config, log);
  const route = new StaticRoute(quic, config.routes.static.peers, log);
  const cache = await quic.ready;
  while (cache.report()[0]?.state !== 'active') await sleep(5);
  const v = view(tx);
  let inflight = 0;
  const done = (): void => void inflight--;
  const r0 = await receivedNow();
  const t0 = performance.now();
  while (performance.now() - t0 < THROUGHPUT_MS) {
    // Keep ~2,000 transactions waiting for stream credit; each queued one answers when written.
    while (inflight < 2_000) {
      const r = route.send(v);
      if (typeof r === 'string') {
        if (r !== 'sent') throw new Error(`unexpected outcome ${r}`);
        continue;
      }
      inflight++;
      void r.then(done);
    }
    await sleep(2);
  }
  const dt = (performance.now() - t0) / 1000;
  await sleep(200);
  const received = await receivedNow();
  console.log(`static route (quiche driver) throughput: ${((received - r0) / dt).toFixed(0)} tx/s received over 1 connection, 128-stream limit (${received - r0} in ${dt.toFixed(1)} s)`);
  await route.close();
}

async function oursRingLatency(): Promise<void> {
  const quic = new QuicEgress(config, log);
  const inner = new StaticRoute(quic, config.routes.static.peers, log);
  const cache = await quic.ready;
  while (cache.report()[0]?.state !== 'active') await sleep(5);
  const h = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 10_000_000, numberOfSignificantValueDigits: 3 });
  const record = (at: number): void => h.recordValue(Math.max(1, Math.round((wall() - at) * 1000)));
  let notSent = 0;
  let calls = 0;
  const timed: EgressRoute = {
    id: ROUTE_IDS.static,
    name: 'static',
    send(t: TxView): EgressOutcome | Promise<EgressOutcome> {
      const at = t.receivedAtMs;
      calls++;
      const r = inner.send(t);
      if (r === 'sent') record(at); // the datagram went to the kernel inside send()
      else if (typeof r === 'string') notSent++;
      else void r.then((o) => (o === 'sent' ? record(at) : notSent++));
      return r;
    },
    close: () => inner.close(),
  };
  const routes: (EgressRoute | null)[] = new Array(ROUTE_COUNT).fill(null);
  routes[ROUTE_IDS.static] = timed;
  const ring = createRing(4096, 1232);
  const producer = new RingProducer(ring);
  const loop = runEgressConsumer({ ringIndex: 0, ring, counters: createWorkerCounters(1), config, attempt: 0 }, { routes, log });
  const mask = 1 << ROUTE_IDS.static;
  const t0 = performance.now();
  let sent = 0;
  while (performance.now() - t0 < RATE_MS) {
    const due = Math.floor(((performance.now() - t0) / 1000) * RATE);
    while (sent < due) {
      const off = producer.reserve();
      if (off < 0) break;
      producer.bytes.set(tx, off);
      producer.publish(tx.length, 0, mask, -1, wall(), 'bench');
      sent++;
    }
    await sleep(1);
  }
  await sleep(500);
  const rep = cache.report()[0];
  requestStop(ring);
  await loop;
  console.log(`static route (quiche driver) @${RATE}/s ring entry -> datagram to kernel: p50 ${h.getValueAtPercentile(50)} us, p99 ${h.getValueAtPercentile(99)} us (n=${h.totalCount}, routed ${calls}, published ${sent}, not sent ${notSent}; includes waiting for the peer's stream credit)`);
  console.log(`static route (quiche driver) @${RATE}/s streamSend -> kernel (connection report): p50 ${rep.sendLatencyP50Us} us, p99 ${rep.sendLatencyP99Us} us, handshake ${rep.handshakeMs.toFixed(1)} ms`);
}

async function matrixai(): Promise<void> {
  const cert = await createIdentityCertificate(secret);
  const mk = () =>
    QUICClient.createQUICClient({
      host: '127.0.0.1',
      port: sinkPort,
      serverName: `${peer.replace(':', '.')}.sol`,
      crypto: { ops: { randomBytes: async (b: ArrayBuffer) => void webcrypto.getRandomValues(new Uint8Array(b)) } },
      config: { verifyPeer: false, applicationProtos: ['solana-tpu'], key: cert.keyPem, cert: cert.certPem },
    });
  const client = await mk();
  const r0 = await receivedNow();
  const t0 = performance.now();
  let inflight = 0;
  const one = async (): Promise<void> => {
    inflight++;
    try {
      const s = client.connection.newStream('uni');
      const w = s.writable.getWriter();
      await w.write(tx);
      await w.close();
    } catch {
      // stream limit etc.: counted by what arrives
    } finally {
      inflight--;
    }
  };
  while (performance.now() - t0 < THROUGHPUT_MS) {
    for (let k = 0; k < 64 && inflight < 64; k++) void one();
    await sleep(1);
  }
  const dt = (performance.now() - t0) / 1000;
  await sleep(300);
  const received = await receivedNow();
  console.log(`@matrixai/quic high-level   throughput: ${((received - r0) / dt).toFixed(0)} tx/s received (${received - r0} in ${dt.toFixed(1)} s)`);
  await client.destroy({ force: true }).catch(() => undefined);

  // Same ring -> kernel measurement shape: time from "entry" (the paced tick) to write() resolving.
  const h = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 10_000_000, numberOfSignificantValueDigits: 3 });
  const c2 = await mk();
  let refused = 0;
  const t1 = performance.now();
  let sent = 0;
  while (performance.now() - t1 < RATE_MS) {
    const due = Math.floor(((performance.now() - t1) / 1000) * RATE);
    while (sent < due) {
      sent++;
      const at = performance.now();
      let s;
      try {
        s = c2.connection.newStream('uni');
      } catch {
        refused++;
        continue;
      }
      const w = s.writable.getWriter();
      w.write(tx).then(() => {
        h.recordValue(Math.max(1, Math.round((performance.now() - at) * 1000)));
        return w.close();
      }, () => undefined).catch(() => undefined);
    }
    await sleep(1);
  }
  console.log(`@matrixai/quic high-level   @${RATE}/s entry -> write resolved: p50 ${h.getValueAtPercentile(50)} us, p99 ${h.getValueAtPercentile(99)} us (n=${h.totalCount}, refused ${refused})`);
  await c2.destroy({ force: true }).catch(() => undefined);
}

await oursThroughput();
await oursRingLatency();
await matrixai();
sinkWorker.postMessage('stop');
process.exit(0);
