// A skipped target slot in the receipt stream (issue #43, docs/receipts.md "Skipped target slots"): a real relay on
// its embedded localnet (Alpenglow, two validators, the second down: every slot it leads gets a skip certificate). A
// transaction sent by the direct route while the down validator leads is told `skipped` with the slot its direct
// route aimed at (the receipt's routes.direct.leaderSlot), read through the client library's receipt stream and in
// GET /v1/transactions/<sig> (`targetSkipped`); a rebroadcast to the next leader lands it afterwards (processed and
// finalized after skipped); one aimed at a slot that had a block is never told skipped; /metrics counts both; and
// `slotrelay send --wait processed` prints the skipped state with its slot. Twice: skips learnt from the upstream's
// PubSub (the landing push's socket), and with a Geyser stream (localnet.grpcPort: upstream.grpc) from it alone.
import { spawn } from 'node:child_process';
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';
import { RelayClient, type ReceiptUpdate } from 'slotrelay/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureClientBuilt } from '../../helpers/client-dist.js';
import { embeddedLocalnetUrl } from '../../helpers/embedded-localnet.js';
import { PubsubClient } from '../../helpers/pubsub-client.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { waitFor } from '../../helpers/wait-for.js';

const SLOT_MS = 200;
let relay: RelayHandle;

interface Receipt {
  status: string;
  routes: Record<string, { outcome: string; leaderSlot: number | null }>;
  targetSkipped: { slot: number; at: number } | null;
  landed: { slot: number; confirmationStatus: string } | null;
}

async function rpc(url: string, method: string, params: unknown[] = []): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return ((await res.json()) as { result: unknown }).result;
}

async function receiptOf(signature: string): Promise<Receipt> {
  return (await (await fetch(`${relay.relayUrl}/v1/transactions/${signature}`, { headers: { 'x-api-key': TEST_KEY } })).json()) as Receipt;
}

