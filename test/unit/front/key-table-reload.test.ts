// A reload of the config's keys (KeyTable.replaceConfigKeys, src/admission/key-table.ts): an unchanged key keeps its entry
// (buckets and all), a changed one gets a new entry under its id with the tokens it had left, a removed one is
// unknown at once, an added one is found, a key removed and added again gets its old id, and the engine's plan for a
// key still overrides the config's across a reload.
import { describe, expect, it } from 'vitest';
import { keyHash } from '../../../src/cluster/engine-keys.js';
import { parsePlan } from '../../../src/cluster/key-plan.js';
import { KeyTable } from '../../../src/admission/key-table.js';
import { keySchema } from '../../../src/config/schema.js';

const A = '6f1c2a4e-9b7d-4c3a-8e21-5d0f4b6a7c19';
const B = '0d5e7c1a-3b9f-4e2d-8a61-7c4b2f9e0a35';
const C = '3a8b9c0d-1e2f-4a5b-9c6d-7e8f9a0b1c2d';
const key = (k: string, name: string, extra: Record<string, unknown> = {}) => keySchema.parse({ key: k, name, ...extra });

describe('KeyTable.replaceConfigKeys', () => {
  it('unchanged, changed, removed, added: entries, ids, lookups and the changes reported', () => {
    const t = new KeyTable([key(A, 'a', { rateLimit: { perSecond: 1, burst: 3 } }), key(B, 'b')], ['rpc'], 0);
    const a0 = t.lookup(A)!;
    const b0 = t.lookup(B)!;
    expect(a0.submitBucket.take(2, 0)).toBe(0); // 1 token left
    const r = t.replaceConfigKeys([key(A, 'a', { rateLimit: { perSecond: 1, burst: 10 } }), key(C, 'c', { allowedRoutes: ['rpc', 'jito'] })], ['rpc'], 0);
    expect(r).toMatchObject({ added: ['c'], changed: ['a'], removed: ['b'], unchanged: 0 });
    const a1 = t.lookup(A)!;
    expect(a1).not.toBe(a0);
    expect(a1.id).toBe(a0.id);
    expect(t.entries[a0.id]).toBe(a1);
    expect(a1.config.rateLimit.burst).toBe(10);
    // The tokens left (1) carried over, not a fresh burst of 10.
    expect(a1.submitBucket.take(1, 0)).toBe(0);
    expect(a1.submitBucket.take(1, 0)).toBeGreaterThan(0);
    expect(t.lookup(B)).toBeUndefined();
    expect(t.current(keyHash(B))).toBeUndefined();
    const c = t.lookup(C)!;
    expect(c.name).toBe('c');
    expect(c.id).toBe(2);
    expect(r.inForce.map((x) => [x.previous?.name, x.next?.name])).toEqual([['a', 'a'], [undefined, 'c'], ['b', undefined]]);
    // b back with its old id; a and c unchanged keep their entries.
    const r2 = t.replaceConfigKeys([key(A, 'a', { rateLimit: { perSecond: 1, burst: 10 } }), key(C, 'c', { allowedRoutes: ['rpc', 'jito'] }), key(B, 'b')], ['rpc'], 0);
    expect(r2).toMatchObject({ added: ['b'], changed: [], removed: [], unchanged: 2 });
    expect(t.lookup(B)!.id).toBe(b0.id);
    expect(t.lookup(A)).toBe(a1);
    expect(t.lookup(C)).toBe(c);
  });

  it('routes.defaultRoutes changes the default routes of keys that name none', () => {
    const t = new KeyTable([key(A, 'a')], ['rpc'], 0);
    const before = t.lookup(A)!.defaultMask;
    const r = t.replaceConfigKeys([key(A, 'a')], ['rpc', 'jito'], 0);
    expect(r.changed).toEqual(['a']);
    expect(t.lookup(A)!.defaultMask).not.toBe(before);
  });

  it('an engine plan overriding a config key stays in force across a reload; removing the config key leaves it', () => {
    const t = new KeyTable([key(A, 'a')], ['rpc'], 0);
    const p = parsePlan({ name: 'engine-a' });
    if ('error' in p) throw new Error(p.error);
    t.setEngineKey(keyHash(A), p.plan, 0);
    expect(t.lookup(A)!.name).toBe('engine-a');
    const r = t.replaceConfigKeys([key(A, 'a2')], ['rpc'], 0);
    expect(r.changed).toEqual(['a2']);
    expect(r.inForce).toEqual([]);
    expect(t.lookup(A)!.name).toBe('engine-a');
    t.replaceConfigKeys([], ['rpc'], 0);
    expect(t.lookup(A)!.name).toBe('engine-a');
    t.removeEngineKey(keyHash(A));
    expect(t.lookup(A)).toBeUndefined();
  });
});
