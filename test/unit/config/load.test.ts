import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { ENV_OVERRIDES } from '../../../src/config/env-overrides.js';

const KEY = '3b241101-e2bb-4255-8caf-4136c566a962';
function write(text: string, name = 'c.yaml'): string {
  const dir = mkdtempSync(join(tmpdir(), 'slotrelay-config-'));
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
}

describe('configuration', () => {
  it('the example config is valid and documents every top-level section', () => {
    const c = loadConfig({ file: 'config/slotrelay.example.yaml' });
    expect(c.keys[0].name).toBe('example-bot');
    expect(Object.isFrozen(c) && Object.isFrozen(c.keys[0].rateLimit)).toBe(true);
  });

  it('refuses unknown keys, naming them', () => {
    const f = write('rpcHost: { port: 1, colour: blue }\n');
    expect(() => loadConfig({ file: f })).toThrow(/rpcHost: unknown key "colour"/);
    const g = write('nonsense: 1\n');
    expect(() => loadConfig({ file: g })).toThrow(/unknown key "nonsense"/);
  });

  it('names the field of an invalid value and never prints a key value', () => {
    const f = write(`keys:\n  - { key: not-a-uuid, name: a }\n`);
    expect(() => loadConfig({ file: f })).toThrow(/keys\.0\.key: must be a UUID/);
    const g = write(`keys:\n  - { key: ${KEY}, name: a }\n  - { key: ${KEY.toUpperCase()}, name: b }\n`);
    let message = '';
    try {
      loadConfig({ file: g });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/keys\[1\] \("b"\) repeats an earlier key/);
    expect(message.toLowerCase()).not.toContain(KEY);
  });

  it('refuses two listeners on one port (uWS would share it silently), the PubSub default rpcHost.port + 1 included', () => {
    expect(() => loadConfig({ file: write('rpcHost: { port: 18899 }\nrelayHost: { port: 18900 }\n') })).toThrow(
      /jsonRpc\.pubsub\.port \(default rpcHost\.port \+ 1\) and relayHost\.port are both 18900/,
    );
    expect(() => loadConfig({ file: write('rpcHost: { port: 9000 }\nrelayHost: { port: 9000 }\n') })).toThrow(/rpcHost\.port and relayHost\.port are both 9000/);
    // Moving either one, turning PubSub off, or port 0 (chosen at start) is fine.
    expect(loadConfig({ file: write('rpcHost: { port: 18899 }\nrelayHost: { port: 18900 }\njsonRpc: { pubsub: { port: 18901 } }\n') }).relayHost.port).toBe(18900);
    expect(loadConfig({ file: write('rpcHost: { port: 18899 }\nrelayHost: { port: 18900 }\njsonRpc: { pubsub: { enabled: false } }\n') }).relayHost.port).toBe(18900);
    expect(loadConfig({ file: write('rpcHost: { port: 0 }\nrelayHost: { port: 0 }\n') }).relayHost.port).toBe(0);
  });

  it('refuses a CORS origin that would break the header line (answers write it verbatim)', () => {
    const f = write('http: { corsAllowOrigin: "https://a.example\\r\\nset-cookie: x=1" }\n');
    expect(() => loadConfig({ file: f })).toThrow(/http\.corsAllowOrigin: must be one header value/);
    expect(loadConfig({ file: write('http: { corsAllowOrigin: "https://app.example.com" }\n') }).http.corsAllowOrigin).toBe('https://app.example.com');
  });

  it('http.slowClientTimeoutSeconds: uWS\'s own 10 by default, 4 (one 4 s sweep) at least', () => {
    expect(loadConfig({ file: write('http: {}\n') }).http.slowClientTimeoutSeconds).toBe(10);
    expect(loadConfig({ file: write('http: { slowClientTimeoutSeconds: 4 }\n') }).http.slowClientTimeoutSeconds).toBe(4);
    expect(() => loadConfig({ file: write('http: { slowClientTimeoutSeconds: 3 }\n') })).toThrow(/http\.slowClientTimeoutSeconds/);
  });

  it('environment mapping and flags override the file, in that order', () => {
    const f = write('rpcHost: { port: 1000 }\nrelayHost: { port: 2000 }\n');
    const c = loadConfig({ file: f, env: { SLOTRELAY_RPC_PORT: '1001', SLOTRELAY_RELAY_PORT: '2001' }, flags: [{ path: ['relayHost', 'port'], value: 2002 }] });
    expect(c.rpcHost.port).toBe(1001);
    expect(c.relayHost.port).toBe(2002);
    expect(() => loadConfig({ file: f, env: { SLOTRELAY_RPC_PORT: 'abc' } })).toThrow(/SLOTRELAY_RPC_PORT must be a non-negative integer/);
  });

  it('loads keys from keysFile relative to the config', () => {
    const dir = mkdtempSync(join(tmpdir(), 'slotrelay-keys-'));
    writeFileSync(join(dir, 'keys.yaml'), `- { key: ${KEY}, name: from-file, preflight: skip }\n`);
    writeFileSync(join(dir, 'c.yaml'), 'keysFile: keys.yaml\n');
    const c = loadConfig({ file: join(dir, 'c.yaml') });
    expect(c.keys.map((k) => [k.name, k.preflight])).toEqual([['from-file', 'skip']]);
  });

  it('docs/configuration.md lists exactly the environment mapping', () => {
    const doc = readFileSync('docs/configuration.md', 'utf8');
    const documented = [...doc.matchAll(/`(SLOTRELAY_[A-Z_]+)`/g)].map((m) => m[1]);
    expect(new Set(documented)).toEqual(new Set(ENV_OVERRIDES.map((o) => o.env)));
    for (const o of ENV_OVERRIDES) expect(doc).toContain(o.path.join('.'));
  });
});
