// simulateTransaction against the localnet bank (localnet process, main thread; per call, cold). Produces Agave's
// full RpcSimulateTransactionResult with every member present (docs/protocol-decisions.md): err, logs,
// accounts, unitsConsumed (always a number: web3.js rejects null), loadedAccountsDataSize, returnData,
// innerInstructions, replacementBlockhash, fee, preBalances, postBalances, preTokenBalances, postTokenBalances,
// loadedAddresses. Nothing is committed.
import bs58 from 'bs58';
import { FailedTransactionMetadata, type Account, type TransactionMetadata } from 'litesvm/dist/internal.js';
import { innerInstructionsJson, returnDataJson, type Bank } from './bank.js';
import { txErrorJson, type TxErrorJson } from './tx-error.js';
import { transactionFee, type ParsedTx } from './wire.js';

export interface SimulateOptions {
  readonly sigVerify: boolean;
  readonly replaceRecentBlockhash: boolean;
  /** Addresses whose post-simulation state is returned (base64 encoded). */
  readonly accounts: readonly string[] | null;
  readonly innerInstructions: boolean;
}

export interface AccountJson {
  lamports: number;
  owner: string;
  data: [string, 'base64'];
  executable: boolean;
  rentEpoch: number;
  space: number;
}

export function accountJson(a: Account): AccountJson {
  const data = a.data();
  return {
    lamports: Number(a.lamports()),
    owner: bs58.encode(a.owner()),
    data: [Buffer.from(data).toString('base64'), 'base64'],
    executable: a.executable(),
    // Agave reports u64::MAX for rent-exempt accounts; as a JSON number it is 18446744073709551615.
    rentEpoch: a.rentEpoch() >= 2n ** 64n - 1n ? 18446744073709551615 : Number(a.rentEpoch()),
    space: data.length,
  };
}

/** Returns the `value` object of the simulateTransaction result. */
export function simulate(bank: Bank, tx: Uint8Array, parsed: ParsedTx, opts: SimulateOptions): Record<string, unknown> {
  let bytes = tx;
  let replacementBlockhash: { blockhash: string; lastValidBlockHeight: number } | null = null;
  if (opts.replaceRecentBlockhash) {
    const latest = bank.blockhashAt(bank.slot);
    bytes = Uint8Array.from(tx);
    bytes.set(bs58.decode(latest.blockhash), parsed.blockhashOffset);
    replacementBlockhash = { blockhash: latest.blockhash, lastValidBlockHeight: latest.slot + bank.windowSlots };
  }
  const keys = parsed.keyBytes;
  const nAccounts = opts.accounts?.length ?? 0;
  const value = (
    err: TxErrorJson | null,
    meta: TransactionMetadata | null,
    pre: bigint[] | null,
    post: bigint[] | null,
    accounts: (AccountJson | null)[] | null,
  ): Record<string, unknown> => ({
    err,
    logs: meta ? meta.logs() : [],
    accounts,
    unitsConsumed: meta ? Number(meta.computeUnitsConsumed()) : 0,
    loadedAccountsDataSize: 0,
    returnData: meta ? returnDataJson(meta) : null,
    innerInstructions: opts.innerInstructions && meta ? innerInstructionsJson(meta) : null,
    replacementBlockhash,
    fee: pre !== null ? Number(transactionFee(parsed)) : null,
    preBalances: pre?.map(Number) ?? null,
    postBalances: post?.map(Number) ?? null,
    preTokenBalances: null,
    postTokenBalances: null,
    loadedAddresses: null,
  });
  const nullAccounts = opts.accounts === null ? null : new Array<null>(nAccounts).fill(null);

  if (!opts.replaceRecentBlockhash && bank.blockhashSlot(parsed.recentBlockhash) === undefined) {
    return value('BlockhashNotFound', null, null, null, nullAccounts);
  }
  // Agave's simulation runs check_transactions (age + status cache): a committed signature is AlreadyProcessed.
  if (!opts.replaceRecentBlockhash && bank.status(parsed.signatures[0]) !== undefined) {
    return value('AlreadyProcessed', null, null, null, nullAccounts);
  }
  const pre = keys.map((k) => bank.balance(k));
  const result = bank.withSigverify(opts.sigVerify, () => bank.svm.simulateVersionedTransaction(bytes));
  if (result instanceof FailedTransactionMetadata) {
    // Agave: on failure the accounts requested come back as nulls; balances are the pre-state.
    return value(txErrorJson(result.err()), result.meta(), pre, pre, nullAccounts);
  }
  const postState = new Map<string, Account>();
  for (const aa of result.postAccounts()) postState.set(bs58.encode(aa.address), aa.account());
  const post = parsed.accountKeys.map((k, i) => {
    const a = postState.get(k);
    return a ? a.lamports() : pre[i];
  });
  let accounts: (AccountJson | null)[] | null = null;
  if (opts.accounts !== null) {
    accounts = opts.accounts.map((addr) => {
      const a = postState.get(addr) ?? bank.svm.getAccount(bs58.decode(addr));
      return a ? accountJson(a) : null;
    });
  }
  return value(null, result.meta(), pre, post, accounts);
}
