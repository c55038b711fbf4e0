// Issue #43 items 1-2 as a user sees them: a relay with its embedded localnet (Alpenglow by default, 250 ms slots)
// knows the cluster's consensus (/health?detail, /status.json), and unchanged @solana/web3.js
// (sendAndConfirmTransaction, commitment confirmed) and @solana/kit (sendAndConfirmTransactionFactory) complete
// through the RELAY's JSON-RPC and PubSub URLs in about a slot plus the finality delay. The same run measures a relay
// on a Tower localnet as the baseline (confirmed by depth; finalized 32 slots behind). The figures are printed as one
// JSON line (`alpenglow_confirmation`), committed in bench/results/alpenglow-confirmation.md.
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction, sendAndConfirmTransaction } from '@solana/web3.js';
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createSolanaRpcSubscriptions,
  createTransactionMessage,
  generateKeyPairSigner,
  pipe,
  sendAndConfirmTransactionFactory,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Instruction,
  type TransactionSigner,
} from '@solana/kit';
import { afterAll, describe, expect, it } from 'vitest';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { embeddedLocalnetUrl } from '../../helpers/embedded-localnet.js';
import { PubsubClient } from '../../helpers/pubsub-client.js';
import { until } from '../../helpers/wait-for.js';

const SLOT_MS = 250;
const FINALITY_DELAY_MS = 150;
const RUNS = 6;

interface Figures {
  readonly web3ConfirmedMs: number[];
  readonly kitConfirmedMs: number[];
  readonly web3FinalizedMs: number[];
}

const results: Record<string, Figures> = {};
const relays: RelayHandle[] = [];

afterAll(async () => {
  for (const r of relays) if (r.child.exitCode === null && r.child.signalCode === null) await r.stop('SIGTERM');
  const summary = Object.fromEntries(
    Object.entries(results).map(([mode, f]) => [mode, { web3Confirmed: stats(f.web3ConfirmedMs), kitConfirmed: stats(f.kitConfirmedMs), web3Finalized: stats(f.web3FinalizedMs) }]),
  );
  console.log(JSON.stringify({ event: 'alpenglow_confirmation', slotMs: SLOT_MS, finalityDelayMs: FINALITY_DELAY_MS, runs: RUNS, summary, raw: results }));
});

function stats(xs: number[]): { n: number; p50: number; min: number; max: number } | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, p50: Math.round(s[Math.floor((s.length - 1) / 2)]), min: Math.round(s[0]), max: Math.round(s[s.length - 1]) };
}

const keyedRpcUrl = (r: RelayHandle): string => `${r.rpcUrl}/?key=${TEST_KEY}`;
function keyedWsUrl(r: RelayHandle): string {
  const u = new URL(r.rpcUrl);
  return `ws://${u.hostname}:${Number(u.port) + 1}/?key=${TEST_KEY}`;
}

async function fund(localnet: Connection, pubkey: PublicKey, sol: number): Promise<void> {
  const sig = await localnet.requestAirdrop(pubkey, sol * LAMPORTS_PER_SOL);
  const latest = await localnet.getLatestBlockhash('confirmed');
  await localnet.confirmTransaction({ signature: sig, ...latest }, 'confirmed');
}

function transferInstruction(from: TransactionSigner, to: string, amount: bigint): Instruction {
  const data = new Uint8Array(12);
  const view = new DataView(data.buffer);
  view.setUint32(0, 2, true); // SystemInstruction::Transfer
  view.setBigUint64(4, amount, true);
  return {
    programAddress: address('11111111111111111111111111111111'),
    accounts: [
      { address: from.address, role: AccountRole.WRITABLE_SIGNER, signer: from } as never,
      { address: address(to), role: AccountRole.WRITABLE },
    ],
    data,
  };
}

async function startedRelay(localnet: Record<string, unknown>): Promise<{ relay: RelayHandle; ln: Connection }> {
  const relay = await startRelay({ localnet, health: { probeIntervalMs: 200 } });
  relays.push(relay);
  return { relay, ln: new Connection(embeddedLocalnetUrl(relay), 'confirmed') };
}

async function healthDetail(r: RelayHandle): Promise<any> {
  return (await fetch(`${r.rpcUrl}/health?detail`)).json();
}

/** web3.js sendAndConfirmTransaction through the relay, `runs` times at `commitment`: ms each. */
async function web3Runs(relay: RelayHandle, ln: Connection, commitment: 'confirmed' | 'finalized', runs: number): Promise<number[]> {
  const payer = Keypair.generate();
  await fund(ln, payer.publicKey, 2);
  // Unchanged web3.js: its Connection derives the PubSub URL (port + 1) from the relay's, the key in ?key=.
  const conn = new Connection(keyedRpcUrl(relay), { commitment, disableRetryOnRateLimit: true });
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const tx = new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 + i }));
    const t0 = performance.now();
    const sig = await sendAndConfirmTransaction(conn, tx, [payer], { commitment, skipPreflight: true });
    out.push(performance.now() - t0);
    const st = (await conn.getSignatureStatuses([sig])).value[0];
    expect(st?.err).toBeNull();
  }
  return out;
}

