// Real bundles for the bundle tests (#16): three transfers whose order matters (each fee payer is funded only by the
// transaction before it), so the balances after landing prove both atomicity and order. Built with web3.js.
import { Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { waitFor } from './wait-for.js';

export interface BundlePlan {
  readonly payer: Keypair;
  readonly b: Keypair;
  readonly c: Keypair;
  readonly d: PublicKey;
  /** base64 wire transactions, in bundle order. */
  readonly base64: string[];
  readonly base58: string[];
  readonly signatures: string[];
}

export interface BundleOptions {
  /** Lamports to the tip account (0: no tip transfer at all). Default 10,000. */
  readonly tipLamports?: number;
  /** Make the second transaction fail on chain (it moves more than its payer has). */
  readonly failSecond?: boolean;
}

/**
 * payer -> b (0.5 SOL); b (fee payer, funded only by tx 1) -> c (0.2 SOL, or 5 SOL when failSecond);
 * c (fee payer, funded only by tx 2) -> d (0.1 SOL) and the tip to `tipAccount`.
 */
export function orderedBundle(payer: Keypair, blockhash: string, tipAccount: string, opts: BundleOptions = {}): BundlePlan {
  const b = Keypair.generate();
  const c = Keypair.generate();
  const d = Keypair.generate().publicKey;
  const tip = opts.tipLamports ?? 10_000;
  const t1 = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight: 1_000_000 }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: b.publicKey, lamports: LAMPORTS_PER_SOL / 2 }),
  );
  t1.sign(payer);
  const t2 = new Transaction({ feePayer: b.publicKey, blockhash, lastValidBlockHeight: 1_000_000 }).add(
    SystemProgram.transfer({ fromPubkey: b.publicKey, toPubkey: c.publicKey, lamports: opts.failSecond ? 5 * LAMPORTS_PER_SOL : LAMPORTS_PER_SOL / 5 }),
  );
  t2.sign(b);
  const t3 = new Transaction({ feePayer: c.publicKey, blockhash, lastValidBlockHeight: 1_000_000 }).add(
    SystemProgram.transfer({ fromPubkey: c.publicKey, toPubkey: d, lamports: LAMPORTS_PER_SOL / 10 }),
  );
  if (tip > 0) t3.add(SystemProgram.transfer({ fromPubkey: c.publicKey, toPubkey: new PublicKey(tipAccount), lamports: tip }));
  t3.sign(c);
  const txs = [t1, t2, t3];
  const wires = txs.map((t) => t.serialize());
  return {
    payer,
    b,
    c,
    d,
    base64: wires.map((w) => w.toString('base64')),
    base58: wires.map((w) => bs58.encode(w)),
    signatures: txs.map((t) => bs58.encode(t.signature!)),
  };
}

/** A single self-transfer that also pays `tipLamports` to `tipAccount` (a one-transaction bundle), base64. */
export function tippedTransfer(payer: Keypair, blockhash: string, tipAccount: string, tipLamports = 10_000): { base64: string; signature: string } {
  const t = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight: 1_000_000 }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 5_000_000 }),
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: new PublicKey(tipAccount), lamports: tipLamports }),
  );
  t.sign(payer);
  return { base64: t.serialize().toString('base64'), signature: bs58.encode(t.signature!) };
}

/** A JSON-RPC answer as jito-js-rpc returns it (the body). */
export interface RpcAnswer<T> {
  result?: T;
  error?: { code: number; message: string; data?: { reason?: string; [k: string]: unknown } };
}

export interface InflightStatus {
  bundle_id: string;
  status: string;
  landed_slot: number | null;
}

/** What getInflightBundleStatuses says of `id` once `settled` holds (polled through `client`, the engine or the relay). */
export async function inflightStatusWhen(
  client: { getInFlightBundleStatuses(params: string[][]): Promise<unknown> },
  id: string,
  settled: (s: InflightStatus) => boolean,
  timeoutMs: number,
): Promise<InflightStatus> {
  return waitFor(
    `bundle ${id.slice(0, 8)} to settle`,
    async () => ((await client.getInFlightBundleStatuses([[id]])) as RpcAnswer<{ value: InflightStatus[] }>).result!.value[0],
    settled,
    timeoutMs,
  );
}

/**
 * Resolves right after the localnet's next slot starts: a bundle sent then stays Pending for most of a slot (it is
 * executed at the following slot start), long enough to see that status even on a busy box.
 */
export function nextSlotStart(clock: { onSlot(fn: (slot: number) => void): void; readonly current: number }): Promise<number> {
  const from = clock.current;
  return new Promise((resolve) => {
    let done = false;
    clock.onSlot((slot) => {
      if (!done && slot > from) {
        done = true;
        resolve(slot);
      }
    });
  });
}
