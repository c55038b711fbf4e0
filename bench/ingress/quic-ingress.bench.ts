// QUIC ingress next to HTTP POST /v1/submit, same relay, same run (bench process; the relay is a real child process
// with routes.discard, so the rings drain without a network). Per round, for each transport: N transactions pushed
// as fast as the client allows (QUIC: uni streams over C connections; HTTP: /v1/submit with P requests in flight
// over keep-alive), accepted tx/s into the ring (from the relay's own counters), the relay process's CPU per
// transaction (/proc/<pid>/stat), and latency from the relay's summaries: QUIC stream FIN read on the QUIC thread ->
// transaction in the egress ring (slotrelay_quic_ingress_fin_to_ring_seconds), HTTP request arrival -> answer
// (slotrelay_request_duration_seconds{path="/v1/submit"}; the span closest to it the front measures). Rounds
// alternate transports. A QUIC round also says how many streams the relay refused as overloaded (its front's queue
// full past relayHost.quic.holdTimeoutMs: counted, no answer on a uni stream), and how many streams waited unread in a
// held connection (back-pressure by stream credit: the front's queue was full) and how many holds there were; its
// tx/s counts the accepted ones. Writes bench/results/quic-ingress.json.
// Run: npm run build && node dist/bench/ingress/quic-ingress.bench.js [N] [rounds] [queueSlots]
// queueSlots (relayHost.quic.queueSlots, default 4096): a small queue makes the QUIC thread -> front queue fill, to
// watch back-pressure (holds, streams held) rather than the transports' cost.
import { readFileSync, writeFileSync } from 'node:fs';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { Pool } from 'undici';
import { IngressClient } from '../../src/client/quic/ingress-client.js';
import { createIdentityCertificate } from '../../src/quic/identity-certificate.js';
import { BENCH_KEY, startBenchRelay } from '../bench-relay.js';

const N = Number(process.argv[2] ?? 20_000);
const ROUNDS = Number(process.argv[3] ?? 2);
const QUEUE_SLOTS = Number(process.argv[4] ?? 4_096);
const QUIC_CONNECTIONS = 4;
const HTTP_IN_FLIGHT = 64;

function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime, clock ticks of 10 ms
}

async function metrics(rpcUrl: string): Promise<string> {
  return (await fetch(`${rpcUrl}/metrics`)).text();
}

function value(text: string, prefix: string): number {
  const line = text.split('\n').find((l) => l.startsWith(prefix + ' '));
  return line === undefined ? NaN : Number(line.split(' ').at(-1));
}

