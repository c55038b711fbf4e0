// How much earlier a client learns each slot, and each landing, from the localnet's Yellowstone gRPC stream than
// from PubSub slotSubscribe and getSignatureStatuses polling (the relay's two paths), over the same link: the localnet
// runs as its own process with the RPC node --rpc-delay ms away (its PubSub and its Geyser server alike) and leaders
// --link-delay ms away. Slots: per slot, the PubSub notification's arrival minus the stream's first update for it
// (FIRST_SHRED_RECEIVED); the localnet's RPC node creates each bank --shred-to-bank-ms after its first shred
// (src/localnet/shred-to-bank.ts; 0 = the localnet before it had that model). Landings: transfers sent through the
// RPC node at --rate/s, each watched on the stream (a signature filter, set before the send), on a PubSub
// signatureSubscribe (processed, set before the send) and polled every --poll ms (the relay's receipts.pollMs
// default: 200); per landing, the PubSub notification and the poll that first saw it, each minus the stream's
// status. The relay's own classes do the slot and stream listening (src/telemetry/geyser/geyser-slot-stream.ts,
// src/telemetry/ws-slot-client.ts).
// Run: npx tsc -p tsconfig.json && node dist/bench/telemetry/geyser-vs-pubsub.js [--seconds 30] [--slot-ms 250]
//      [--rpc-delay 20] [--link-delay 20] [--shred-to-bank-ms 5] [--rate 5] [--poll 200]
//      [--out bench/results/geyser-vs-pubsub.json]
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import WebSocket from 'ws';
import { GeyserSlotStream } from '../../src/telemetry/geyser/geyser-slot-stream.js';
import { SlotSubscription } from '../../src/telemetry/ws-slot-client.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string' },
    'slot-ms': { type: 'string' },
    'rpc-delay': { type: 'string' },
    'link-delay': { type: 'string' },
    'shred-to-bank-ms': { type: 'string' },
    rate: { type: 'string' },
    poll: { type: 'string' },
    out: { type: 'string' },
  },
});
const SECONDS = Number(values.seconds ?? 30);
const SLOT_MS = Number(values['slot-ms'] ?? 250);
const RPC_DELAY = Number(values['rpc-delay'] ?? 20);
const LINK_DELAY = Number(values['link-delay'] ?? 20);
const SHRED_TO_BANK_MS = Number(values['shred-to-bank-ms'] ?? 5);
const RATE = Number(values.rate ?? 5);
const POLL_MS = Number(values.poll ?? 200);

function pct(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 10) / 10;
}

async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const j = (await r.json()) as { result: T; error?: { message: string } };
  if (j.error) throw new Error(`${method}: ${j.error.message}`);
  return j.result;
}

