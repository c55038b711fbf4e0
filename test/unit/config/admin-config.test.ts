// The admin listener's configuration (docs/status-page.md): loopback needs no key, any other interface needs one,
// the key's form, and its port against the other listeners'.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isLoopbackHost, loadConfig } from '../../../src/config/load.js';

function load(text: string): ReturnType<typeof loadConfig> {
  const f = join(mkdtempSync(join(tmpdir(), 'slotrelay-admin-')), 'c.yaml');
  writeFileSync(f, text);
  return loadConfig({ file: f });
}

const ADMIN_KEY = 'k'.repeat(40);

describe('admin configuration', () => {
  it('defaults to the status page on 127.0.0.1:8890, no key', () => {
    expect(load('{}').admin).toMatchObject({ enabled: true, host: '127.0.0.1', port: 8890, intervalMs: 1000, maxViewers: 8 });
    expect(load('{}').admin.key).toBeUndefined();
  });

  it('refuses a non-loopback bind without a key, naming the fix, and accepts it with one', () => {
    expect(() => load('admin: { host: 0.0.0.0 }')).toThrow(/admin\.host is 0\.0\.0\.0, not a loopback address: set admin\.key/);
    expect(load(`admin: { host: 0.0.0.0, key: ${ADMIN_KEY} }`).admin.key).toBe(ADMIN_KEY);
    expect(load('admin: { host: 0.0.0.0, enabled: false }').admin.enabled).toBe(false);
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1']) expect(load(`admin: { host: "${h}" }`).admin.host).toBe(h);
  });

  it('refuses a short or spaced key without printing it', () => {
    let msg = '';
    try {
      load('admin: { key: short-secret }');
    } catch (e) {
      msg = (e as Error).message;
    }
    expect(msg).toMatch(/admin\.key: must be 32 to 128 visible ASCII characters/);
    expect(msg).not.toContain('short-secret');
    expect(() => load(`admin: { key: "${'a'.repeat(20)} ${'b'.repeat(20)}" }`)).toThrow(/admin\.key/);
  });

  it('refuses admin.port on another listener port', () => {
    expect(() => load('relayHost: { port: 8890 }')).toThrow(/relayHost\.port and admin\.port are both 8890/);
    expect(load('relayHost: { port: 8890 }\nadmin: { port: 0 }').admin.port).toBe(0);
  });

  it('tells loopback names from others', () => {
    expect(['127.0.0.1', '127.255.0.9', 'localhost', 'LOCALHOST', '::1', '[::1]'].every(isLoopbackHost)).toBe(true);
    expect(['0.0.0.0', '10.0.0.1', '::', '128.0.0.1', 'example.com', '127.0.0.1.nip.io'].some(isLoopbackHost)).toBe(false);
  });
});
