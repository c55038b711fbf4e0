// Issue #30 item 8, measured: a real relay's QUIC ingress under junk Initials at RATE per second for SECONDS (bench
// process; the relay is a child process with routes.discard). Samples the relay's RSS every 250 ms (idle before, peak
// during, 10 s after), and meanwhile a well-behaved client (the project's IngressClient with a key-bound certificate)
// connects and submits once a second: its connect times and failures. The bound the issue sets: peak RSS within 50 MB
// of idle, and good clients keep connecting (exit 0 only when the default variant meets both). Writes
// bench/results/initial-flood.json.
// Run: node dist/bench/ingress/initial-flood.bench.js [--rate 5000] [--seconds 20] [--rounds 2] [--variants both|default] [--json FILE]
import dgram from 'node:dgram';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { IngressClient } from '../../src/client/quic/ingress-client.js';
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

/** Per thread role: V8 heap used and reserved (MB), from the relay's own /metrics (src/metrics/thread-memory.ts). */
async function threadHeaps(rpcUrl: string): Promise<Record<string, { usedMb: number; totalMb: number }>> {
  const text = await (await fetch(`${rpcUrl}/metrics`)).text();
  const out: Record<string, { usedMb: number; totalMb: number }> = {};
  for (const line of text.split('\n')) {
    const m = /^slotrelay_thread_heap_(used|total)_bytes\{thread="([^"]+)",id="(\d+)"\} (\S+)/.exec(line);
    if (m === null) continue;
    const e = (out[`${m[2]}-${m[3]}`] ??= { usedMb: 0, totalMb: 0 });
    if (m[1] === 'used') e.usedMb = Math.round(Number(m[4]) / 104857.6) / 10;
    else e.totalMb = Math.round(Number(m[4]) / 104857.6) / 10;
  }
  return out;
}

function metricValue(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(name + ' '));
  return line === undefined ? NaN : Number(line.split(' ').at(-1));
}

/** One flood against a fresh relay started with `env` added to its environment. */
async function floodOnce(rate: number, seconds: number, env: Readonly<Record<string, string>>): Promise<Record<string, unknown> & { verdict: { rssWithinBound: boolean; everyGoodClientConnected: boolean } }> {
  const relay = await startBenchRelay(
    1_000,
    { rateLimit: { perSecond: 100_000, burst: 100_000 } },
    { relayHost: { host: '127.0.0.1', port: 0, quicPort: -1 }, routes: { discard: true } },
    env,
  );
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
    const heapsIdle = await threadHeaps(relay.rpcUrl);
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
    const heapsEndOfFlood = await threadHeaps(relay.rpcUrl);
    clearInterval(goodTimer);
    const duringPeak = Math.max(...rss.map((s) => s.mb));
    await sleep(AFTER_S * 1000);
    clearInterval(sampler);
    for (const s of socks) s.close();
    const goods = await Promise.all(good);
    const after = rssMb(pid);
    const heapsAfter = await threadHeaps(relay.rpcUrl);
    const peak = Math.max(duringPeak, ...rss.map((s) => s.mb));
    const connects = goods.filter((g) => g.connectMs !== null).map((g) => g.connectMs!).sort((a, b) => a - b);
    const metrics = await (await fetch(`${relay.rpcUrl}/metrics`)).text();
    const datagramsIn = metricValue(metrics, 'slotrelay_quic_ingress_datagrams_total{direction="received"}');
    const datagramsOut = metricValue(metrics, 'slotrelay_quic_ingress_datagrams_total{direction="sent"}');
    const result = {
      env,
      params: { ratePerSecond: rate, seconds, junkSent: sent, floodSeconds: Math.round(floodS * 10) / 10, goodClientEveryMs: GOOD_CLIENT_EVERY_MS },
      rssMb: { idle: Math.round(idle * 10) / 10, peak: Math.round(peak * 10) / 10, peakOverIdle: Math.round((peak - idle) * 10) / 10, afterS: AFTER_S, after: Math.round(after * 10) / 10, bound: RSS_BOUND_MB },
      goodClients: {
        tried: goods.length,
        connectedAndAccepted: goods.filter((g) => g.accepted).length,
        failures: goods.filter((g) => !g.accepted).map((g) => ({ atS: g.atS, error: g.error ?? 'not accepted' })),
        connectMs: { p50: connects[Math.floor(connects.length / 2)] ?? null, max: connects.at(-1) ?? null, all: goods.map((g) => g.connectMs) },
      },
      relayDatagrams: { received: datagramsIn, sent: datagramsOut },
      threadHeapsMb: { idle: heapsIdle, endOfFlood: heapsEndOfFlood, after: heapsAfter },
      rssSamples: rss,
      verdict: { rssWithinBound: peak - idle <= RSS_BOUND_MB, everyGoodClientConnected: goods.every((g) => g.accepted) },
    };
    console.log(
      `${JSON.stringify(env)}: junk Initials ${sent} in ${result.params.floodSeconds} s (${rate}/s): RSS idle ${result.rssMb.idle} MB, peak ${result.rssMb.peak} MB (+${result.rssMb.peakOverIdle}, bound ${RSS_BOUND_MB}), ${AFTER_S} s after ${result.rssMb.after} MB; good clients ${result.goodClients.connectedAndAccepted}/${goods.length} connected and accepted, connect p50 ${String(result.goodClients.connectMs.p50)} ms max ${String(result.goodClients.connectMs.max)} ms; relay datagrams in ${datagramsIn} out ${datagramsOut}`,
    );
    return result;
  } finally {
    relay.child.kill('SIGTERM');
    await new Promise((r) => relay.child.once('exit', r));
  }
}

