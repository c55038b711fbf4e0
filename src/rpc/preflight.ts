// Preflight simulation for sendTransaction with skipPreflight: false (front thread, async; never on the
// skip-preflight hot path). Like Agave: signatures are verified (the upstream simulates with sigVerify: true) and a
// failed simulation answers -32002 "Transaction simulation failed: {err}" with the whole simulation value as data.
import { Errors, RelayError } from '../errors/registry.js';
import type { Commitment } from '../jsonrpc/params.js';
import { transactionErrorText } from './transaction-error-text.js';
import { UpstreamError, type UpstreamRpcClient } from './upstream-client.js';

interface SimulationResponse {
  readonly context: { readonly slot: number };
  readonly value: { readonly err: unknown } & Record<string, unknown>;
}

// Agave's JSON_RPC_SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE and ..._SIGNATURE_LEN_MISMATCH.
const SIGVERIFY_CODES = new Set([-32003, -32013]);

export async function runPreflight(
  upstream: UpstreamRpcClient,
  base64Tx: string,
  commitment: Commitment,
  minContextSlot: number | undefined,
): Promise<void> {
  let sim: SimulationResponse;
  try {
    sim = await upstream.call<SimulationResponse>('simulateTransaction', [
      base64Tx,
      { encoding: 'base64', commitment, sigVerify: true, ...(minContextSlot === undefined ? {} : { minContextSlot }) },
    ]);
  } catch (err) {
    if (err instanceof UpstreamError && err.rpcError) {
      const e = err.rpcError;
      if (SIGVERIFY_CODES.has(e.code)) throw new RelayError(Errors.SIGNATURE_VERIFICATION_FAILED);
      // The upstream has not reached minContextSlot at the preflight commitment: Agave's -32016, data {contextSlot}.
      if (e.code === -32016) throw new RelayError(Errors.MIN_CONTEXT_SLOT_NOT_REACHED, e.message, e.data);
      // The upstream judged the request itself invalid: pass its verdict on.
      if (e.code === -32602) throw new RelayError(Errors.INVALID_PARAMS, e.message, e.data);
    }
    throw new RelayError(Errors.PREFLIGHT_UNAVAILABLE);
  }
  if (!sim || typeof sim !== 'object' || !sim.value || typeof sim.value !== 'object') {
    throw new RelayError(Errors.PREFLIGHT_UNAVAILABLE);
  }
  const err = sim.value.err;
  // Agave's sendTransaction verifies signatures before it simulates (-32003); its simulateTransaction reports the same
  // failure as a result with err "SignatureFailure", which the preflight answers the way sendTransaction would.
  if (err === 'SignatureFailure') throw new RelayError(Errors.SIGNATURE_VERIFICATION_FAILED);
  if (err !== null && err !== undefined) {
    throw new RelayError(Errors.PREFLIGHT_FAILED, `${Errors.PREFLIGHT_FAILED.message}: ${transactionErrorText(err)}`, sim.value);
  }
}
