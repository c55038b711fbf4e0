// The client library's fees against known landed prices: a real relay follows a fast localnet (40 ms slots, in this
// process) on which ~120 transactions land, each with its own compute-unit price set by the library's web3.js
// SetComputeUnitPrice instruction. With the clock stopped, the fee window is fixed: every slot's prioritizationFee
// from the relay must be the lowest price that landed in it (0 where none did), as Agave's cache defines it, and
// computeUnitPrice() the nearest-rank percentile of exactly those values; an address-scoped call reports the price
// of the transaction that wrote that address; `slotrelay fees --json` prints the same percentiles.
import { spawnSync } from 'node:child_process';
import * as web3 from '@solana/web3.js';
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayClient, feePercentile, web3ComputeUnitPriceInstruction, type PrioritizationFee } from 'slotrelay/client';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { ensureClientBuilt } from '../../helpers/client-dist.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { waitFor } from '../../helpers/wait-for.js';

const COUNT = 120;
let localnet: Localnet;
let relay: RelayHandle;
let client: RelayClient;
/** Per landed transaction: its slot, price and recipient. */
const landed: { slot: number; price: number; to: string }[] = [];

beforeAll(async () => {
  ensureClientBuilt();
  localnet = await startLocalnet({ validators: 2, slotMs: 40 });
  relay = await startRelay({ upstream: { rpcUrl: localnet.rpcUrl }, routes: { rpc: { endpoints: [localnet.rpcUrl] } }, log: { level: 'warn' } });
  client = new RelayClient({ url: relay.relayUrl, rpcUrl: relay.rpcUrl, apiKey: TEST_KEY });
  const conn = new Connection(localnet.rpcUrl, 'confirmed');
  const payer = Keypair.generate();
  const airdrop = await conn.requestAirdrop(payer.publicKey, 5 * LAMPORTS_PER_SOL);
  await waitFor('airdrop', async () => ['confirmed', 'finalized'].includes((await conn.getSignatureStatuses([airdrop])).value[0]?.confirmationStatus ?? ''));
  // One transaction per ~slot for ~5 s (the window is 150 slots = 6 s); the blockhash (valid 150 slots) refreshed.
  const sent: { sig: string; price: number; to: string }[] = [];
  let blockhash = '';
  for (let i = 0; i < COUNT; i++) {
    if (i % 40 === 0) blockhash = (await conn.getLatestBlockhash('processed')).blockhash;
    const to = Keypair.generate().publicKey;
    const price = 1_000 + 7 * i;
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight: 1_000_000 }).add(
      web3ComputeUnitPriceInstruction(web3, price),
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 1_000_000 }),
    );
    tx.sign(payer);
    sent.push({ sig: (await client.submit(tx)).signature, price, to: to.toBase58() });
    await new Promise((r) => setTimeout(r, 40));
  }
  await waitFor('every priced transaction confirmed', async () => {
    const st = (await conn.getSignatureStatuses(sent.map((s) => s.sig))).value;
    return st.every((s) => s !== null && s.confirmationStatus !== 'processed') ? st : null;
  });
  // Freeze the window, then read where each landed.
  localnet.clock.stop();
  const st = (await conn.getSignatureStatuses(sent.map((s) => s.sig))).value;
  sent.forEach((s, i) => {
    expect(st[i]!.err).toBeNull();
    landed.push({ slot: st[i]!.slot, price: s.price, to: s.to });
  });
}, 90_000);

afterAll(async () => {
  await relay?.stop();
  await localnet?.stop();
});

/** Agave's definition for a network-wide call: per slot, the lowest price of the (non-vote) transactions in it. */
function expectedFee(slot: number): number {
  const prices = landed.filter((l) => l.slot === slot).map((l) => l.price);
  return prices.length === 0 ? 0 : Math.min(...prices);
}

describe('fees against known landed prices', () => {
  let fees: PrioritizationFee[];
  beforeAll(async () => {
    fees = await client.getRecentPrioritizationFees();
  });

  it('every slot of the window reports the lowest price that landed in it (0 where none did)', () => {
    expect(fees.length).toBeGreaterThanOrEqual(100);
    const inWindow = landed.filter((l) => l.slot >= fees[0].slot);
    expect(inWindow.length).toBeGreaterThanOrEqual(fees.length / 2); // most slots carry one of ours: the percentiles are not trivial
    for (const f of fees) expect(f.prioritizationFee, `slot ${f.slot}`).toBe(expectedFee(f.slot));
  });

  it('computeUnitPrice is the nearest-rank percentile of those values (75 default, 90), non-zero; outside 75..90 refused', async () => {
    const values = fees.map((f) => expectedFee(f.slot)).sort((a, b) => a - b);
    const rank = (p: number): number => values[Math.ceil((p / 100) * values.length) - 1];
    expect(rank(75)).toBeGreaterThan(1_000);
    expect(await client.computeUnitPrice()).toBe(rank(75));
    expect(await client.computeUnitPrice({ percentile: 90 })).toBe(rank(90));
    expect(feePercentile(fees, 90)).toBe(rank(90));
    await expect(client.computeUnitPrice({ percentile: 50 })).rejects.toThrow(RangeError);
  });

  it('scoped to an address: the slot that wrote it reports that transaction\'s price', async () => {
    const mid = landed[Math.floor(COUNT * 0.75)];
    const scoped = await client.getRecentPrioritizationFees([mid.to]);
    expect(scoped.find((f) => f.slot === mid.slot)?.prioritizationFee).toBe(mid.price);
    const price = await client.computeUnitPrice({ addresses: [mid.to], percentile: 75 });
    expect(price).toBe(feePercentile(scoped, 75));
  });

  it('`slotrelay fees --json` prints the same percentiles', () => {
    const r = spawnSync(process.execPath, ['dist/src/cli.js', 'fees', '--json', '--rpc', relay.rpcUrl], { env: { PATH: process.env.PATH, SLOTRELAY_KEY: TEST_KEY }, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const s = JSON.parse(r.stdout) as Record<string, number>;
    expect(s).toMatchObject({ slots: fees.length, p50: feePercentile(fees, 50), p75: feePercentile(fees, 75), p90: feePercentile(fees, 90), computeUnitPrice: feePercentile(fees, 75) });
  });
});
