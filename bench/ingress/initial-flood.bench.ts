// Issue #30 item 8, measured: a real relay's QUIC ingress under junk Initials at RATE per second for SECONDS (bench
// process; the relay is a child process with routes.discard). Samples the relay's RSS every 250 ms (idle before, peak
// during, 10 s after), and meanwhile a well-behaved client (the project's IngressClient with a key-bound certificate)
// connects and submits once a second: its connect times and failures. The bound the issue sets: peak RSS within 50 MB
// of idle, and good clients keep connecting. Writes bench/results/initial-flood.json.
// Run: node dist/bench/ingress/initial-flood.bench.js [--rate 5000] [--seconds 20] [--json FILE]
import dgram from 'node:dgram';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { IngressClient } from '../../src/ingress/ingress-client.js';
import { createIdentityCertificate, type IdentityCertificate } from '../../src/quic/identity-certificate.js';
import { BENCH_KEY, startBenchRelay } from '../bench-relay.js';
import { junkInitial } from './junk-initial.js';

/** Junk is sent in a batch every TICK_MS from SOCKETS source ports (a flood from several addresses). */
const TICK_MS = 20;
const SOCKETS = 4;
const RSS_SAMPLE_MS = 250;
const GOOD_CLIENT_EVERY_MS = 1_000;
const AFTER_S = 10;
/** The bound. */
const RSS_BOUND_MB = 50;

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m === null ? NaN : Number(m[1]) / 1024;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function signedTransfer(): Uint8Array {
  const payer = Keypair.generate();
  const t = new Transaction({ feePayer: payer.publicKey, blockhash: '11111111111111111111111111111111', lastValidBlockHeight: 1 }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000 }),
  );
  t.sign(payer);
  return t.serialize();
}

interface GoodConnect {
  readonly atS: number;
  readonly connectMs: number | null;
  readonly accepted: boolean;
  readonly error?: string;
}

async function goodClient(host: string, port: number, cert: IdentityCertificate, tx: Uint8Array, atS: number): Promise<GoodConnect> {
  const t0 = performance.now();
  try {
    const c = await IngressClient.connect({ host, port, certificate: cert, connectTimeoutMs: 5_000 });
    const connectMs = Math.round((performance.now() - t0) * 10) / 10;
    const r = await c.request({ transaction: tx });
    c.close();
    return { atS, connectMs, accepted: r.kind === 'answer' && r.answer.accepted === true };
  } catch (e) {
    return { atS, connectMs: null, accepted: false, error: e instanceof Error ? e.message : String(e) };
  }
}

