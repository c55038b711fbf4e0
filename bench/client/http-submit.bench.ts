// Client library submit over HTTP keep-alive, from one client process (issue #14; docs/client.md "Measured"). Run
// from dist/ after `npm run build`:
//   node dist/bench/client/http-submit.bench.js [--calls 3000] [--rounds 3] [--seconds 3] [--concurrency 16]
//                                               [--json bench/results/client-http.json]
// The real relay (dist/src/cli.js start) runs as a child with routes.discard (benchmark only: the egress releases
// every record unsent), so what is timed is the submit path: client -> relay front -> ring -> answer, as bench/e2e.
// This process is the client; 2,000 distinct signed transactions rotate. Rows, in the same run, alternating per round
// (the library first in odd rounds, the bare request first in even ones) so drift on the shared box bills both:
//   library, global fetch       RelayClient.submit with Node's fetch (keep-alive by default), 1 in flight
//   library, undici Agent       RelayClient.submit with an undici Agent as `dispatcher` (its request() API), 1 in flight
//   bare undici request         the same POST (headers, body) with undici Client.request: the floor for HTTP/1.1
//   library, N in flight        `concurrency` submits in flight for `seconds` (the undici Agent, N connections)
//   QUIC acknowledged           RelayClient.submit over quicTransport() (slotrelay/client/quic): a bidi stream, answer read
//   QUIC fire-and-forget        the same with fireAndForget: a uni stream, resolved once written (no answer)
//   QUIC, N in flight           `concurrency` acknowledged QUIC submits in flight for `seconds`, one connection
// Figures: submits/s and p50/p99 per submit (HDR histogram, microseconds); the library's overhead is its p50 minus
// the bare request's p50 in the same round (for both library rows). QUIC submits get the wire bytes (HTTP the base64).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { build, type Histogram } from 'hdr-histogram-js';
import { Agent, Client } from 'undici';
import { stringify } from 'yaml';
import { RelayClient } from '../../src/client/index.js';
import { quicTransport } from '../../src/client/quic/index.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '16' },
    json: { type: 'string' },
  },
});
const CALLS = Number(values.calls);
const ROUNDS = Math.max(1, Number(values.rounds));
const SECONDS = Number(values.seconds);
const CONCURRENCY = Number(values.concurrency);
const KEY = '6f1c2a4e-9b7d-4c3a-8e21-5d0f4b6a7c19';
const WARMUP = 500;
const TXS = 2_000;
const root = fileURLToPath(new URL('../../..', import.meta.url));

function transactions(n: number): string[] {
  const payer = Keypair.generate();
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash: Keypair.generate().publicKey.toBase58(), lastValidBlockHeight: 1 }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 + i }),
    );
    tx.sign(payer);
    out.push(tx.serialize().toString('base64'));
  }
  return out;
}

async function startRelay(): Promise<{ child: ChildProcess; relayUrl: string; quicAddress: string }> {
  const dir = mkdtempSync(join(os.tmpdir(), 'slotrelay-client-bench-'));
  const file = join(dir, 'config.yaml');
  writeFileSync(
    file,
    stringify({
      rpcHost: { host: '127.0.0.1', port: 0 },
      admin: { port: 0 }, // the status page's default 8890 is one per host
      // QUIC ingress on an ephemeral port (4433 would collide between relays); room for the in-flight rows.
      relayHost: { host: '127.0.0.1', port: 0, quicPort: -1, quic: { maxConcurrentStreams: 1_024 } },
      upstream: { rpcUrl: 'http://127.0.0.1:9' }, // never called: discard, no preflight on /v1/submit
      rings: { workers: 1, slotsPerRing: 65_536 },
      routes: { discard: true },
      telemetry: { enabled: false },
      jsonRpc: { pubsub: { enabled: false } },
      log: { level: 'warn' },
      keys: [{ key: KEY, name: 'bench', rateLimit: { perSecond: 10_000_000, burst: 10_000_000 } }],
    }),
  );
  const child = spawn(process.execPath, [join(root, 'dist/src/cli.js'), 'start', '--config', file], { stdio: ['ignore', 'pipe', 'inherit'] });
  const ready = await new Promise<{ relayUrl: string; quicAddress: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('relay did not start')), 60_000);
    child.once('exit', (code) => reject(new Error(`relay exited ${String(code)}`)));
    createInterface({ input: child.stdout! }).on('line', (l) => {
      if (!l.startsWith('{')) return;
      const m = JSON.parse(l) as { event?: string; listeners?: { name: string; host: string; port: number }[] };
      if (m.event !== 'relay_ready' || !m.listeners) return;
      clearTimeout(timer);
      const r = m.listeners.find((x) => x.name === 'relay')!;
      const q = m.listeners.find((x) => x.name === 'quic')!;
      resolve({ relayUrl: `http://${r.host}:${r.port}`, quicAddress: `${q.host}:${q.port}` });
    });
  });
  return { child, ...ready };
}

