// The bank on its own: blockhash window, status cache, committed failures, fees, rejected load errors.
import { ComputeBudgetProgram, Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { Bank } from '../../../src/localnet/bank.js';
import { parseWireTransaction, transactionFee } from '../../../src/localnet/wire.js';

function transfer(payer: Keypair, blockhash: string, lamports: number, price?: number): Uint8Array {
  const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight: 0 });
  if (price !== undefined) tx.add(ComputeBudgetProgram.setComputeUnitPrice({ microLamports: price }));
  tx.add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports }));
  tx.sign(payer);
  return tx.serialize();
}

describe('localnet bank', () => {
  const setup = (): { bank: Bank; payer: Keypair } => {
    const bank = new Bank({ slotMs: 400 });
    const payer = Keypair.generate();
    const a = bank.airdrop(payer.publicKey, 10_000_000_000n);
    expect(a.landed).toBe(true);
    return { bank, payer };
  };

  it('accepts a blockhash for 150 slots after its own and refuses it at 151 (BlockhashNotFound)', () => {
    const { bank, payer } = setup();
    bank.advanceToSlot(10);
    const hash = bank.blockhashAt(10).blockhash;
    bank.advanceToSlot(160);
    expect(bank.blockhashSlot(hash)).toBe(10);
    const ok = bank.execute(transfer(payer, hash, 1_000_000));
    expect(ok.landed).toBe(true);
    bank.advanceToSlot(161);
    expect(bank.blockhashSlot(hash)).toBeUndefined();
    const late = bank.execute(transfer(payer, hash, 1_000_001));
    expect(late).toEqual({ landed: false, err: 'BlockhashNotFound' });
  });

  it('refuses a committed signature (AlreadyProcessed) and leaves no record for it twice', () => {
    const { bank, payer } = setup();
    const tx = transfer(payer, bank.blockhashAt(0).blockhash, 1_000_000);
    const first = bank.execute(tx);
    expect(first.landed).toBe(true);
    expect(bank.execute(tx)).toEqual({ landed: false, err: 'AlreadyProcessed' });
  });

  it('commits a transaction that fails in execution, charges its fee and keeps its logs', () => {
    const { bank, payer } = setup();
    const out = bank.execute(transfer(payer, bank.blockhashAt(0).blockhash, 100_000_000_000));
    expect(out.landed).toBe(true);
    if (!out.landed) return;
    expect(out.record.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
    expect(out.record.logs.some((l) => l.includes('insufficient lamports'))).toBe(true);
    expect(out.record.preBalances[0] - out.record.postBalances[0]).toBe(5000n);
    expect(out.record.fee).toBe(5000n);
  });

  it('charges 5000 per signature plus the priority fee, as the fee formula says', () => {
    const { bank, payer } = setup();
    const tx = transfer(payer, bank.blockhashAt(0).blockhash, 1_000_000, 250_000);
    const parsed = parseWireTransaction(tx);
    expect(parsed.computeUnitPrice).toBe(250_000n);
    const out = bank.execute(tx, parsed);
    expect(out.landed).toBe(true);
    if (!out.landed) return;
    const paid = out.record.preBalances[0] - out.record.postBalances[0] - 1_000_000n;
    expect(paid).toBe(transactionFee(parsed));
    expect(paid).toBeGreaterThan(5000n);
  });

  it('rejects without a trace what fails before execution (unfunded payer, bad signature)', () => {
    const { bank } = setup();
    const broke = Keypair.generate();
    const unfunded = bank.execute(transfer(broke, bank.blockhashAt(0).blockhash, 1));
    expect(unfunded.landed).toBe(false);
    expect(['AccountNotFound', 'InsufficientFundsForFee']).toContain(unfunded.landed ? '' : unfunded.err);
    const { payer } = setup();
    const bad = Uint8Array.from(transfer(payer, bank.blockhashAt(0).blockhash, 5));
    bad[10] ^= 0xff;
    expect(bank.execute(bad).landed).toBe(false);
  });
});
