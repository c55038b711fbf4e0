// The localnet's validator set (localnet process; built once at start, cold). Each validator has an Ed25519
// identity (its TPU listener reads nothing from it, the leader schedule and getClusterNodes name it), a vote account
// key and a stake. Keys derive from a seed so a localnet started twice with the same seed has the same validators.
import { createHash } from 'node:crypto';
import { Keypair } from '@solana/web3.js';

export interface ValidatorSpec {
  readonly identity: Keypair;
  readonly vote: Keypair;
  /** Activated stake in lamports. */
  readonly stake: bigint;
}

/** Default stakes for N validators: 1M SOL (stays below 2^53 lamports: exact as a JSON number) split N : N-1 : ... : 1, so the schedule is visibly stake-weighted. */
export const DEFAULT_TOTAL_STAKE_LAMPORTS = 1_000_000n * 1_000_000_000n;

function seeded(seed: string, what: string, i: number): Keypair {
  const bytes = createHash('sha256').update(`slotrelay-localnet/${seed}/${what}/${i}`).digest();
  return Keypair.fromSeed(bytes);
}

export function makeValidators(count: number, seed: string, stakes?: readonly bigint[]): ValidatorSpec[] {
  if (!Number.isInteger(count) || count < 1) throw new Error('a localnet needs at least one validator');
  if (stakes !== undefined && stakes.length !== count) throw new Error(`stakes has ${stakes.length} entries for ${count} validators`);
  const weightSum = BigInt((count * (count + 1)) / 2);
  const out: ValidatorSpec[] = [];
  for (let i = 0; i < count; i++) {
    const stake = stakes?.[i] ?? (DEFAULT_TOTAL_STAKE_LAMPORTS * BigInt(count - i)) / weightSum;
    if (stake <= 0n) throw new Error('every validator needs a positive stake');
    out.push({ identity: seeded(seed, 'identity', i), vote: seeded(seed, 'vote', i), stake });
  }
  return out;
}
