// The relay's memory with the receipt stream in use (issue #43 item 4): a real relay on its embedded localnet,
// read from its own /metrics (process_resident_memory_bytes; the front thread's V8 heap). Phases: idle; 1,000
// receiptSubscribe subscriptions open (10 sockets x 100: half whole-key, half by signature) while nothing flows;
// then a reader that stops reading (one socket, 100 whole-key subscriptions, paused) while transactions flow, sampled
// as they do, until and after the relay closes it (1008 slow_consumer at jsonRpc.pubsub.maxBufferedBytes, default
// 16 MiB). The 1,000 subscriptions stay open and read throughout. Results: bench/results/receipt-stream.md.
//   npx tsc -p tsconfig.json && node dist/bench/pubsub/receipt-stream-memory.bench.js [transactions, default 600]
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { randomBytes } from 'node:crypto';
import { embeddedLocalnetUrl } from '../../test/helpers/embedded-localnet.js';
import { PubsubClient } from '../../test/helpers/pubsub-client.js';
import { startRelay, TEST_KEY } from '../../test/helpers/relay-process.js';

const TXS = Number(process.argv[2] ?? 600);
const budget = { perSecond: 100_000, burst: 100_000 };
const relay = await startRelay({
  localnet: { validators: 1, slotMs: 250 },
  receipts: { pollMs: 200 },
  retries: { defaultMaxRetries: 0 },
  jsonRpc: { pubsub: { receiptSubscriptionsPerKey: 2_000 } },
  keys: [{ key: TEST_KEY, name: 'desk', rateLimit: budget, readLimit: budget }],
});

let slowClosed = false;
async function memory(): Promise<{ rssMiB: number; frontHeapMiB: number }> {
  const text = await (await fetch(`${relay.rpcUrl}/metrics`)).text();
  const val = (re: RegExp): number => Number(text.match(re)?.[1] ?? NaN) / 2 ** 20;
  // A paused client cannot read the close frame: the relay's counter says when it closed it.
  slowClosed = /^slotrelay_pubsub_slow_consumer_closes_total [1-9]/m.test(text);
  return { rssMiB: val(/^process_resident_memory_bytes (\S+)$/m), frontHeapMiB: val(/^slotrelay_thread_heap_used_bytes\{thread="front"[^}]*\} (\S+)$/m) };
}
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const rows: { phase: string; rssMiB: number; frontHeapMiB: number }[] = [];
const sample = async (phase: string): Promise<void> => {
  const m = await memory();
  rows.push({ phase, ...m });
  console.log(`${phase.padEnd(58)} rss ${m.rssMiB.toFixed(1)} MiB  front heap ${m.frontHeapMiB.toFixed(1)} MiB`);
};

try {
  await sleep(3_000);
  await sample('idle, no subscription');
  const url = `${relay.wsUrl}/?key=${TEST_KEY}`;
  const readers: PubsubClient[] = [];
  for (let s = 0; s < 10; s++) {
    const c = await PubsubClient.open(url);
    for (let i = 0; i < 100; i++) await c.subscribe('receiptSubscribe', i % 2 === 0 ? [] : [bs58.encode(randomBytes(64))]);
    c.ws.on('message', () => c.inbox.splice(0)); // read and drop: a client that keeps up
    readers.push(c);
  }
  await sleep(2_000);
  await sample('1,000 subscriptions open, nothing flowing');

  const ln = new Connection(embeddedLocalnetUrl(relay), 'confirmed');
  const payer = Keypair.generate();
  const air = await ln.requestAirdrop(payer.publicKey, 100 * LAMPORTS_PER_SOL);
  for (let i = 0; i < 100 && (await ln.getSignatureStatuses([air])).value[0] === null; i++) await sleep(100);
  const slow = await PubsubClient.open(url);
  for (let i = 0; i < 100; i++) await slow.subscribe('receiptSubscribe', []);
  slow.ws.pause();
  let closedAt = -1;
  const { blockhash } = await ln.getLatestBlockhash('confirmed');
  for (let i = 0; i < TXS; i++) {
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight: 1e9 }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 + i }),
    );
    tx.sign(payer);
    const res = await fetch(`${relay.relayUrl}/v1/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
      body: JSON.stringify({ transaction: tx.serialize().toString('base64'), routes: ['rpc'] }),
    });
    await res.arrayBuffer();
    if (closedAt < 0 && i % 5 === 0) {
      await memory();
      if (slowClosed) {
        closedAt = i;
        await sample(`slow reader closed by the relay after ${i + 1} transactions`);
      }
    }
    if ((i + 1) % Math.max(1, Math.floor(TXS / 6)) === 0) await sample(`${i + 1} transactions, slow reader ${slowClosed ? 'closed' : 'open (paused)'}`);
  }
  await sleep(3_000);
  await sample('after the flow, landings pushed');
  slow.ws.resume();
  console.log(`slow reader, as its client saw the close: ${JSON.stringify(await slow.closed)}`);
  const text = await (await fetch(`${relay.rpcUrl}/metrics`)).text();
  console.log(text.split('\n').filter((l) => /^slotrelay_pubsub_(receipt|slow|connections)/.test(l)).join('\n'));
  for (const c of readers) c.close();
} finally {
  await relay.stop('SIGTERM');
}
