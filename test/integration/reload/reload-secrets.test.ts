// A reload refused for a broken keys or config file never shows a key (issue #47 item 1, docs/configuration.md
// "Reload"): a real relay on a fake upstream, its keys file (and then its config file) rewritten with the mistakes
// that make parsers quote the text around them — a YAML syntax error on a key's line, an unclosed quote inside a
// truncated key, JSON-style flow text, a key pasted where a field name goes, a key given as a route — each followed by
// `slotrelay reload --config`. The refusal's line and column must be there; any 8 consecutive characters of any
// configured key must not be, in `slotrelay reload`'s output, the relay's log, /health?detail (answered without a key)
// or the status page's /status.json.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { relayOnFakeRpcUpstream } from '../../helpers/relay-on-upstream.js';
import { OTHER_KEY, TEST_KEY } from '../../helpers/relay-process.js';

const FILE_KEY = '3e8b5d1f-7a2c-4f9e-b6d0-1c4a7e2b9f53';
const SECOND_FILE_KEY = 'c7a2e9f4-1b6d-4e3a-9c8f-5d2b7a0e4f16';
/** A key that only a broken file holds: never configured, and still never to be shown. */
const NEW_KEY = 'd4f6a8c0-2e4b-4d6f-8a0c-2e4b6d8f0a1c';
const SECRETS = [TEST_KEY, OTHER_KEY, FILE_KEY, SECOND_FILE_KEY, NEW_KEY];

const dir = mkdtempSync(join(tmpdir(), 'slotrelay-secrets-'));
const keysFile = join(dir, 'keys.yaml');
const goodKeys = stringify([
  { key: FILE_KEY, name: 'file-bot' },
  { key: SECOND_FILE_KEY, name: 'second-file-bot' },
]);
writeFileSync(keysFile, goodKeys);

const r = relayOnFakeRpcUpstream({ keysFile, admin: { port: 0 } });

/** Every 8-character window of every key, lower case: what must appear nowhere. */
function leaks(text: string): string[] {
  const t = text.toLowerCase();
  const found: string[] = [];
  for (const key of SECRETS) {
    for (let i = 0; i + 8 <= key.length; i++) if (t.includes(key.slice(i, i + 8))) found.push(key.slice(i, i + 8));
  }
  return found;
}

function cliReload(configFile: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['dist/src/cli.js', 'reload', '--config', configFile], (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : ((err as { code?: number }).code ?? 1), out: `${stdout}\n${stderr}` });
    });
  });
}

interface Refusal {
  readonly cli: string;
  readonly health: string;
  readonly status: string;
  readonly log: string;
}

/** Reloads and returns everything a person could read about the refusal. */
async function refuse(configFile: string): Promise<Refusal> {
  const logFrom = r.relay.logs.length;
  const { code, out } = await cliReload(configFile);
  expect(code, out).not.toBe(0);
  expect(out).toContain('reload refused');
  const health = await (await fetch(`${r.relay.rpcUrl}/health?detail`)).text();
  const status = await (await fetch(`${r.relay.adminUrl}/status.json`)).text();
  return { cli: out, health, status, log: r.relay.logs.slice(logFrom).join('\n') };
}

function expectNoKey(what: string, got: Refusal): void {
  for (const [where, text] of Object.entries(got)) expect(leaks(text), `${what}: ${where} shows a key:\n${text}`).toEqual([]);
}

describe('a refused reload never shows a key', () => {
  const keysCases: readonly { readonly what: string; readonly text: string; readonly says: RegExp }[] = [
    { what: 'a YAML syntax error on a key line', text: `- key: ${FILE_KEY}  name: {\n`, says: /line 1, column \d+: a nested mapping on one line/ },
    { what: 'an unclosed quote in a truncated key', text: `- key: "${NEW_KEY.slice(0, 20)}\n  name: bot\n`, says: /line \d+, column \d+: /},
    { what: 'JSON-style flow text cut short', text: `[{"key": "${SECOND_FILE_KEY}", "name": "x"}, {"key": "${NEW_KEY}"`, says: /line 1, column \d+: / },
    { what: 'a key pasted where a field name goes', text: `- ${NEW_KEY}: file-bot\n  name: pasted\n`, says: /unknown key 1 not shown/ },
    { what: 'a key given as a route', text: `- key: ${FILE_KEY}\n  name: file-bot\n  allowedRoutes: [${NEW_KEY}]\n`, says: /0\.allowedRoutes\.0: expected one of rpc/ },
  ];

  for (const c of keysCases) {
    it(`keys file: ${c.what}`, async () => {
      writeFileSync(keysFile, c.text);
      try {
        const got = await refuse(r.relay.configFile);
        expect(got.cli).toMatch(c.says);
        expect(got.health).toMatch(c.says);
        expectNoKey(c.what, got);
      } finally {
        writeFileSync(keysFile, goodKeys);
      }
    });
  }

  it('config file: a YAML syntax error on an inline key line', async () => {
    const good = stringify(r.relay.config);
    const broken = good.replace(`- key: ${TEST_KEY}`, `- key: ${TEST_KEY}  name: {`);
    expect(broken).not.toBe(good);
    writeFileSync(r.relay.configFile, broken);
    try {
      const got = await refuse(r.relay.configFile);
      expect(got.cli).toMatch(/line \d+, column \d+: a nested mapping on one line/);
      expectNoKey('config file', got);
    } finally {
      writeFileSync(r.relay.configFile, good);
    }
  });

  it('the running keys still serve after the refusals', async () => {
    const ok = await cliReload(r.relay.configFile);
    expect(ok.code, ok.out).toBe(0);
    const detail = (await (await fetch(`${r.relay.rpcUrl}/health?detail`)).json()) as { config: { lastReload: { outcome: string } } };
    expect(['unchanged', 'applied']).toContain(detail.config.lastReload.outcome);
    // The file's key is still known (a refused reload applied nothing): its call is answered, an unknown key's is not.
    const call = async (key: string): Promise<number> => {
      const res = await fetch(`${r.relay.rpcUrl}/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getLeaderSlots', params: [{ limit: 1 }] }),
      });
      await res.arrayBuffer();
      return res.status;
    };
    expect(await call(FILE_KEY)).toBe(200);
    expect(await call(NEW_KEY)).toBe(401);
  });
});
