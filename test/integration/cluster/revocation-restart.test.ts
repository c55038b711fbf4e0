// A revocation survives an engine restarted empty (issue 30, item 1), for real: two relay processes on one real
// redis-server, the real CLI (dist/src/cli.js keys revoke|revoked|restore). Before the fix the relays read the empty
// {ns}:revoked of the restarted engine as "nobody is revoked": within ~2 s the key was accepted again everywhere, `keys
// revoked` listed nothing and the relays logged key_restored. Shown: the key stays refused on both relays through the
// restart and after it, a relay writes the revocation back (one warning saying so), `keys revoked` lists it again, no
// relay logs key_restored; then `keys restore` (the only way to lift it) works as before. Also an engine that went
// back (restarted empty, then another key revoked before any relay wrote back): both revocations end up in force.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { legacyTransfer } from '../../helpers/transactions.js';
import { waitFor } from '../../helpers/wait-for.js';
import { defaultKeys, startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { ensureDistFresh } from '../../unit/telemetry/dist-fresh.js';
import { RedisServer } from './redis-server.js';

const run = promisify(execFile);
const POLL_MS = 500;
const BOT_KEY = '8e3a1c57-2b9d-4f06-a1e4-7c5d9b2f3a68';
const OTHER_BOT_KEY = '1f7b9d24-6c3e-4a85-9b10-e2d4c6a8f079';
const keys = [...defaultKeys(), { key: BOT_KEY, name: 'revoked-bot' }, { key: OTHER_BOT_KEY, name: 'other-bot' }];
const CLUSTER = { telemetry: { enabled: false }, keys: { pollMs: POLL_MS } };
const tx = legacyTransfer().base64;
const hashOf = (k: string): string => createHash('sha256').update(k.toLowerCase()).digest('hex').slice(0, 32);

let redis: RedisServer;
let cliConfig: string;
const relays: RelayHandle[] = [];

async function submit(relay: RelayHandle, key: string): Promise<number> {
  const res = await fetch(`${relay.relayUrl}/v1/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ transaction: tx, maxRetries: 0 }),
  });
  await res.arrayBuffer();
  return res.status;
}

async function cli(...args: string[]): Promise<string> {
  const out = await run(process.execPath, ['dist/src/cli.js', 'keys', ...args, '--config', cliConfig]);
  return out.stdout + out.stderr;
}

async function engine<T>(f: (r: Redis) => Promise<T>): Promise<T> {
  const r = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  r.on('error', () => undefined);
  try {
    return await f(r);
  } finally {
    r.disconnect();
  }
}

/** Submits with `key` on every relay every 25 ms for `ms`: every status seen. */
async function statusesDuring(key: string, ms: number): Promise<Set<number>> {
  const seen = new Set<number>();
  const end = Date.now() + ms;
  while (Date.now() < end) {
    for (const r of relays) seen.add(await submit(r, key));
    await new Promise((res) => setTimeout(res, 25));
  }
  return seen;
}

const logged = (event: string): number => relays.filter((r) => r.logs.some((l) => l.includes(`"event":"${event}"`))).length;

beforeAll(async () => {
  ensureDistFresh();
  redis = await RedisServer.start();
  const config = { upstream: { rpcUrl: 'http://127.0.0.1:9' }, routes: { discard: true }, telemetry: { enabled: false }, keys, cluster: { url: redis.url, ...CLUSTER } };
  relays.push(...(await Promise.all([startRelay(config), startRelay(config)])));
  cliConfig = join(mkdtempSync(join(tmpdir(), 'slotrelay-revocation-restart-')), 'relay.yaml');
  writeFileSync(cliConfig, stringify({ keys, cluster: { url: redis.url, ...CLUSTER } }));
}, 60_000);

afterAll(async () => {
  await Promise.all(relays.map((r) => r.stop()));
  await redis?.stop();
});

describe('a revocation and an engine restarted without its data', () => {
  it('stays in force on every relay, is written back with a warning, and is listed again; no key_restored', async () => {
    for (const r of relays) expect(await submit(r, BOT_KEY)).toBe(200);
    await cli('revoke', '--name', 'revoked-bot');
    for (const r of relays) await waitFor('revoked', () => submit(r, BOT_KEY), (s) => s === 401, 5_000, 25);

    await redis.stop();
    // Down: the last known set stays (as before the fix).
    expect(await statusesDuring(BOT_KEY, 600)).toEqual(new Set([401]));
    await redis.start(); // no persistence: an empty engine
    // Through the restart, the relays' reconnect and several polls: never accepted.
    expect(await statusesDuring(BOT_KEY, 4 * POLL_MS + 2_000)).toEqual(new Set([401]));
    expect(await engine((r) => r.hexists('slotrelay:revoked', hashOf(BOT_KEY)))).toBe(1);
    expect(await cli('revoked')).toContain('revoked-bot');
    expect(logged('revocations_rewritten')).toBeGreaterThanOrEqual(1);
    expect(logged('key_restored')).toBe(0);
    const warning = relays.flatMap((r) => r.logs).find((l) => l.includes('"event":"revocations_rewritten"'))!;
    expect(warning).toContain('"level":40');
    expect(warning).toContain('keys restore');
    for (const r of relays) expect(r.logs.join('\n')).not.toContain(BOT_KEY);
    // Other keys were never affected.
    for (const r of relays) expect(await submit(r, TEST_KEY)).toBe(200);
  }, 30_000);

  it('only `keys restore` lifts it, after the restart as before', async () => {
    expect(await cli('restore', '--name', 'revoked-bot')).toContain('restored "revoked-bot"');
    for (const r of relays) await waitFor('restored', () => submit(r, BOT_KEY), (s) => s === 200, 5_000, 25);
    expect(logged('key_restored')).toBe(2);
    expect(await cli('revoked')).not.toContain('revoked-bot');
  });

  it('an engine that went back (restarted empty, another key revoked first) ends with both revocations', async () => {
    await cli('revoke', '--name', 'revoked-bot');
    for (const r of relays) await waitFor('revoked again', () => submit(r, BOT_KEY), (s) => s === 401, 5_000, 25);
    await redis.stop();
    await redis.start();
    // Before any relay reconnects (ioredis retries every <= 1 s): a revocation written into the empty engine.
    await cli('revoke', '--name', 'other-bot');
    const seen = await statusesDuring(BOT_KEY, 4 * POLL_MS + 2_000);
    expect(seen).toEqual(new Set([401]));
    for (const r of relays) expect(await submit(r, OTHER_BOT_KEY)).toBe(401);
    const listed = await cli('revoked');
    expect(listed).toContain('revoked-bot');
    expect(listed).toContain('other-bot');
  }, 30_000);
});
