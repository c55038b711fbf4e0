// A reload on a relay of a cluster (docs/configuration.md "Reload", "Keys from the cluster engine"): a real
// redis-server (scripts/cluster/start-redis.sh), one relay, the real `slotrelay keys` CLI. The reload changes only the
// config's keys: an engine plan overriding a config key stays in force when the file changes that key, and keeps the
// key usable when the file drops it; a key revoked through the engine stays refused whatever the file says of it; a
// key the file adds is accepted; the engine is never written by the reload.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { legacyTransfer } from '../../helpers/transactions.js';
import { waitFor } from '../../helpers/wait-for.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { ensureDistFresh } from '../../unit/telemetry/dist-fresh.js';
import { RedisServer } from '../cluster/redis-server.js';

const run = promisify(execFile);
const CLUSTER = { telemetry: { enabled: false }, keys: { pollMs: 500 } };
const OVERRIDDEN = '2c4e6a8b-0d1f-4a3c-9e5b-7d9f1b3c5e7a';
const REVOKED = '8e0a2c4d-6f8b-4d1e-9a3c-5e7b9d1f3a5c';
const ADDED = '4a6c8e0f-2b4d-4f6a-8c1e-3b5d7f9a1c3e';

let redis: RedisServer;
let engine: Redis;
let relay: RelayHandle;
let cliConfig: string;
const keys = [
  { key: TEST_KEY, name: 'test-bot', rateLimit: { perSecond: 10_000, burst: 10_000 } },
  { key: OVERRIDDEN, name: 'overridden-bot', rateLimit: { perSecond: 1, burst: 2 } },
  { key: REVOKED, name: 'revoked-bot' },
];
const tx = legacyTransfer().base64;

async function submit(key: string): Promise<number> {
  const res = await fetch(`${relay.relayUrl}/v1/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ transaction: tx, maxRetries: 0 }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** 20 submissions in a row: how many were rate-limited. */
async function limitedOf20(key: string): Promise<number> {
  let n = 0;
  for (let i = 0; i < 20; i++) if ((await submit(key)) === 429) n++;
  return n;
}

async function detail(): Promise<{ cluster: { keys: { revision: number }; revokedKeys: number }; config: { reloads: number; lastReload: { outcome: string } | null } }> {
  return (await (await fetch(`${relay.rpcUrl}/health?detail`)).json()) as never;
}

async function cli(...args: string[]): Promise<string> {
  const out = await run(process.execPath, ['dist/src/cli.js', 'keys', ...args, '--config', cliConfig]);
  return out.stdout + out.stderr;
}

async function reload(keyList: Record<string, unknown>[]): Promise<void> {
  const before = (await detail()).config.reloads;
  writeFileSync(relay.configFile, stringify({ ...relay.config, keys: keyList }));
  relay.child.kill('SIGHUP');
  const d = await waitFor('the reload', detail, (x) => x.config.reloads === before + 1, 5_000, 20);
  expect(d.config.lastReload?.outcome).toBe('applied');
}

beforeAll(async () => {
  ensureDistFresh();
  redis = await RedisServer.start();
  engine = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  engine.on('error', () => undefined);
  await engine.connect();
  relay = await startRelay({
    upstream: { rpcUrl: 'http://127.0.0.1:9' },
    routes: { discard: true },
    telemetry: { enabled: false },
    keys,
    cluster: { url: redis.url, ...CLUSTER },
  });
  const dir = mkdtempSync(join(tmpdir(), 'slotrelay-reload-cluster-'));
  cliConfig = join(dir, 'cli.yaml');
  writeFileSync(cliConfig, stringify({ keys, cluster: { url: redis.url, ...CLUSTER } }));
}, 60_000);

afterAll(async () => {
  await relay?.stop();
  engine?.disconnect();
  await redis?.stop();
});

describe('reload with a cluster engine', () => {
  it('engine overrides and revocations outlive a reload of the config keys; the reload writes nothing to the engine', async () => {
    expect(await limitedOf20(OVERRIDDEN)).toBeGreaterThan(10); // the config plan: burst 2
    const set = await cli('set', 'overridden-bot', '--rate-limit', '1000/1000');
    expect(set).toMatch(/engine plan now overrides the config plan of "overridden-bot"/);
    await cli('revoke', '--name', 'revoked-bot');
    await waitFor('the revocation', () => submit(REVOKED), (s) => s === 401, 5_000, 50);
    await waitFor('the engine plan', () => limitedOf20(OVERRIDDEN), (n) => n === 0, 5_000, 100);
    const engineBefore = JSON.stringify([await engine.hgetall('slotrelay:keys'), await engine.hgetall('slotrelay:revoked')]);
    expect(engineBefore).not.toBe('[{},{}]'); // the override and the revocation are in it

    // The file changes both keys' plans and adds one: the engine's plan and revocation stay in force.
    await reload([keys[0], { ...keys[1], rateLimit: { perSecond: 1, burst: 1 } }, { ...keys[2], rateLimit: { perSecond: 5_000 } }, { key: ADDED, name: 'added-bot' }]);
    expect(await submit(ADDED)).toBe(200);
    expect(await limitedOf20(OVERRIDDEN)).toBe(0);
    expect(await submit(REVOKED)).toBe(401);
    expect((await detail()).cluster.revokedKeys).toBe(1);

    // The file drops the overridden key: the engine still supplies it.
    await reload([keys[0], keys[2], { key: ADDED, name: 'added-bot' }]);
    expect(await submit(OVERRIDDEN)).toBe(200);
    expect(JSON.stringify([await engine.hgetall('slotrelay:keys'), await engine.hgetall('slotrelay:revoked')])).toBe(engineBefore);

    // The engine drops it too: now it is unknown.
    await cli('remove', 'overridden-bot');
    await waitFor('the engine removal', () => submit(OVERRIDDEN), (s) => s === 401, 5_000, 50);
    expect(await submit(TEST_KEY)).toBe(200);
  }, 60_000);
});