function histogram(): Histogram {
  return build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });
}

interface Row {
  readonly name: string;
  readonly inFlight: number;
  readonly submits: number;
  readonly perSecond: number;
  readonly p50Us: number;
  readonly p99Us: number;
}

function row(name: string, inFlight: number, h: Histogram, elapsedNs: bigint): Row {
  return {
    name,
    inFlight,
    submits: h.totalCount,
    perSecond: Math.round(h.totalCount / (Number(elapsedNs) / 1e9)),
    p50Us: h.getValueAtPercentile(50),
    p99Us: h.getValueAtPercentile(99),
  };
}

/** Submits transaction `i` (modulo the set). */
type Submit = (i: number) => Promise<void>;

/** `calls` sequential submits (after a warm-up), microseconds each. */
async function sequential(name: string, submit: Submit): Promise<Row> {
  for (let i = 0; i < WARMUP; i++) await submit(i);
  const h = histogram();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) {
    const s = process.hrtime.bigint();
    await submit(i);
    h.recordValue(Math.max(1, Number((process.hrtime.bigint() - s) / 1000n)));
  }
  return row(name, 1, h, process.hrtime.bigint() - t0);
}

/** `concurrency` submit loops for `seconds`. */
async function concurrent(name: string, submit: Submit): Promise<Row> {
  const h = histogram();
  let i = 0;
  const until = Date.now() + SECONDS * 1000;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < until) {
        const s = process.hrtime.bigint();
        await submit(i++);
        h.recordValue(Math.max(1, Number((process.hrtime.bigint() - s) / 1000n)));
      }
    }),
  );
  return row(name, CONCURRENCY, h, process.hrtime.bigint() - t0);
}

function ms(us: number): string {
  return (us / 1000).toFixed(3);
}

