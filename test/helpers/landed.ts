// Waiting for a transaction to land on a real chain (a localnet, through web3.js): the check tests that send real
// transactions end with. Cold, test-only.
import type { Connection, SignatureStatus } from '@solana/web3.js';
import { waitFor } from './wait-for.js';

/** The signature's status once the chain reports it confirmed or finalized (whatever its err); rejects after `timeoutMs`. */
export async function confirmedStatus(conn: Connection, signature: string, timeoutMs = 20_000, intervalMs = 100): Promise<SignatureStatus> {
  const st = await waitFor(
    `${signature} confirmed`,
    async () => (await conn.getSignatureStatuses([signature])).value[0],
    (s) => s !== null && (s.confirmationStatus === 'confirmed' || s.confirmationStatus === 'finalized'),
    timeoutMs,
    intervalMs,
  );
  return st!;
}

/** Resolves once the transaction is confirmed and executed without error; rejects naming the error otherwise. */
export async function landed(conn: Connection, signature: string, timeoutMs = 20_000): Promise<void> {
  const st = await confirmedStatus(conn, signature, timeoutMs);
  if (st.err !== null) throw new Error(`${signature} landed with an execution error: ${JSON.stringify(st.err)}`);
}
