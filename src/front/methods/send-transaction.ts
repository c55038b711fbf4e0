// JSON-RPC sendTransaction (front thread, HOT when skipPreflight). Agave's params and defaults:
// [tx, {skipPreflight=false, preflightCommitment, encoding=base58, maxRetries, minContextSlot}], unknown config keys
// ignored. With skipPreflight (or a key whose preflight policy is "skip") the call is synchronous: decode into the
// ring, answer the signature. Otherwise the upstream simulates first (signatures verified) and a failure answers
// -32002 with the simulation value; policy "reject" answers -32602 instead (docs/protocol-decisions.md).
import { Errors, RelayError } from '../../errors/registry.js';
import type { MethodHandler } from '../../jsonrpc/dispatch.js';
import {
  configObject,
  expectString,
  optionalBoolean,
  optionalCommitment,
  optionalUsize,
  paramsArray,
} from '../../jsonrpc/params.js';
import { runPreflight } from '../../rpc/preflight.js';
import type { UpstreamRpcClient } from '../../rpc/upstream-client.js';
import { parseEncodingParam } from '../../tx/index.js';
import type { CallContext } from '../call-context.js';
import type { Intake, SubmissionMeta } from '../intake.js';

export interface SendTransactionDeps {
  readonly intake: Intake;
  /** null when no upstream is configured: preflight then answers -32005. */
  readonly upstream: UpstreamRpcClient | null;
}

function quote(signature: string): string {
  return '"' + signature + '"'; // base58 needs no JSON escaping
}

export function sendTransactionMethod(deps: SendTransactionDeps): MethodHandler<CallContext> {
  const { intake, upstream } = deps;
  return (params, ctx) => {
    const p = paramsArray(params, 1, 2);
    const encoded = expectString(p[0], 'a string');
    const cfg = configObject(p[1]);
    const skipPreflight = optionalBoolean(cfg?.skipPreflight, 'skipPreflight') ?? false;
    const encoding = parseEncodingParam(cfg?.encoding);
    const preflightCommitment = optionalCommitment(cfg?.preflightCommitment, 'preflightCommitment');
    const maxRetries = optionalUsize(cfg?.maxRetries, 'maxRetries');
    const minContextSlot = optionalUsize(cfg?.minContextSlot, 'minContextSlot');
    if (ctx.routeMask === 0) throw new RelayError(Errors.ROUTE_NOT_ALLOWED);

    const key = ctx.key;
    const meta: SubmissionMeta = {
      keyId: key.id,
      routeMask: ctx.routeMask,
      maxRetries: maxRetries ?? -1,
      receivedAtMs: ctx.state.receivedAtMs,
      traceId: ctx.state.requestId,
      verifySignatures: key.config.verifySignatures,
    };
    const policy = key.config.preflight;
    if (skipPreflight || policy === 'skip') return quote(intake.submitEncoded(encoded, encoding, meta));
    if (policy === 'reject') throw new RelayError(Errors.PREFLIGHT_NOT_ALLOWED);

    // Preflight path: check locally first (bad input never reaches the upstream), then simulate.
    const checked = intake.check(encoded, encoding, false);
    if (upstream === null) throw new RelayError(Errors.PREFLIGHT_UNAVAILABLE);
    const retryMs = key.simulateBucket.take(1, Date.now());
    if (retryMs > 0) throw new RelayError(Errors.RATE_LIMITED, Errors.RATE_LIMITED.message, { reason: 'simulate_rate_limited', retryAfterMs: retryMs });
    const base64 = encoding === 'base64' ? encoded : checked.bytes.toString('base64');
    return runPreflight(upstream, base64, preflightCommitment ?? 'finalized', minContextSlot).then(() => {
      // The client may have gone while we simulated: do no more work for it.
      if (ctx.state.aborted) throw new RelayError(Errors.INTERNAL_ERROR, 'client went away during preflight');
      return quote(intake.publishChecked(checked, meta));
    });
  };
}
