// The key table with keys from the cluster engine (src/admission/key-table.ts): engine keys are known by hash only and found by
// hashing the candidate; an engine plan overrides a config key's; removing it brings the config plan back; ids are
// never given to another key; a plan change reaches a key already found by value.
import { describe, expect, it } from 'vitest';
import { keyHash } from '../../../src/cluster/engine-keys.js';
import { parsePlan } from '../../../src/cluster/key-plan.js';
import { KeyTable, type KeyPlan } from '../../../src/admission/key-table.js';
import { keySchema } from '../../../src/config/schema.js';

const CONFIG_KEY = '6f1c2a4e-9b7d-4c3a-8e21-5d0f4b6a7c19';
const ENGINE_KEY = '0d5e7c1a-3b9f-4e2d-8a61-7c4b2f9e0a35';

function plan(fields: Record<string, unknown>): KeyPlan {
  const p = parsePlan(fields);
  if ('error' in p) throw new Error(p.error);
  return p.plan;
}

function table(): KeyTable {
  return new KeyTable([keySchema.parse({ key: CONFIG_KEY, name: 'config-bot', rateLimit: { perSecond: 1, burst: 1 } })], ['rpc'], 0);
}

describe('KeyTable with engine keys', () => {
  it('finds an engine key by its value though only its hash was given, in any case, and not an unknown one', () => {
    const t = table();
    expect(t.lookup(ENGINE_KEY)).toBeUndefined();
    const { entry } = t.setEngineKey(keyHash(ENGINE_KEY), plan({ name: 'engine-bot' }), 0);
    expect(entry.source).toBe('engine');
    expect(entry.id).toBe(1);
    expect(t.lookup(ENGINE_KEY)).toBe(entry);
    expect(t.lookup(ENGINE_KEY.toUpperCase())).toBe(entry);
    expect(t.lookup('11111111-2222-4333-8444-555555555555')).toBeUndefined();
    expect(t.lookup(CONFIG_KEY)?.name).toBe('config-bot');
  });

  it('a changed plan reaches a key already found by value; removal makes it unknown; re-adding keeps its id', () => {
    const t = table();
    const h = keyHash(ENGINE_KEY);
    t.setEngineKey(h, plan({ name: 'engine-bot', allowedRoutes: ['rpc', 'jito'] }), 0);
    const first = t.lookup(ENGINE_KEY)!;
    const { entry, previous } = t.setEngineKey(h, plan({ name: 'engine-bot', allowedRoutes: ['jito'], rateLimit: { perSecond: 5 } }), 0);
    expect(previous).toBe(first);
    expect(t.lookup(ENGINE_KEY)).toBe(entry);
    expect(entry.id).toBe(first.id);
    expect(entry.config.rateLimit.perSecond).toBe(5);
    expect(t.entries[entry.id]).toBe(entry);
    expect(t.removeEngineKey(h)?.fallback).toBeUndefined();
    expect(t.lookup(ENGINE_KEY)).toBeUndefined();
    const other = t.setEngineKey(keyHash('22222222-3333-4444-8555-666666666666'), plan({ name: 'other' }), 0).entry;
    expect(other.id).toBe(2);
    expect(t.setEngineKey(h, plan({ name: 'engine-bot' }), 0).entry.id).toBe(first.id);
    expect(t.lookup(ENGINE_KEY)?.name).toBe('engine-bot');
  });

  it('an engine plan for a config key overrides it (new id, revocation kept); removing it brings the config plan back', () => {
    const t = table();
    const h = keyHash(CONFIG_KEY);
    const cfg = t.lookup(CONFIG_KEY)!;
    cfg.revoked = true;
    const { entry, previous } = t.setEngineKey(h, plan({ name: 'config-bot', rateLimit: { perSecond: 500, burst: 500 } }), 0);
    expect(previous).toBe(cfg);
    expect(entry.id).not.toBe(cfg.id);
    expect(entry.revoked).toBe(true);
    expect(t.lookup(CONFIG_KEY)).toBeUndefined();
    entry.revoked = false;
    cfg.revoked = false;
    expect(t.lookup(CONFIG_KEY)).toBe(entry);
    expect(t.current(h)).toBe(entry);
    expect(t.removeEngineKey(h)?.fallback).toBe(cfg);
    expect(t.lookup(CONFIG_KEY)).toBe(cfg);
    expect(t.engineKeyCount).toBe(0);
  });
});