function metricValue(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(name + ' '));
  return line === undefined ? NaN : Number(line.split(' ').at(-1));
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rate: { type: 'string', default: '5000' }, seconds: { type: 'string', default: '20' }, json: { type: 'string' } } });
  const rate = Number(values.rate);
  const seconds = Number(values.seconds);
  const relay = await startBenchRelay(1_000, { rateLimit: { perSecond: 100_000, burst: 100_000 } }, {
    relayHost: { host: '127.0.0.1', port: 0, quicPort: -1 },
    routes: { discard: true },
  });
  const pid = relay.child.pid!;
  const quic = relay.quic!;
  const cert = await createIdentityCertificate(Keypair.generate().secretKey, BENCH_KEY);
  const tx = signedTransfer();
  try {
    // Warm: the first handshake loads TLS state; then let the relay settle before idle is read.
    await goodClient(quic.host, quic.port, cert, tx, 0);
    await sleep(2_000);
    const idleSamples: number[] = [];
    for (let i = 0; i < 8; i++) {
      idleSamples.push(rssMb(pid));
      await sleep(RSS_SAMPLE_MS);
    }
    const idle = Math.max(...idleSamples);
    const socks = await Promise.all(
      Array.from({ length: SOCKETS }, async () => {
        const s = dgram.createSocket('udp4');
        await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
        return s;
      }),
    );
    const rss: { t: number; mb: number }[] = [];
    const t0 = performance.now();
    const elapsedS = (): number => Math.round((performance.now() - t0) / 100) / 10;
    const sampler = setInterval(() => rss.push({ t: elapsedS(), mb: Math.round(rssMb(pid) * 10) / 10 }), RSS_SAMPLE_MS);
    const good: Promise<GoodConnect>[] = [];
    const goodTimer = setInterval(() => good.push(goodClient(quic.host, quic.port, cert, tx, elapsedS())), GOOD_CLIENT_EVERY_MS);
    let sent = 0;
    // Paced by the clock, not by ticks: a late tick sends what the schedule owes (bounded by the run's total).
    const total = rate * seconds;
    while (sent < total) {
      const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * rate));
      for (; sent < due; sent++) socks[sent % SOCKETS].send(junkInitial(), quic.port, quic.host);
      await sleep(TICK_MS);
    }
    const floodS = (performance.now() - t0) / 1000;
    clearInterval(goodTimer);
    const duringPeak = Math.max(...rss.map((s) => s.mb));
    await sleep(AFTER_S * 1000);
    clearInterval(sampler);
    for (const s of socks) s.close();
    const goods = await Promise.all(good);
    const after = rssMb(pid);
    const peak = Math.max(duringPeak, ...rss.map((s) => s.mb));
    const connects = goods.filter((g) => g.connectMs !== null).map((g) => g.connectMs!).sort((a, b) => a - b);
    const metrics = await (await fetch(`${relay.rpcUrl}/metrics`)).text();
    const datagramsIn = metricValue(metrics, 'slotrelay_quic_ingress_datagrams_total{direction="received"}');
    const datagramsOut = metricValue(metrics, 'slotrelay_quic_ingress_datagrams_total{direction="sent"}');
    const result = {
      kind: 'quic-ingress-initial-flood',
      at: new Date().toISOString(),
      host: { cpus: 2, node: process.version, note: 'shared box: other jobs may run on the same cores' },
      params: { ratePerSecond: rate, seconds, junkSent: sent, floodSeconds: Math.round(floodS * 10) / 10, goodClientEveryMs: GOOD_CLIENT_EVERY_MS },
      rssMb: { idle: Math.round(idle * 10) / 10, peak: Math.round(peak * 10) / 10, peakOverIdle: Math.round((peak - idle) * 10) / 10, afterS: AFTER_S, after: Math.round(after * 10) / 10, bound: RSS_BOUND_MB },
      goodClients: {
        tried: goods.length,
        connectedAndAccepted: goods.filter((g) => g.accepted).length,
        failures: goods.filter((g) => !g.accepted).map((g) => ({ atS: g.atS, error: g.error ?? 'not accepted' })),
        connectMs: { p50: connects[Math.floor(connects.length / 2)] ?? null, max: connects.at(-1) ?? null, all: goods.map((g) => g.connectMs) },
      },
      relayDatagrams: { received: datagramsIn, sent: datagramsOut },
      rssSamples: rss,
      verdict: { rssWithinBound: peak - idle <= RSS_BOUND_MB, everyGoodClientConnected: goods.every((g) => g.accepted) },
    };
    console.log(
      `junk Initials ${sent} in ${result.params.floodSeconds} s (${rate}/s): RSS idle ${result.rssMb.idle} MB, peak ${result.rssMb.peak} MB (+${result.rssMb.peakOverIdle}, bound ${RSS_BOUND_MB}), ${AFTER_S} s after ${result.rssMb.after} MB; good clients ${result.goodClients.connectedAndAccepted}/${goods.length} connected and accepted, connect p50 ${String(result.goodClients.connectMs.p50)} ms max ${String(result.goodClients.connectMs.max)} ms; relay datagrams in ${datagramsIn} out ${datagramsOut}`,
    );
    if (values.json !== undefined) writeFileSync(values.json, JSON.stringify(result, null, 2) + '\n');
    process.exitCode = result.verdict.rssWithinBound && result.verdict.everyGoodClientConnected ? 0 : 1;
  } finally {
    relay.child.kill('SIGTERM');
  }
}

await main();
