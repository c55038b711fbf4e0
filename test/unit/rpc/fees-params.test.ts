// getRecentPrioritizationFees' params: Agave's order of checks and its exact words (src/rpc/fees/fee-params.ts).
import { describe, expect, it } from 'vitest';
import { Failure } from '../../../src/errors/registry.js';
import { canonicalAddresses, isNetworkWide, tryFeeAddresses } from '../../../src/rpc/fees/fee-params.js';

const A = '11111111111111111111111111111111';
const B = 'Vote111111111111111111111111111111111111111';
const C = 'ComputeBudget111111111111111111111111111111';

function refusal(params: unknown): { code: number; message: string; data?: unknown } {
  const r = tryFeeAddresses(params);
  if (!(r instanceof Failure)) throw new Error(`accepted: ${JSON.stringify(r)}`);
  return r.data === undefined ? { code: r.spec.rpcCode, message: r.message } : { code: r.spec.rpcCode, message: r.message, data: r.data };
}

describe('getRecentPrioritizationFees params', () => {
  it('no addresses is the network-wide call', () => {
    for (const p of [undefined, null, [], [null], [[]]]) expect(isNetworkWide(p)).toBe(true);
    for (const p of [[[A]], ['x'], [1], {}, 'x', [null, null], [[], {}]]) expect(isNetworkWide(p)).toBe(false);
    expect(tryFeeAddresses([null])).toEqual([]);
    expect(tryFeeAddresses([[A, B]])).toEqual([A, B]);
  });

  it('params that are not an array, or too many', () => {
    expect(refusal({ addresses: [A] })).toEqual({ code: -32602, message: '`params` should be an array' });
    expect(refusal('x')).toEqual({ code: -32602, message: '`params` should be an array' });
    expect(refusal([[A], {}])).toEqual({ code: -32602, message: 'Invalid parameters: Expected from 0 to 1 parameters.', data: 'Got: 2' });
  });

  it("serde's type errors, worded by jsonrpc-core (trailing period), before the count", () => {
    expect(refusal([A])).toEqual({ code: -32602, message: `Invalid params: invalid type: string "${A}", expected a sequence.` });
    expect(refusal([{ 0: A }])).toEqual({ code: -32602, message: 'Invalid params: invalid type: map, expected a sequence.' });
    expect(refusal([7])).toEqual({ code: -32602, message: 'Invalid params: invalid type: integer `7`, expected a sequence.' });
    expect(refusal([[A, 1]])).toEqual({ code: -32602, message: 'Invalid params: invalid type: integer `1`, expected a string.' });
    expect(refusal([[A, null]])).toEqual({ code: -32602, message: 'Invalid params: invalid type: null, expected a string.' });
    expect(refusal([[[A]]])).toEqual({ code: -32602, message: 'Invalid params: invalid type: sequence, expected a string.' });
    // 200 entries with a number among them: the type error wins over "too many".
    expect(refusal([[...Array.from({ length: 199 }, () => A), true]]).message).toBe('Invalid params: invalid type: boolean `true`, expected a string.');
  });

  it('more than 128 addresses, before any address is looked at', () => {
    expect(tryFeeAddresses([Array.from({ length: 128 }, () => A)])).toHaveLength(128);
    expect(refusal([Array.from({ length: 129 }, () => A)])).toEqual({ code: -32602, message: 'Too many inputs provided; max 128' });
    expect(refusal([Array.from({ length: 129 }, () => 'not a key')])).toEqual({ code: -32602, message: 'Too many inputs provided; max 128' });
  });

  it("malformed addresses: Pubkey::from_str's WrongSize / Invalid, the first bad one in order", () => {
    expect(refusal([['0OIl']])).toEqual({ code: -32602, message: 'Invalid param: Invalid' });
    expect(refusal([[A, 'abc']])).toEqual({ code: -32602, message: 'Invalid param: WrongSize' });
    expect(refusal([['']])).toEqual({ code: -32602, message: 'Invalid param: WrongSize' });
    expect(refusal([[A + A]])).toEqual({ code: -32602, message: 'Invalid param: WrongSize' }); // 64 chars: over 44
    expect(refusal([['z'.repeat(44)]])).toEqual({ code: -32602, message: 'Invalid param: WrongSize' }); // decodes to 33 bytes
    expect(refusal([['abc', '0OIl']])).toEqual({ code: -32602, message: 'Invalid param: WrongSize' });
    expect(refusal([['0OIl', 'abc']])).toEqual({ code: -32602, message: 'Invalid param: Invalid' });
    // Bytes, not characters: 30 two-byte characters are 60 bytes, over 44 -> WrongSize; 3 of them -> Invalid.
    expect(refusal([['é'.repeat(30)]])).toEqual({ code: -32602, message: 'Invalid param: WrongSize' });
    expect(refusal([['ééé']])).toEqual({ code: -32602, message: 'Invalid param: Invalid' });
  });

  it('canonical address sets: sorted, deduplicated', () => {
    expect(canonicalAddresses([C, A, B, A, C])).toEqual({ key: [A, C, B].sort().join(','), addresses: [A, C, B].sort() });
    expect(canonicalAddresses([B, A]).key).toBe(canonicalAddresses([A, B, B]).key);
  });
});
