// Localnet listener throughput: transactions per second received by ONE validator's TPU listener of a real localnet
// (startLocalnet: QUIC listener -> TPU gate -> bank), next to a bare TpuListener that only counts, in the same run.
//   bare        TpuListener alone, onTransaction counts (what bench/quic/egress-throughput.bench.ts measures, but
//               with the sender in another thread)
//   non-leader  a localnet validator that is not leading: received, then dropped as not_leader (no copy, no parse)
//   leader      the current leader: received, copied, parsed, executed by the bank (litesvm) and recorded
// The sender is a worker thread (listener-sender-worker.ts) with the project's QUIC client, one connection per case,
// so it does not share the listener's event loop; the listener's 128-stream limit applies. Transactions are real
// signed SOL transfers, distinct, signed before any clock starts: web3.js compiles one message per payer, the
// lamports field is varied per transaction and each message is signed with node:crypto Ed25519 (web3.js's own
// signer costs ~1 ms per transaction here, which would make the set-up longer than the run). Counts are the
// localnet's gate counters (the object localnet_getCounters serves); the facade's answer is printed at the end.
// Event-loop utilization of both threads says which side was the limit (busy ~100% = saturated; on a loaded box
// a thread waiting for a core counts as busy too). The listener thread's CPU time per received transaction (Linux
// /proc/thread-self) is the figure that holds when other jobs share the cores: 1e6 / it = tx/s with a whole core.
// A slot lasts 30 s, so the leader cannot change during the run. Bounded: each case at most PHASE_MS and a fixed
// count; the whole process at most 120 s. Loopback (127.0.0.1) only. Figures: docs/localnet.md.
// Run: npx tsc -p tsconfig.json && node dist/bench/localnet/listener-throughput.bench.js [--count N] [--ms MS]
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { startLocalnet } from '../../src/localnet/localnet.js';
import { TpuListener } from '../../src/localnet/tpu-listener.js';

const { values } = parseArgs({ options: { count: { type: 'string' }, ms: { type: 'string' } } });
/** Distinct transactions; the leader case sends each at most once (the non-leader and bare cases cycle through them). */
const COUNT = Number(values.count ?? 40_000);
const PHASE_MS = Number(values.ms ?? 3_000);
/** Upper bound per cycling case (bare, non-leader): far above what 3 s can carry. */
const MAX_CYCLED = 500_000;
const PAYERS = 64;
const SLOT_MS = 30_000;
const HOST = '127.0.0.1';

const watchdog = setTimeout(() => {
  console.error('listener-throughput: gave up after 120 s');
  process.exit(2);
}, 120_000);
watchdog.unref();

const ln = await startLocalnet({ host: HOST, validators: 3, slotMs: SLOT_MS, graceMs: 0, seed: 'listener-bench' });
const leader = ln.schedule.leaderAt(ln.clock.current);
const next = ln.schedule.leaderAt(ln.schedule.nextLeaderChange(ln.clock.current));
const nonLeader = ln.validators.find((v) => v.identity !== leader && v.identity !== next) ?? ln.validators.find((v) => v.identity !== leader)!;
const leaderV = ln.validators.find((v) => v.identity === leader)!;

// ---- pre-signed transactions (before any clock) ----
const t0Sign = performance.now();
const blockhash = ln.bank.blockhashAt(ln.clock.current).blockhash;
const payers = Array.from({ length: PAYERS }, () => Keypair.generate());
for (const p of payers) if (!ln.bank.airdrop(p.publicKey, 100_000_000_000n).landed) throw new Error('airdrop failed');
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const keys: KeyObject[] = payers.map((p) => createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, p.secretKey.subarray(0, 32)]), format: 'der', type: 'pkcs8' }));
const templates = payers.map((p) => {
  const msg = new Transaction({ feePayer: p.publicKey, blockhash, lastValidBlockHeight: 0 })
    .add(SystemProgram.transfer({ fromPubkey: p.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 }))
    .serializeMessage();
  // System transfer data ends the message: u32 LE 2 (Transfer), u64 LE lamports.
  if (msg.readUInt32LE(msg.length - 12) !== 2 || msg.readBigUInt64LE(msg.length - 8) !== 1n) throw new Error('unexpected message layout');
  return msg;
});
const wireLen = 1 + 64 + templates[0].length;
const bytes = new ArrayBuffer(COUNT * wireLen);
const offsets: number[] = [];
for (let i = 0; i < COUNT; i++) {
  const msg = templates[i % PAYERS];
  msg.writeBigUInt64LE(BigInt(1_000 + i), msg.length - 8);
  const wire = Buffer.from(bytes, i * wireLen, wireLen);
  wire[0] = 1; // one signature
  sign(null, msg, keys[i % PAYERS]).copy(wire, 1);
  msg.copy(wire, 65);
  offsets.push(i * wireLen);
}
offsets.push(COUNT * wireLen);
const signMs = performance.now() - t0Sign;