/**
 * Variants, alternated for ROUNDS rounds in one run: the relay as started by default, and with glibc's malloc held to
 * one arena (MALLOC_ARENA_MAX=1). The V8 heaps stay small under the flood (threadHeapsMb) and a bare node:dgram socket
 * receiving the same flood grows ~10 MB: the relay's growth is the QUIC thread's native allocations (quiche, TLS,
 * UDP sends) kept as per-thread arena high-water marks, which the single-arena variant shows.
 */
const VARIANTS: readonly Readonly<Record<string, string>>[] = [{}, { MALLOC_ARENA_MAX: '1' }];

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rate: { type: 'string', default: '5000' }, seconds: { type: 'string', default: '20' }, rounds: { type: 'string', default: '2' }, variants: { type: 'string', default: 'both' }, env: { type: 'string', multiple: true }, json: { type: 'string' } } });
  const rate = Number(values.rate);
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  const runs: Awaited<ReturnType<typeof floodOnce>>[] = [];
  // --variants default: only the relay as deployed (no MALLOC_ARENA_MAX run beside it).
  const extra: Record<string, string> = Object.fromEntries((values.env ?? []).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  const variants = values.variants === 'default' ? [extra] : values.variants === 'extra' ? [{}, extra] : VARIANTS;
  for (let r = 0; r < rounds; r++) for (const env of r % 2 === 0 ? variants : [...variants].reverse()) runs.push(await floodOnce(rate, seconds, env));
  const out = {
    kind: 'quic-ingress-initial-flood',
    at: new Date().toISOString(),
    host: { cpus: 2, node: process.version, note: 'shared box: other jobs may run on the same cores' },
    runs,
  };
  if (values.json !== undefined) writeFileSync(values.json, JSON.stringify(out, null, 2) + '\n');
  // The bound is judged on the relay as it is started by default; the other variant is reported beside it.
  const asDeployed = runs.filter((x) => Object.keys(x.env as Record<string, string>).length === 0);
  process.exitCode = asDeployed.every((x) => x.verdict.rssWithinBound && x.verdict.everyGoodClientConnected) ? 0 : 1;
}

await main();