async function main(): Promise<void> {
  const child = spawn(
    process.execPath,
    ['dist/src/cli.js', 'localnet', '--rpc-port', '0', '--grpc-port', '0', '--slot-ms', String(SLOT_MS), '--rpc-one-way-delay-ms', String(RPC_DELAY), '--one-way-delays-ms', [LINK_DELAY, LINK_DELAY, LINK_DELAY, LINK_DELAY].join(','), '--shred-to-bank-ms', String(SHRED_TO_BANK_MS)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const ready = JSON.parse((await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next()).value as string) as { rpcUrl: string; wsUrl: string; grpcUrl: string };

  const grpcAt = new Map<number, number>();
  const wsAt = new Map<number, number>();
  const landedByStream = new Map<string, number>();
  const stream = new GeyserSlotStream({
    url: ready.grpcUrl,
    onSlot: (slot) => {
      if (!grpcAt.has(slot)) grpcAt.set(slot, performance.now());
    },
    onState: () => undefined,
    stallMs: () => 10 * SLOT_MS,
    onTxStatus: (sig) => {
      if (!landedByStream.has(sig)) landedByStream.set(sig, performance.now());
    },
  });
  const ws = new SlotSubscription({
    url: ready.wsUrl,
    onSlot: (slot) => {
      if (!wsAt.has(slot)) wsAt.set(slot, performance.now());
    },
  });
  stream.start();
  ws.start();
  // PubSub signatureSubscribe (processed) on one socket: request id -> signature, subscription id -> signature.
  const landedByPubsub = new Map<string, number>();
  const sigSocket = new WebSocket(ready.wsUrl);
  const sigByRequest = new Map<number, string>();
  const sigBySub = new Map<number, string>();
  let nextRequest = 1;
  sigSocket.on('message', (data) => {
    const now = performance.now();
    const m = JSON.parse(data.toString()) as { id?: number; result?: number; method?: string; params?: { subscription: number } };
    if (m.id !== undefined && typeof m.result === 'number') {
      const sig = sigByRequest.get(m.id);
      if (sig !== undefined) sigBySub.set(m.result, sig);
    } else if (m.method === 'signatureNotification' && m.params !== undefined) {
      const sig = sigBySub.get(m.params.subscription);
      if (sig !== undefined && !landedByPubsub.has(sig)) landedByPubsub.set(sig, now);
    }
  });
  await new Promise((resolve, reject) => sigSocket.once('open', resolve).once('error', reject));

  const payer = Keypair.generate();
  const airdrop = await rpc<string>(ready.rpcUrl, 'requestAirdrop', [payer.publicKey.toBase58(), 100_000_000_000]);
  for (let i = 0; i < 100; i++) {
    const st = await rpc<{ value: ({ slot: number } | null)[] }>(ready.rpcUrl, 'getSignatureStatuses', [[airdrop]]);
    if (st.value[0] !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }

  const watched: string[] = [];
  const landedByPoll = new Map<string, number>();
  const startSlot = Math.max(0, ...grpcAt.keys());
  const end = performance.now() + SECONDS * 1000;
  const poller = setInterval(() => {
    const pending = watched.filter((s) => !landedByPoll.has(s));
    if (pending.length === 0) return;
    void rpc<{ value: ({ slot: number } | null)[] }>(ready.rpcUrl, 'getSignatureStatuses', [pending]).then((r) => {
      const now = performance.now();
      r.value.forEach((v, i) => {
        if (v !== null && !landedByPoll.has(pending[i])) landedByPoll.set(pending[i], now);
      });
    }, () => undefined);
  }, POLL_MS);
  while (performance.now() < end) {
    const { blockhash } = (await rpc<{ value: { blockhash: string } }>(ready.rpcUrl, 'getLatestBlockhash', [{ commitment: 'processed' }])).value;
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight: 0 }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 }),
    );
    tx.sign(payer);
    const sig = (await import('bs58')).default.encode(tx.signature!);
    watched.push(sig);
    stream.watch(watched.filter((s) => !landedByStream.has(s)));
    const id = nextRequest++;
    sigByRequest.set(id, sig);
    sigSocket.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'signatureSubscribe', params: [sig, { commitment: 'processed' }] }));
    // The watch goes out before the send, as the relay's does (at accept, before the route sends).
    await new Promise((r) => setTimeout(r, 5));
    await rpc<string>(ready.rpcUrl, 'sendTransaction', [tx.serialize().toString('base64'), { encoding: 'base64', skipPreflight: true }]);
    await new Promise((r) => setTimeout(r, 1000 / RATE));
  }
  await new Promise((r) => setTimeout(r, 3_000));
  clearInterval(poller);
  stream.close();
  ws.close();
  sigSocket.close();
  child.kill('SIGTERM');

  const slotDiffs: number[] = [];
  for (const [slot, t] of wsAt) {
    const g = grpcAt.get(slot);
    if (g !== undefined && slot > startSlot + 2) slotDiffs.push(t - g);
  }
  const landDiffs: number[] = [];
  const pubsubLandDiffs: number[] = [];
  for (const sig of watched) {
    const g = landedByStream.get(sig);
    const p = landedByPoll.get(sig);
    const n = landedByPubsub.get(sig);
    if (g !== undefined && p !== undefined) landDiffs.push(p - g);
    if (g !== undefined && n !== undefined) pubsubLandDiffs.push(n - g);
  }
  const result = {
    tool: 'bench/telemetry/geyser-vs-pubsub',
    createdAt: new Date().toISOString(),
    params: { seconds: SECONDS, slotMs: SLOT_MS, rpcOneWayDelayMs: RPC_DELAY, leaderOneWayDelayMs: LINK_DELAY, shredToBankMs: SHRED_TO_BANK_MS, ratePerSecond: RATE, pollMs: POLL_MS },
    slots: { compared: slotDiffs.length, pubsubLaterMs: { p50: pct(slotDiffs, 50), p99: pct(slotDiffs, 99), min: pct(slotDiffs, 0) } },
    landings: {
      sent: watched.length,
      toldByStream: landedByStream.size,
      toldByPoll: landedByPoll.size,
      toldBySignatureSubscribe: landedByPubsub.size,
      compared: landDiffs.length,
      pollLaterMs: { p50: pct(landDiffs, 50), p99: pct(landDiffs, 99), min: pct(landDiffs, 0) },
      comparedSignatureSubscribe: pubsubLandDiffs.length,
      signatureSubscribeLaterMs: { p50: pct(pubsubLandDiffs, 50), p99: pct(pubsubLandDiffs, 99), min: pct(pubsubLandDiffs, 0) },
    },
  };
  const text = JSON.stringify(result, null, 2);
  process.stdout.write(text + '\n');
  if (values.out !== undefined) writeFileSync(values.out, text + '\n');
  process.exit(0);
}

void main();
