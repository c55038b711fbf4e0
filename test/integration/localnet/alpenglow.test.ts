// The localnet's consensus as a client reads it over HTTP and WebSocket: Alpenglow by default (a block finalized by
// certificate ~finalityDelayMs after its slot, confirmed = finalized, getAgGenesisCert an object, a leader that misses
// its slot skipped) and Tower on request (getAgGenesisCert null, confirmed by depth). Real localnets, real clients
// (web3.js Connection, a plain WebSocket).
import { Connection, Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { orderedBundle } from '../../helpers/bundles.js';
import { PubsubClient } from '../../helpers/pubsub-client.js';
import { signedTransfer } from '../../helpers/transactions.js';
import { until } from '../../helpers/wait-for.js';

const SLOT_MS = 250;
const DELAY_MS = 150;

async function rpc(url: string, method: string, params: unknown[] = []): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return res.json();
}

async function funded(conn: Connection): Promise<Keypair> {
  const payer = Keypair.generate();
  const sig = await conn.requestAirdrop(payer.publicKey, 5 * LAMPORTS_PER_SOL);
  const bh = await conn.getLatestBlockhash('confirmed');
  await conn.confirmTransaction({ signature: sig, ...bh }, 'confirmed');
  return payer;
}

describe('alpenglow (the default)', () => {
  let ln: Localnet;
  let conn: Connection;
  let payer: Keypair;
  beforeAll(async () => {
    ln = await startLocalnet({ validators: 4, blockEngineRateLimitPerSecond: 0 });
    conn = new Connection(ln.rpcUrl, 'confirmed');
    payer = await funded(conn);
  });
  afterAll(async () => {
    await ln?.stop();
  });

  it('runs 250 ms slots and answers getAgGenesisCert with the certificate\'s shape', async () => {
    expect(ln.slotMs).toBe(SLOT_MS);
    expect(ln.consensus.mode).toBe('alpenglow');
    const r = await rpc(ln.rpcUrl, 'getAgGenesisCert');
    expect(r.error).toBeUndefined();
    expect(r.result.block.slot).toBe(0);
    expect(r.result.block.blockId).toHaveLength(32);
    expect(r.result.signature.signature).toHaveLength(192);
    expect(r.result.signature.bitmap).toEqual([0b1111]); // 4 validators, every one signed
    for (const b of [...r.result.block.blockId, ...r.result.signature.signature]) expect(b >= 0 && b <= 255 && Number.isInteger(b)).toBe(true);
    // Params are refused as by any no-params method.
    expect((await rpc(ln.rpcUrl, 'getAgGenesisCert', [1])).error.code).toBe(-32602);
  });

  it('a transfer goes processed -> finalized (never "confirmed" alone) ~finalityDelayMs after its slot ends', async () => {
    const tx = await signedTransfer(conn, payer, 1_000_000, 'processed');
    await conn.sendRawTransaction(tx.bytes, { skipPreflight: true });
    const seen: { status: string; confirmations: number | null; at: bigint }[] = [];
    await until(async () => {
      const st = (await conn.getSignatureStatuses([tx.signature])).value[0];
      if (st !== null && st.confirmationStatus !== undefined) seen.push({ status: st.confirmationStatus, confirmations: st.confirmations, at: process.hrtime.bigint() });
      return st?.confirmationStatus === 'finalized';
    }, 5_000, 5);
    const statuses = [...new Set(seen.map((s) => s.status))];
    expect(statuses.includes('confirmed')).toBe(false);
    expect(statuses[statuses.length - 1]).toBe('finalized');
    expect(seen[seen.length - 1].confirmations).toBeNull();
    const slot = ln.bank.status(tx.signature)!.slot;
    const finalizedAt = seen.find((s) => s.status === 'finalized')!.at;
    const afterSlotEndMs = Number(finalizedAt - ln.clock.slotStartNs(slot + 1)) / 1e6;
    // Certified DELAY_MS after the slot ended; the 5 ms poll and a busy box add a little, never a whole 32 slots.
    expect(afterSlotEndMs).toBeGreaterThanOrEqual(DELAY_MS - 5);
    expect(afterSlotEndMs).toBeLessThan(DELAY_MS + 200);
    // confirmed reads what finalized reads; getTransaction at confirmed answers now.
    const [c, f] = await Promise.all([conn.getSlot('confirmed'), conn.getSlot('finalized')]);
    expect(Math.abs(c - f)).toBeLessThanOrEqual(1);
    expect(await conn.getSlot('processed')).toBeGreaterThan(f);
    expect((await conn.getTransaction(tx.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }))?.slot).toBe(slot);
    // getBlock at confirmed serves the finalized block with the transfer; the tip's block is not available yet.
    const block = await rpc(ln.rpcUrl, 'getBlock', [slot, { commitment: 'confirmed', transactionDetails: 'signatures', maxSupportedTransactionVersion: 0 }]);
    expect(block.result.signatures).toContain(tx.signature);
    expect(block.result).toMatchObject({ parentSlot: slot - 1, blockHeight: slot });
    const tip = ln.clock.current + 1;
    expect((await rpc(ln.rpcUrl, 'getBlock', [tip, { commitment: 'confirmed' }])).error).toEqual({ code: -32004, message: `Block not available for slot ${tip}` });
  });

  it('PubSub: signatureSubscribe(confirmed) fires with finalization; slotsUpdates gives optimisticConfirmation and root together', async () => {
    const ws = await PubsubClient.open(ln.wsUrl);
    try {
      const updates = await ws.subscribe('slotsUpdatesSubscribe');
      const tx = await signedTransfer(conn, payer, 1_000_000, 'processed');
      const sub = await ws.subscribe('signatureSubscribe', [tx.signature, { commitment: 'confirmed' }]);
      await conn.sendRawTransaction(tx.bytes, { skipPreflight: true });
      const note = await ws.next((m) => m.method === 'signatureNotification' && m.params.subscription === sub);
      const notedAt = process.hrtime.bigint();
      expect(note.params.result.value).toEqual({ err: null });
      const slot = ln.bank.status(tx.signature)!.slot;
      expect(Number(notedAt - ln.clock.slotStartNs(slot + 1)) / 1e6).toBeLessThan(DELAY_MS + 200);
      const root = await ws.next((m) => m.method === 'slotsUpdatesNotification' && m.params.subscription === updates && m.params.result.type === 'root' && m.params.result.slot >= slot);
      const opt = ws.inbox.find((m) => m.method === 'slotsUpdatesNotification' && m.params.result.type === 'optimisticConfirmation' && m.params.result.slot === root.params.result.slot);
      expect(opt).toBeDefined();
      expect(Math.abs(opt.params.result.timestamp - root.params.result.timestamp)).toBeLessThanOrEqual(1);
      // Each block's bank is created with the block before it as parent (no skips here), and frozen when it ends.
      const created = await ws.next((m) => m.method === 'slotsUpdatesNotification' && m.params.result.type === 'createdBank');
      expect(created.params.result.parent).toBe(created.params.result.slot - 1);
      const frozen = await ws.next((m) => m.method === 'slotsUpdatesNotification' && m.params.result.type === 'frozen' && m.params.result.slot === slot);
      expect(frozen.params.result.stats.numSuccessfulTransactions).toBeGreaterThanOrEqual(1);
    } finally {
      ws.close();
    }
  });

  it('the block engine\'s bundle statuses go processed -> finalized', async () => {
    const tip = (await rpc(`${ln.blockEngineUrl}/api/v1/bundles`, 'getTipAccounts')).result[0] as string;
    const { blockhash } = await conn.getLatestBlockhash('processed');
    const plan = orderedBundle(payer, blockhash, tip);
    const id = (await rpc(`${ln.blockEngineUrl}/api/v1/bundles`, 'sendBundle', [plan.base64, { encoding: 'base64' }])).result as string;
    const seen: string[] = [];
    let landedSlot = -1;
    await until(async () => {
      const v = (await rpc(`${ln.blockEngineUrl}/api/v1/bundles`, 'getBundleStatuses', [[id]])).result.value[0];
      if (v === null) return false;
      landedSlot = v.slot;
      seen.push(v.confirmation_status);
      return v.confirmation_status === 'finalized';
    }, 5_000, 10);
    expect(seen.includes('confirmed')).toBe(false);
    expect(Number(process.hrtime.bigint() - ln.clock.slotStartNs(landedSlot + 1)) / 1e6).toBeLessThan(DELAY_MS + 250);
  });
});

