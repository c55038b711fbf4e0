// JSON-RPC sendTransaction (front thread, HOT when skipPreflight). Agave's params and defaults:
// [tx, {skipPreflight=false, preflightCommitment, encoding=base58, maxRetries, minContextSlot}], unknown config keys
// ignored. With skipPreflight (or a key whose preflight policy is "skip") the call is synchronous: minContextSlot is
// checked against the slot the telemetry snapshot last saw (one Atomics.load, no I/O), then decode into the ring,
// answer the signature. Otherwise the upstream simulates first (signatures verified; it checks minContextSlot at the
// preflight commitment) and a failure answers -32002 with the simulation value; policy "reject" answers -32602
// instead (docs/protocol-decisions.md). Every refusal up to the queue is RETURNED as a Failure, not thrown (a flood
// of bad transactions must cost less than good ones: issue #18 defect 9); only the preflight's promise still rejects.
import { Errors, Failure, RelayError, failureOf } from '../../errors/registry.js';
import type { MethodHandler } from '../../jsonrpc/dispatch.js';
import {
  tryConfigObject,
  tryExpectString,
  tryOptionalBoolean,
  tryOptionalCommitment,
  tryOptionalUsize,
  tryParamsArray,
} from '../../jsonrpc/params.js';
import { runPreflight } from '../../rpc/preflight.js';
import type { UpstreamRpcClient } from '../../rpc/upstream-client.js';
import type { SnapshotReader } from '../../telemetry/snapshot.js';
import { tryParseEncodingParam } from '../../tx/index.js';
import type { CallContext } from '../../admission/call-context.js';
import type { Intake, SubmissionMeta } from '../../admission/intake.js';
import { EVERY_ROUTE, defaultRoutes } from '../../admission/send-options.js';

export interface SendTransactionDeps {
  readonly intake: Intake;
  /** null when no upstream is configured: preflight then answers -32005. */
  readonly upstream: UpstreamRpcClient | null;
  /**
   * The telemetry snapshot (the slot the relay last saw) and how old it may be (telemetry.maxSnapshotAgeMs). Absent,
   * null, or no fresh snapshot: minContextSlot is not checked on the skip-preflight path.
   */
  readonly clusterSlot?: { readonly reader: SnapshotReader | null; readonly maxAgeMs: number; readonly now?: () => number };
  /**
   * Routes this relay runs (RoutePlan.available: main.ts). Absent: every route (a method table driven without a route
   * plan, as the unit tests do).
   */
  readonly availableRouteMask?: number;
}

/**
 * The slot the relay knows the cluster has processed, or -1 when it does not know (no snapshot, or older than
 * maxAgeMs). Header fields only, so an unsupported row schema does not matter here.
 */
function knownSlot(o: SendTransactionDeps['clusterSlot']): number {
  const view = o?.reader?.current() ?? null;
  if (view === null) return -1;
  const age = (o!.now ?? Date.now)() - view.generatedAtUnixMs;
  return age > o!.maxAgeMs ? -1 : view.snapshotSlot;
}

/** The signature as a JSON string (base58 needs no escaping), or the refusal as it came. */
function quote(signature: string | Failure): string | Failure {
  return typeof signature === 'string' ? '"' + signature + '"' : signature;
}

const PREFLIGHT_NOT_ALLOWED = failureOf(Errors.PREFLIGHT_NOT_ALLOWED);
const PREFLIGHT_UNAVAILABLE = failureOf(Errors.PREFLIGHT_UNAVAILABLE);

export function sendTransactionMethod(deps: SendTransactionDeps): MethodHandler<CallContext> {
  const { intake, upstream, clusterSlot } = deps;
  const available = deps.availableRouteMask ?? EVERY_ROUTE;
  return (params, ctx) => {
    // Agave's order of checks; each returns its refusal.
    const p = tryParamsArray(params, 1, 2);
    if (p instanceof Failure) return p;
    const encoded = tryExpectString(p[0], 'a string');
    if (encoded instanceof Failure) return encoded;
    const cfg = tryConfigObject(p[1]);
    if (cfg instanceof Failure) return cfg;
    const skip = tryOptionalBoolean(cfg?.skipPreflight, 'skipPreflight');
    if (skip instanceof Failure) return skip;
    const skipPreflight = skip ?? false;
    const encoding = tryParseEncodingParam(cfg?.encoding);
    if (encoding instanceof Failure) return encoding;
    const preflightCommitment = tryOptionalCommitment(cfg?.preflightCommitment, 'preflightCommitment');
    if (preflightCommitment instanceof Failure) return preflightCommitment;
    const maxRetries = tryOptionalUsize(cfg?.maxRetries, 'maxRetries');
    if (maxRetries instanceof Failure) return maxRetries;
    const minContextSlot = tryOptionalUsize(cfg?.minContextSlot, 'minContextSlot');
    if (minContextSlot instanceof Failure) return minContextSlot;
    // The key's default routes (sendTransaction names none), decided where every ingress decides them: none here is
    // the key's policy (route_not_allowed) or this relay (route_not_configured, naming what it runs).
    const key = ctx.key;
    const routeMask = defaultRoutes(key, available);
    if (routeMask instanceof Failure) return routeMask;
    const meta: SubmissionMeta = {
      keyId: key.id,
      routeMask,
      maxRetries: maxRetries ?? -1,
      receivedAtMs: ctx.state.receivedAtMs,
      traceId: ctx.state.requestId,
      verifySignatures: key.config.verifySignatures,
    };
    const policy = key.config.preflight;
    if (skipPreflight || policy === 'skip') {
      // Agave checks minContextSlot even with skipPreflight (against its processed bank). Ours is the slot telemetry
      // saw; checked before decoding (Agave: after decoding, before sanitizing), so only the order of two errors differs.
      if (minContextSlot !== undefined) {
        const slot = knownSlot(clusterSlot);
        if (slot >= 0 && slot < minContextSlot) {
          return new Failure(Errors.MIN_CONTEXT_SLOT_NOT_REACHED, Errors.MIN_CONTEXT_SLOT_NOT_REACHED.message, { contextSlot: slot });
        }
      }
      return quote(intake.submitEncoded(encoded, encoding, meta));
    }
    if (policy === 'reject') return PREFLIGHT_NOT_ALLOWED;

    // Preflight path: check locally first (bad input, and bad signatures when the key asks for verification, never
    // reach the upstream), then simulate.
    const checked = intake.check(encoded, encoding, key.config.verifySignatures);
    if (checked instanceof Failure) return checked;
    if (upstream === null) return PREFLIGHT_UNAVAILABLE;
    const retryMs = key.simulateBucket.take(1, Date.now());
    if (retryMs > 0) return new Failure(Errors.RATE_LIMITED, Errors.RATE_LIMITED.message, { reason: 'simulate_rate_limited', retryAfterMs: retryMs });
    const base64 = encoding === 'base64' ? encoded : checked.bytes.toString('base64');
    return runPreflight(upstream, base64, preflightCommitment ?? 'finalized', minContextSlot).then(() => {
      // The client may have gone while we simulated: do no more work for it.
      if (ctx.state.aborted) throw new RelayError(Errors.INTERNAL_ERROR, 'client went away during preflight');
      return quote(intake.publishChecked(checked, meta));
    });
  };
}
