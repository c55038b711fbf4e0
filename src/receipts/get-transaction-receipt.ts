// JSON-RPC getTransactionReceipt on the JSON-RPC host (front thread, cold): slotrelay's extension method for the
// landing receipt of a transaction the calling key submitted (docs/receipts.md). params [signature]; result the
// receipt (the same JSON as GET {relay_url}/v1/transactions/{signature}), or null when there is none for this key
// (unknown, another key's, expired) — as getSignatureStatuses answers null for an unknown signature.
import { Errors, Failure } from '../errors/registry.js';
import type { CallContext } from '../admission/call-context.js';
import type { MethodHandler } from '../jsonrpc/dispatch.js';
import { tryExpectString, tryParamsArray } from '../jsonrpc/params.js';
import { looksLikeSignature } from '../tx/base58.js';
import type { Receipts } from './receipts.js';

const NOT_A_SIGNATURE = Object.freeze(new Failure(Errors.INVALID_PARAMS, 'Invalid params: not a transaction signature (base58 of 64 bytes)'));

export function getTransactionReceiptMethod(receipts: Receipts | null): MethodHandler<CallContext> {
  return (params, ctx) => {
    const p = tryParamsArray(params, 1, 1);
    if (p instanceof Failure) return p;
    const signature = tryExpectString(p[0], 'a string');
    if (signature instanceof Failure) return signature;
    if (!looksLikeSignature(signature)) return NOT_A_SIGNATURE;
    const receipt = receipts?.lookup(signature, ctx.key.id) ?? null;
    return receipt === null ? 'null' : JSON.stringify(receipt);
  };
}
