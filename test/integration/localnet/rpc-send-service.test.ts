// The facade's sendTransaction as an Agave RPC node's send-transaction-service (src/localnet/rpc-tpu-sender.ts):
// real HTTP in, real QUIC out to the leaders' listeners, real signed transfers. The node's one-way delay shows in
// when the transaction reaches the leader; with the current leader down the answer still comes (the next leader
// took it) and a resend lands it in a live leader's slots.
import { Connection, Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { until } from '../../helpers/wait-for.js';
import { signedTransfer } from '../../helpers/transactions.js';

let ln: Localnet;
let conn: Connection;
const payer = Keypair.generate();
const SLOT_MS = 200;
const RPC_DELAY_MS = 80;
const DOWN = 0;

async function sendTransaction(base64: string): Promise<{ result?: string; error?: unknown }> {
  const res = await fetch(ln.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [base64, { encoding: 'base64', skipPreflight: true }] }),
  });
  return (await res.json()) as { result?: string; error?: unknown };
}

/** Wait for the first slot of a leader window whose leader satisfies `pick`. */
async function windowOf(pick: (leader: string) => boolean, ms: number): Promise<number> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const s = ln.clock.current;
    if (s % 4 === 0 && pick(ln.schedule.leaderAt(s))) return s;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error('no such leader window in time');
}

function landing(signature: string): { slot: number; validator: string; arrivalNs: bigint } | undefined {
  return ln.landings.page(0, 10_000).records.find((r) => r.signature === signature);
}

beforeAll(async () => {
  ln = await startLocalnet({
    slotMs: SLOT_MS,
    validators: 4,
    stakes: [100n, 100n, 100n, 100n].map((x) => x * 1_000_000_000n),
    links: [{ down: true }],
    rpc: { oneWayDelayMs: RPC_DELAY_MS, retryRateMs: 300 },
  });
  conn = new Connection(ln.rpcUrl, 'confirmed');
  await conn.requestAirdrop(payer.publicKey, 10 * LAMPORTS_PER_SOL);
  await until(() => ln.bank.balance(payer.publicKey.toBytes()) > 0n, 5_000);
});

afterAll(async () => {
  await ln?.stop();
});

describe('facade sendTransaction (send-transaction-service)', () => {
  it('reaches the current leader over QUIC one RPC delay after the client sent it', async () => {
    const down = ln.validators[DOWN].identity;
    const tx = await signedTransfer(conn, payer);
    const slot = await windowOf((l) => l !== down, 20_000);
    const leader = ln.schedule.leaderAt(slot);
    const t0 = process.hrtime.bigint();
    const answer = await sendTransaction(tx.base64);
    const answeredMs = Number(process.hrtime.bigint() - t0) / 1e6;
    expect(answer.result).toBe(tx.signature);
    // The answer crosses the client <-> node distance twice.
    expect(answeredMs).toBeGreaterThanOrEqual(2 * RPC_DELAY_MS - 1);
    await until(() => landing(tx.signature) !== undefined, 3_000);
    const rec = landing(tx.signature)!;
    expect(rec.validator).toBe(leader);
    const arrivedAfterMs = Number(rec.arrivalNs - t0) / 1e6;
    expect(arrivedAfterMs).toBeGreaterThanOrEqual(RPC_DELAY_MS - 1);
    expect(arrivedAfterMs).toBeLessThan(RPC_DELAY_MS + 400);
  });

  it('the current leader is down: answered all the same (the next leader took it), landed by a live leader', async () => {
    const down = ln.validators[DOWN].identity;
    const tx = await signedTransfer(conn, payer);
    const resent0 = ln.rpcSend.resent;
    // Send so the node handles it at the start of the down validator's window (the request takes RPC_DELAY_MS).
    await windowOf((l) => l === down, 40_000);
    const t0 = Date.now();
    const answer = await sendTransaction(tx.base64);
    expect(answer.result).toBe(tx.signature);
    expect(Date.now() - t0).toBeLessThan(2_000); // not held by the down leader's handshake
    await until(() => landing(tx.signature) !== undefined, 6_000);
    const rec = landing(tx.signature)!;
    expect(rec.validator).not.toBe(down);
    expect(ln.schedule.leaderAt(rec.slot)).not.toBe(down);
    expect(ln.landings.countersOf(down).received).toBe(0);
    // Forwarded 600+ ms before the next leader's window (outside its grace): only a resend can have landed it.
    expect(ln.rpcSend.resent).toBeGreaterThan(resent0);
  });
});
