// A result answered as bytes (src/jsonrpc/encoded-result.ts) and the dispatcher's path for it (dispatch.ts
// dispatchJsonRpcAnswer): every answer's bytes are exactly the UTF-8 of the text answer the dispatcher would have
// written (resultJson), whatever the id and in any order of ids (the views are reused by length); batches and
// notifications are unchanged.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dispatchJsonRpc, dispatchJsonRpcAnswer, type MethodHandler, type MethodTable } from '../../../src/jsonrpc/dispatch.js';
import { EncodedAnswer, EncodedResult } from '../../../src/jsonrpc/encoded-result.js';
import { parseJsonRpcBody, type JsonRpcId } from '../../../src/jsonrpc/envelope.js';
import { resultJson } from '../../../src/jsonrpc/response.js';

const FEES = '[' + Array.from({ length: 150 }, (_, i) => `{"slot":${1000 + i},"prioritizationFee":${i * 7}}`).join(',') + ']';

function utf8(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8');
}

const IDS: JsonRpcId[] = [
  1, 0, -1, 42, 2 ** 31, 2 ** 53 - 1, -(2 ** 53), 1.5, -0, 1e21, 1e-7, 5e-324, Number.MAX_VALUE,
  null, '', '1', 'abc', '6f1c2a4e-9b7d-4c3a-8e21-5d0f4b6a7c19', 'quote " and \\ backslash', 'tab\tnew\nline\u0000',
  'é', '日本', '😀', '\ud800', '\u007f', '\u001f', ' ', '~', 'a"b', 'a\\b', 'x'.repeat(61), 'x'.repeat(62), 'x'.repeat(63), 'x'.repeat(500), '"'.repeat(40),
];

describe('EncodedResult', () => {
  it('answers the bytes of resultJson for every kind of id, in any order, the same result reused', () => {
    const r = new EncodedResult(FEES);
    for (const id of [...IDS, ...[...IDS].reverse(), ...IDS]) {
      expect(utf8(r.answerBytes(id))).toBe(resultJson(id, FEES));
    }
  });

  it('holds non-ASCII result text as UTF-8', () => {
    const text = '{"memo":"héllo 😀 日本"}';
    const r = new EncodedResult(text);
    expect(utf8(r.answerBytes(7))).toBe(resultJson(7, text));
    expect(utf8(r.answerBytes('ü'))).toBe(resultJson('ü', text));
  });

  it('property: any id sequence gives the text answer each time', () => {
    const id = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(null), fc.string(), fc.string({ unit: 'binary' }));
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), fc.array(id, { minLength: 1, maxLength: 20 }), (result, ids) => {
        const text = JSON.stringify(result);
        const r = new EncodedResult(text);
        for (const i of ids) if (utf8(r.answerBytes(i)) !== resultJson(i, text)) return false;
        return true;
      }),
      { numRuns: 300 },
    );
  });

  it('an EncodedAnswer writes its bytes when asked, and the same answer as text', () => {
    const r = new EncodedResult(FEES);
    const a = new EncodedAnswer(r, 'a');
    const b = new EncodedAnswer(r, 12345);
    expect(utf8(b.bytes())).toBe(resultJson(12345, FEES));
    expect(utf8(a.bytes())).toBe(resultJson('a', FEES));
    expect(a.text()).toBe(resultJson('a', FEES));
  });
});

describe('dispatchJsonRpcAnswer', () => {
  const encoded = new EncodedResult(FEES);
  const table: MethodTable<null> = new Map<string, MethodHandler<null>>([
    ['fees', () => encoded],
    ['plain', () => '3'],
    ['later', () => Promise.resolve('4')],
  ]);
  const outcomes: [string | null, string | null][] = [];
  const hooks = { onInternalError: () => undefined, onOutcome: (m: string | null, r: string | null) => void outcomes.push([m, r]) };

  it('a single call answered from an EncodedResult comes as bytes equal to the text answer, counted ok', () => {
    outcomes.length = 0;
    for (const body of [
      '{"jsonrpc":"2.0","id":1,"method":"fees","params":[]}',
      '{"jsonrpc":"2.0","id":"x\\"y","method":"fees"}',
      '{"jsonrpc":"2.0","id":null,"method":"fees"}',
    ]) {
      const out = dispatchJsonRpcAnswer(parseJsonRpcBody(body, 10), table, null, hooks);
      expect(out).toBeInstanceOf(EncodedAnswer);
      const text = dispatchJsonRpc(parseJsonRpcBody(body, 10), table, null, hooks);
      expect(typeof text).toBe('string');
      expect(utf8((out as EncodedAnswer).bytes())).toBe(text);
    }
    expect(outcomes).toEqual(Array.from({ length: 6 }, () => ['fees', null]));
  });

  it('batches, notifications, plain and asynchronous results stay text', async () => {
    const batch = '[{"jsonrpc":"2.0","id":1,"method":"fees"},{"jsonrpc":"2.0","id":2,"method":"plain"},{"jsonrpc":"2.0","method":"fees"}]';
    const out = dispatchJsonRpcAnswer(parseJsonRpcBody(batch, 10), table, null, hooks);
    expect(out).toBe('[' + resultJson(1, FEES) + ',' + resultJson(2, '3') + ']');
    expect(dispatchJsonRpcAnswer(parseJsonRpcBody('{"jsonrpc":"2.0","method":"fees"}', 10), table, null, hooks)).toBeNull();
    expect(dispatchJsonRpcAnswer(parseJsonRpcBody('{"jsonrpc":"2.0","id":5,"method":"plain"}', 10), table, null, hooks)).toBe(resultJson(5, '3'));
    expect(await dispatchJsonRpcAnswer(parseJsonRpcBody('{"jsonrpc":"2.0","id":6,"method":"later"}', 10), table, null, hooks)).toBe(resultJson(6, '4'));
  });
});
