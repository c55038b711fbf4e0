// Acknowledged QUIC submit vs HTTP keep-alive, with the QUIC thread's local admission off and on, in one run (issue #28
// item 3; docs/quic-ingress.md "Local admission"). Run from dist/ after the build:
//   node dist/bench/client/quic-local.bench.js [--calls 3000] [--rounds 4] [--json bench/results/client-quic-local.json]
// Two real relays (dist/src/cli.js start) run as children, identical but for relayHost.quic.localAdmission (false /
// true); the key's only route is `static`, one peer: a counting TPU listener in a third child process (the far end, off
// this process's CPU). Unlike bench/client/http-submit.bench.ts (routes.discard, no QUIC thread) a transaction here
// really goes out over QUIC to the peer, since local admission needs the QUIC thread's routes. This process is the
// client (the library, slotrelay/client and slotrelay/client/quic): per round and relay, `calls` sequential submits
// after a warm-up, each row: HTTP keep-alive (RelayClient + undici Agent), QUIC acknowledged (a bidi stream, answer
// read). The four rows are interleaved in blocks of 100 submits, the order rotated per block, so load that drifts on
// the shared box bills every row alike. Figures: p50/p99 per submit (HDR, microseconds), and per round QUIC p50 / HTTP
// p50 for each relay.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { build, type Histogram } from 'hdr-histogram-js';
import { Agent } from 'undici';
import { stringify } from 'yaml';
import { RelayClient } from '../../src/client/index.js';
import { quicTransport } from '../../src/client/quic/index.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '4' },
    /** `http`: the HTTP rows only (does the flag cost HTTP anything, without QUIC traffic in between). */
    rows: { type: 'string', default: 'all' },
    json: { type: 'string' },
    /** Node flags for the relays, e.g. "--cpu-prof --cpu-prof-dir=DIR" (profiles of their threads). */
    'relay-node-args': { type: 'string', default: '' },
  },
});
const CALLS = Number(values.calls);
const ROUNDS = Math.max(1, Number(values.rounds));
const RELAY_NODE_ARGS = values['relay-node-args'].split(' ').filter((x) => x !== '');
const KEY = '6f1c2a4e-9b7d-4c3a-8e21-5d0f4b6a7c19';
const WARMUP = 500;
const TXS = 2_000;
const root = fileURLToPath(new URL('../../..', import.meta.url));

function transactions(n: number): Uint8Array[] {
  const payer = Keypair.generate();
  const out: Uint8Array[] = [];
  for (let i = 0; i < n; i++) {
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash: Keypair.generate().publicKey.toBase58(), lastValidBlockHeight: 1 }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 + i }),
    );
    tx.sign(payer);
    out.push(new Uint8Array(tx.serialize()));
  }
  return out;
}

/** The peer: a counting TPU listener in a process of its own; resolves with its port. */
async function startSink(): Promise<{ child: ChildProcess; port: number }> {
  const code = `import(${JSON.stringify(join(root, 'dist/bench/counting-tpu-listener.js'))}).then(async (m) => {
    const l = await m.startCountingListener(4096);
    console.log(JSON.stringify({ port: l.port }));
    setInterval(() => {}, 1 << 30);
  });`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (c) => reject(new Error(`sink exited ${String(c)}`)));
    createInterface({ input: child.stdout! }).once('line', (l) => resolve((JSON.parse(l) as { port: number }).port));
  });
  return { child, port };
}

async function startRelay(localAdmission: boolean, sinkPort: number): Promise<{ child: ChildProcess; relayUrl: string; quicAddress: string }> {
  const dir = mkdtempSync(join(os.tmpdir(), 'slotrelay-quic-local-bench-'));
  const file = join(dir, 'config.yaml');
  writeFileSync(
    file,
    stringify({
      rpcHost: { host: '127.0.0.1', port: 0 },
      admin: { port: 0 },
      relayHost: { host: '127.0.0.1', port: 0, quicPort: -1, quic: { maxConcurrentStreams: 1_024, localAdmission } },
      upstream: { rpcUrl: 'http://127.0.0.1:9' }, // never called: no preflight on /v1/submit, receipts not polled for long
      rings: { workers: 1, slotsPerRing: 16_384 },
      routes: { static: { peers: [`127.0.0.1:${sinkPort}`], everyTransaction: false } },
      retries: { defaultMaxRetries: 0 },
      telemetry: { enabled: false },
      jsonRpc: { pubsub: { enabled: false } },
      log: { level: 'warn' },
      keys: [{ key: KEY, name: 'bench', rateLimit: { perSecond: 10_000_000, burst: 10_000_000 }, defaultRoutes: ['static'] }],
    }),
  );
  const child = spawn(process.execPath, [...RELAY_NODE_ARGS, join(root, 'dist/src/cli.js'), 'start', '--config', file], { stdio: ['ignore', 'pipe', 'inherit'] });
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
  readonly relay: 'off' | 'on';
  readonly name: string;
  readonly submits: number;
  readonly perSecond: number;
  readonly p50Us: number;
  readonly p99Us: number;
}

type Submit = (i: number) => Promise<void>;

const BLOCK = 100;

/**
 * The four rows of a round, interleaved: BLOCK sequential submits of each row in turn (the order rotated per block),
 * until each row has `calls` (after a warm-up of each): load that changes within seconds on the shared box then bills
 * every row alike instead of whichever ran during a busy second.
 */
