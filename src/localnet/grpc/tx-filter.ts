// Yellowstone's transaction filter (localnet process, main thread; per committed transaction per filter, warm).
// The rules of yellowstone-grpc's FilterTransactions: vote and failed, when set, must equal the transaction's;
// signature, when set, must be its first signature; accountInclude (any of), accountExclude (none of) and
// accountRequired (all of) over its account keys. Filters are checked once when a request arrives, as the real
// server does: bad base58 -> INVALID_ARGUMENT.
import bs58 from 'bs58';
import type { TxFilter } from '../../geyser/messages.js';

/** A filter compiled once per request: sets for the account lists. */
export interface CompiledTxFilter {
  readonly name: string;
  readonly vote: boolean | null;
  readonly failed: boolean | null;
  readonly signature: string | null;
  readonly include: ReadonlySet<string>;
  readonly exclude: ReadonlySet<string>;
  readonly required: ReadonlySet<string>;
}

/** What a filter looks at in one transaction. */
export interface TxFacts {
  readonly signature: string;
  readonly isVote: boolean;
  readonly failed: boolean;
  readonly accountKeys: readonly string[];
}

export class FilterError extends Error {}

function checkedKeys(list: readonly string[] | undefined, what: string, name: string): Set<string> {
  const out = new Set<string>();
  for (const k of list ?? []) {
    let n = 0;
    try {
      n = bs58.decode(k).length;
    } catch {
      n = -1;
    }
    if (n !== 32) throw new FilterError(`transactions.${name}.${what}: invalid pubkey ${JSON.stringify(k)}`);
    out.add(k);
  }
  return out;
}

export function compileTxFilter(name: string, f: TxFilter): CompiledTxFilter {
  let signature: string | null = null;
  if (f.signature !== undefined && f.signature !== null && f.signature !== '') {
    let n = 0;
    try {
      n = bs58.decode(f.signature).length;
    } catch {
      n = -1;
    }
    if (n !== 64) throw new FilterError(`transactions.${name}.signature: invalid signature`);
    signature = f.signature;
  }
  return {
    name,
    vote: f.vote ?? null,
    failed: f.failed ?? null,
    signature,
    include: checkedKeys(f.accountInclude, 'accountInclude', name),
    exclude: checkedKeys(f.accountExclude, 'accountExclude', name),
    required: checkedKeys(f.accountRequired, 'accountRequired', name),
  };
}

export function txMatches(f: CompiledTxFilter, tx: TxFacts): boolean {
  if (f.vote !== null && f.vote !== tx.isVote) return false;
  if (f.failed !== null && f.failed !== tx.failed) return false;
  if (f.signature !== null && f.signature !== tx.signature) return false;
  if (f.include.size > 0 && !tx.accountKeys.some((k) => f.include.has(k))) return false;
  if (f.exclude.size > 0 && tx.accountKeys.some((k) => f.exclude.has(k))) return false;
  if (f.required.size > 0) {
    for (const k of f.required) if (!tx.accountKeys.includes(k)) return false;
  }
  return true;
}
