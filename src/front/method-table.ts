// The JSON-RPC method tables (cold: built once at start). Later issues add their methods here; a method that is
// not in the table answers -32601 "Method not found". main.ts labels metrics with every name in these tables.
import type { MethodTable, MethodHandler } from '../jsonrpc/dispatch.js';
import type { CallContext } from '../admission/call-context.js';
import type { FrontDeps } from './front-deps.js';
import { sendTransactionMethod, type SendTransactionDeps } from './methods/send-transaction.js';
import { getLeaderSlotsMethod, type AdaptiveRows } from './methods/get-leader-slots.js';
import type { SnapshotReader } from '../telemetry/snapshot.js';
import { simulateTransactionMethod } from '../rpc/simulate/simulate-transaction.js';
import { passthroughMethods } from '../rpc/passthrough/passthrough-methods.js';
import { prioritizationFeesMethod } from '../rpc/fees/get-recent-prioritization-fees.js';
import { getTransactionReceiptMethod } from '../receipts/get-transaction-receipt.js';

/** What the handlers need (a subset of FrontDeps, so main.ts can build the tables before the metrics). */
export type MethodDeps = Pick<FrontDeps, 'config' | 'intake' | 'upstream'> & {
  /** Routes this relay runs (RoutePlan.available), for sendTransaction's routes; absent: every route (tests). */
  readonly availableRouteMask?: number;
  readonly receipts?: FrontDeps['receipts'];
  /** The bundle methods (src/bundles/), when a bundle service is configured. */
  readonly bundles?: MethodTable<CallContext> | null;
  /** The adaptive routing (docs/adaptive-routing.md): getLeaderSlots rows of a leader that parks the relay say so. */
  readonly adaptive?: AdaptiveRows | null;
};

function sendDeps(deps: MethodDeps, leaderSnapshot: SnapshotReader | null): SendTransactionDeps {
  return {
    intake: deps.intake,
    upstream: deps.upstream,
    clusterSlot: { reader: leaderSnapshot, maxAgeMs: deps.config.telemetry.maxSnapshotAgeMs },
    availableRouteMask: deps.availableRouteMask,
  };
}

/**
 * Methods of the JSON-RPC host (POST / on {base_url}). `leaderSnapshot` is the telemetry snapshot's reader (main.ts),
 * for getLeaderSlots (it serves the rows); `slotSnapshot` a leaders-only reader of the same snapshot for the methods
 * that need only its slot (sendTransaction's minContextSlot, getRecentPrioritizationFees): a new generation costs
 * them no row copy. Null or absent: getLeaderSlots answers "snapshot missing" and sendTransaction does not check
 * minContextSlot.
 */
export function rpcHostMethods(deps: MethodDeps, leaderSnapshot: SnapshotReader | null = null, slotSnapshot: SnapshotReader | null = leaderSnapshot): MethodTable<CallContext> {
  const send: MethodHandler<CallContext> = sendTransactionMethod(sendDeps(deps, slotSnapshot));
  const leaderSlots = getLeaderSlotsMethod<CallContext>({
    reader: leaderSnapshot,
    defaultLimit: deps.config.telemetry.defaultLimit,
    maxSnapshotAgeMs: deps.config.telemetry.maxSnapshotAgeMs,
    adaptive: deps.adaptive ?? undefined,
  });
  // Passthrough reads first (src/rpc/passthrough/): the relay's own methods below win over a same-named entry,
  // which the config schema refuses anyway. The passthrough pool is created here, once.
  const passthrough = passthroughMethods<CallContext>(deps.config.jsonRpc.passthroughMethods, deps.config.upstream.rpcUrl, deps.config.upstream.requestTimeoutMs);
  // getRecentPrioritizationFees (src/rpc/fees/): its per-slot cache lives as long as the table; the slot comes from
  // the telemetry snapshot.
  const fees = prioritizationFeesMethod<CallContext>({
    upstream: deps.upstream,
    timeoutMs: deps.config.upstream.requestTimeoutMs,
    maxScopedEntries: deps.config.jsonRpc.feeCacheEntries,
    snapshot: { reader: slotSnapshot, maxAgeMs: deps.config.telemetry.maxSnapshotAgeMs },
  });
  return new Map<string, MethodHandler<CallContext>>([
    ...passthrough.table,
    ['sendTransaction', send],
    ['getLeaderSlots', leaderSlots],
    // slotrelay's extension: the landing receipt of a transaction this key sent (docs/receipts.md).
    ['getTransactionReceipt', getTransactionReceiptMethod(deps.receipts ?? null)],
    ['simulateTransaction', simulateTransactionMethod({ intake: deps.intake, upstream: deps.upstream, timeoutMs: deps.config.upstream.requestTimeoutMs })],
    ['getRecentPrioritizationFees', fees.handler],
    // sendBundle, getBundleStatuses, getInflightBundleStatuses, getTipAccounts (docs/bundles.md).
    ...(deps.bundles ?? []),
  ]);
}

/**
 * Methods of the relay host's JSON-RPC compatibility path (POST /v1/sendTransaction): sendTransaction only;
 * `slotSnapshot` as for rpcHostMethods.
 */
export function relayRpcMethods(deps: MethodDeps, slotSnapshot: SnapshotReader | null = null): MethodTable<CallContext> {
  return new Map<string, MethodHandler<CallContext>>([['sendTransaction', sendTransactionMethod(sendDeps(deps, slotSnapshot))]]);
}