async function metric(name: string, label = ''): Promise<number> {
  const text = await (await fetch(`${relay.rpcUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(name) && l.includes(label));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

async function startSkipRelay(extra: { localnet?: Record<string, unknown>; receipts?: Record<string, unknown> }): Promise<RelayHandle> {
  const r = await startRelay({
    localnet: { validators: 2, slotMs: SLOT_MS, links: [{}, { down: true }], ...extra.localnet },
    // next-leaders: the current (down) leader and the next one, so the route answers `sent` at once.
    routes: { direct: { enabled: true, fanout: 'next-leaders', leaders: 1, connectTimeoutMs: 500 } },
    receipts: { pollMs: 100, trackForMs: 20_000, ...extra.receipts },
    retries: { intervalMs: 300 },
    keys: [{ key: TEST_KEY, name: 'desk', rateLimit: { perSecond: 1_000, burst: 1_000 }, readLimit: { perSecond: 1_000, burst: 1_000 } }],
  });
  await waitFor('direct deliverable', async () => (await (await fetch(`${r.rpcUrl}/health?detail`)).json()) as any, (h) => h.routes?.direct?.deliverable === true, 20_000);
  return r;
}

describe('a skipped target slot, learnt from the upstream PubSub (slot gaps, slotsUpdates dead)', () => {
  beforeAll(async () => {
    ensureClientBuilt();
    relay = await startSkipRelay({});
  }, 120_000);
  afterAll(async () => {
    await relay?.stop('SIGTERM');
  });
  it('skipped (with the slot) before processed and finalized, in the stream, on the receipt and from the CLI; a slot with a block: never', () => scenario('pubsub'), 60_000);
});

describe('a skipped target slot, learnt from the Geyser stream (SLOT_DEAD; upstream.grpc, the push on for landings)', () => {
  beforeAll(async () => {
    ensureClientBuilt();
    relay = await startSkipRelay({ localnet: { grpcPort: 0 } });
  }, 120_000);
  afterAll(async () => {
    await relay?.stop('SIGTERM');
  });
  it('skipped (with the slot) before processed and finalized, in the stream, on the receipt and from the CLI; a slot with a block: never', () => scenario('grpc'), 60_000);
});

/** One run: the down validator's next window, three sends into it (two by the client library, one by the CLI), one outside. */
async function scenario(source: 'pubsub' | 'grpc'): Promise<void> {
  const lnUrl = embeddedLocalnetUrl(relay);
  const ln = new Connection(lnUrl, 'confirmed');
  const payer = Keypair.generate();
  const air = await ln.requestAirdrop(payer.publicKey, 10 * LAMPORTS_PER_SOL);
  await waitFor('airdrop', () => ln.getSignatureStatuses([air]), (s) => s.value[0] !== null, 10_000);
  const { blockhash } = await ln.getLatestBlockhash('confirmed');
  const tx = (i: number): string => {
    const t = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight: 1e9 }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 + i }),
    );
    t.sign(payer);
    return t.serialize().toString('base64');
  };

  // The localnet's own slot notifications: when each slot started, and which identity misses its slots (the leader
  // of a slot inside a gap).
  const wsUrl = new URL(lnUrl);
  wsUrl.protocol = 'ws:';
  wsUrl.port = String(Number(wsUrl.port) + 1);
  const slots = await PubsubClient.open(wsUrl.toString());
  const slotSub = await slots.subscribe('slotSubscribe');
  const note = (pred: (r: { slot: number; parent: number }) => boolean): Promise<{ slot: number; parent: number; at: number }> =>
    slots.next((m: any) => m.method === 'slotNotification' && m.params.subscription === slotSub && pred(m.params.result), 15_000).then((m: any) => ({ ...m.params.result, at: Date.now() }));
  const gap = await note((r) => r.parent < r.slot - 1);
  const [down] = (await rpc(lnUrl, 'getSlotLeaders', [gap.parent + 1, 1])) as string[];

  const client = new RelayClient({ url: relay.relayUrl, rpcUrl: relay.rpcUrl, pubsubUrl: relay.wsUrl, apiKey: TEST_KEY });
  const seen: ReceiptUpdate[] = [];
  const stream = client.receipts();
  const drained = (async () => {
    for await (const u of stream) seen.push(u);
  })().catch(() => undefined);
  await new Promise((r) => setTimeout(r, 300));

  // The next window the down validator leads: one transaction early in each of its first two slots, and one while
  // the other validator leads (a slot with a block).
  slots.inbox.length = 0; // a fresh notification: its slot started about now
  const ref = await note(() => true);
  const leaders = (await rpc(lnUrl, 'getSlotLeaders', [ref.slot, 64])) as string[];
  const startOf = (slot: number): number => ref.at + (slot - ref.slot) * SLOT_MS;
  let first = -1;
  for (let k = 2; k < leaders.length - 1; k++) if (leaders[k] === down && leaders[k + 1] === down && leaders[k - 1] !== down) (first = ref.slot + k), (k = leaders.length);
  let up = -1;
  for (let k = 2; k < leaders.length; k++) if (leaders[k] !== down && leaders[k - 1] !== down && leaders[k + 1] !== down) (up = ref.slot + k), (k = leaders.length);
  expect(first, `a window of ${down} in ${leaders.join(',')}`).toBeGreaterThan(0);
  expect(up).toBeGreaterThan(0);
  // The CLI is started now and handed its transaction on stdin when the third slot of the window starts.
  const cli = spawn(process.execPath, ['dist/src/cli.js', 'send', '-', '--routes', 'direct', '--wait', 'processed', '--relay', relay.relayUrl, '--rpc', relay.rpcUrl], {
    env: { ...process.env, SLOTRELAY_KEY: TEST_KEY },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let cliOut = '';
  cli.stdout.on('data', (d: Buffer) => (cliOut += d.toString()));
  const cliDone = new Promise<number | null>((resolve) => cli.once('close', resolve));
  const plan = [
    { at: startOf(first) + 60, by: 'client' },
    { at: startOf(first + 1) + 60, by: 'client' },
    { at: startOf(first + 2) + 60, by: 'cli' },
    { at: startOf(up) + 60, by: 'client' },
  ].sort((a, b) => a.at - b.at);
  const sigs: string[] = [];
  let cliTx = '';
  for (let i = 0; i < plan.length; i++) {
    await new Promise((r) => setTimeout(r, Math.max(0, plan[i].at - Date.now())));
    if (plan[i].by === 'cli') {
      cliTx = tx(i);
      cli.stdin.end(cliTx);
    } else sigs.push((await client.submit(tx(i), { routes: ['direct'], maxRetries: 20 })).signature);
  }

  // Which slot each one's direct route aimed at, as the relay recorded it (its own view of the cluster's clock).
  const aimed = await Promise.all(sigs.map((s) => waitFor(`leaderSlot of ${s}`, () => receiptOf(s), (r) => r.routes.direct?.leaderSlot != null, 10_000)));
  const aimedSlots = aimed.map((r) => r.routes.direct.leaderSlot!);
  const aimedLeaders = await Promise.all(aimedSlots.map(async (s) => ((await rpc(lnUrl, 'getSlotLeaders', [s, 1])) as string[])[0]));
  const skippedOnes = sigs.filter((_, i) => aimedLeaders[i] === down);
  const blockOnes = sigs.filter((_, i) => aimedLeaders[i] !== down);
  expect(skippedOnes.length, `aimed at ${aimedSlots.join(',')}; ${down} leads ${first}, ${first + 1}`).toBeGreaterThan(0);

  const eventsOf = (sig: string): ReceiptUpdate[] => seen.filter((u) => u.signature === sig);
  for (const sig of skippedOnes) {
    const slot = aimedSlots[sigs.indexOf(sig)];
    const skipped = await waitFor(`skipped event for ${sig}`, async () => eventsOf(sig).find((u) => u.event === 'skipped'), (u) => u !== undefined, 10_000);
    expect(skipped!.slot).toBe(slot);
    expect(skipped!.receipt.targetSkipped).toEqual({ slot, at: expect.any(Number) });
    // The receipt as GET answers it.
    const r = await receiptOf(sig);
    expect(r.targetSkipped).toEqual({ slot, at: skipped!.receipt.targetSkipped!.at });
    // A rebroadcast to the next leader lands it: processed and finalized come after skipped.
    await waitFor(`finalized ${sig}`, async () => eventsOf(sig).map((u) => u.event), (e) => e.includes('finalized'), 20_000);
    const order = eventsOf(sig)
      .map((u) => u.event)
      .filter((e) => e !== 'route');
    expect(order).toEqual(['accepted', 'skipped', 'processed', 'confirmed', 'finalized']);
    const landed = await receiptOf(sig);
    expect(landed.landed!.slot).toBeGreaterThan(slot);
    expect(landed.targetSkipped!.slot).toBe(slot);
    // The localnet agrees, once the finalized slot is past it (the skip was told before that): no block in that slot.
    expect((await fetch(lnUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getBlock', params: [slot] }) }).then((x) => x.json()) as any).error.code).toBe(-32007);
  }
  for (const sig of blockOnes) {
    await waitFor(`processed ${sig}`, async () => eventsOf(sig).map((u) => u.event), (e) => e.includes('processed'), 20_000);
    expect(eventsOf(sig).some((u) => u.event === 'skipped')).toBe(false);
    expect((await receiptOf(sig)).targetSkipped).toBeNull();
  }

  // The CLI: its answer, then one line per state up to processed; the skipped one names the slot.
  expect(await cliDone).toBe(0);
  const lines = cliOut.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  const cliSig = String(lines[0].signature);
  const cliAimed = (await receiptOf(cliSig)).routes.direct.leaderSlot!;
  const cliLeader = ((await rpc(lnUrl, 'getSlotLeaders', [cliAimed, 1])) as string[])[0];
  const cliEvents = lines.slice(1).map((l) => l.event);
  expect(cliEvents.at(-1)).toBe('processed');
  if (cliLeader === down) {
    const skippedLine = lines.find((l) => l.event === 'skipped' || (l.event === 'current' && l.skippedSlot !== undefined));
    expect(skippedLine, cliOut).toMatchObject({ signature: cliSig, skippedSlot: cliAimed, status: 'pending' });
    expect(lines.indexOf(skippedLine!)).toBeLessThan(lines.length - 1);
  } else expect(lines.some((l) => l.skippedSlot !== undefined)).toBe(false);

  expect(await metric('slotrelay_receipts_skipped_slots_total{', `source="${source}"`)).toBeGreaterThan(0);
  if (source === 'grpc') expect(await metric('slotrelay_receipts_skipped_slots_total{', 'source="pubsub"')).toBe(0);
  expect(await metric('slotrelay_receipts_target_skipped_total')).toBeGreaterThanOrEqual(skippedOnes.length);
  await stream.return!();
  await drained;
  slots.close();
}
