// What a QUIC acknowledged submit pays that an HTTP one does not (issue #14; docs/client.md "Where the time goes"),
// measured in isolation so the figures can be reproduced without instrumenting the relay. Run from dist/ after
// `npm run build`:   node dist/bench/client/quic-hop-costs.bench.js [--rounds 2000]
//   ring hop        one message through the QUIC ingress's message ring (src/shm/message-ring.ts, the real classes) to
//                   a consumer thread asleep in waitForMessages, after ~1 ms idle (as between sequential submits):
//                   the producer's push -> the consumer's take, one way. A QUIC submit crosses two (QUIC thread ->
//                   front, front -> QUIC thread); an HTTP submit none.
//   quiche calls    the binding calls of one request/answer round between two in-memory quiche connections (no
//                   socket): per call, microseconds (mean). `readable()` is the native stream iterator both ends avoid
//                   now (streamReadable probes first).
import { randomFillSync } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { Packr } from 'msgpackr';
import { createKeyCertificate } from '../../src/client/quic/key-certificate.js';
import { LOCAL_CID_LEN, MAX_RECV_UDP_PAYLOAD, MAX_SEND_UDP_PAYLOAD, TLS_SIGALGS } from '../../src/quic/constants.js';
import { quiche, type QuicheConnection } from '../../src/quic/quiche.js';
import { MessageRingProducer, createMessageRing, requestMessageRingStop } from '../../src/shm/message-ring.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '2000' } } });
const ROUNDS = Number(values.rounds);

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))];
}

async function ringHop(): Promise<number[]> {
  const sab = createMessageRing(64, 64);
  const stamp = new Float64Array(new SharedArrayBuffer(8 * ROUNDS));
  const worker = new Worker(
    `const { workerData } = require('node:worker_threads');
    (async () => {
      const { MessageRingConsumer } = await import(workerData.url);
      const c = new MessageRingConsumer(workerData.sab);
      const stamp = new Float64Array(workerData.stamp);
      while (!c.stopRequested()) {
        while (c.take()) { stamp[c.header.f0] = performance.timeOrigin + performance.now(); c.release(); }
        await c.waitForMessages(1000);
      }
    })();`,
    { eval: true, workerData: { sab, stamp: stamp.buffer, url: new URL('../../src/shm/message-ring.js', import.meta.url).href } },
  );
  const p = new MessageRingProducer(sab);
  const payload = new Uint8Array(64);
  const out: number[] = [];
  try {
    await new Promise((r) => setTimeout(r, 100));
    for (let i = 0; i < ROUNDS; i++) {
      await new Promise((r) => setTimeout(r, 1));
      const t0 = performance.timeOrigin + performance.now();
      p.push(2, payload, 0, 1, i, t0, 0, 0);
      while (stamp[i] === 0) await new Promise((r) => setImmediate(r));
      out.push((stamp[i] - t0) * 1000);
    }
  } finally {
    requestMessageRingStop(sab);
    await worker.terminate();
  }
  return out;
}