describe('a leader that misses its slots (alpenglow)', () => {
  let ln: Localnet;
  let conn: Connection;
  let payer: Keypair;
  beforeAll(async () => {
    // The facade forwards to the current leader only and never resends: what it sends in a missed slot goes to that
    // leader alone.
    ln = await startLocalnet({ validators: 2, rpc: { leaderForwardCount: 1, retryRateMs: 0 } });
    conn = new Connection(ln.rpcUrl, 'confirmed');
    payer = await funded(conn);
  });
  afterAll(async () => {
    await ln?.stop();
  });

  it('produces skips: no slot notification, no landing, block height behind the slot, processed on the last block', async () => {
    const missing = 1;
    const identity = ln.validators[missing].identity;
    const ws = await PubsubClient.open(ln.wsUrl);
    try {
      const slotSub = await ws.subscribe('slotSubscribe');
      const updatesSub = await ws.subscribe('slotsUpdatesSubscribe');
      ln.setMissingSlots(missing, true);
      // Wait until the missing validator leads (and its slot is marked), then send while it does.
      await until(() => ln.schedule.leaderAt(ln.clock.current) === identity && ln.consensus.isSkipped(ln.clock.current), 10_000, 2);
      const skippedSlot = ln.clock.current;
      const tx = await signedTransfer(conn, payer, 1_000_000, 'processed');
      const sent = await rpc(ln.rpcUrl, 'sendTransaction', [Buffer.from(tx.bytes).toString('base64'), { encoding: 'base64', skipPreflight: true, maxRetries: 0 }]);
      // The facade took it only if the leader was still the missing one when it forwarded.
      expect(sent.result).toBe(tx.signature);
      const processed = Number((await rpc(ln.rpcUrl, 'getSlot', [{ commitment: 'processed' }])).result);
      if (ln.schedule.leaderAt(ln.clock.current) === identity) expect(processed).toBeLessThan(ln.clock.current);
      await until(() => ln.clock.current >= skippedSlot + 8, 10_000, 10);
      // Not landed: the block it was sent to was never made.
      expect((await conn.getSignatureStatuses([tx.signature], { searchTransactionHistory: true })).value[0]).toBeNull();
      const counters = ln.landings.countersOf(identity);
      expect(counters.dropped.skipped).toBeGreaterThan(0);
      // Slot notifications skip the missed slots; parents point at the last block.
      const notes = ws.inbox.filter((m) => m.method === 'slotNotification' && m.params.subscription === slotSub).map((m) => m.params.result);
      expect(notes.some((r: any) => r.slot === skippedSlot)).toBe(false);
      const after = notes.find((r: any) => r.slot > skippedSlot);
      expect(after.parent).toBeLessThan(skippedSlot);
      // slotsUpdates: `dead` for the skipped slot (when the next slot starts), before the next block's createdBank; no
      // createdBank for it.
      const updates = ws.inbox.filter((m) => m.method === 'slotsUpdatesNotification' && m.params.subscription === updatesSub).map((m) => m.params.result);
      const dead = updates.findIndex((r: any) => r.type === 'dead' && r.slot === skippedSlot);
      expect(dead).toBeGreaterThanOrEqual(0);
      expect(updates[dead].err).toEqual(expect.any(String));
      expect(updates.some((r: any) => r.type === 'createdBank' && r.slot === skippedSlot)).toBe(false);
      const nextBank = updates.findIndex((r: any) => r.type === 'createdBank' && r.slot > skippedSlot);
      expect(nextBank).toBeGreaterThan(dead);
      expect(updates.filter((r: any) => r.type === 'dead').every((r: any) => ln.consensus.isSkipped(r.slot))).toBe(true);
      const slot = Number((await rpc(ln.rpcUrl, 'getSlot', [{ commitment: 'finalized' }])).result);
      const height = Number((await rpc(ln.rpcUrl, 'getBlockHeight', [{ commitment: 'finalized' }])).result);
      expect(height).toBeLessThan(slot);
      expect(ln.consensus.isSkipped(skippedSlot)).toBe(true);
      expect((await rpc(ln.rpcUrl, 'getBlock', [skippedSlot])).error).toEqual({ code: -32007, message: `Slot ${skippedSlot} was skipped, or missing due to ledger jump to recent snapshot` });
      // The block after the skipped run names the block before it as its parent.
      let next = skippedSlot + 1;
      while (ln.consensus.isSkipped(next)) next++;
      const after2 = (await rpc(ln.rpcUrl, 'getBlock', [next, { transactionDetails: 'none' }])).result;
      expect(after2.parentSlot).toBeLessThan(skippedSlot);
      expect(after2.blockHeight).toBeLessThan(next);
      expect(ln.consensus.finalizedSlot()).not.toBe(skippedSlot);
    } finally {
      ln.setMissingSlots(missing, false);
      ws.close();
    }
  });
});

describe('tower (older clusters)', () => {
  let ln: Localnet;
  beforeAll(async () => {
    ln = await startLocalnet({ consensus: 'tower', slotMs: 100, finalizedDepth: 8, validators: 2 });
  });
  afterAll(async () => {
    await ln?.stop();
  });

  it('answers getAgGenesisCert null and keeps confirmed / finalized by depth', async () => {
    expect(await rpc(ln.rpcUrl, 'getAgGenesisCert')).toEqual({ jsonrpc: '2.0', result: null, id: 1 });
    await until(() => ln.clock.current > 20, 5_000, 10);
    const processed = Number((await rpc(ln.rpcUrl, 'getSlot', [{ commitment: 'processed' }])).result);
    const confirmed = Number((await rpc(ln.rpcUrl, 'getSlot', [{ commitment: 'confirmed' }])).result);
    const finalized = Number((await rpc(ln.rpcUrl, 'getSlot', [{ commitment: 'finalized' }])).result);
    expect(processed - confirmed).toBeGreaterThanOrEqual(0);
    expect(processed - confirmed).toBeLessThanOrEqual(2);
    expect(processed - finalized).toBeGreaterThanOrEqual(7);
    expect(processed - finalized).toBeLessThanOrEqual(9);
  });
});
