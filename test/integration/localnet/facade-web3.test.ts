// The localnet driven through @solana/web3.js's Connection only (plus raw fetch for wire-level checks): airdrop,
// transfer over the facade's TPU path, confirmation by signatureSubscribe, simulation, prioritization fees,
// duplicates, landing records, malformed requests.
import {
  ComputeBudgetProgram,
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  SendTransactionError,
  SystemProgram,
  Transaction,
  type Commitment,
} from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';

let ln: Localnet;
let conn: Connection;
const payer = Keypair.generate();

async function rpc(body: unknown, contentType = 'application/json'): Promise<{ status: number; json: any }> {
  const res = await fetch(ln.rpcUrl, { method: 'POST', headers: { 'content-type': contentType }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text === '' ? null : JSON.parse(text) };
}

async function transfer(lamports: number, opts: { price?: number; from?: Keypair; commitment?: Commitment } = {}): Promise<Transaction> {
  const from = opts.from ?? payer;
  const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash(opts.commitment ?? 'confirmed');
  const tx = new Transaction({ feePayer: from.publicKey, blockhash, lastValidBlockHeight });
  if (opts.price !== undefined) tx.add(ComputeBudgetProgram.setComputeUnitPrice({ microLamports: opts.price }));
  tx.add(SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: Keypair.generate().publicKey, lamports }));
  tx.sign(from);
  return tx;
}

async function sendAndConfirm(tx: Transaction): Promise<string> {
  const sig = await conn.sendRawTransaction(tx.serialize());
  const r = await conn.confirmTransaction({ signature: sig, blockhash: tx.recentBlockhash!, lastValidBlockHeight: tx.lastValidBlockHeight! }, 'confirmed');
  expect(r.value.err).toBeNull();
  return sig;
}

beforeAll(async () => {
  ln = await startLocalnet({ slotMs: 50, finalizedDepth: 8 });
  conn = new Connection(ln.rpcUrl, { commitment: 'confirmed', disableRetryOnRateLimit: true });
  const sig = await conn.requestAirdrop(payer.publicKey, 20 * LAMPORTS_PER_SOL);
  const bh = await conn.getLatestBlockhash();
  await conn.confirmTransaction({ signature: sig, ...bh }, 'confirmed');
});

afterAll(async () => {
  await ln?.stop();
});