async function main(): Promise<void> {
  const relay = await startBenchRelay(1_000, { rateLimit: { perSecond: 10_000_000, burst: 10_000_000 } }, {
    relayHost: { host: '127.0.0.1', port: 0, quicPort: -1, quic: { maxConcurrentStreams: 512, queueSlots: QUEUE_SLOTS } },
    routes: { discard: true },
    rings: { workers: 1, slotsPerRing: 8_192 },
  });
  const pid = relay.child.pid!;
  const quic = relay.quic!;
  // One signed transfer sent N times per transport (the relay does not deduplicate; routes.discard drops it).
  const payer = Keypair.generate();
  const signed = new Transaction({ feePayer: payer.publicKey, blockhash: '11111111111111111111111111111111', lastValidBlockHeight: 1 }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000 }),
  );
  signed.sign(payer);
  const tx = { bytes: signed.serialize(), base64: signed.serialize().toString('base64') };
  const body = JSON.stringify({ transaction: tx.base64 });
  const cert = await createIdentityCertificate(Keypair.generate().secretKey, BENCH_KEY);
  const clients = await Promise.all(Array.from({ length: QUIC_CONNECTIONS }, () => IngressClient.connect({ host: quic.host, port: quic.port, certificate: cert })));
  const pool = new Pool(relay.relayUrl, { connections: HTTP_IN_FLIGHT, pipelining: 1 });
  const rounds: Record<string, unknown>[] = [];

  const quicRound = async (): Promise<Record<string, number>> => {
    const m0 = await metrics(relay.rpcUrl);
    const accepted0 = value(m0, 'slotrelay_quic_ingress_streams_total{outcome="accepted"}');
    const overloaded0 = value(m0, 'slotrelay_quic_ingress_streams_total{outcome="overloaded"}');
    const held0 = value(m0, 'slotrelay_quic_ingress_streams_held_total');
    const holds0 = value(m0, 'slotrelay_quic_ingress_holds_total');
    const cpu0 = cpuMs(pid);
    const t0 = performance.now();
    const per = Math.ceil(N / QUIC_CONNECTIONS);
    await Promise.all(clients.map((c) => Promise.all(Array.from({ length: per }, () => c.sendUni(tx.bytes)))));
    // Every stream ends accepted or, when the front's queue was full, refused as overloaded (docs/quic-ingress.md:
    // counted, a uni stream gets no answer): the round is over when both add up to what was written.
    let m = '';
    let accepted = 0;
    let overloaded = 0;
    for (;;) {
      m = await metrics(relay.rpcUrl);
      accepted = value(m, 'slotrelay_quic_ingress_streams_total{outcome="accepted"}') - accepted0;
      overloaded = value(m, 'slotrelay_quic_ingress_streams_total{outcome="overloaded"}') - overloaded0;
      if (accepted + overloaded >= per * QUIC_CONNECTIONS) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    const ms = performance.now() - t0;
    const cpu = cpuMs(pid) - cpu0;
    return {
      txPerSecond: Math.round((accepted * 1000) / ms),
      relayCpuUsPerTx: Math.round((cpu * 1000) / (per * QUIC_CONNECTIONS)),
      overloaded,
      streamsHeld: value(m, 'slotrelay_quic_ingress_streams_held_total') - held0,
      holds: value(m, 'slotrelay_quic_ingress_holds_total') - holds0,
      finToRingP50Us: Math.round(value(m, 'slotrelay_quic_ingress_fin_to_ring_seconds{quantile="0.5"}') * 1e6),
      finToRingP99Us: Math.round(value(m, 'slotrelay_quic_ingress_fin_to_ring_seconds{quantile="0.99"}') * 1e6),
    };
  };

  const httpRound = async (): Promise<Record<string, number>> => {
    const cpu0 = cpuMs(pid);
    const t0 = performance.now();
    let next = 0;
    let failed = 0;
    await Promise.all(
      Array.from({ length: HTTP_IN_FLIGHT }, async () => {
        while (next < N) {
          next++;
          const r = await pool.request({ path: '/v1/submit', method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': BENCH_KEY }, body });
          await r.body.dump();
          if (r.statusCode !== 200) failed++;
        }
      }),
    );
    const ms = performance.now() - t0;
    const cpu = cpuMs(pid) - cpu0;
    const m = await metrics(relay.rpcUrl);
    return {
      txPerSecond: Math.round((N * 1000) / ms),
      relayCpuUsPerTx: Math.round((cpu * 1000) / N),
      arrivalToAnswerP50Us: Math.round(value(m, 'slotrelay_request_duration_seconds{path="/v1/submit",quantile="0.5"}') * 1e6),
      arrivalToAnswerP99Us: Math.round(value(m, 'slotrelay_request_duration_seconds{path="/v1/submit",quantile="0.99"}') * 1e6),
      failed,
    };
  };

  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? ['quic', 'http'] : ['http', 'quic'];
    const round: Record<string, unknown> = { round: r + 1 };
    for (const t of order) round[t] = t === 'quic' ? await quicRound() : await httpRound();
    console.log(JSON.stringify(round));
    rounds.push(round);
  }
  const streams = value(await metrics(relay.rpcUrl), 'slotrelay_quic_ingress_streams_total{outcome="overloaded"}');
  for (const c of clients) c.close();
  await pool.close();
  relay.child.kill('SIGTERM');
  const out = {
    what: 'QUIC ingress (uni streams) next to HTTP POST /v1/submit, same relay (routes.discard), alternating rounds',
    command: `node dist/bench/ingress/quic-ingress.bench.js ${N} ${ROUNDS}${QUEUE_SLOTS === 4_096 ? '' : ` ${QUEUE_SLOTS}`}`,
    queueSlots: QUEUE_SLOTS,
    machine: '2-core VM shared with other agents (numbers are noisy)',
    transactionsPerRound: N,
    quicConnections: QUIC_CONNECTIONS,
    httpInFlight: HTTP_IN_FLIGHT,
    latencySpans: {
      quic: 'stream FIN read on the QUIC thread -> published into the egress ring (front thread), cumulative summary over the run',
      http: 'request arrival on the front -> answer written (front thread), cumulative summary over the run',
    },
    quicStreamsOverloaded: streams,
    rounds,
    date: new Date().toISOString(),
  };
  writeFileSync(new URL('../../../bench/results/quic-ingress.json', import.meta.url), JSON.stringify(out, null, 2) + '\n');
  console.log(JSON.stringify(out, null, 2));
}

await main();
