// The bundle methods of the JSON-RPC host and of POST /v1/bundles (front thread; validation synchronous, the service
// call async; cold relative to the send path), Jito's names and shapes (docs/bundles.md):
//   sendBundle [[tx1..tx5], {encoding = base58}] -> the bundle id
//   getBundleStatuses [[id1..id5]], getInflightBundleStatuses [[id1..id5]] -> the service's answer, unchanged
//   getTipAccounts [] -> the service's tip accounts (cached)
// Every one of them needs `bundles: true` on the key (else bundles_not_enabled, nothing goes upstream). sendBundle is
// checked before the service is asked: 1..5 transactions, each decoded and sanitized by our intake (signatures
// verified when the key's verifySignatures says so, as for sendTransaction), no signature twice, and a total tip of at least bundles.minTipLamports to the service's tip accounts.
// The endpoint charges a sendBundle to the key's submission budget per transaction (json-rpc-endpoint.ts).
import { Errors, Failure, RelayError, UpstreamRpcError } from '../errors/registry.js';
import type { CallContext } from '../admission/call-context.js';
import type { Intake } from '../admission/intake.js';
import type { MethodHandler, MethodTable } from '../jsonrpc/dispatch.js';
import { tryConfigObject, tryParamsArray } from '../jsonrpc/params.js';
import { serdeType } from '../errors/serde-type.js';
import { createParsedTransaction, tryParseTransaction } from '../tx/parse-transaction.js';
import { tryParseEncodingParam } from '../tx/index.js';
import type { Receipts } from '../receipts/receipts.js';
import type { BundleMetrics } from './bundle-metrics.js';
import type { BundleService } from './bundle-service.js';
import { tipLamports } from './bundle-tip.js';
import type { TipAccountList, TipAccounts } from './tip-accounts.js';

/** Jito: at most 5 transactions per bundle and 5 ids per status call. */
export const MAX_BUNDLE_TRANSACTIONS = 5;
export const MAX_STATUS_IDS = 5;
/** Jito's bundle ids: SHA-256 hex. */
const BUNDLE_ID = /^[0-9a-fA-F]{64}$/;

export interface BundleMethodDeps {
  readonly intake: Intake;
  readonly service: BundleService;
  readonly tips: TipAccounts;
  readonly minTipLamports: bigint;
  readonly metrics: BundleMetrics;
  readonly receipts: Receipts | null;
}

const NOT_ENABLED = Object.freeze(new Failure(Errors.BUNDLES_NOT_ENABLED, Errors.BUNDLES_NOT_ENABLED.message, Object.freeze({ reason: Errors.BUNDLES_NOT_ENABLED.reason })));

function invalidBundle(detail: string, data: Record<string, unknown> = {}): Failure {
  return new Failure(Errors.BUNDLE_INVALID, `${Errors.BUNDLE_INVALID.message}: ${detail}`, { reason: Errors.BUNDLE_INVALID.reason, ...data });
}

function invalidParams(message: string): Failure {
  return new Failure(Errors.INVALID_PARAMS, message);
}

/** How many submissions a sendBundle element costs (the endpoint's rate limit): its transactions, 1..5. */
export function bundleCost(params: unknown): number {
  const list = Array.isArray(params) ? (params[0] as unknown) : undefined;
  return Array.isArray(list) ? Math.min(Math.max(list.length, 1), MAX_BUNDLE_TRANSACTIONS) : 1;
}

/** `[[id, ...]]`: 1..5 hex ids. */
function bundleIds(params: unknown): string[] | Failure {
  const p = tryParamsArray(params, 1, 1);
  if (p instanceof Failure) return p;
  const ids = p[0];
  if (!Array.isArray(ids)) return invalidParams(`Invalid params: invalid type: ${serdeType(ids)}, expected a sequence of bundle ids`);
  if (ids.length === 0 || ids.length > MAX_STATUS_IDS) return invalidParams(`Invalid params: between 1 and ${MAX_STATUS_IDS} bundle ids are allowed, got ${ids.length}`);
  for (const id of ids) {
    if (typeof id !== 'string' || !BUNDLE_ID.test(id)) return invalidParams('Invalid params: a bundle id is 64 hexadecimal characters (the SHA-256 of its signatures)');
  }
  return ids as string[];
}

/** A refusal's registry reason, for the outcome counter. */
function reasonOf(err: unknown): string {
  if (err instanceof RelayError || err instanceof UpstreamRpcError) return err.spec.reason;
  return Errors.INTERNAL_ERROR.reason;
}