// ---- sender thread ----
const sender = new Worker(new URL('./listener-sender-worker.js', import.meta.url), { workerData: { bytes, offsets } });
sender.on('error', (e) => {
  console.error('sender worker failed:', e);
  process.exit(1);
});
const fromSender = <T>(pred: (m: any) => boolean): Promise<T> =>
  new Promise((resolve) => {
    const on = (m: any): void => {
      if (!pred(m)) return;
      sender.off('message', on);
      resolve(m as T);
    };
    sender.on('message', on);
  });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CPU time (ms) of the calling thread so far, from /proc/thread-self/stat (Linux; 10 ms ticks); null elsewhere. */
function threadCpuMs(): number | null {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10; // utime + stime, CLK_TCK = 100
  } catch {
    return null;
  }
}

interface Row {
  case: string;
  'received/s': number;
  'landed/s': number | string;
  'received in window': number;
  'given by sender': number;
  'received after drain': number;
  /** CPU of the listener's thread per received transaction, and the rate that makes with a whole core. */
  'listener CPU us/tx': number | string;
  'tx/s per listener core': number | string;
  /** Event-loop utilization during the window: the listener's thread (main) and the sender's. */
  'listener busy': string;
  'sender busy': string;
  'vs bare': string;
}

async function measure(name: string, tpu: string, count: () => number, landed: (() => number) | null, cycle: boolean): Promise<Row> {
  const [host, port] = tpu.split(':');
  sender.postMessage({ cmd: 'connect', host, port: Number(port) });
  await fromSender((m) => m.ready === true); // the handshake is outside the window
  const r0 = count();
  const l0 = landed?.() ?? 0;
  const done = fromSender<{ given: number; ms: number; busy: number }>((m) => m.done === true);
  const elu0 = performance.eventLoopUtilization();
  const cpu0 = threadCpuMs();
  const t0 = process.hrtime.bigint();
  sender.postMessage({ cmd: 'go', durationMs: PHASE_MS, maxCount: cycle ? MAX_CYCLED : COUNT, cycle });
  const d = await done;
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  const busy = performance.eventLoopUtilization(elu0).utilization;
  const cpu1 = threadCpuMs();
  const inWindow = count() - r0;
  const landedInWindow = (landed?.() ?? 0) - l0;
  const usPerTx = cpu0 === null || cpu1 === null || inWindow === 0 ? null : ((cpu1 - cpu0) * 1000) / inWindow;
  // What the sender had given but not yet delivered arrives now: wait (bounded) and check nothing was lost.
  const end = Date.now() + 3_000;
  while (count() - r0 < d.given && Date.now() < end) await sleep(10);
  return {
    case: name,
    'received/s': Math.round(inWindow / s),
    'landed/s': landed === null ? '-' : Math.round(landedInWindow / s),
    'received in window': inWindow,
    'given by sender': d.given,
    'received after drain': count() - r0,
    'listener CPU us/tx': usPerTx === null ? 'n/a' : Math.round(usPerTx),
    'tx/s per listener core': usPerTx === null ? 'n/a' : Math.round(1e6 / usPerTx),
    'listener busy': `${Math.round(busy * 100)}%`,
    'sender busy': `${Math.round(d.busy * 100)}%`,
    'vs bare': '',
  };
}

let bareCount = 0;
const bare = new TpuListener({ host: HOST, port: 0, validatorIdentity: 'bare', maxStreams: 128, onTransaction: () => void bareCount++ });
await bare.start();
const rows: Row[] = [];
rows.push(await measure('bare TpuListener', `${HOST}:${bare.address().port}`, () => bareCount, null, true));
await bare.stop();
const nl = ln.landings.countersOf(nonLeader.identity);
rows.push(await measure('localnet non-leader', nonLeader.tpuQuic, () => nl.received, null, true));
const ld = ln.landings.countersOf(leader);
rows.push(await measure('localnet leader', leaderV.tpuQuic, () => ld.received, () => ld.landed, false));
const bareRate = rows[0]['received/s'];
for (const r of rows) r['vs bare'] = (r['received/s'] / bareRate).toFixed(2);

sender.postMessage({ cmd: 'stop' });
const res = await fetch(ln.rpcUrl, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'localnet_getCounters', params: [] }),
});
const counters = ((await res.json()) as { result: { slot: number; validators: Record<string, unknown> } }).result;
const slotAtEnd = ln.clock.current;
await ln.stop();

const stayed = ln.schedule.leaderAt(slotAtEnd) === leader ? 'stayed leader' : 'DID NOT stay leader';
console.log(`listener throughput: ${COUNT} pre-signed transfers (${wireLen} B) signed in ${(signMs / 1000).toFixed(1)} s; ${PHASE_MS} ms per case; leader ${leader.slice(0, 8)}.. ${stayed} (slot ${slotAtEnd})`);
console.table(rows);
console.log('localnet_getCounters:', JSON.stringify({ leader: counters.validators[leader], nonLeader: counters.validators[nonLeader.identity] }));
console.log(JSON.stringify({ bench: 'localnet.listener-throughput', phaseMs: PHASE_MS, rows }));
process.exit(0);
