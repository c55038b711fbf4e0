// The bank executing v1 transactions (kit 8.4 built). litesvm 1.5.0 runs v1 natively — signatures, the config's
// limits and the total priority fee — so the bank hands it the original bytes; these cases pin that behaviour (a
// litesvm that stopped doing so fails here first) and the v1 config semantics Agave has: an absent compute-unit
// limit is 0 (execution fails, the fee is paid), an absent loaded-data limit is 0 (refused, nothing paid).
import { PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { Bank } from '../../../src/localnet/bank.js';
import { buildV1, generateKeyPairSigner, memoIx, transferIx } from '../../helpers/v1-transactions.js';

type Signer = Awaited<ReturnType<typeof generateKeyPairSigner>>;

async function setup(): Promise<{ bank: Bank; payer: Signer; hash: string }> {
  const bank = new Bank({ slotMs: 400 });
  const payer = await generateKeyPairSigner();
  expect(bank.airdrop(new PublicKey(payer.address), 10_000_000_000n).landed).toBe(true);
  return { bank, payer, hash: bank.blockhashAt(0).blockhash };
}

describe('localnet bank, v1', () => {
  it('commits a v1 transfer: fee 5,000 + the config total, balances by amount + fee, the original bytes kept', async () => {
    const { bank, payer, hash } = await setup();
    const to = (await generateKeyPairSigner()).address;
    const tx = await buildV1(payer, hash, [transferIx(payer, to, 2_000_000n)], { computeUnitLimit: 500, loadedAccountsDataSizeLimit: 50_000, priorityFeeLamports: 3n });
    const out = bank.execute(tx.bytes);
    if (!out.landed) throw new Error(`not landed: ${JSON.stringify(out.err)}`);
    expect(out.record.err).toBeNull();
    expect(out.record.fee).toBe(5_003n);
    expect(out.record.preBalances[0] - out.record.postBalances[0]).toBe(2_005_003n);
    expect(out.record.postBalances[1]).toBe(2_000_000n);
    expect(bank.balance(bs58.decode(to))).toBe(2_000_000n);
    expect(out.record.tx).toBe(tx.bytes);
    expect(out.record.signature).toBe(tx.signature);
    expect(bank.execute(tx.bytes)).toEqual({ landed: false, err: 'AlreadyProcessed' });
  });

  it('refuses a bad signature of any signer (SignatureFailure) and an unknown blockhash, paying nothing', async () => {
    const { bank, payer, hash } = await setup();
    const other = await generateKeyPairSigner();
    const tx = await buildV1(payer, hash, [memoIx('two signers', [payer, other])], { computeUnitLimit: 50_000, loadedAccountsDataSizeLimit: 500_000 });
    for (const at of [tx.bytes.length - 128 + 3, tx.bytes.length - 1]) {
      const bad = Uint8Array.from(tx.bytes);
      bad[at] ^= 0x80;
      expect(bank.execute(bad)).toEqual({ landed: false, err: 'SignatureFailure' });
    }
    const stale = await buildV1(payer, bs58.encode(Buffer.alloc(32, 1)), [memoIx('x', [payer])], { computeUnitLimit: 50_000, loadedAccountsDataSizeLimit: 500_000 });
    expect(bank.execute(stale.bytes)).toEqual({ landed: false, err: 'BlockhashNotFound' });
    expect(bank.balance(bs58.decode(payer.address))).toBe(10_000_000_000n);
    expect(bank.execute(tx.bytes).landed).toBe(true);
  });

  it('absent limits: no compute-unit limit fails in execution and pays; no loaded-data limit is refused unpaid', async () => {
    const { bank, payer, hash } = await setup();
    const to = (await generateKeyPairSigner()).address;
    const noCu = await buildV1(payer, hash, [transferIx(payer, to, 1n)], { loadedAccountsDataSizeLimit: 50_000, priorityFeeLamports: 10n });
    const out = bank.execute(noCu.bytes);
    if (!out.landed) throw new Error('a v1 without a compute-unit limit is committed (failed), as on Agave');
    expect(out.record.err).toEqual({ InstructionError: [0, 'ComputationalBudgetExceeded'] });
    expect(out.record.preBalances[0] - out.record.postBalances[0]).toBe(5_010n);
    const noData = await buildV1(payer, hash, [transferIx(payer, to, 1n)], { computeUnitLimit: 500 });
    expect(bank.execute(noData.bytes)).toEqual({ landed: false, err: 'MaxLoadedAccountsDataSizeExceeded' });
  });
});