export function bundleMethods(deps: BundleMethodDeps): MethodTable<CallContext> {
  const { intake, service, tips, minTipLamports, metrics, receipts } = deps;
  const parsed = createParsedTransaction();

  const refuse = (f: Failure): Failure => {
    metrics.count(f.spec.reason);
    return f;
  };

  /** Tip paid by the checked transactions, once the tip accounts are known. */
  const forward = (ctx: CallContext, encoded: readonly string[], encoding: string, bytes: readonly Buffer[], signatures: readonly string[], list: TipAccountList): Promise<string> | Failure => {
    let tip = 0n;
    for (const b of bytes) {
      tryParseTransaction(b, 0, b.length, parsed); // passed intake.check already: cannot refuse
      tip += tipLamports(b, 0, parsed, list.set);
    }
    if (tip < minTipLamports) {
      return refuse(
        new Failure(
          Errors.BUNDLE_TIP_TOO_LOW,
          `${Errors.BUNDLE_TIP_TOO_LOW.message}: the bundle transfers ${tip} lamports to the bundle service's tip accounts (getTipAccounts), at least ${minTipLamports} are required (a system transfer in any of its transactions)`,
          { reason: Errors.BUNDLE_TIP_TOO_LOW.reason, tipLamports: Number(tip), minTipLamports: Number(minTipLamports) },
        ),
      );
    }
    const receivedAtMs = ctx.state.receivedAtMs;
    return service.call('sendBundle', [encoded, { encoding }]).then(
      (id) => {
        if (typeof id !== 'string') {
          throw new RelayError(Errors.UPSTREAM_UNAVAILABLE, 'Node is unhealthy: the bundle service is unavailable', { reason: 'upstream_unavailable', service: 'bundles', detail: 'sendBundle answered no bundle id' });
        }
        metrics.count('accepted', signatures.length);
        receipts?.acceptBundle(signatures, id, { keyId: ctx.key.id, routeMask: 0, receivedAtMs, traceId: ctx.state.requestId });
        return JSON.stringify(id);
      },
      (err: unknown) => {
        metrics.count(reasonOf(err));
        throw err;
      },
    );
  };

  const sendBundle: MethodHandler<CallContext> = (params, ctx) => {
    if (!ctx.key.config.bundles) return refuse(NOT_ENABLED);
    const p = tryParamsArray(params, 1, 2);
    if (p instanceof Failure) return refuse(p);
    const list = p[0];
    if (!Array.isArray(list)) return refuse(invalidParams(`Invalid params: invalid type: ${serdeType(list)}, expected a sequence of transactions`));
    if (list.length === 0 || list.length > MAX_BUNDLE_TRANSACTIONS) {
      return refuse(invalidBundle(`a bundle holds 1 to ${MAX_BUNDLE_TRANSACTIONS} transactions, this one ${list.length}`, { transactions: list.length }));
    }
    const cfg = tryConfigObject(p[1]);
    if (cfg instanceof Failure) return refuse(cfg);
    const encoding = tryParseEncodingParam(cfg?.encoding);
    if (encoding instanceof Failure) return refuse(encoding);
    const bytes: Buffer[] = [];
    const signatures: string[] = [];
    for (let i = 0; i < list.length; i++) {
      const tx: unknown = list[i];
      if (typeof tx !== 'string') return refuse(invalidParams(`Invalid params: invalid type: ${serdeType(tx)}, expected a string`));
      // Our intake's checks, as for a sendTransaction of this key: signatures verified when the key asks for it
      // (verifySignatures; ~0.1-0.2 ms each on the front thread), else the bundle service's simulation catches them.
      const checked = intake.check(tx, encoding, ctx.key.config.verifySignatures);
      if (checked instanceof Failure) return refuse(new Failure(checked.spec, checked.message, { reason: checked.spec.reason, transactionIndex: i }));
      if (signatures.includes(checked.signature)) return refuse(invalidBundle(`transaction ${i} repeats the signature of an earlier one`, { transactionIndex: i }));
      bytes.push(checked.bytes);
      signatures.push(checked.signature);
    }
    const encoded = list as string[];
    const tipList = tips.get();
    if (!(tipList instanceof Promise)) return forward(ctx, encoded, encoding, bytes, signatures, tipList);
    return tipList.then(
      (l) => {
        const out = forward(ctx, encoded, encoding, bytes, signatures, l);
        if (out instanceof Failure) throw out;
        return out;
      },
      (err: unknown) => {
        metrics.count(reasonOf(err));
        throw err;
      },
    );
  };

  const statuses = (method: string): MethodHandler<CallContext> => (params, ctx) => {
    if (!ctx.key.config.bundles) return NOT_ENABLED;
    const ids = bundleIds(params);
    if (ids instanceof Failure) return ids;
    return service.call(method, [ids]).then((r) => JSON.stringify(r));
  };

  const getTipAccounts: MethodHandler<CallContext> = (params, ctx) => {
    if (!ctx.key.config.bundles) return NOT_ENABLED;
    const p = tryParamsArray(params, 0, 0);
    if (p instanceof Failure) return p;
    const l = tips.get();
    return l instanceof Promise ? l.then((x) => x.json) : l.json;
  };

  return new Map<string, MethodHandler<CallContext>>([
    ['sendBundle', sendBundle],
    ['getBundleStatuses', statuses('getBundleStatuses')],
    ['getInflightBundleStatuses', statuses('getInflightBundleStatuses')],
    ['getTipAccounts', getTipAccounts],
  ]);
}