async function kitRuns(relay: RelayHandle, ln: Connection, runs: number): Promise<number[]> {
  const signer = await generateKeyPairSigner();
  await fund(ln, new PublicKey(signer.address), 2);
  const rpc = createSolanaRpc(keyedRpcUrl(relay));
  const rpcSubscriptions = createSolanaRpcSubscriptions(keyedWsUrl(relay));
  const sendAndConfirm = sendAndConfirmTransactionFactory({ rpc, rpcSubscriptions });
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const { value: latest } = await rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(signer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
      (m) => appendTransactionMessageInstructions([transferInstruction(signer, Keypair.generate().publicKey.toBase58(), 1_000_000n + BigInt(i))], m),
    );
    const signed = await signTransactionMessageWithSigners(message);
    const t0 = performance.now();
    await sendAndConfirm(signed as Parameters<typeof sendAndConfirm>[0], { commitment: 'confirmed', skipPreflight: true });
    out.push(performance.now() - t0);
  }
  return out;
}

describe('a relay on an Alpenglow localnet (the default)', () => {
  it('shows consensus alpenglow on /health?detail and /status.json; web3.js and kit confirm in ~ a slot + the finality delay', async () => {
    const { relay, ln } = await startedRelay({ slotMs: SLOT_MS });
    await until(async () => (await healthDetail(relay)).consensus?.mode === 'alpenglow', 10_000, 100);
    const detail = await healthDetail(relay);
    expect(detail.consensus).toMatchObject({ mode: 'alpenglow', source: 'certificate', sinceSlot: 0, error: null });
    // A client can ask the relay the same question: getAgGenesisCert is passed through to the cluster.
    const cert = (await (await fetch(keyedRpcUrl(relay), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"getAgGenesisCert"}' })).json()) as any;
    expect(cert.result.block.slot).toBe(0);
    expect(cert.result.signature.signature).toHaveLength(192);
    // The relay's PubSub relays slotsUpdatesSubscribe: under Alpenglow optimisticConfirmation and root come together.
    const ws = await PubsubClient.open(keyedWsUrl(relay));
    try {
      const sub = await ws.subscribe('slotsUpdatesSubscribe');
      const root = await ws.next((m) => m.method === 'slotsUpdatesNotification' && m.params.subscription === sub && m.params.result.type === 'root');
      const opt = await ws.next((m) => m.method === 'slotsUpdatesNotification' && m.params.result.type === 'optimisticConfirmation' && m.params.result.slot === root.params.result.slot);
      expect(Math.abs(opt.params.result.timestamp - root.params.result.timestamp)).toBeLessThanOrEqual(1);
      expect((await ws.call('slotsUpdatesSubscribe', [1])).error.code).toBe(-32602);
    } finally {
      ws.close();
    }
    const status = (await (await fetch(`${relay.adminUrl}/status.json`)).json()) as { health: { consensus: unknown } };
    expect(status.health.consensus).toMatchObject({ mode: 'alpenglow', sinceSlot: 0 });

    const web3Confirmed = await web3Runs(relay, ln, 'confirmed', RUNS);
    const kitConfirmed = await kitRuns(relay, ln, RUNS);
    const web3Finalized = await web3Runs(relay, ln, 'finalized', 3);
    results.alpenglow = { web3ConfirmedMs: web3Confirmed, kitConfirmedMs: kitConfirmed, web3FinalizedMs: web3Finalized };
    // A send lands in the slot it reaches (or the next leader's) and is certified FINALITY_DELAY_MS after that slot
    // ends: at most ~2 slots + the delay + the clients' own polling; 13 s (Tower's finalized) would fail here.
    const bound = 2 * SLOT_MS + FINALITY_DELAY_MS + 700;
    expect(stats(web3Confirmed)!.p50).toBeLessThan(bound);
    expect(stats(kitConfirmed)!.p50).toBeLessThan(bound);
    // confirmed and finalized are the same event: finalized costs no more than confirmed (one slot of noise).
    expect(stats(web3Finalized)!.p50).toBeLessThan(stats(web3Confirmed)!.p50 + SLOT_MS + 150);
    await relay.stop('SIGTERM');
  }, 120_000);
});

describe('a relay on a Tower localnet (baseline, same run)', () => {
  it('shows consensus tower; confirmed by depth, finalized 32 slots behind', async () => {
    const { relay, ln } = await startedRelay({ slotMs: SLOT_MS, consensus: 'tower' });
    await until(async () => (await healthDetail(relay)).consensus?.mode === 'tower', 10_000, 100);
    expect((await healthDetail(relay)).consensus).toMatchObject({ mode: 'tower', source: 'null', sinceSlot: null });

    const web3Confirmed = await web3Runs(relay, ln, 'confirmed', RUNS);
    const kitConfirmed = await kitRuns(relay, ln, RUNS);
    const web3Finalized = await web3Runs(relay, ln, 'finalized', 2);
    results.tower = { web3ConfirmedMs: web3Confirmed, kitConfirmedMs: kitConfirmed, web3FinalizedMs: web3Finalized };
    // Tower's root is 32 slots (8 s at 250 ms) behind: finalized takes at least that.
    expect(stats(web3Finalized)!.min).toBeGreaterThan(32 * SLOT_MS - SLOT_MS);
    await relay.stop('SIGTERM');
  }, 120_000);
});
