// Agave's full simulateTransaction result shape (front thread, per simulation, cold). Upstreams differ in which
// members they send (older Agave versions, other RPC implementations omit loadedAccountsDataSize, fee, the balances,
// ...), and clients differ in what they require: @solana/kit's types expect every member, web3.js rejects
// `unitsConsumed: null` and needs `err` and `logs`. So the relay answers every member of
// RpcSimulateTransactionResult, taking the upstream's values and filling what it left out with null (0 for
// unitsConsumed), in Agave's member order. docs/simulate-transaction.md.

/** RpcSimulateTransactionResult's members in Agave's serialisation order. */
const VALUE_MEMBERS = [
  'err',
  'logs',
  'accounts',
  'unitsConsumed',
  'loadedAccountsDataSize',
  'returnData',
  'innerInstructions',
  'replacementBlockhash',
  'fee',
  'preBalances',
  'postBalances',
  'preTokenBalances',
  'postTokenBalances',
  'loadedAddresses',
] as const;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The result as JSON text, {context, value} with every value member present; null when the upstream's result is
 * not an RpcResponse (no object `value`), which the caller answers as an unavailable upstream.
 */
export function fullSimulationResult(result: unknown): string | null {
  if (!isObject(result) || !isObject(result.value)) return null;
  const upstreamValue = result.value;
  const value: Record<string, unknown> = {};
  for (const m of VALUE_MEMBERS) {
    const v = upstreamValue[m];
    value[m] = v === undefined ? null : v;
  }
  // web3.js's schema refuses null here; Agave always counts (0 when the transaction never ran).
  if (typeof value.unitsConsumed !== 'number') value.unitsConsumed = 0;
  // Members a newer upstream adds are kept, after Agave's.
  for (const [k, v] of Object.entries(upstreamValue)) if (!(k in value)) value[k] = v;
  const context = isObject(result.context) ? result.context : { slot: 0 };
  return JSON.stringify({ context, value });
}
