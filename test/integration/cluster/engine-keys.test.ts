// Keys and plans from the cluster engine (docs/multi-region.md "Keys and plans from the engine"), for real: two relay
// processes sharing one real redis-server (scripts/cluster/start-redis.sh), and the real CLI (dist/src/cli.js keys
// add|set|remove|revoke) run against relay A's config. Shown: an unknown key is 401 everywhere; a key added through A's
// config is accepted by B within the documented delay (pollMs + one round trip; the change notice makes it faster),
// and neither the engine nor any log holds it in clear; a lowered rate limit and a narrowed route set apply on B; an
// engine plan overrides a config key's plan and removing it brings the config plan back; removed and revoked keys stop
// on both; the engine stopped keeps the last known keys (and says so), an engine restarted empty is refilled by a relay.
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { encodeRecord, parsePlan } from '../../../src/cluster/key-plan.js';
import { KEY_WRITE_SCRIPT } from '../../../src/cluster/key-registry-script.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { waitFor } from '../../helpers/wait-for.js';
import { defaultKeys, startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { ensureDistFresh } from '../../unit/telemetry/dist-fresh.js';
import { RedisServer } from './redis-server.js';

const run = promisify(execFile);
const POLL_MS = 1_000;
/** The documented delay: pollMs + one engine round trip (the notice usually makes it one round trip). */
const DELAY_BOUND_MS = POLL_MS + 250;
const CONFIG_KEY = '5b2e9c14-7a3d-4f61-9e08-c4d2a6b1f375';
const CLUSTER = { telemetry: { enabled: false }, keys: { pollMs: POLL_MS } };

let redis: RedisServer;
let engine: Redis;
let cliConfig: string;
const relays: RelayHandle[] = [];
const keys = [...defaultKeys(), { key: CONFIG_KEY, name: 'config-bot', rateLimit: { perSecond: 1, burst: 2 } }];
const tx = legacyTransfer().base64;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function submit(relay: RelayHandle, key: string, routes?: string[]): Promise<number> {
  const res = await fetch(`${relay.relayUrl}/v1/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ transaction: tx, maxRetries: 0, ...(routes ? { routes } : {}) }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** A JSON-RPC read (getBundleStatuses): the HTTP status and the error's reason, if any. */
async function bundleStatuses(relay: RelayHandle, key: string): Promise<{ status: number; reason: string | undefined }> {
  const res = await fetch(relay.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getBundleStatuses', params: [['ab'.repeat(32)]] }),
  });
  const body = (await res.json().catch(() => ({}))) as { error?: { data?: { reason?: string } } };
  return { status: res.status, reason: body.error?.data?.reason };
}

async function cluster(relay: RelayHandle): Promise<any> {
  const res = await fetch(`${relay.rpcUrl}/health?detail`);
  return ((await res.json()) as { cluster: unknown }).cluster;
}

async function cli(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, ['dist/src/cli.js', 'keys', ...args, '--config', cliConfig]);
}

/** Time (ms from now) until every relay answers `want` for the key; fails past `boundMs` + 3 s. */
async function untilEverywhere(key: string, want: (status: number) => boolean, what: string): Promise<number[]> {
  const t0 = Date.now();
  return Promise.all(
    relays.map(async (relay) => {
      let last = 0;
      while (!want((last = await submit(relay, key)))) {
        if (Date.now() - t0 > DELAY_BOUND_MS + 3_000) throw new Error(`${what}: last status ${last}`);
        await sleep(15);
      }
      return Date.now() - t0;
    }),
  );
}

/** Waits until the relay's key sync holds revision `rev` (from the CLI's output); returns how long it took. */
async function untilRevision(relay: RelayHandle, rev: number): Promise<number> {
  const t0 = Date.now();
  await waitFor(`revision ${rev}`, () => cluster(relay), (c) => (c.keys.revision as number) >= rev, DELAY_BOUND_MS + 3_000, 15);
  return Date.now() - t0;
}

const revisionOf = (out: { stdout: string; stderr: string }) => Number(/at revision (\d+)/.exec(out.stdout + out.stderr)![1]);

/** Sends one submission every 25 ms for `ms` and counts the answers. */
async function paced(relay: RelayHandle, key: string, ms: number): Promise<{ ok: number; limited: number; other: number[] }> {
  const r = { ok: 0, limited: 0, other: [] as number[] };
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const s = await submit(relay, key);
    if (s === 200) r.ok++;
    else if (s === 429) r.limited++;
    else r.other.push(s);
    await sleep(25);
  }
  return r;
}

beforeAll(async () => {
  ensureDistFresh();
  redis = await RedisServer.start();
  engine = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  engine.on('error', () => undefined);
  await engine.connect();
  const config = {
    // Nothing is sent anywhere: accepted transactions are released (this is about who is admitted with which plan).
    upstream: { rpcUrl: 'http://127.0.0.1:9' },
    routes: { discard: true },
    // A bundle service nobody answers: only whether the key may ask (bundles_not_enabled) is looked at.
    bundles: { url: 'http://127.0.0.1:9', timeoutMs: 500 },
    telemetry: { enabled: false },
    keys,
    cluster: { url: redis.url, ...CLUSTER },
  };
  relays.push(...(await Promise.all([startRelay(config), startRelay(config)])));
  const dir = mkdtempSync(join(tmpdir(), 'slotrelay-engine-keys-'));
  cliConfig = join(dir, 'relay-a.yaml');
  writeFileSync(cliConfig, stringify({ keys, cluster: { url: redis.url, ...CLUSTER } }));
}, 60_000);

afterAll(async () => {
  await Promise.all(relays.map((r) => r.stop()));
  engine?.disconnect();
  await redis?.stop();
});

describe('keys and plans from the cluster engine', () => {
  let added = '';

  it('an unknown key is 401 on every relay', async () => {
    for (const relay of relays) {
      expect(await submit(relay, randomUUID())).toBe(401);
      expect(await submit(relay, TEST_KEY)).toBe(200);
    }
  });

  it('a key added with `keys add` through relay A\'s config is accepted on relay B within the delay, and is nowhere in clear', async () => {
    const out = await cli('add', '--name', 'added-bot', '--rate-limit', '50/50', '--bundles', 'true');
    added = out.stdout.trim();
    expect(added).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const ms = await untilEverywhere(added, (s) => s === 200, 'added key accepted');
    console.log(`added key accepted on A/B after ${ms.join('/')} ms (bound ${DELAY_BOUND_MS} ms)`);
    for (const t of ms) expect(t).toBeLessThanOrEqual(DELAY_BOUND_MS);

    // The engine holds its hash and plan, never the key; no relay logs it; `keys list` shows its fingerprint only.
    const hash = createHash('sha256').update(added).digest('hex').slice(0, 32);
    expect(await engine.hexists('slotrelay:keys', hash)).toBe(1);
    const dump: string[] = [];
    for (const k of await engine.keys('*')) {
      const type = await engine.type(k);
      dump.push(k, type === 'hash' ? JSON.stringify(await engine.hgetall(k)) : type === 'string' ? ((await engine.get(k)) ?? '') : '');
    }
    expect(dump.join('\n')).not.toContain(added);
    for (const relay of relays) expect(relay.logs.join('\n')).not.toContain(added);
    expect(relays[1].logs.some((l) => l.includes('"event":"engine_key_added"') && l.includes('"keyName":"added-bot"') && l.includes(hash.slice(0, 8)))).toBe(true);
    const list = await cli('list');
    expect(list.stdout).toContain(`${hash.slice(0, 8)}  added-bot  engine`);
    expect(list.stdout + list.stderr).not.toContain(added);
    const c = await cluster(relays[1]);
    expect(c.keys).toMatchObject({ state: 'synced', engineKeys: 1, notices: true });
  });

  it('a plan change applies on relay B: a lowered rate limit, then a narrowed route set without bundles', async () => {
    const before = await paced(relays[1], added, 1_500);
    // 50/s: ~50 sent, nearly all admitted (only the first lease interval can refuse a few).
    expect(before.other).toEqual([]);
    expect(before.ok).toBeGreaterThan(35);

    const rev = revisionOf(await cli('set', 'added-bot', '--rate-limit', '1/2'));
    const ms = await untilRevision(relays[1], rev);
    console.log(`plan change (rate 50/s -> 1/s) in force on B after ${ms} ms`);
    expect(ms).toBeLessThanOrEqual(DELAY_BOUND_MS);
    const after = await paced(relays[1], added, 1_500);
    // 1/s burst 2 over 1.5 s: the burst, 1-2 refills and at most two relays' overdraft of 1.
    expect(after.other).toEqual([]);
    expect(after.ok).toBeLessThanOrEqual(6);
    expect(after.limited).toBeGreaterThan(25);

    // Routes: the key may use only jito now; a submission naming rpc is refused (403 route_not_allowed) on B. Bundles
    // off: a JSON-RPC bundle read (not 401 either way) is refused as bundles_not_enabled.
    expect(await submit(relays[1], added, ['rpc'])).not.toBe(403);
    const bundlesOn = await bundleStatuses(relays[1], added);
    expect(bundlesOn.status).not.toBe(401);
    expect(bundlesOn.reason).not.toBe('bundles_not_enabled');
    const rev2 = revisionOf(await cli('set', hashOfKey(added).slice(0, 8), '--routes', 'jito', '--rate-limit', '100/100', '--bundles', 'false'));
    await untilRevision(relays[1], rev2);
    // (The rate limit is checked first: the 1/s plan's refusals may last until the first lease under the new plan.)
    expect(await waitFor('route refused', () => submit(relays[1], added, ['rpc']), (s) => s !== 429, 2_000, 20)).toBe(403);
    expect(await bundleStatuses(relays[1], added)).toEqual({ status: 200, reason: 'bundles_not_enabled' });
    expect(relays[1].logs.some((l) => l.includes('"event":"engine_key_changed"') && l.includes('"keyName":"added-bot"'))).toBe(true);
  });

  it('an engine plan overrides a config key\'s plan on every relay; removing it brings the config plan back', async () => {
    // config-bot's own plan: 1/s, burst 2.
    const tight = await paced(relays[0], CONFIG_KEY, 1_000);
    expect(tight.limited).toBeGreaterThan(20);

    const out = await cli('set', 'config-bot', '--rate-limit', '500/500');
    expect(out.stdout).toMatch(/engine plan now overrides the config plan of "config-bot"/);
    for (const relay of relays) await untilRevision(relay, revisionOf(out));
    await sleep(300); // one lease interval under the new plan
    for (const relay of relays) {
      const r = await paced(relay, CONFIG_KEY, 1_000);
      expect(r.limited).toBeLessThanOrEqual(1);
      expect(r.ok).toBeGreaterThan(25);
    }

    const rm = await cli('remove', 'config-bot');
    expect(rm.stdout).toMatch(/its config plan is back in force/);
    for (const relay of relays) await untilRevision(relay, revisionOf(rm));
    for (const relay of relays) {
      const r = await paced(relay, CONFIG_KEY, 1_000);
      expect(r.limited).toBeGreaterThan(20);
    }
  });

  it('a change whose notice is missed (written without PUBLISH) is picked up by the periodic read within pollMs + one round trip', async () => {
    const key = randomUUID();
    const p = parsePlan({ name: 'quiet-bot' });
    if ('error' in p) throw new Error(p.error);
    expect(await submit(relays[1], key)).toBe(401);
    // What `keys add` does, with its notice published where no relay listens: they learn it from their periodic read.
    const write = [KEY_WRITE_SCRIPT, 3, 'slotrelay:keys', 'slotrelay:keys:rev', 'slotrelay:keys:log'] as const;
    expect(await engine.eval(...write, 'add', hashOfKey(key), encodeRecord(p.plan, Date.now()), '', 'nobody-listens')).toBeGreaterThan(0);
    const ms = await untilEverywhere(key, (s) => s === 200, 'key written without a notice accepted');
    console.log(`key written without a notice accepted on A/B after ${ms.join('/')} ms (pollMs ${POLL_MS})`);
    for (const t of ms) expect(t).toBeLessThanOrEqual(DELAY_BOUND_MS);
    await cli('remove', 'quiet-bot');
  });

  it('a key removed, and a key revoked, stop on both relays within the delay; an unknown key stays 401', async () => {
    const other = (await cli('add', '--name', 'revoke-bot')).stdout.trim();
    await untilEverywhere(other, (s) => s === 200, 'second key accepted');

    await cli('revoke', '--name', 'revoke-bot');
    const revokedMs = await untilEverywhere(other, (s) => s === 401, 'revoked key refused');
    await cli('remove', 'added-bot');
    const removedMs = await untilEverywhere(added, (s) => s === 401, 'removed key refused');
    console.log(`revoked engine key refused on A/B after ${revokedMs.join('/')} ms, removed key after ${removedMs.join('/')} ms`);
    for (const t of [...revokedMs, ...removedMs]) expect(t).toBeLessThanOrEqual(DELAY_BOUND_MS);
    for (const relay of relays) {
      expect(await submit(relay, randomUUID())).toBe(401);
      expect(await submit(relay, TEST_KEY)).toBe(200);
    }
    await cli('remove', 'revoke-bot');
  });

  it('engine stopped: the last known engine keys stay (and /health says so); restarted empty: a relay writes them back', async () => {
    const kept = (await cli('add', '--name', 'kept-bot')).stdout.trim();
    await untilEverywhere(kept, (s) => s === 200, 'kept key accepted');
    engine.disconnect();
    await redis.stop();
    for (const relay of relays) await waitFor('keys stale', () => cluster(relay), (c) => c.keys.state === 'stale', 5_000);
    for (const relay of relays) {
      expect(await submit(relay, kept)).toBe(200);
      expect(relay.logs.some((l) => l.includes('"event":"engine_keys_stale"'))).toBe(true);
    }

    await redis.start(); // no persistence: an empty engine
    engine = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    engine.on('error', () => undefined);
    await engine.connect();
    const hash = hashOfKey(kept);
    await waitFor('the registry written back', () => engine.hexists('slotrelay:keys', hash), (n) => n === 1, 8_000);
    for (const relay of relays) await waitFor('keys synced', () => cluster(relay), (c) => c.keys.state === 'synced', 8_000);
    expect(relays.filter((r) => r.logs.some((l) => l.includes('"event":"engine_keys_reseeded"'))).length).toBeGreaterThanOrEqual(1);
    // A change after the refill keeps the refilled keys: the new one is added, kept-bot stays.
    const fresh = (await cli('add', '--name', 'fresh-bot')).stdout.trim();
    await untilEverywhere(fresh, (s) => s === 200, 'key added after the restart accepted');
    for (const relay of relays) expect(await submit(relay, kept)).toBe(200);
  }, 40_000);
});

function hashOfKey(key: string): string {
  return createHash('sha256').update(key.toLowerCase()).digest('hex').slice(0, 32);
}