async function interleaved(rows: { relay: 'off' | 'on'; name: string; submit: Submit }[]): Promise<Row[]> {
  for (const r of rows) for (let i = 0; i < WARMUP; i++) await r.submit(i);
  const hs = rows.map(() => histogram());
  const busy = rows.map(() => 0n);
  for (let b = 0, i = 0; i < CALLS; b++, i += BLOCK) {
    for (let k = 0; k < rows.length; k++) {
      const x = (b + k) % rows.length;
      const t0 = process.hrtime.bigint();
      for (let j = i; j < Math.min(CALLS, i + BLOCK); j++) {
        const s = process.hrtime.bigint();
        await rows[x].submit(j);
        hs[x].recordValue(Math.max(1, Number((process.hrtime.bigint() - s) / 1000n)));
      }
      busy[x] += process.hrtime.bigint() - t0;
    }
  }
  return rows.map((r, x) => ({
    relay: r.relay,
    name: r.name,
    submits: hs[x].totalCount,
    perSecond: Math.round(hs[x].totalCount / (Number(busy[x]) / 1e9)),
    p50Us: hs[x].getValueAtPercentile(50),
    p99Us: hs[x].getValueAtPercentile(99),
  }));
}

function ms(us: number): string {
  return (us / 1000).toFixed(3);
}

async function main(): Promise<void> {
  const txs = transactions(TXS);
  const b64 = txs.map((b) => Buffer.from(b).toString('base64'));
  const sink = await startSink();
  const relays = { off: await startRelay(false, sink.port), on: await startRelay(true, sink.port) };
  const agent = new Agent({ connections: 1, keepAliveTimeout: 30_000 });
  const clients = {
    off: {
      http: new RelayClient({ url: relays.off.relayUrl, apiKey: KEY, dispatcher: agent }),
      quic: new RelayClient({ url: relays.off.relayUrl, apiKey: KEY, transport: quicTransport({ address: relays.off.quicAddress }) }),
    },
    on: {
      http: new RelayClient({ url: relays.on.relayUrl, apiKey: KEY, dispatcher: agent }),
      quic: new RelayClient({ url: relays.on.relayUrl, apiKey: KEY, transport: quicTransport({ address: relays.on.quicAddress }) }),
    },
  };
  const loads: number[][] = [];
  const rounds: Row[][] = [];
  try {
    for (let r = 0; r < ROUNDS; r++) {
      loads.push(os.loadavg());
      const rows = await interleaved(
        (['off', 'on'] as const).flatMap((v) => [
          { relay: v, name: 'HTTP keep-alive (undici Agent)', submit: async (i: number) => void (await clients[v].http.submit(b64[i % TXS])) },
          { relay: v, name: 'QUIC acknowledged', submit: async (i: number) => void (await clients[v].quic.submit(txs[i % TXS])) },
        ]).filter((x) => values.rows !== 'http' || x.name !== 'QUIC acknowledged'),
      );
      rounds.push(rows);
      console.log(`round ${r + 1} (load ${os.loadavg()[0].toFixed(2)})`);
      for (const x of rows) console.log(`  local ${x.relay.padEnd(3)} ${x.name.padEnd(31)} ${String(x.perSecond).padStart(6)}/s   p50 ${ms(x.p50Us)} ms   p99 ${ms(x.p99Us)} ms`);
    }
  } finally {
    await agent.close();
    for (const v of ['off', 'on'] as const) await clients[v].quic.close();
    relays.off.child.kill('SIGTERM');
    relays.on.child.kill('SIGTERM');
    sink.child.kill('SIGTERM');
  }
  const p50 = (rows: Row[], relay: 'off' | 'on', name: string): number => rows.find((x) => x.relay === relay && x.name === name)?.p50Us ?? NaN;
  const ratios = rounds.map((rows) => ({
    quicOverHttpOff: p50(rows, 'off', 'QUIC acknowledged') / p50(rows, 'off', 'HTTP keep-alive (undici Agent)'),
    quicOverHttpOn: p50(rows, 'on', 'QUIC acknowledged') / p50(rows, 'on', 'HTTP keep-alive (undici Agent)'),
    quicOnOverOff: p50(rows, 'on', 'QUIC acknowledged') / p50(rows, 'off', 'QUIC acknowledged'),
    httpOnOverOff: p50(rows, 'on', 'HTTP keep-alive (undici Agent)') / p50(rows, 'off', 'HTTP keep-alive (undici Agent)'),
  }));
  console.log('per round, p50 ratios: QUIC/HTTP (off), QUIC/HTTP (on), QUIC on/off, HTTP on/off');
  for (const x of ratios) console.log(`  ${x.quicOverHttpOff.toFixed(3)}  ${x.quicOverHttpOn.toFixed(3)}  ${x.quicOnOverOff.toFixed(3)}  ${x.httpOnOverOff.toFixed(3)}`);
  if (values.json) {
    const out = { bench: 'client-quic-local', date: new Date().toISOString(), node: process.version, cpus: os.cpus().length, loadavgPerRound: loads, calls: CALLS, rounds: ROUNDS, ratios, perRound: rounds };
    mkdirSync(dirname(values.json), { recursive: true });
    writeFileSync(values.json, JSON.stringify(out, null, 2) + '\n');
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
