// The embedded localnet of a relay started without an upstream (startRelay with no `upstream`): its URL from the
// relay's `localnet_started` log line, and payers funded on it, for tests that land real transactions.
import { Connection, Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import type { RelayHandle } from './relay-process.js';

/** The embedded localnet's JSON-RPC URL (the relay logs it once the child is ready, before relay_ready). */
export function embeddedLocalnetUrl(relay: RelayHandle): string {
  for (const l of relay.logs) {
    if (!l.includes('"event":"localnet_started"')) continue;
    return (JSON.parse(l) as { rpcUrl: string }).rpcUrl;
  }
  throw new Error('the relay logged no localnet_started line (was it started with an upstream?)');
}

/** A fresh keypair with `sol` SOL on the localnet, airdrop confirmed. */
export async function fundedPayer(localnet: Connection, sol = 2): Promise<Keypair> {
  const payer = Keypair.generate();
  const sig = await localnet.requestAirdrop(payer.publicKey, sol * LAMPORTS_PER_SOL);
  const latest = await localnet.getLatestBlockhash('confirmed');
  await localnet.confirmTransaction({ signature: sig, ...latest }, 'confirmed');
  return payer;
}
