import { describe, expect, it } from 'vitest';
import { parseJsonRpcBody } from '../../../src/jsonrpc/envelope.js';
import { dispatchJsonRpc, type MethodHandler, type MethodTable } from '../../../src/jsonrpc/dispatch.js';
import { Errors, Failure, RelayError, failureOf } from '../../../src/errors/registry.js';
import { paramsArray } from '../../../src/jsonrpc/params.js';
import { errorJson } from '../../../src/jsonrpc/response.js';

const table: MethodTable<null> = new Map<string, MethodHandler<null>>([
  ['echo', (p: unknown) => JSON.stringify(paramsArray(p, 1, 1)[0])],
  ['later', (p: unknown) => Promise.resolve(JSON.stringify(paramsArray(p, 0, 1).length))],
  ['fail', () => { throw new RelayError(Errors.INVALID_PARAMS, 'Invalid params: nope'); }],
  ['boom', () => { throw new Error('bug'); }],
  // Hot handlers return their refusal instead of throwing it (no stack trace per refused request).
  ['refuse', () => new Failure(Errors.INVALID_PARAMS, 'Invalid params: nope', { field: 'x' })],
  ['refuseLater', () => Promise.resolve(failureOf(Errors.OVERLOADED))],
]);
const outcomes: [string | null, string | null][] = [];
const hooks = { onInternalError: () => undefined, onOutcome: (m: string | null, r: string | null) => void outcomes.push([m, r]) };
async function run(body: string): Promise<unknown> {
  const out = await dispatchJsonRpc(parseJsonRpcBody(body, 3), table, null, hooks);
  return out === null ? null : JSON.parse(out);
}

describe('JSON-RPC envelope and dispatch', () => {
  it('echoes the id with its type', async () => {
    expect(await run('{"jsonrpc":"2.0","id":"7","method":"echo","params":[1]}')).toEqual({ jsonrpc: '2.0', result: 1, id: '7' });
    expect(await run('{"jsonrpc":"2.0","id":7,"method":"echo","params":[1]}')).toEqual({ jsonrpc: '2.0', result: 1, id: 7 });
  });
  it('parse error, invalid request, bad version, unknown method', async () => {
    expect(await run('{nope')).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
    expect(await run('[]')).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id: null });
    // jsonrpc-core: a wrong version is Call::Invalid ("Invalid request"); a missing one is "Unsupported ..." and,
    // without an id, an unanswered notification.
    expect(await run('{"jsonrpc":"1.0","id":1,"method":"echo"}')).toEqual({
      jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id: 1,
    });
    expect(await run('{"id":2,"method":"echo"}')).toEqual({
      jsonrpc: '2.0', error: { code: -32600, message: 'Unsupported JSON-RPC protocol version' }, id: 2,
    });
    expect(await run('{"jsonrpc":null,"id":3,"method":"echo"}')).toEqual({
      jsonrpc: '2.0', error: { code: -32600, message: 'Unsupported JSON-RPC protocol version' }, id: 3,
    });
    expect(await run('{"method":"echo"}')).toBeNull();
    expect(await run('{"jsonrpc":"2.0","id":1,"method":"nope"}')).toEqual({
      jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 1,
    });
  });
  it('params errors use Agave wording', async () => {
    expect(await run('{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}')).toEqual({
      jsonrpc: '2.0', error: { code: -32602, message: '`params` should be an array' }, id: 1,
    });
    expect(await run('{"jsonrpc":"2.0","id":1,"method":"later","params":[1,2,3]}')).toEqual({
      jsonrpc: '2.0', error: { code: -32602, message: 'Invalid parameters: Expected from 0 to 1 parameters.', data: 'Got: 3' }, id: 1,
    });
  });
  it('batches keep order, mix sync and async, skip notifications', async () => {
    expect(await run('[{"jsonrpc":"2.0","id":1,"method":"later"},{"jsonrpc":"2.0","method":"echo","params":[0]},{"jsonrpc":"2.0","id":2,"method":"echo","params":[5]}]')).toEqual([
      { jsonrpc: '2.0', result: 0, id: 1 },
      { jsonrpc: '2.0', result: 5, id: 2 },
    ]);
    expect(await run('[1]')).toEqual([{ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id: null }]);
    expect(await run('{"jsonrpc":"2.0","method":"echo","params":[1]}')).toBeNull();
    expect(await run('[{"jsonrpc":"2.0","method":"echo","params":[1]}]')).toBeNull();
  });
  it('batch too large is one error; handler errors keep the id; internal errors are hidden', async () => {
    const four = JSON.stringify(Array.from({ length: 4 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'echo', params: [i] })));
    expect(await run(four)).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request: batch too large' }, id: null });
    expect(await run('{"jsonrpc":"2.0","id":"a","method":"fail"}')).toEqual({ jsonrpc: '2.0', error: { code: -32602, message: 'Invalid params: nope' }, id: 'a' });
    expect(await run('{"jsonrpc":"2.0","id":"b","method":"boom"}')).toEqual({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: 'b' });
  });
  it('a returned Failure is answered like a thrown RelayError: same code, message, data, id and outcome', async () => {
    outcomes.length = 0;
    expect(await run('{"jsonrpc":"2.0","id":3,"method":"refuse"}')).toEqual({
      jsonrpc: '2.0', error: { code: -32602, message: 'Invalid params: nope', data: { field: 'x' } }, id: 3,
    });
    expect(await run('{"jsonrpc":"2.0","id":"a","method":"fail"}')).toEqual({ jsonrpc: '2.0', error: { code: -32602, message: 'Invalid params: nope' }, id: 'a' });
    // -32005 always carries data.reason, whichever way it is produced.
    expect(await run('{"jsonrpc":"2.0","id":4,"method":"refuseLater"}')).toEqual({
      jsonrpc: '2.0', error: { code: -32005, message: Errors.OVERLOADED.message, data: { reason: 'overloaded' } }, id: 4,
    });
    expect(outcomes).toEqual([['refuse', 'invalid_params'], ['fail', 'invalid_params'], ['refuseLater', 'overloaded']]);
  });
  it('a preallocated refusal answered again (serialised once) keeps each request\'s id, byte for byte as errorJson', async () => {
    const bodies = ['{"jsonrpc":"2.0","id":5,"method":"refuseLater"}', '{"jsonrpc":"2.0","id":"x\\"y","method":"refuseLater"}', '{"jsonrpc":"2.0","id":null,"method":"refuseLater"}'];
    for (let round = 0; round < 2; round++) {
      for (const body of bodies) {
        const id = (JSON.parse(body) as { id: string | number | null }).id;
        const text = await dispatchJsonRpc(parseJsonRpcBody(body, 3), table, null, hooks);
        expect(text).toBe(errorJson(id, -32005, Errors.OVERLOADED.message, { reason: 'overloaded' }));
      }
    }
  });
});
