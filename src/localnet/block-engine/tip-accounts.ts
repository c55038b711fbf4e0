// The localnet block engine's tip accounts and tip rule (localnet process, main thread; cold set-up, tipPaid() per
// bundle). Like Jito's, there are 8 tip accounts (getTipAccounts), derived from the localnet's seed so that every
// start with the same seed has the same ones; a bundle lands only if its transactions transfer at least
// MIN_TIP_LAMPORTS in total to them with the system program's Transfer instruction.
import { createHash } from 'node:crypto';
import { Keypair } from '@solana/web3.js';
import type { ParsedTx } from '../wire.js';

export const TIP_ACCOUNT_COUNT = 8;
/** Jito's minimum tip. */
export const MIN_TIP_LAMPORTS = 1_000n;
const SYSTEM_PROGRAM = '11111111111111111111111111111111';
/** SystemInstruction::Transfer: u32 LE index 2, then u64 LE lamports. */
const TRANSFER_INDEX = 2;
const TRANSFER_DATA_BYTES = 12;

export function localnetTipAccounts(seed: string): readonly string[] {
  const out: string[] = [];
  for (let i = 0; i < TIP_ACCOUNT_COUNT; i++) {
    const s = createHash('sha256').update(`${seed}:jito-tip-account:${i}`).digest();
    out.push(Keypair.fromSeed(s).publicKey.toBase58());
  }
  return out;
}

/** Lamports the transaction transfers to any of `tipAccounts` (system Transfer instructions only). */
export function tipLamports(parsed: ParsedTx, tipAccounts: ReadonlySet<string>): bigint {
  let total = 0n;
  for (const ix of parsed.instructions) {
    if (parsed.accountKeys[ix.programIdIndex] !== SYSTEM_PROGRAM) continue;
    const d = ix.data;
    if (d.length !== TRANSFER_DATA_BYTES || ix.accounts.length < 2) continue;
    const view = new DataView(d.buffer, d.byteOffset, d.length);
    if (view.getUint32(0, true) !== TRANSFER_INDEX) continue;
    const to = parsed.accountKeys[ix.accounts[1]];
    if (to !== undefined && tipAccounts.has(to)) total += view.getBigUint64(4, true);
  }
  return total;
}
