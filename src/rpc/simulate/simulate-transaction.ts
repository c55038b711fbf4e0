// JSON-RPC simulateTransaction on the JSON-RPC host (front thread; validation synchronous, the simulation itself an
// async upstream call, cold relative to the send path). Agave's params, defaults and messages
// (docs/simulate-transaction.md): [transaction, {encoding=base58, commitment, sigVerify=false,
// replaceRecentBlockhash=false, accounts {addresses, encoding=base64}, minContextSlot, innerInstructions=false}],
// unknown config keys ignored. Everything a client can get wrong is refused here, before the upstream is asked:
// bad types, an unsupported encoding, a transaction that does not decode or sanitize (our intake's checks), sigVerify
// with replaceRecentBlockhash, base58 account encoding, more accounts than the transaction has, a malformed address.
// The upstream bank (the embedded localnet by default) simulates; its answer comes back in Agave's full result
// shape (src/rpc/simulate/simulation-result.ts), an on-chain failure inside a normal result (value.err, value.logs).
// The call is charged to the key's simulateLimit by the endpoint (shared with preflight simulations).
import { Errors, Failure, RelayError, failureOf } from '../../errors/registry.js';
import type { CallContext } from '../../admission/call-context.js';
import type { Intake } from '../../admission/intake.js';
import type { MethodHandler } from '../../jsonrpc/dispatch.js';
import { tryConfigObject, tryExpectString, tryOptionalBoolean, tryOptionalCommitment, tryOptionalUsize, tryParamsArray } from '../../jsonrpc/params.js';
import { serdeType } from '../../errors/serde-type.js';
import { tryPubkeyParam } from '../../jsonrpc/pubkey-param.js';
import { tryParseEncodingParam } from '../../tx/index.js';
import { upstreamFailure, type UpstreamRpcClient } from '../upstream-client.js';
import { fullSimulationResult } from './simulation-result.js';

export interface SimulateTransactionDeps {
  readonly intake: Intake;
  /** null when no upstream is configured: answered -32005 upstream_unavailable. */
  readonly upstream: UpstreamRpcClient | null;
  /** upstream.requestTimeoutMs: no answer by then is -32005 upstream_timeout. */
  readonly timeoutMs: number;
}

/** UiAccountEncoding's serde names. */
const ACCOUNT_ENCODINGS: readonly string[] = ['binary', 'base58', 'base64', 'jsonParsed', 'base64+zstd'];

interface AccountsConfig {
  readonly addresses: readonly unknown[];
  readonly encoding: string;
}

const UPSTREAM_UNAVAILABLE = failureOf(Errors.UPSTREAM_UNAVAILABLE);

function invalid(message: string): Failure {
  return new Failure(Errors.INVALID_PARAMS, message);
}

/** `accounts: {addresses: [string], encoding?}`, serde's checks only (the addresses are checked after the transaction). */
function tryAccountsConfig(v: unknown): AccountsConfig | undefined | Failure {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) {
    return invalid(`Invalid params: invalid type: ${serdeType(v)}, expected struct RpcSimulateTransactionAccountsConfig`);
  }
  const o = v as Record<string, unknown>;
  let encoding = 'base64';
  if (o.encoding !== undefined && o.encoding !== null) {
    if (typeof o.encoding !== 'string') return invalid(`Invalid params: invalid type: ${serdeType(o.encoding)}, expected a UiAccountEncoding for \`encoding\``);
    if (!ACCOUNT_ENCODINGS.includes(o.encoding)) {
      return invalid(`Invalid params: unknown variant \`${o.encoding}\`, expected one of \`binary\`, \`base58\`, \`base64\`, \`jsonParsed\`, \`base64+zstd\``);
    }
    encoding = o.encoding;
  }
  if (o.addresses === undefined || o.addresses === null) return invalid('Invalid params: missing field `addresses`');
  if (!Array.isArray(o.addresses)) return invalid(`Invalid params: invalid type: ${serdeType(o.addresses)}, expected a sequence for \`addresses\``);
  for (const a of o.addresses as unknown[]) {
    if (typeof a !== 'string') return invalid(`Invalid params: invalid type: ${serdeType(a)}, expected a string`);
  }
  return { addresses: o.addresses as unknown[], encoding };
}

