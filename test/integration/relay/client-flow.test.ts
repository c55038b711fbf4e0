// The whole client flow of issue #11 against the relay alone (embedded localnet behind it): unchanged
// @solana/web3.js and @solana/kit programs pointed only at the relay's JSON-RPC host, the key in `?key=` (so the
// WebSocket URL web3.js derives from it, port + 1, carries the key too), build, price, simulate, send and confirm a
// transaction, then read the balance back. Only funding the payer uses the localnet directly (airdrops are not a
// relay method).
import {
  ComputeBudgetProgram,
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  Transaction,
} from '@solana/web3.js';
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createSolanaRpcSubscriptions,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  lamports,
  pipe,
  sendAndConfirmTransactionFactory,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Instruction,
  type TransactionSigner,
} from '@solana/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';

let relay: RelayHandle;
let localnet: Connection;

/** The p75 of the fees' prioritizationFee, the spec's suggested compute-unit price (4.2). */
function p75(fees: readonly { prioritizationFee: number | bigint }[]): number {
  const sorted = fees.map((f) => Number(f.prioritizationFee)).sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.75))];
}

async function fund(pubkey: PublicKey, sol: number): Promise<void> {
  const sig = await localnet.requestAirdrop(pubkey, sol * LAMPORTS_PER_SOL);
  const latest = await localnet.getLatestBlockhash('confirmed');
  await localnet.confirmTransaction({ signature: sig, ...latest }, 'confirmed');
}

/** The relay's JSON-RPC URL with the key as a query parameter: what a user pastes into a client. */
function keyedRpcUrl(): string {
  return `${relay.rpcUrl}/?key=${TEST_KEY}`;
}

/** ws://host:(port + 1)/?key=…, where web3.js's Connection looks for PubSub. */
function keyedWsUrl(): string {
  const u = new URL(relay.rpcUrl);
  return `ws://${u.hostname}:${Number(u.port) + 1}/?key=${TEST_KEY}`;
}

beforeAll(async () => {
  relay = await startRelay({});
  const started = relay.logs.map((l) => (l.includes('"event":"localnet_started"') ? (JSON.parse(l) as { rpcUrl: string }) : null)).find((x) => x !== null);
  localnet = new Connection(started!.rpcUrl, 'confirmed');
}, 60_000);

afterAll(async () => {
  await relay?.stop('SIGTERM');
});

describe('a web3.js program pointed only at the relay', () => {
  it('gets a blockhash, prices a compute unit at the p75 of recent fees, simulates, sends, confirms over the relay WebSocket and reads the balance', async () => {
    const payer = Keypair.generate();
    await fund(payer.publicKey, 2);
    const conn = new Connection(keyedRpcUrl(), { commitment: 'confirmed', disableRetryOnRateLimit: true });
    const to = Keypair.generate().publicKey;

    const fees = await conn.getRecentPrioritizationFees();
    expect(fees.length).toBeGreaterThan(0);
    const price = Math.max(1, p75(fees));
    const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash('confirmed');
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight })
      .add(ComputeBudgetProgram.setComputeUnitPrice({ microLamports: price }))
      .add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 3_000_000 }));
    tx.sign(payer);

    const sim = await conn.simulateTransaction(tx);
    expect(sim.value.err).toBeNull();
    expect(sim.value.logs!.length).toBeGreaterThan(0);
    expect(sim.value.unitsConsumed).toBeGreaterThan(0);

    const failing = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 50 * LAMPORTS_PER_SOL }),
    );
    failing.sign(payer);
    const failed = await conn.simulateTransaction(failing);
    expect(failed.value.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
    expect(failed.value.logs!.length).toBeGreaterThan(0);

    const signature = await conn.sendRawTransaction(tx.serialize());
    const confirmed = await conn.confirmTransaction({ signature, blockhash, lastValidBlockHeight }, 'confirmed');
    expect(confirmed.value.err).toBeNull();
    expect(await conn.getBalance(to, 'confirmed')).toBe(3_000_000);
    const status = (await conn.getSignatureStatuses([signature])).value[0];
    expect(status?.err).toBeNull();
  });
});

const SYSTEM_PROGRAM = address('11111111111111111111111111111111');
const COMPUTE_BUDGET_PROGRAM = address('ComputeBudget111111111111111111111111111111');

/** SystemInstruction::Transfer: u32 index 2, u64 lamports (little-endian). */
function transferInstruction(from: TransactionSigner, to: string, amount: bigint): Instruction {
  const data = new Uint8Array(12);
  const view = new DataView(data.buffer);
  view.setUint32(0, 2, true);
  view.setBigUint64(4, amount, true);
  return {
    programAddress: SYSTEM_PROGRAM,
    accounts: [
      { address: from.address, role: AccountRole.WRITABLE_SIGNER, signer: from } as never,
      { address: address(to), role: AccountRole.WRITABLE },
    ],
    data,
  };
}

/** ComputeBudgetInstruction::SetComputeUnitPrice: u8 3, u64 micro-lamports. */
function computeUnitPriceInstruction(microLamports: bigint): Instruction {
  const data = new Uint8Array(9);
  data[0] = 3;
  new DataView(data.buffer).setBigUint64(1, microLamports, true);
  return { programAddress: COMPUTE_BUDGET_PROGRAM, data };
}

describe('a @solana/kit program pointed only at the relay', () => {
  it('prices, simulates, and sends with sendAndConfirmTransactionFactory using the relay for rpc and rpcSubscriptions', async () => {
    const signer = await generateKeyPairSigner();
    await fund(new PublicKey(signer.address), 2);
    const rpc = createSolanaRpc(keyedRpcUrl());
    const rpcSubscriptions = createSolanaRpcSubscriptions(keyedWsUrl());
    const to = Keypair.generate().publicKey.toBase58();

    const fees = await rpc.getRecentPrioritizationFees().send();
    const price = BigInt(Math.max(1, p75(fees)));
    const { value: latest } = await rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(signer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
      (m) => appendTransactionMessageInstructions([computeUnitPriceInstruction(price), transferInstruction(signer, to, 4_000_000n)], m),
    );
    const signed = await signTransactionMessageWithSigners(message);

    const sim = await rpc.simulateTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64', commitment: 'confirmed' }).send();
    expect(sim.value.err).toBeNull();
    expect(sim.value.unitsConsumed).toBeGreaterThan(0n);

    const sendAndConfirm = sendAndConfirmTransactionFactory({ rpc, rpcSubscriptions });
    await sendAndConfirm(signed as Parameters<typeof sendAndConfirm>[0], { commitment: 'confirmed' });
    const { value: balance } = await rpc.getBalance(address(to), { commitment: 'confirmed' }).send();
    expect(balance).toBe(lamports(4_000_000n));
  });
});
