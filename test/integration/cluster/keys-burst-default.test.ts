// A limit given without a burst gets the rate as its burst (issue 30, item 5): `keys add --rate-limit 10` used to
// get burst 100 silently (the config default). For real: one redis-server, one relay, the real CLI. Shown: the engine
// stores 10/10 and the command prints it; `keys set --rate-limit 5` gives 5/5 (not the previous burst); R/B keeps B;
// the relay admits about one burst of 10 from 40 submissions sent at once, not 40; a config key with perSecond only
// gets the same rule.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { decodeRecord } from '../../../src/cluster/key-plan.js';
import { loadConfig } from '../../../src/config/load.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { waitFor } from '../../helpers/wait-for.js';
import { startRelay, type RelayHandle } from '../../helpers/relay-process.js';
import { ensureDistFresh } from '../../unit/telemetry/dist-fresh.js';
import { RedisServer } from './redis-server.js';

const run = promisify(execFile);
const CLUSTER = { telemetry: { enabled: false }, keys: { pollMs: 500 } };
const tx = legacyTransfer().base64;
const hashOf = (k: string): string => createHash('sha256').update(k.toLowerCase()).digest('hex').slice(0, 32);

let redis: RedisServer;
let engine: Redis;
let relay: RelayHandle;
let cliConfig: string;

async function cli(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, ['dist/src/cli.js', 'keys', ...args, '--config', cliConfig]);
}

async function plan(key: string): Promise<{ rateLimit: { perSecond: number; burst: number }; readLimit: { perSecond: number; burst: number } }> {
  const rec = decodeRecord((await engine.hget('slotrelay:keys', hashOf(key)))!);
  if ('error' in rec) throw new Error(rec.error);
  return rec.plan;
}

async function submit(key: string): Promise<number> {
  const res = await fetch(`${relay.relayUrl}/v1/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ transaction: tx, maxRetries: 0 }),
  });
  await res.arrayBuffer();
  return res.status;
}

beforeAll(async () => {
  ensureDistFresh();
  redis = await RedisServer.start();
  engine = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  engine.on('error', () => undefined);
  // Budgets not shared (limits off): the key's own bucket answers, so a burst shows as itself, not as lease timing.
  relay = await startRelay({ upstream: { rpcUrl: 'http://127.0.0.1:9' }, routes: { discard: true }, telemetry: { enabled: false }, cluster: { url: redis.url, ...CLUSTER, limits: { enabled: false } } });
  cliConfig = join(mkdtempSync(join(tmpdir(), 'slotrelay-keys-burst-')), 'relay.yaml');
  writeFileSync(cliConfig, stringify({ cluster: { url: redis.url, ...CLUSTER } }));
}, 60_000);

afterAll(async () => {
  await relay?.stop();
  engine?.disconnect();
  await redis?.stop();
});

describe('a limit without a burst', () => {
  let key = '';

  it('`keys add --rate-limit 10` stores and prints 10/10', async () => {
    const out = await cli('add', '--name', 'ten-bot', '--rate-limit', '10', '--read-limit', '3');
    key = out.stdout.trim();
    expect(out.stderr).toMatch(/submit 10\/10 /);
    expect(out.stderr).toMatch(/read 3\/3 /);
    const p = await plan(key);
    expect(p.rateLimit).toEqual({ perSecond: 10, burst: 10 });
    expect(p.readLimit).toEqual({ perSecond: 3, burst: 3 });
  });

  it('the relay admits about one burst of 10 from 40 sent at once', async () => {
    await waitFor('key known', () => submit(key), (s) => s !== 401, 5_000, 25);
    await new Promise((r) => setTimeout(r, 1_500)); // the bucket full again
    const statuses = await Promise.all(Array.from({ length: 40 }, () => submit(key)));
    const ok = statuses.filter((s) => s === 200).length;
    console.log(`40 at once: ${ok} accepted, ${statuses.filter((s) => s === 429).length} rate limited`);
    // Burst 10 (+ a refill or two while the 40 arrive); burst 100 admitted all 40.
    expect(ok).toBeGreaterThanOrEqual(10);
    expect(ok).toBeLessThanOrEqual(14);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
  });

  it('`keys set --rate-limit 5` gives 5/5; R/B keeps the burst given', async () => {
    const out = await cli('set', 'ten-bot', '--rate-limit', '5');
    expect(out.stdout).toMatch(/submit 5\/5 /);
    expect((await plan(key)).rateLimit).toEqual({ perSecond: 5, burst: 5 });
    await cli('set', 'ten-bot', '--rate-limit', '5/40');
    expect((await plan(key)).rateLimit).toEqual({ perSecond: 5, burst: 40 });
    await cli('set', 'ten-bot', '--rate-limit', '0.5');
    expect((await plan(key)).rateLimit).toEqual({ perSecond: 0.5, burst: 1 });
  });

  it('a config key with perSecond only gets the same rule; no rateLimit at all keeps 50/100', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'slotrelay-keys-burst-cfg-')), 'c.yaml');
    writeFileSync(file, stringify({ keys: [{ key: '0b9e2c71-5d4a-4f38-8e16-a7c3b5d9f204', name: 'cfg-bot', rateLimit: { perSecond: 7 } }, { key: '5c8d1e93-7a2b-4c60-9f45-b1e3d7a9c086', name: 'plain-bot' }] }));
    const c = loadConfig({ file });
    expect(c.keys[0].rateLimit).toEqual({ perSecond: 7, burst: 7 });
    expect(c.keys[1].rateLimit).toEqual({ perSecond: 50, burst: 100 });
  });
});