function quicheCalls(): Map<string, number> {
  const enc = new TextEncoder();
  const server = createKeyCertificate('server');
  const client = createKeyCertificate('6f1c2a4e-9b7d-4c3a-8e21-5d0f4b6a7c19');
  const scfg = quiche.Config.withBoringSslCtx(true, true, null, [enc.encode(server.keyPem)], [enc.encode(server.certPem)], TLS_SIGALGS);
  const ccfg = quiche.Config.withBoringSslCtx(false, false, null, [enc.encode(client.keyPem)], [enc.encode(client.certPem)], TLS_SIGALGS);
  for (const c of [scfg, ccfg]) {
    c.setApplicationProtos(['slotrelay/1']);
    c.setMaxIdleTimeout(30_000);
    c.setMaxSendUdpPayloadSize(MAX_SEND_UDP_PAYLOAD);
    c.setMaxRecvUdpPayloadSize(MAX_RECV_UDP_PAYLOAD);
  }
  scfg.setInitialMaxStreamDataBidiRemote(4_000);
  scfg.setInitialMaxData(10_000_000);
  scfg.setInitialMaxStreamsBidi(1_024);
  ccfg.setInitialMaxStreamDataBidiLocal(65_536);
  ccfg.setInitialMaxData(65_536 * 1_024);
  const S = { host: '127.0.0.1', port: 1 };
  const C = { host: '127.0.0.1', port: 2 };
  const toS = { from: C, to: S };
  const toC = { from: S, to: C };
  const cid = (): Uint8Array => randomFillSync(new Uint8Array(LOCAL_CID_LEN));
  const cl = quiche.Connection.connect('127.0.0.1.1.sol', cid(), C, S, ccfg);
  let sv: QuicheConnection | null = null;
  const buf = Buffer.alloc(MAX_SEND_UDP_PAYLOAD);
  const rx = Buffer.alloc(65_536);
  const exchange = (): void => {
    for (let k = 0; k < 20; k++) {
      let moved = false;
      for (let r = cl.send(buf); r !== null; r = cl.send(buf)) {
        moved = true;
        sv ??= quiche.Connection.accept(cid(), null, S, C, scfg);
        sv.recv(buf.subarray(0, r[0]), toS);
      }
      if (sv !== null) for (let r = sv.send(buf); r !== null; r = sv.send(buf), moved = true) cl.recv(buf.subarray(0, r[0]), toC);
      if (!moved) return;
    }
  };
  exchange();
  const s = sv as QuicheConnection | null;
  if (s === null || !cl.isEstablished()) throw new Error('in-memory handshake failed');
  const packr = new Packr({ useRecords: false });
  const answer = packr.pack({ accepted: true, signature: '5'.repeat(88), routes: ['rpc'] });
  const tx = new Uint8Array(215).fill(7);
  const sums = new Map<string, number>();
  let t = 0n;
  const lap = (name: string, count: boolean): void => {
    const now = process.hrtime.bigint();
    if (count) sums.set(name, (sums.get(name) ?? 0) + Number(now - t) / 1000);
    t = process.hrtime.bigint();
  };
  const warm = 1_000;
  for (let i = 0, sid = 0; i < warm + ROUNDS * 5; i++, sid += 4) {
    const on = i >= warm;
    t = process.hrtime.bigint();
    const req = packr.pack({ transaction: tx });
    lap('client: msgpack pack', on);
    cl.streamSend(sid, req, true);
    lap('client: streamSend', on);
    const r1 = cl.send(buf)!;
    lap('client: send (packetize + encrypt)', on);
    s.recv(buf.subarray(0, r1[0]), toS);
    lap('relay: recv (decrypt + frames)', on);
    s.streamReadable(sid);
    lap('relay: streamReadable (the probe)', on);
    for (const x of s.readable()) void x;
    lap('relay: readable() iterated (avoided now)', on);
    s.streamRecv(sid, rx);
    lap('relay: streamRecv', on);
    s.streamSend(sid, answer, true);
    lap('relay: streamSend', on);
    const r2 = s.send(buf)!;
    lap('relay: send (answer + ACK)', on);
    cl.recv(buf.subarray(0, r2[0]), toC);
    lap('client: recv', on);
    cl.streamRecv(sid, rx);
    lap('client: streamRecv', on);
    cl.timeout();
    lap('timeout() (after every I/O)', on);
    exchange(); // ACKs and stream credit, untimed
  }
  for (const [k, v] of sums) sums.set(k, v / (ROUNDS * 5));
  return sums;
}

async function main(): Promise<void> {
  const hop = await ringHop();
  console.log(`ring hop to a sleeping thread (${ROUNDS}): p50 ${pct(hop, 50).toFixed(1)} us, p90 ${pct(hop, 90).toFixed(1)} us, p99 ${pct(hop, 99).toFixed(1)} us`);
  console.log('quiche calls of one request/answer round, mean per call:');
  for (const [k, v] of quicheCalls()) console.log(`  ${k.padEnd(42)} ${v.toFixed(2)} us`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
