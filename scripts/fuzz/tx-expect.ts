// The answer a submission must get, from what its transaction bytes deserve (tx-mutations.ts, tx-encoding.ts) and
// the key and request around them (harness process; generation, hot). Order of the relay's checks, per
// docs/relay-api.md, docs/errors.md and src/front/methods/send-transaction.ts: route policy, then (skip-preflight)
// minContextSlot against the relay's slot, intake (decode, sanitize, per-key signature verification); or
// (preflight) the key's policy, intake, the key's simulation budget, the upstream's simulation.
import { FAILED_SIMULATION } from './fake-upstream.js';
import { ERRORS, fixed, restAccepted, restError, anyOf, type ErrorRule, type Expectation, type Reason, type RpcOutcome } from './expectations.js';
import type { KeyProfile } from './keys.js';
import { TX_TYPE, type ByteOutcome } from './tx-mutations.js';

const INTAKE_PREFIXES: Readonly<Record<string, readonly string[]>> = {
  tx_undecodable: [`failed to deserialize ${TX_TYPE}`],
  tx_invalid: ['invalid transaction: '],
  tx_too_large_decoded: [`decoded ${TX_TYPE} too large: `],
  tx_too_large_encoded: [`base64 encoded ${TX_TYPE} too large: `, `base58 encoded ${TX_TYPE} too large: `],
  tx_bad_encoding: ['invalid base64 encoding: ', 'invalid base58 encoding: '],
};
const LOOSE_REASONS = Object.keys(INTAKE_PREFIXES) as Reason[];
const ANY_INTAKE_ERROR: ErrorRule = { code: -32602, prefixes: Object.values(INTAKE_PREFIXES).flat() };

export interface SendContext {
  readonly key: KeyProfile;
  /** skipPreflight false (or absent) in the request. */
  readonly preflight: boolean;
  readonly minContextSlot: 'none' | 'reached' | 'unreached';
  /** The bytes are a correctly signed pool entry. */
  readonly intact: boolean;
  readonly simulation: 'ok' | 'fail';
}

const SIG_FAIL: RpcOutcome = { error: fixed('signature_verification_failed') };
const CONTEXT_SLOT: RpcOutcome = { error: fixed('min_context_slot_not_reached', { shape: 'contextSlot' }) };
const SIM_RATE_LIMITED: RpcOutcome = { error: fixed('rate_limited', { shape: 'simulate_rate_limited' }) };

/** Intake alone (decode, sanitize, per-key verification); `then` maps an accepted transaction further. */
function intake(outcome: ByteOutcome, ctx: SendContext, then: (signature: string | null, intact: boolean) => RpcOutcome[]): RpcOutcome[] {
  if (outcome.kind === 'error') return [{ error: { code: ERRORS[outcome.reason].code, message: outcome.message } }];
  if (outcome.kind === 'loose') {
    const rest = ctx.key.verify ? [SIG_FAIL, ...(ctx.intact ? then(null, true) : [])] : then(null, ctx.intact);
    return [{ error: ANY_INTAKE_ERROR }, ...rest];
  }
  if (ctx.key.verify && !ctx.intact) return [SIG_FAIL];
  return then(outcome.signature, ctx.intact);
}

/** sendTransaction with valid params: its possible outcomes (more than one only for loose bytes or a tight key). */
export function sendOutcomes(outcome: ByteOutcome, ctx: SendContext): RpcOutcome[] {
  const key = ctx.key;
  if (!key.rpcRoute) return [{ error: fixed('route_not_allowed') }];
  const accept = (signature: string | null): RpcOutcome => ({ result: 'signature', signature });
  if (!ctx.preflight || key.preflight === 'skip') {
    if (ctx.minContextSlot === 'unreached') return [CONTEXT_SLOT];
    return intake(outcome, ctx, (sig) => [accept(sig)]);
  }
  if (key.preflight === 'reject') return [{ error: fixed('preflight_not_allowed') }];
  return intake(outcome, ctx, (sig, intact) => {
    const out: RpcOutcome[] = key.tight ? [SIM_RATE_LIMITED] : [];
    // The upstream (Agave simulate_transaction) checks minContextSlot before it verifies signatures.
    if (ctx.minContextSlot === 'unreached') out.push(CONTEXT_SLOT);
    else if (!intact) out.push(SIG_FAIL);
    else if (ctx.simulation === 'fail') {
      out.push({ error: { code: -32002, message: 'Transaction simulation failed: Blockhash not found', data: { exact: FAILED_SIMULATION } } });
    } else out.push(accept(sig));
    return out;
  });
}

/** A REST submission past its request checks: what the transaction deserves (REST paths never preflight). */
export function restTxExpectation(outcome: ByteOutcome, key: KeyProfile, intact: boolean): Expectation {
  if (outcome.kind === 'error') return restError(outcome.reason, { message: outcome.message });
  if (outcome.kind === 'loose') {
    const options = LOOSE_REASONS.map((r) => restError(r, { prefixes: INTAKE_PREFIXES[r] }));
    options.push(key.verify && !intact ? restError('signature_verification_failed') : restAccepted(null));
    return anyOf(...options);
  }
  if (key.verify && !intact) return restError('signature_verification_failed');
  return restAccepted(outcome.signature);
}
