// RelayClient.getTransactionReceipt against a real relay on its embedded localnet: a transfer that executes and one
// that fails in execution (more lamports than the payer has) have receipts whose landed.execution differ
// (executed / failed, with the error); an unknown signature answers null. docs/client.md "Receipts".
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayClient, type TransactionReceipt } from 'slotrelay/client';
import { ensureClientBuilt } from '../../helpers/client-dist.js';
import { embeddedLocalnetUrl, fundedPayer } from '../../helpers/embedded-localnet.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { waitFor } from '../../helpers/wait-for.js';

let relay: RelayHandle;
let localnet: Connection;
let payer: Keypair;
let client: RelayClient;

beforeAll(async () => {
  ensureClientBuilt();
  relay = await startRelay({ receipts: { pollMs: 100 } });
  localnet = new Connection(embeddedLocalnetUrl(relay), 'confirmed');
  payer = await fundedPayer(localnet);
  client = new RelayClient({ url: relay.relayUrl, apiKey: TEST_KEY, rpcUrl: relay.rpcUrl });
}, 60_000);

afterAll(async () => {
  await client?.close();
  await relay?.stop();
});

async function transfer(lamports: number): Promise<Transaction> {
  const tx = new Transaction({ feePayer: payer.publicKey, ...(await localnet.getLatestBlockhash('confirmed')) }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports }),
  );
  tx.sign(payer);
  return tx;
}

async function landedReceipt(signature: string): Promise<TransactionReceipt> {
  const r = await waitFor('landed', () => client.getTransactionReceipt(signature), (x) => x !== null && x.landed !== null && x.landed.confirmationStatus !== 'processed', 20_000);
  return r!;
}

describe('getTransactionReceipt through the client', () => {
  it('executed and failed-in-execution transactions: landed.execution differs, the error is the cluster\'s', async () => {
    const ok = await client.submit(await transfer(1_000_000), { routes: ['rpc'], maxRetries: 0 });
    const bad = await client.submit(await transfer(50 * LAMPORTS_PER_SOL), { routes: ['rpc'], maxRetries: 0 });
    const a = await landedReceipt(ok.signature);
    const b = await landedReceipt(bad.signature);
    expect(a).toMatchObject({ signature: ok.signature, status: 'landed', landed: { err: null, execution: 'executed' } });
    expect(b).toMatchObject({ signature: bad.signature, status: 'landed_failed', landed: { err: { InstructionError: [0, { Custom: 1 }] }, execution: 'failed' } });
    expect(b.landed!.err).toEqual((await localnet.getSignatureStatuses([bad.signature])).value[0]?.err);
  });

  it('a signature the relay has no receipt for: null', async () => {
    expect(await client.getTransactionReceipt('1'.repeat(64))).toBeNull();
  });
});
