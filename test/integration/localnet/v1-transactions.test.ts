// v1 transactions (SIMD-0385 / SIMD-0296) on the embedded localnet, built and signed by @solana/kit 8.4 as a client
// would: a SOL transfer with a priority fee lands over sendTransaction (version 1, fee = 5,000 + the config's total,
// balances move by exactly amount + fee, finalized, landing record, prioritization fee per unit as Agave derives it,
// getFeeForMessage and simulateTransaction agree); a 4,096-byte v1 with three signers lands while 4,097 bytes and a
// 1,233-byte legacy are refused with Agave's wording; a corrupted signature (any signer's) and an unknown blockhash
// are refused and never land; a v1 sent as one QUIC stream of several packets to the leaders' TPU lands.
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { createRandomIdentityCertificate } from '../../../src/quic/index.js';
import { TpuSender } from '../../helpers/tpu-sender.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { buildV1, generateKeyPairSigner, memoIx, transferIx, type V1Tx } from '../../helpers/v1-transactions.js';
import { waitForValue } from '../../helpers/wait-for.js';

type Signer = Awaited<ReturnType<typeof generateKeyPairSigner>>;

let ln: Localnet;
let payer: Signer;
const CONFIG = { computeUnitLimit: 1_000, loadedAccountsDataSizeLimit: 100_000 } as const;

interface RpcReply {
  result?: any;
  error?: { code: number; message: string; data?: any };
}

