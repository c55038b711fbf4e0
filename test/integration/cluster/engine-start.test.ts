// A relay started against a healthy cluster engine (issue 30, item 4): it must not log `cluster_engine_down`
// ("serving on local limits") before `cluster_engine_up`. The budget agent used to ping before the first connect had
// answered; the ping failed at once (no offline queue) and the link reported the engine down 60-150 ms before up.
// Real relays (two, started at once: each start is one chance of the false alarm), real redis-server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../helpers/wait-for.js';
import { startRelay, type RelayHandle } from '../../helpers/relay-process.js';
import { ensureDistFresh } from '../../unit/telemetry/dist-fresh.js';
import { RedisServer } from './redis-server.js';

let redis: RedisServer;
const relays: RelayHandle[] = [];

const events = (r: RelayHandle): string[] =>
  r.logs.flatMap((l) => {
    const m = /"event":"(cluster_engine_[a-z]+)"/.exec(l);
    return m === null ? [] : [m[1]];
  });

beforeAll(async () => {
  ensureDistFresh();
  redis = await RedisServer.start();
  const config = { upstream: { rpcUrl: 'http://127.0.0.1:9' }, routes: { discard: true }, telemetry: { enabled: false }, cluster: { url: redis.url, telemetry: { enabled: false } } };
  relays.push(...(await Promise.all([startRelay(config), startRelay(config)])));
}, 60_000);

afterAll(async () => {
  await Promise.all(relays.map((r) => r.stop()));
  await redis?.stop();
});

describe('start with a healthy engine', () => {
  it('logs connecting then up, and no cluster_engine_down', async () => {
    for (const r of relays) await waitFor('cluster_engine_up', () => events(r), (e) => e.includes('cluster_engine_up'), 10_000);
    // A few lease intervals more: a late false alarm would show here.
    await new Promise((res) => setTimeout(res, 1_000));
    for (const r of relays) {
      expect(events(r)).toEqual(['cluster_engine_connecting', 'cluster_engine_up']);
      const health = (await (await fetch(`${r.rpcUrl}/health?detail`)).json()) as { cluster: { limits: { state: string } }; reasons: string[] };
      expect(health.cluster.limits.state).toBe('up');
      expect(health.reasons).not.toContain('cluster_engine_unreachable');
    }
  });
});
