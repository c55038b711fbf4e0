// `slotrelay example-tx --rpc URL` (cold, developer helper): funds a fresh keypair by airdrop on a local cluster,
// signs a small transfer with a current blockhash and prints it as base64 — a real transaction for a first request.
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';

export async function buildExampleTransaction(rpcUrl: string): Promise<string> {
  const conn = new Connection(rpcUrl, 'confirmed');
  const payer = Keypair.generate();
  const sig = await conn.requestAirdrop(payer.publicKey, LAMPORTS_PER_SOL);
  const latest = await conn.getLatestBlockhash('confirmed');
  await conn.confirmTransaction({ signature: sig, ...latest }, 'confirmed');
  const tx = new Transaction({ feePayer: payer.publicKey, ...(await conn.getLatestBlockhash('confirmed')) }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 }),
  );
  tx.sign(payer);
  return tx.serialize().toString('base64');
}
