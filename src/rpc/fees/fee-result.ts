// The upstream's getRecentPrioritizationFees result, checked and written as the text the cache serves (front thread;
// cold: once per slot and key). Agave builds the list from a map, so its order is not promised: we sort by slot
// (ascending, as spec 2.2 says clients get it). Every entry must be {slot, prioritizationFee} with non-negative integer
// JSON numbers; anything else is not an answer we can vouch for (upstream_unavailable, never cached). The text is
// written by hand in Agave's member order, numbers as JSON numbers (web3.js refuses strings).
import { UpstreamError } from '../upstream-client.js';

interface FeeRow {
  readonly slot: number;
  readonly fee: number;
}

function badAnswer(why: string): UpstreamError {
  return new UpstreamError(`upstream getRecentPrioritizationFees answer ${why}`, undefined, 'bad_answer');
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

/** The result text for the upstream's parsed `result`; throws UpstreamError (bad_answer). */
export function feeResultText(result: unknown): string {
  if (!Array.isArray(result)) throw badAnswer('is not an array');
  const rows: FeeRow[] = [];
  let sorted = true;
  for (const r of result as unknown[]) {
    if (r === null || typeof r !== 'object') throw badAnswer('has an entry that is not an object');
    const { slot, prioritizationFee } = r as { slot?: unknown; prioritizationFee?: unknown };
    if (!isCount(slot) || !isCount(prioritizationFee)) throw badAnswer('has an entry without integer slot and prioritizationFee');
    if (rows.length > 0 && slot < rows[rows.length - 1].slot) sorted = false;
    rows.push({ slot, fee: prioritizationFee });
  }
  if (!sorted) rows.sort((a, b) => a.slot - b.slot);
  let text = '[';
  for (let i = 0; i < rows.length; i++) {
    if (i > 0) text += ',';
    // A u64 fee beyond 2^53 (never seen: 9e15 micro-lamports per CU) prints as the nearest double: below 1e21 a JS
    // number prints as plain digits, so it is still a JSON integer.
    text += '{"slot":' + rows[i].slot + ',"prioritizationFee":' + rows[i].fee + '}';
  }
  return text + ']';
}