export function simulateTransactionMethod(deps: SimulateTransactionDeps): MethodHandler<CallContext> {
  const { intake, upstream, timeoutMs } = deps;
  return (params) => {
    const p = tryParamsArray(params, 1, 2);
    if (p instanceof Failure) return p;
    const encoded = tryExpectString(p[0], 'a string');
    if (encoded instanceof Failure) return encoded;
    const cfg = tryConfigObject(p[1]);
    if (cfg instanceof Failure) return cfg;
    const sigVerify = tryOptionalBoolean(cfg?.sigVerify, 'sigVerify');
    if (sigVerify instanceof Failure) return sigVerify;
    const replace = tryOptionalBoolean(cfg?.replaceRecentBlockhash, 'replaceRecentBlockhash');
    if (replace instanceof Failure) return replace;
    const commitment = tryOptionalCommitment(cfg?.commitment, 'commitment');
    if (commitment instanceof Failure) return commitment;
    const accounts = tryAccountsConfig(cfg?.accounts);
    if (accounts instanceof Failure) return accounts;
    const minContextSlot = tryOptionalUsize(cfg?.minContextSlot, 'minContextSlot');
    if (minContextSlot instanceof Failure) return minContextSlot;
    const inner = tryOptionalBoolean(cfg?.innerInstructions, 'innerInstructions');
    if (inner instanceof Failure) return inner;
    const encoding = tryParseEncodingParam(cfg?.encoding);
    if (encoding instanceof Failure) return encoding;

    // Decoded and sanitized by our intake (size, encoding, structure, "invalid transaction: ..."), signatures not
    // verified: simulation accepts unsigned transactions unless sigVerify asks (the upstream verifies then).
    const checked = intake.check(encoded, encoding, false);
    if (checked instanceof Failure) return checked;
    if (sigVerify === true && replace === true) return invalid('sigVerify may not be used with replaceRecentBlockhash');
    if (accounts !== undefined) {
      if (accounts.encoding === 'base58' || accounts.encoding === 'binary') return invalid('base58 encoding not supported');
      if (accounts.addresses.length > checked.accountCount) return invalid(`Too many accounts provided; max ${checked.accountCount}`);
      for (const a of accounts.addresses) {
        const ok = tryPubkeyParam(a);
        if (ok instanceof Failure) return ok;
      }
    }
    if (upstream === null) return UPSTREAM_UNAVAILABLE;

    // What the upstream is asked: the transaction as the client encoded it, and only the fields Agave knows.
    const forwarded: Record<string, unknown> = { encoding };
    if (commitment !== undefined) forwarded.commitment = commitment;
    if (sigVerify !== undefined) forwarded.sigVerify = sigVerify;
    if (replace !== undefined) forwarded.replaceRecentBlockhash = replace;
    if (accounts !== undefined) forwarded.accounts = { addresses: accounts.addresses, encoding: accounts.encoding };
    if (minContextSlot !== undefined) forwarded.minContextSlot = minContextSlot;
    if (inner !== undefined) forwarded.innerInstructions = inner;
    return upstream.call<unknown>('simulateTransaction', [encoded, forwarded], timeoutMs).then(
      (result) => {
        const text = fullSimulationResult(result);
        if (text === null) throw new RelayError(Errors.UPSTREAM_UNAVAILABLE, Errors.UPSTREAM_UNAVAILABLE.message, { reason: 'upstream_unavailable', detail: 'the upstream answered simulateTransaction without a result object' });
        return text;
      },
      (err: unknown) => {
        throw upstreamFailure(err);
      },
    );
  };
}
