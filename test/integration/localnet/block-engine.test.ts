// The localnet's Jito-compatible block engine (#16 item 5), driven by Jito's own client (jito-js-rpc, unchanged):
// getTipAccounts, a 3-transaction bundle landing atomically and in order within a slot (balances prove it), a bundle
// whose second transaction fails landing nothing, the tip rule, 6 transactions refused, statuses Pending -> Landed,
// getBundleStatuses in Jito's shape, and the per-IP rate limit (HTTP 429 with -32097).
import { Connection, LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import { isAxiosError } from 'axios';
import { JitoJsonRpcClient } from 'jito-js-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { inflightStatusWhen, nextSlotStart, orderedBundle, tippedTransfer, type InflightStatus, type RpcAnswer } from '../../helpers/bundles.js';
import { fundedPayer } from '../../helpers/embedded-localnet.js';
import { waitFor } from '../../helpers/wait-for.js';

interface Inflight {
  context: { slot: number };
  value: InflightStatus[];
}
interface Statuses {
  context: { slot: number };
  value: ({ bundle_id: string; transactions: string[]; slot: number; confirmation_status: string; err: { Ok: null } } | null)[];
}

let localnet: Localnet;
let conn: Connection;
let jito: JitoJsonRpcClient;

beforeAll(async () => {
  localnet = await startLocalnet({ validators: 2, slotMs: 800, blockEngineRateLimitPerSecond: 0 });
  conn = new Connection(localnet.rpcUrl, 'confirmed');
  jito = new JitoJsonRpcClient(`${localnet.blockEngineUrl}/api/v1`);
});
afterAll(async () => {
  await localnet?.stop();
});

async function tipAccount(): Promise<string> {
  const r = (await jito.getTipAccounts()) as RpcAnswer<string[]>;
  return r.result![0];
}

describe('localnet block engine', () => {
  it('lists 8 tip accounts', async () => {
    const r = (await jito.getTipAccounts()) as RpcAnswer<string[]>;
    expect(r.result).toHaveLength(8);
    expect(new Set(r.result).size).toBe(8);
  });

  it('lands a 3-transaction bundle atomically and in order within one slot, Pending then Landed', async () => {
    const payer = await fundedPayer(conn, 2);
    const tip = await tipAccount();
    const tipBefore = await conn.getBalance(new PublicKey(tip));
    const { blockhash } = await conn.getLatestBlockhash();
    const plan = orderedBundle(payer, blockhash, tip);
    await nextSlotStart(localnet.clock); // then the bundle is Pending for most of an 800 ms slot
    const sent = (await jito.sendBundle([plan.base64, { encoding: 'base64' }])) as RpcAnswer<string>;
    expect(sent.error).toBeUndefined();
    const id = sent.result!;
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    const first = (await jito.getInFlightBundleStatuses([[id]])) as RpcAnswer<Inflight>;
    expect(first.result!.value[0]).toMatchObject({ bundle_id: id, status: 'Pending', landed_slot: null });
    const acceptedSlot = first.result!.context.slot;

    const landed = await inflightStatusWhen(jito, id, (v) => v.status === 'Landed', 5_000);
    expect(landed.landed_slot).toBeGreaterThan(acceptedSlot);
    expect(landed.landed_slot! - acceptedSlot).toBeLessThanOrEqual(2);

    const statuses = (await jito.getBundleStatuses([[id]])) as RpcAnswer<Statuses>;
    expect(statuses.result!.value[0]).toMatchObject({ bundle_id: id, transactions: plan.signatures, slot: landed.landed_slot, err: { Ok: null } });
    expect(['processed', 'confirmed', 'finalized']).toContain(statuses.result!.value[0]!.confirmation_status);

    // All three in the landed slot; the order is proven by the balances (b and c pay their fees only with what the
    // transaction before them gave them).
    const st = await conn.getSignatureStatuses(plan.signatures);
    expect(st.value.map((v) => v?.slot)).toEqual([landed.landed_slot, landed.landed_slot, landed.landed_slot]);
    expect(st.value.map((v) => v?.err)).toEqual([null, null, null]);
    expect(await conn.getBalance(plan.d)).toBe(LAMPORTS_PER_SOL / 10);
    expect(await conn.getBalance(new PublicKey(tip))).toBe(tipBefore + 10_000);
  });

  it('lands nothing when the second transaction fails (all or nothing), status Failed', async () => {
    const payer = await fundedPayer(conn, 2);
    const before = await conn.getBalance(payer.publicKey);
    const { blockhash } = await conn.getLatestBlockhash();
    const plan = orderedBundle(payer, blockhash, await tipAccount(), { failSecond: true });
    const id = ((await jito.sendBundle([plan.base64, { encoding: 'base64' }])) as RpcAnswer<string>).result!;
    const final = await inflightStatusWhen(jito, id, (v) => v.status !== 'Pending', 5_000);
    expect(final).toMatchObject({ status: 'Failed', landed_slot: null });
    expect(await conn.getBalance(payer.publicKey)).toBe(before);
    expect(await conn.getBalance(plan.b.publicKey)).toBe(0);
    const st = await conn.getSignatureStatuses(plan.signatures);
    expect(st.value).toEqual([null, null, null]);
    const statuses = (await jito.getBundleStatuses([[id]])) as RpcAnswer<Statuses>;
    expect(statuses.result!.value).toEqual([null]);
  });

  it('refuses a bundle without a tip, 6 transactions, and duplicates; an unknown id is Invalid', async () => {
    const payer = await fundedPayer(conn, 1);
    const { blockhash } = await conn.getLatestBlockhash();
    const noTip = orderedBundle(payer, blockhash, await tipAccount(), { tipLamports: 0 });
    const r1 = (await jito.sendBundle([noTip.base64, { encoding: 'base64' }])) as RpcAnswer<string>;
    expect(r1.error?.code).toBe(-32602);
    expect(r1.error?.message).toMatch(/tip of at least 1000 lamports/);
    const lowTip = orderedBundle(payer, blockhash, await tipAccount(), { tipLamports: 999 });
    expect(((await jito.sendBundle([lowTip.base58])) as RpcAnswer<string>).error?.message).toMatch(/it pays 999/);
    const six = [...noTip.base64, ...lowTip.base64];
    const r2 = (await jito.sendBundle([six, { encoding: 'base64' }])) as RpcAnswer<string>;
    expect(r2.error).toMatchObject({ code: -32602, message: 'bundle contains 6 transactions, at most 5 are allowed' });
    const t = tippedTransfer(payer, blockhash, await tipAccount());
    const r3 = (await jito.sendBundle([[t.base64, t.base64], { encoding: 'base64' }])) as RpcAnswer<string>;
    expect(r3.error?.message).toBe('bundle contains duplicate transactions');
    const r4 = (await jito.getInFlightBundleStatuses([['00'.repeat(32)]])) as RpcAnswer<Inflight>;
    expect(r4.result!.value[0]).toEqual({ bundle_id: '00'.repeat(32), status: 'Invalid', landed_slot: null });
  });

  it('sendTransaction on /api/v1/transactions lands the transaction through the leader', async () => {
    const payer = await fundedPayer(conn, 1);
    const { blockhash } = await conn.getLatestBlockhash();
    const t = tippedTransfer(payer, blockhash, await tipAccount());
    const r = (await jito.sendTxn([t.base64, { encoding: 'base64' }])) as RpcAnswer<string>;
    expect(r.result).toBe(t.signature);
    await waitFor('the transaction to land', async () => (await conn.getSignatureStatuses([t.signature])).value[0], (v) => v !== null, 5_000);
  });

  it('answers HTTP 429 with -32097 over its per-IP rate limit', async () => {
    localnet.blockEngine.rateLimitPerSecond = 3;
    try {
      let limited: unknown = null;
      for (let i = 0; i < 10 && limited === null; i++) {
        try {
          await jito.getTipAccounts();
        } catch (err) {
          limited = err;
        }
      }
      expect(isAxiosError(limited)).toBe(true);
      if (!isAxiosError(limited)) return;
      expect(limited.response?.status).toBe(429);
      expect((limited.response?.data as RpcAnswer<never>).error?.code).toBe(-32097);
    } finally {
      localnet.blockEngine.rateLimitPerSecond = 0;
    }
  });
});