async function main(): Promise<void> {
  const txs = transactions(TXS);
  const bytes = txs.map((b64) => new Uint8Array(Buffer.from(b64, 'base64')));
  const { child, relayUrl, quicAddress } = await startRelay();
  const quicClient = new RelayClient({ url: relayUrl, apiKey: KEY, transport: quicTransport({ address: quicAddress }) });
  const globalClient = new RelayClient({ url: relayUrl, apiKey: KEY });
  const agent = new Agent({ connections: CONCURRENCY, keepAliveTimeout: 30_000 });
  const undiciClient = new RelayClient({ url: relayUrl, apiKey: KEY, dispatcher: agent });
  const bare = new Client(relayUrl, { pipelining: 1 });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, 'x-api-key': KEY };
  const bareSubmit: Submit = async (i) => {
    const { statusCode, body } = await bare.request({ path: '/v1/submit', method: 'POST', headers, body: '{"transaction":"' + txs[i % TXS] + '"}' });
    const text = await body.text();
    if (statusCode !== 200) throw new Error(`bare: HTTP ${statusCode} ${text.slice(0, 200)}`);
  };
  const lib = (c: RelayClient): Submit => async (i) => {
    await c.submit(txs[i % TXS]);
  };
  const quicAck: Submit = async (i) => {
    await quicClient.submit(bytes[i % TXS]);
  };
  const quicFire: Submit = async (i) => {
    await quicClient.submit(bytes[i % TXS], { fireAndForget: true });
  };
  const rounds: Row[][] = [];
  try {
    for (let r = 0; r < ROUNDS; r++) {
      const rows: Row[] = [];
      const libraryRows = async (): Promise<void> => {
        rows.push(await sequential('library, global fetch', lib(globalClient)));
        rows.push(await sequential('library, undici Agent', lib(undiciClient)));
        rows.push(await sequential('QUIC acknowledged', quicAck));
        rows.push(await sequential('QUIC fire-and-forget', quicFire));
      };
      const bareRow = async (): Promise<void> => {
        rows.push(await sequential('bare undici request', bareSubmit));
      };
      if (r % 2 === 0) {
        await libraryRows();
        await bareRow();
      } else {
        await bareRow();
        await libraryRows();
      }
      rows.push(await concurrent(`library, ${CONCURRENCY} in flight`, lib(undiciClient)));
      rows.push(await concurrent(`QUIC, ${CONCURRENCY} in flight`, quicAck));
      rounds.push(rows);
      console.log(`round ${r + 1}`);
      for (const x of rows) console.log(`  ${x.name.padEnd(28)} ${String(x.perSecond).padStart(6)} submits/s   p50 ${ms(x.p50Us)} ms   p99 ${ms(x.p99Us)} ms   (${x.submits})`);
    }
  } finally {
    await bare.close();
    await agent.close();
    await quicClient.close();
    child.kill('SIGTERM');
  }
  const names = rounds[0].map((x) => x.name);
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const medians = names.map((name) => {
    const rs = rounds.map((rows) => rows.find((x) => x.name === name)!);
    return { name, inFlight: rs[0].inFlight, perSecond: median(rs.map((x) => x.perSecond)), p50Us: median(rs.map((x) => x.p50Us)), p99Us: median(rs.map((x) => x.p99Us)) };
  });
  const p50 = (rows: Row[], name: string): number => rows.find((x) => x.name === name)!.p50Us;
  const overheadUs = {
    globalFetch: rounds.map((rows) => p50(rows, 'library, global fetch') - p50(rows, 'bare undici request')),
    undiciAgent: rounds.map((rows) => p50(rows, 'library, undici Agent') - p50(rows, 'bare undici request')),
  };
  const quicVsHttpP50Us = rounds.map((rows) => p50(rows, 'QUIC acknowledged') - p50(rows, 'library, undici Agent'));
  console.log('medians over rounds:');
  for (const m of medians) console.log(`  ${m.name.padEnd(28)} ${String(m.perSecond).padStart(6)} submits/s   p50 ${ms(m.p50Us)} ms   p99 ${ms(m.p99Us)} ms`);
  console.log(`QUIC acknowledged p50 - library undici Agent p50, per round: ${quicVsHttpP50Us.map(ms).join(', ')} ms`);
  console.log(`library p50 - bare request p50, per round: global fetch ${overheadUs.globalFetch.map(ms).join(', ')} ms; undici Agent ${overheadUs.undiciAgent.map(ms).join(', ')} ms`);
  if (values.json) {
    const out = {
      bench: 'client-http-submit',
      date: new Date().toISOString(),
      node: process.version,
      cpus: os.cpus().length,
      loadavg: os.loadavg(),
      calls: CALLS,
      rounds: ROUNDS,
      seconds: SECONDS,
      concurrency: CONCURRENCY,
      medians,
      libraryOverheadP50Us: overheadUs,
      quicAcknowledgedMinusHttpUndiciP50Us: quicVsHttpP50Us,
      perRound: rounds,
    };
    mkdirSync(dirname(values.json), { recursive: true });
    writeFileSync(values.json, JSON.stringify(out, null, 2) + '\n');
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
