// What a reload may change (src/reload/config-diff.ts): the changed paths of two parsed configs, the ones a reload
// cannot apply named, and no value (a key, a URL) in any of them.
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { diffConfigs } from '../../../src/reload/config-diff.js';

const K = '6f1c2a4e-9b7d-4c3a-8e21-5d0f4b6a7c19';

describe('diffConfigs', () => {
  it('keys, log level, default routes and everyTransaction reload; ports, rings and peers are named as fixed', () => {
    const a = configSchema.parse({ keys: [{ key: K, name: 'a' }] });
    const ok = configSchema.parse({ keys: [{ key: K, name: 'a', rateLimit: { perSecond: 5 } }], log: { level: 'debug' }, routes: { defaultRoutes: ['rpc'], static: { everyTransaction: false } } });
    expect(diffConfigs(a, ok)).toEqual({ changed: ['keys', 'routes.static.everyTransaction', 'log.level'], fixed: [] });
    const bad = configSchema.parse({ keys: [], rpcHost: { port: 9000 }, rings: { workers: 4 }, routes: { static: { peers: ['127.0.0.1:1'] } } });
    const d = diffConfigs(a, bad);
    expect(d.fixed).toEqual(['rpcHost.port', 'rings.workers', 'routes.static.peers']);
    expect(d.changed[0]).toBe('keys');
    expect(JSON.stringify(d)).not.toContain(K);
    expect(diffConfigs(a, configSchema.parse({ keys: [{ key: K, name: 'a' }] }))).toEqual({ changed: [], fixed: [] });
  });

  it('a path that appears or disappears counts (an optional section such as routes.jito)', () => {
    const a = configSchema.parse({});
    const b = configSchema.parse({ routes: { jito: { url: 'https://example.invalid' } } });
    expect(diffConfigs(a, b).fixed).toEqual(['routes.jito']); // absent on one side: the section itself is named
  });
});
