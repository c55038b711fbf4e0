// Bounded history: the landing log is a fixed-capacity ring (oldest overwritten, indexes keep counting), and the
// bank keeps at most maxHistoryRecords full records while the status of every signature of the blockhash window
// survives eviction (AlreadyProcessed, getSignatureStatuses).
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { Bank } from '../../../src/localnet/bank.js';
import { LandingLog, type LandingRecord } from '../../../src/localnet/landings.js';

function landing(i: number): LandingRecord {
  return { signature: `sig${i}`, slot: i, position: 0, validator: 'v', sender: null, arrivalNs: BigInt(i), executedNs: BigInt(i), err: null };
}

describe('LandingLog ring', () => {
  it('keeps the last maxRecords in order with absolute indexes', () => {
    const log = new LandingLog(['v'], 5);
    for (let i = 0; i < 3; i++) log.add(landing(i));
    expect(log.page(0, 10)).toEqual({ records: [0, 1, 2].map(landing), first: 0, next: 3 });
    for (let i = 3; i < 12; i++) log.add(landing(i));
    expect(log.total).toBe(12);
    expect(log.first).toBe(7);
    const all = log.page(0, 100);
    expect(all.first).toBe(7);
    expect(all.next).toBe(12);
    expect(all.records.map((r) => r.signature)).toEqual(['sig7', 'sig8', 'sig9', 'sig10', 'sig11']);
    expect(log.page(9, 2).records.map((r) => r.slot)).toEqual([9, 10]);
    expect(log.page(9, 2).next).toBe(11);
    expect(log.page(12, 10)).toEqual({ records: [], first: 12, next: 12 });
    expect(log.page(50, 10)).toEqual({ records: [], first: 50, next: 50 });
    expect(log.page(8, 0)).toEqual({ records: [], first: 8, next: 8 });
  });

  it('wraps many times over without losing order', () => {
    const log = new LandingLog([], 7);
    for (let i = 0; i < 1_003; i++) log.add(landing(i));
    const p = log.page(0, 100);
    expect(p.first).toBe(996);
    expect(p.records.map((r) => r.slot)).toEqual([996, 997, 998, 999, 1000, 1001, 1002]);
  });
});

describe('bank history bounds', () => {
  const payer = Keypair.generate();
  const to = Keypair.generate().publicKey;
  const transfer = (blockhash: string, lamports: number): Uint8Array => {
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight: 0 });
    tx.add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports }));
    tx.sign(payer);
    return tx.serialize();
  };
  const setup = (opts: { maxHistoryRecords: number; historySlots?: number }): Bank => {
    const bank = new Bank({ slotMs: 400, ...opts });
    expect(bank.airdrop(payer.publicKey, 10_000_000_000n).landed).toBe(true);
    bank.advanceToSlot(1);
    return bank;
  };

  it('caps full records by count; evicted signatures keep their status inside the window and stay AlreadyProcessed', () => {
    const bank = setup({ maxHistoryRecords: 3 });
    const hash = bank.blockhashAt(1).blockhash;
    const txs = [1, 2, 3, 4, 5].map((n) => transfer(hash, 1_000_000 + n));
    const sigs = txs.map((t) => {
      const out = bank.execute(new Uint8Array(t));
      expect(out.landed).toBe(true);
      return out.landed ? out.record.signature : '';
    });
    expect(bank.historySize).toEqual({ records: 3, statuses: 3 }); // the airdrop and the first two transfers
    expect(bank.record(sigs[0])).toBeUndefined();
    expect(bank.record(sigs[4])?.slot).toBe(1);
    expect(bank.status(sigs[0])).toEqual({ slot: 1, err: null });
    expect(bank.status(sigs[4])).toMatchObject({ slot: 1, err: null });
    const before = bank.balance(payer.publicKey.toBytes());
    expect(bank.execute(new Uint8Array(txs[0]))).toEqual({ landed: false, err: 'AlreadyProcessed' });
    expect(bank.balance(payer.publicKey.toBytes())).toBe(before);

    // Statuses live for the blockhash window (150 slots), then go; full records stay (historySlots 3000).
    bank.advanceToSlot(151);
    expect(bank.status(sigs[0])).toBeDefined();
    bank.advanceToSlot(152);
    expect(bank.status(sigs[0])).toBeUndefined();
    expect(bank.historySize).toEqual({ records: 3, statuses: 0 });
    expect(bank.record(sigs[4])).toBeDefined();
  });

  it('keeps no status for a record evicted after its slot left the window', () => {
    const bank = setup({ maxHistoryRecords: 2 });
    const old = bank.execute(transfer(bank.blockhashAt(1).blockhash, 7));
    expect(old.landed).toBe(true);
    bank.advanceToSlot(200);
    for (const n of [8, 9]) expect(bank.execute(transfer(bank.blockhashAt(200).blockhash, n)).landed).toBe(true);
    expect(bank.historySize).toEqual({ records: 2, statuses: 0 });
    expect(bank.status(old.landed ? old.record.signature : '')).toBeUndefined();
  });

  it('still drops full records older than historySlots', () => {
    const bank = setup({ maxHistoryRecords: 100, historySlots: 200 });
    const out = bank.execute(transfer(bank.blockhashAt(1).blockhash, 11));
    const sig = out.landed ? out.record.signature : '';
    bank.advanceToSlot(201);
    expect(bank.record(sig)).toBeDefined();
    bank.advanceToSlot(202);
    expect(bank.record(sig)).toBeUndefined();
    expect(bank.status(sig)).toBeUndefined();
    expect(bank.historySize.records).toBe(0);
  });

  it('memory stays bounded over many more transactions than the cap', () => {
    const bank = setup({ maxHistoryRecords: 50 });
    let slot = 1;
    for (let i = 0; i < 400; i++) {
      if (i % 20 === 0) bank.advanceToSlot((slot += 10));
      expect(bank.execute(transfer(bank.blockhashAt(slot).blockhash, 100 + i)).landed).toBe(true);
    }
    // 401 committed (airdrop + 400) in 40 slots 10 apart: 50 full records; statuses only for slots >= slot - 150.
    const { records, statuses } = bank.historySize;
    expect(records).toBe(50);
    expect(statuses).toBeLessThanOrEqual(16 * 20);
    expect(bank.transactionCount).toBe(401);
  });
});