describe('localnet facade through web3.js', () => {
  it('requestAirdrop + confirmTransaction credits the account; finalized follows', async () => {
    expect(await conn.getBalance(payer.publicKey)).toBe(20 * LAMPORTS_PER_SOL);
    const other = Keypair.generate();
    const sig = await conn.requestAirdrop(other.publicKey, LAMPORTS_PER_SOL);
    const bh = await conn.getLatestBlockhash('finalized');
    const r = await conn.confirmTransaction({ signature: sig, ...bh }, 'finalized');
    expect(r.value.err).toBeNull();
    const st = await conn.getSignatureStatus(sig);
    expect(st.value?.confirmationStatus).toBe('finalized');
    expect(await conn.getBalance(other.publicKey, 'finalized')).toBe(LAMPORTS_PER_SOL);
  });

  it('a transfer sent with sendRawTransaction lands through a leader TPU, with a landing record and a readable transaction', async () => {
    const before = await conn.getBalance(payer.publicKey);
    const sig = await sendAndConfirm(await transfer(1_000_000));
    expect(await conn.getBalance(payer.publicKey)).toBe(before - 1_000_000 - 5000);
    const landings = await rpc({ jsonrpc: '2.0', id: 1, method: 'localnet_getLandings', params: [{ from: 0 }] });
    const rec = landings.json.result.landings.find((l: { signature: string }) => l.signature === sig);
    expect(rec).toBeDefined();
    expect(rec.validator).toBe(ln.schedule.leaderAt(rec.slot));
    expect(BigInt(rec.arrivalNs)).toBeLessThanOrEqual(BigInt(rec.executedNs));
    expect(ln.validators.map((v) => v.identity)).toContain(rec.validator);
    const tx = await conn.getTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(tx?.slot).toBe(rec.slot);
    expect(tx?.meta?.fee).toBe(5000);
    expect(tx?.meta?.logMessages).toContain('Program 11111111111111111111111111111111 success');
  });

  it('simulateTransaction: success and failure with logs, every result member present', async () => {
    const ok = await conn.simulateTransaction(await transfer(2_000_000));
    expect(ok.value.err).toBeNull();
    expect(ok.value.logs).toContain('Program 11111111111111111111111111111111 invoke [1]');
    expect(typeof ok.value.unitsConsumed).toBe('number');
    const bad = await conn.simulateTransaction(await transfer(1_000 * LAMPORTS_PER_SOL));
    expect(bad.value.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
    expect(bad.value.logs?.some((l) => l.includes('insufficient lamports'))).toBe(true);

    const raw = (await transfer(3_000_000)).serialize().toString('base64');
    const full = await rpc({ jsonrpc: '2.0', id: 'x', method: 'simulateTransaction', params: [raw, { encoding: 'base64', accounts: { addresses: [payer.publicKey.toBase58()] } }] });
    const v = full.json.result.value;
    for (const k of ['err', 'logs', 'accounts', 'unitsConsumed', 'loadedAccountsDataSize', 'returnData', 'innerInstructions', 'replacementBlockhash', 'fee', 'preBalances', 'postBalances', 'preTokenBalances', 'postTokenBalances', 'loadedAddresses']) {
      expect(v).toHaveProperty(k);
    }
    expect(v.accounts[0].lamports).toBe(v.postBalances[0]);
    expect(full.json.result.context.slot).toBeTypeOf('number');
    const both = await rpc({ jsonrpc: '2.0', id: 2, method: 'simulateTransaction', params: [raw, { encoding: 'base64', sigVerify: true, replaceRecentBlockhash: true }] });
    expect(both.json.error).toEqual({ code: -32602, message: 'sigVerify may not be used with replaceRecentBlockhash' });
  });

  it('getRecentPrioritizationFees reflects the compute-unit prices of landed transactions', async () => {
    const hot = Keypair.generate();
    await sendAndConfirm(await transfer(5 * LAMPORTS_PER_SOL, { price: 0 }));
    const s1 = await conn.requestAirdrop(hot.publicKey, LAMPORTS_PER_SOL);
    await conn.confirmTransaction({ signature: s1, ...(await conn.getLatestBlockhash()) });
    await sendAndConfirm(await transfer(1_000_000, { price: 7_777, from: hot }));
    await new Promise((r) => setTimeout(r, 120)); // the landing slot must be complete
    const fees = await conn.getRecentPrioritizationFees({ lockedWritableAccounts: [hot.publicKey] });
    expect(fees.length).toBeGreaterThan(0);
    expect(fees.length).toBeLessThanOrEqual(150);
    for (let i = 1; i < fees.length; i++) expect(fees[i].slot).toBeGreaterThan(fees[i - 1].slot);
    expect(fees.some((f) => f.prioritizationFee === 7_777)).toBe(true);
    const many = Array.from({ length: 129 }, () => Keypair.generate().publicKey.toBase58());
    const tooMany = await rpc({ jsonrpc: '2.0', id: 1, method: 'getRecentPrioritizationFees', params: [many] });
    expect(tooMany.json.error).toEqual({ code: -32602, message: 'Too many inputs provided; max 128' });
  });

  it('a duplicate is refused: preflight says AlreadyProcessed, skipPreflight lands nothing twice', async () => {
    const tx = await transfer(1_500_000);
    const sig = await sendAndConfirm(tx);
    const err = await conn.sendRawTransaction(tx.serialize()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SendTransactionError);
    expect((err as Error).message).toContain('This transaction has already been processed');
    const before = ln.landings.total;
    expect(await conn.sendRawTransaction(tx.serialize(), { skipPreflight: true })).toBe(sig);
    await new Promise((r) => setTimeout(r, 150));
    expect(ln.landings.total).toBe(before);
    const counters = await rpc({ jsonrpc: '2.0', id: 1, method: 'localnet_getCounters' });
    const rejected = Object.values(counters.json.result.validators as Record<string, { rejectedBy: Record<string, number> }>).reduce((s, c) => s + (c.rejectedBy.AlreadyProcessed ?? 0), 0);
    expect(rejected).toBeGreaterThanOrEqual(1);
  });

  it('malformed requests get Agave errors', async () => {
    expect((await rpc('{bad')).json).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
    expect((await rpc([])).json.error.code).toBe(-32600);
    expect((await rpc({ jsonrpc: '2.0', id: 5, method: 'nope' })).json).toEqual({ jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 5 });
    const count = await rpc({ jsonrpc: '2.0', id: 1, method: 'getBalance', params: ['a', {}, 3] });
    expect(count.json.error).toEqual({ code: -32602, message: 'Invalid parameters: Expected from 1 to 2 parameters.', data: 'Got: 3' });
    expect((await rpc({ jsonrpc: '2.0', id: 1, method: 'getBalance', params: ['abc'] })).json.error).toEqual({ code: -32602, message: 'Invalid param: WrongSize' });
    const garbage = await rpc({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: ['AAAA', { encoding: 'base64' }] });
    expect(garbage.json.error.code).toBe(-32602);
    expect(garbage.json.error.message).toMatch(/^failed to deserialize solana_transaction::versioned::VersionedTransaction/);
    const json = await rpc({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: ['AAAA', { encoding: 'json' }] });
    expect(json.json.error).toEqual({ code: -32602, message: 'unsupported encoding: json. Supported encodings: base58, base64' });
    const big = await rpc({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: ['A'.repeat(5468), { encoding: 'base64' }] });
    // The default raw limit is 4096 (v1); legacy/v0 are capped at 1232 once decoded (v1-transactions.test.ts).
    expect(big.json.error.message).toBe('base64 encoded solana_transaction::versioned::VersionedTransaction too large: 5468 bytes (max: encoded/raw 5464/4096)');
    expect((await rpc('{}', 'text/plain')).status).toBe(415);
  });

  it('cluster views agree: leader schedule, slot leaders, cluster nodes with tpuQuic, vote accounts with stake', async () => {
    const slot = await conn.getSlot('processed');
    const leaders = await conn.getSlotLeaders(slot, 8);
    expect(leaders.map((l) => l.toBase58())).toEqual(Array.from({ length: 8 }, (_, i) => ln.schedule.leaderAt(slot + i)));
    const nodes = await conn.getClusterNodes();
    expect(nodes.map((n) => (n as { tpuQuic?: string }).tpuQuic)).toEqual(ln.validators.map((v) => v.tpuQuic));
    const votes = await conn.getVoteAccounts();
    expect(votes.current.map((v) => v.activatedStake)).toEqual(ln.validators.map((v) => v.stake));
    const sched = await conn.getLeaderSchedule();
    expect(Object.values(sched).reduce((s, a) => s + a.length, 0)).toBe(8192);
    const epoch = await conn.getEpochInfo('processed');
    expect(epoch.slotsInEpoch).toBe(8192);
    expect(await conn.getGenesisHash()).toBe(ln.bank.genesisHash);
  });
});

describe('blockhash expiry', () => {
  it('a blockhash older than 150 slots fails with BlockhashNotFound', async () => {
    const fast = await startLocalnet({ slotMs: 8, finalizedDepth: 4 });
    try {
      const c = new Connection(fast.rpcUrl, 'processed');
      const p = Keypair.generate();
      const s = await c.requestAirdrop(p.publicKey, LAMPORTS_PER_SOL);
      expect(s).toBeTypeOf('string');
      const { blockhash } = await c.getLatestBlockhash('processed');
      const issued = fast.clock.current;
      const tx = new Transaction({ feePayer: p.publicKey, blockhash, lastValidBlockHeight: 0 }).add(
        SystemProgram.transfer({ fromPubkey: p.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 }),
      );
      tx.sign(p);
      expect((await c.isBlockhashValid(blockhash)).value).toBe(true);
      while (fast.clock.current <= issued + 151) await new Promise((r) => setTimeout(r, 20));
      expect((await c.isBlockhashValid(blockhash)).value).toBe(false);
      const err = await c.sendRawTransaction(tx.serialize()).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SendTransactionError);
      expect((err as Error).message).toContain('Blockhash not found');
    } finally {
      await fast.stop();
    }
  });
});