async function rpc(method: string, params: unknown[] = []): Promise<RpcReply> {
  const res = await fetch(ln.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return (await res.json()) as RpcReply;
}

async function blockhash(): Promise<string> {
  return ((await rpc('getLatestBlockhash', [{ commitment: 'confirmed' }])).result as { value: { blockhash: string } }).value.blockhash;
}

async function balance(addr: string): Promise<number> {
  return ((await rpc('getBalance', [addr, { commitment: 'processed' }])).result as { value: number }).value;
}

async function send(tx: V1Tx | string, cfg: Record<string, unknown> = {}): Promise<RpcReply> {
  return rpc('sendTransaction', [typeof tx === 'string' ? tx : tx.base64, { encoding: 'base64', ...cfg }]);
}

async function statusOf(sig: string): Promise<{ confirmationStatus: string; err: unknown } | null> {
  return ((await rpc('getSignatureStatuses', [[sig]])).result as { value: ({ confirmationStatus: string; err: unknown } | null)[] }).value[0];
}

beforeAll(async () => {
  ln = await startLocalnet({ slotMs: 100, finalizedDepth: 4 });
  payer = await generateKeyPairSigner();
  const air = await rpc('requestAirdrop', [payer.address, 10_000_000_000]);
  expect(air.error).toBeUndefined();
  await waitForValue('the airdrop', async () => ((await balance(payer.address)) > 0 ? true : undefined));
});

afterAll(async () => {
  await ln?.stop();
});

describe('v1 transactions on the localnet', () => {
  it('a kit v1 SOL transfer with a priority fee lands: version 1, fee 5,000 + total, balances move by amount + fee, finalized', async () => {
    const to = (await generateKeyPairSigner()).address;
    const amount = 1_000_000;
    const fee = 5_000 + 7_000;
    const tx = await buildV1(payer, await blockhash(), [transferIx(payer, to, BigInt(amount))], { ...CONFIG, priorityFeeLamports: 7_000n });
    const before = await balance(payer.address);

    // What the bank says before it runs: getFeeForMessage on the v1 message, and a simulation with signatures checked.
    const message = Buffer.from(tx.bytes.subarray(0, tx.bytes.length - 64)).toString('base64');
    expect((await rpc('getFeeForMessage', [message])).result.value).toBe(fee);
    const sim = (await rpc('simulateTransaction', [tx.base64, { encoding: 'base64', sigVerify: true }])).result.value;
    expect([sim.err, sim.fee, sim.postBalances[0], sim.postBalances[1]]).toEqual([null, fee, before - amount - fee, amount]);

    const sent = await send(tx);
    expect(sent).toEqual({ jsonrpc: '2.0', id: 1, result: tx.signature });
    const st = await waitForValue('the transaction finalized', async () => {
      const s = await statusOf(tx.signature);
      return s?.confirmationStatus === 'finalized' ? s : undefined;
    }, 10_000);
    expect(st.err).toBeNull();
    expect(await balance(payer.address)).toBe(before - amount - fee);
    expect(await balance(to)).toBe(amount);

    const got = (await rpc('getTransaction', [tx.signature, { maxSupportedTransactionVersion: 1 }])).result;
    expect(got.version).toBe(1);
    expect(got.meta.fee).toBe(fee);
    expect(got.meta.err).toBeNull();
    expect(got.meta.preBalances.slice(0, 2)).toEqual([before, 0]);
    expect(got.meta.postBalances.slice(0, 2)).toEqual([before - amount - fee, amount]);
    expect(got.meta.logMessages).toEqual(['Program 11111111111111111111111111111111 invoke [1]', 'Program 11111111111111111111111111111111 success']);
    expect(got.transaction.signatures).toEqual([tx.signature]);
    expect(got.transaction.message.accountKeys).toEqual([payer.address, to, '11111111111111111111111111111111']);
    expect(got.transaction.message.transactionConfig).toEqual({ computeUnitLimit: 1_000, heapSize: null, loadedAccountsDataSizeLimit: 100_000, priorityFee: 7_000 });
    const b64 = (await rpc('getTransaction', [tx.signature, { maxSupportedTransactionVersion: 1, encoding: 'base64' }])).result;
    expect(b64.transaction).toEqual([tx.base64, 'base64']);
    expect((await rpc('getTransaction', [tx.signature, { maxSupportedTransactionVersion: 1, encoding: 'base58' }])).result.transaction).toEqual([bs58.encode(tx.bytes), 'base58']);
    for (const cfg of [{}, { maxSupportedTransactionVersion: 0 }]) {
      const refused = await rpc('getTransaction', [tx.signature, cfg]);
      expect(refused.error?.code).toBe(-32015);
      expect(refused.error?.message).toContain('Transaction version (1) is not supported');
    }

    // It reached a leader through the facade's TPU path: a landing record, and the fee cache's per-unit price
    // floor(7,000 lamports × 1e6 / 1,000 units) for the slot, as seen by an account it wrote.
    const landing = ln.landings.page(0, 1_000_000).records.find((r) => r.signature === tx.signature);
    expect(landing?.slot).toBe(got.slot);
    // The cache reports a slot once it is complete, which may follow the confirmation seen above.
    const slotFee = await waitForValue('the slot fee of the transaction', async () => {
      // Asked for the recipient, which only this transaction writes: the payer's airdrop (price 0) may share its slot,
      // and a slot's fee for an account is the lowest price among the transactions that wrote it.
      const fees = (await rpc('getRecentPrioritizationFees', [[to]])).result as { slot: number; prioritizationFee: number }[];
      const f = fees.find((x) => x.slot === got.slot);
      return f !== undefined && f.prioritizationFee > 0 ? f.prioritizationFee : undefined;
    });
    expect(slotFee).toBe(7_000_000);
    // A second send of the same bytes is a duplicate: preflight answers AlreadyProcessed.
    expect((await send(tx)).error?.data?.err).toBe('AlreadyProcessed');
  });

  it('a 4,096-byte v1 (3.7 KB memo, three signers) lands; 4,097 bytes and a 1,233-byte legacy are refused', async () => {
    const signers = [payer, ...(await Promise.all([1, 2].map(() => generateKeyPairSigner())))];
    const hash = await blockhash();
    const config = { computeUnitLimit: 200_000, loadedAccountsDataSizeLimit: 1_000_000, priorityFeeLamports: 1n };
    const probe = await buildV1(payer, hash, [memoIx('m', signers)], config);
    const memoLen = 4096 - probe.bytes.length + 1;
    expect(memoLen).toBeGreaterThan(3_700);
    const big = await buildV1(payer, hash, [memoIx('v1 '.repeat(2000).slice(0, memoLen), signers)], config);
    expect(big.bytes.length).toBe(4096);
    expect(big.base64.length).toBe(5464);
    const before = await balance(payer.address);
    expect((await send(big)).result).toBe(big.signature);
    await waitForValue('the big transaction confirmed', async () => {
      const st = await statusOf(big.signature);
      return st !== null && st.confirmationStatus !== 'processed' ? true : undefined;
    });
    const got = (await rpc('getTransaction', [big.signature, { maxSupportedTransactionVersion: 1, commitment: 'confirmed' }])).result;
    expect([got.version, got.meta.err, got.meta.fee]).toEqual([1, null, 3 * 5_000 + 1]);
    expect(got.transaction.signatures).toHaveLength(3);
    expect(await balance(payer.address)).toBe(before - (3 * 5_000 + 1));

    const over = await buildV1(payer, hash, [memoIx('x'.repeat(memoLen + 1), signers)], config);
    expect(over.bytes.length).toBe(4097);
    const refused = await send(over);
    expect(refused.error?.message).toBe('decoded solana_transaction::versioned::VersionedTransaction too large: 4097 bytes (max: 4096 bytes)');
    const legacy = legacyTransfer().bytes;
    const padded = Buffer.concat([legacy, Buffer.alloc(1233 - legacy.length)]).toString('base64');
    expect((await send(padded)).error?.message).toBe('decoded solana_transaction::versioned::VersionedTransaction too large: 1233 bytes (max: 1232 bytes)');
    const tooLong = 'A'.repeat(5468);
    expect((await send(tooLong)).error?.message).toBe('base64 encoded solana_transaction::versioned::VersionedTransaction too large: 5468 bytes (max: encoded/raw 5464/4096)');
    const b58 = await rpc('sendTransaction', ['1'.repeat(5595)]);
    expect(b58.error?.message).toBe('base58 encoded solana_transaction::versioned::VersionedTransaction too large: 5595 bytes (max: encoded/raw 5594/4096)');
  });

  it('one corrupted signature byte (any signer) is a signature failure and never lands', async () => {
    const signers = [payer, ...(await Promise.all([1, 2].map(() => generateKeyPairSigner())))];
    const tx = await buildV1(payer, await blockhash(), [memoIx('signed by three', signers)], CONFIG);
    const bad = Uint8Array.from(tx.bytes);
    bad[bad.length - 64 + 10] ^= 0x01; // the third signer's signature (the last 64 bytes)
    const b64 = Buffer.from(bad).toString('base64');
    const preflight = await send(b64);
    expect(preflight.error?.code).toBe(-32003);
    expect(preflight.error?.message).toBe('Transaction signature verification failure');
    // Past preflight, the leader's bank refuses it: counted, not committed.
    const rejected = (): number => ln.validators.reduce((n, v) => n + (ln.landings.countersOf(v.identity).rejectedBy.SignatureFailure ?? 0), 0);
    const before = rejected();
    expect((await send(b64, { skipPreflight: true })).result).toBe(tx.signature);
    await waitForValue('the listener rejecting it', () => (rejected() > before ? true : undefined));
    expect(await statusOf(tx.signature)).toBeNull();
    expect(ln.bank.record(tx.signature)).toBeUndefined();
  });

  it('an unknown blockhash is BlockhashNotFound and never lands', async () => {
    const tx = await buildV1(payer, bs58.encode(Buffer.alloc(32, 42)), [transferIx(payer, (await generateKeyPairSigner()).address, 1n)], CONFIG);
    const preflight = await send(tx);
    expect(preflight.error?.code).toBe(-32002);
    expect(preflight.error?.data?.err).toBe('BlockhashNotFound');
    const rejected = (): number => ln.validators.reduce((n, v) => n + (ln.landings.countersOf(v.identity).rejectedBy.BlockhashNotFound ?? 0), 0);
    const before = rejected();
    await send(tx, { skipPreflight: true, maxRetries: 0 });
    await waitForValue('the listener rejecting it', () => (rejected() > before ? true : undefined));
    expect(await statusOf(tx.signature)).toBeNull();
    const fee = await rpc('getFeeForMessage', [Buffer.from(tx.bytes.subarray(0, tx.bytes.length - 64)).toString('base64')]);
    expect(fee.result.value).toBeNull();
  });

  it('a ~4 KB v1 sent as one QUIC stream to the TPU lands, with the sender identity in its landing record', async () => {
    const identity = await createRandomIdentityCertificate();
    const signers = [payer, ...(await Promise.all([1, 2].map(() => generateKeyPairSigner())))];
    const tx = await buildV1(payer, await blockhash(), [memoIx('q'.repeat(3_700), signers)], { computeUnitLimit: 200_000, loadedAccountsDataSizeLimit: 1_000_000 });
    expect(tx.bytes.length).toBeGreaterThan(3 * 1232);
    expect(tx.bytes.length).toBeLessThanOrEqual(4096);
    // Every validator gets it: the leader lands it, the others drop it as not_leader (or as a duplicate).
    const senders = await Promise.all(
      ln.validators.map((v) => {
        const [host, port] = v.tpuQuic.split(':');
        return TpuSender.connect({ host, port: Number(port), identity, maxTransactionBytes: 4096 });
      }),
    );
    try {
      const outcomes = await Promise.all(senders.map((s) => s.send(tx.bytes)));
      expect(outcomes).toEqual(senders.map(() => 'sent'));
      const rec = await waitForValue('the landing record', () => ln.landings.page(0, 1_000_000).records.find((r) => r.signature === tx.signature));
      expect(rec.sender).toBe(identity.identity);
      expect(ln.schedule.leaderAt(rec.slot)).toBe(rec.validator);
      expect(ln.bank.record(tx.signature)?.parsed.version).toBe(1);
    } finally {
      await Promise.all(senders.map((s) => s.close()));
    }
  });
});
