// `params` of simulateTransaction and getRecentPrioritizationFees with one fault each, and the exact -32602 the relay
// must answer before anything goes upstream (harness process; generation, hot). Agave's messages
// (docs/simulate-transaction.md, docs/fees.md): serde type errors naming the field, "sigVerify may not be used with
// replaceRecentBlockhash", "base58 encoding not supported", "Too many accounts provided; max N", "Too many inputs
// provided; max 128", "Invalid param: WrongSize" / "Invalid param: Invalid". Valid calls are left to the
// integration tests: their answers depend on the upstream bank, which the fuzzer's stand-in does not model.
import bs58 from 'bs58';
import type { ErrorRule, RpcOutcome } from './expectations.js';
import { oddValue, wrongTyped } from './json-text.js';
import type { Rng } from './rng.js';
import type { Params } from './rpc-params.js';
import type { PoolTx } from './tx-pool.js';

const invalid = (rule: Omit<ErrorRule, 'code'>): RpcOutcome[] => [{ error: { code: -32602, ...rule } }];

/**
 * A random address: 32 random bytes in base58. An address need not be a curve point (program-derived ones are not),
 * and Keypair.fromSeed's pure-JS point multiplication was a fifth of the fuzz run's CPU (live-fuzz's profile).
 */
const randomAddress = (rng: Rng): string => bs58.encode(rng.bytes(32));

/** A base58 string that is not a 32-byte key: too long, too short, or with a character base58 lacks. */
function badAddress(rng: Rng): [string, string] {
  switch (rng.int(3)) {
    case 0:
      return ['1'.repeat(rng.range(45, 90)), 'Invalid param: WrongSize'];
    case 1:
      return [rng.pick(['1111', '2', '3yZe7d']), 'Invalid param: WrongSize'];
    default:
      return [`${randomAddress(rng).slice(0, 40)}${rng.pick(['0', 'O', 'I', 'l', '+'])}`, 'Invalid param: Invalid'];
  }
}

function someAddresses(rng: Rng, n: number): string[] {
  return Array.from({ length: n }, () => randomAddress(rng));
}

/** getRecentPrioritizationFees [addresses?] with one fault. */
export function feesFaultParams(rng: Rng): Params {
  switch (rng.pick(['too many', 'bad address', 'not strings', 'not an array', 'count'])) {
    case 'too many': {
      const n = rng.range(129, 300);
      return { params: [someAddresses(rng, n)], outcomes: invalid({ message: 'Too many inputs provided; max 128' }), label: `fees: ${n} addresses` };
    }
    case 'bad address': {
      const [bad, message] = badAddress(rng);
      const list = someAddresses(rng, rng.int(4));
      list.splice(rng.int(list.length + 1), 0, bad);
      return { params: [list], outcomes: invalid({ message }), label: `fees: address ${JSON.stringify(bad.slice(0, 20))}` };
    }
    case 'not strings':
      return { params: [[wrongTyped(rng, 'string')]], outcomes: invalid({ prefixes: ['Invalid params: invalid type'] }), label: 'fees: an address that is not a string' };
    case 'not an array':
      return { params: [wrongTyped(rng, 'array')], outcomes: invalid({ prefixes: ['Invalid params: invalid type'] }), label: 'fees: addresses not an array' };
    default:
      return {
        params: [someAddresses(rng, 1), oddValue(rng)],
        outcomes: invalid({ prefixes: ['Invalid parameters: Expected'], data: { exact: 'Got: 2' } }),
        label: 'fees: 2 params',
      };
  }
}

/** simulateTransaction [tx, config] with one fault in the config, over a transaction our intake accepts. */
export function simulateFaultParams(rng: Rng, pool: readonly PoolTx[]): Params {
  const accepted = pool.filter((t) => t.verdict.accept);
  const tx = rng.pick(accepted);
  const text = tx.bytes.toString('base64');
  const base = { encoding: 'base64' };
  const field = (name: string): Omit<ErrorRule, 'code'> => ({ prefixes: ['Invalid params: '], includes: name });
  switch (rng.pick(['both', 'json', 'accounts base58', 'too many accounts', 'bad account', 'sigVerify type', 'replace type', 'inner type', 'commitment', 'addresses missing'])) {
    case 'both':
      return { params: [text, { ...base, sigVerify: true, replaceRecentBlockhash: true }], outcomes: invalid({ message: 'sigVerify may not be used with replaceRecentBlockhash' }), label: 'simulate: sigVerify + replaceRecentBlockhash' };
    case 'json': {
      const e = rng.pick(['json', 'jsonParsed']);
      return { params: [text, { encoding: e }], outcomes: invalid({ message: `unsupported encoding: ${e}. Supported encodings: base58, base64` }), label: `simulate: encoding ${e}` };
    }
    case 'accounts base58':
      return { params: [text, { ...base, accounts: { addresses: [], encoding: rng.pick(['base58', 'binary']) } }], outcomes: invalid({ message: 'base58 encoding not supported' }), label: 'simulate: accounts base58' };
    case 'too many accounts': {
      const max = tx.layout.keyCount + tx.layout.lookupAccounts;
      return {
        params: [text, { ...base, accounts: { addresses: someAddresses(rng, max + rng.range(1, 5)) } }],
        outcomes: invalid({ message: `Too many accounts provided; max ${max}` }),
        label: 'simulate: more accounts than the transaction has',
      };
    }
    case 'bad account': {
      const [bad, message] = badAddress(rng);
      return { params: [text, { ...base, accounts: { addresses: [bad] } }], outcomes: invalid({ message }), label: 'simulate: malformed account address' };
    }
    case 'sigVerify type':
      return { params: [text, { ...base, sigVerify: wrongTyped(rng, 'boolean') }], outcomes: invalid(field('sigVerify')), label: 'simulate: sigVerify of the wrong type' };
    case 'replace type':
      return { params: [text, { ...base, replaceRecentBlockhash: wrongTyped(rng, 'boolean') }], outcomes: invalid(field('replaceRecentBlockhash')), label: 'simulate: replaceRecentBlockhash of the wrong type' };
    case 'inner type':
      return { params: [text, { ...base, innerInstructions: wrongTyped(rng, 'boolean') }], outcomes: invalid(field('innerInstructions')), label: 'simulate: innerInstructions of the wrong type' };
    case 'commitment':
      return { params: [text, { ...base, commitment: rng.pick(['recent', 'max', 'root', '', 'FINALIZED']) }], outcomes: invalid(field('commitment')), label: 'simulate: unknown commitment' };
    default:
      return { params: [text, { ...base, accounts: {} }], outcomes: invalid({ message: 'Invalid params: missing field `addresses`' }), label: 'simulate: accounts without addresses' };
  }
}

/** Methods the JSON-RPC host serves on top of sendTransaction and getLeaderSlots: unknown on the relay host. */
export const RPC_HOST_ONLY_METHODS = ['getHealth', 'getSlot', 'getBalance', 'simulateTransaction', 'getRecentPrioritizationFees'];
