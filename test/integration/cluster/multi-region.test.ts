// Several regions as one service (docs/multi-region.md), for real: three relay processes (regions fra, ams, nyc) on
// loopback, one localnet, one real redis-server (scripts/cluster/start-redis.sh) as the engine. Each relay sees the
// localnet's validators through its own delay path (region-path.ts: 5 / 30 / 80 ms one way), so the relays' real
// handshake probes measure different pings. Shown: getLeaderSlots on every relay has measured pings and scores for
// all three regions matching the injected delays; one key's submission budget (100/s) holds across the three relays
// under saturation; a key revoked through one relay's config is refused by all within the poll interval; the engine
// stopped -> every relay keeps serving on local limits and local telemetry and says so (/health, /metrics, one log
// line), restarted -> sharing is back; a relay stopped -> its region falls back to estimates within the bound.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { waitFor } from '../../helpers/wait-for.js';
import { defaultKeys, OTHER_KEY, startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { ensureDistFresh } from '../../unit/telemetry/dist-fresh.js';
import { RedisServer } from './redis-server.js';
import { RegionPath } from './region-path.js';

const run = promisify(execFile);
const SHARED_KEY = '3d1f7a52-8c4b-4e9a-b6d0-2f5e8a7c1b93';
const PLAN = { perSecond: 100, burst: 100 };
const REGIONS = [
  { name: 'fra', latitude: 50.11, longitude: 8.68, oneWayMs: 5 },
  { name: 'ams', latitude: 52.37, longitude: 4.9, oneWayMs: 30 },
  { name: 'nyc', latitude: 40.71, longitude: -74.01, oneWayMs: 80 },
];
const CLUSTER = { telemetry: { publishIntervalMs: 250, staleAfterMs: 1_500 }, keys: { pollMs: 250 } };
/** How long after a region's relay stops writing its figures fall back to estimates elsewhere (docs/multi-region.md). */
const STALE_BOUND_MS = CLUSTER.telemetry.staleAfterMs + CLUSTER.telemetry.publishIntervalMs + 100;

let localnet: Localnet;
let redis: RedisServer;
const paths: RegionPath[] = [];
const relays: RelayHandle[] = [];
let keys: Record<string, unknown>[];

type Ping = { region: string; latencyMs: number; estimated: boolean };
type Score = { active_region: string; market_latency_ms: number; tx_latency_ms: number; score_ms: number };
type Row = { slot: number; identity: string; pingToLeaders: Ping[]; routeScores: Score[] };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function rows(relay: RelayHandle, limit = 20): Promise<Row[] | null> {
  const res = await fetch(relay.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getLeaderSlots', params: [localnet.clock.current, limit] }),
  });
  const j = (await res.json()) as { result?: { data: Row[] } };
  return j.result?.data ?? null;
}

/** Poll until `ok(rows)` holds on the relay; returns the rows and the time it took. */
/** The relay's rows once `ok` holds for them (and how long that took). */
async function rowsOnce(relay: RelayHandle, ok: (r: Row[]) => boolean, timeoutMs: number, what: string): Promise<{ rows: Row[]; ms: number }> {
  const t0 = Date.now();
  const found = await waitFor(what, () => rows(relay), (r) => r !== null && r.length > 0 && ok(r), timeoutMs, 50);
  return { rows: found!, ms: Date.now() - t0 };
}

const measuredEverywhere = (r: Row[]) => r.every((row) => row.pingToLeaders.length === 3 && row.pingToLeaders.every((p) => !p.estimated));
const regionEstimated = (region: string) => (r: Row[]) => r.every((row) => row.pingToLeaders.find((p) => p.region === region)!.estimated);

async function submit(relay: RelayHandle, key: string, tx: string): Promise<number> {
  const res = await fetch(`${relay.relayUrl}/v1/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ transaction: tx, maxRetries: 0 }),
  });
  await res.arrayBuffer();
  return res.status;
}

async function health(relay: RelayHandle): Promise<{ status: number; body: any }> {
  const res = await fetch(`${relay.rpcUrl}/health?detail`);
  return { status: res.status, body: await res.json() };
}

async function metric(relay: RelayHandle, line: string): Promise<string | undefined> {
  const text = await (await fetch(`${relay.rpcUrl}/metrics`)).text();
  return text.split('\n').find((l) => l.startsWith(line));
}

function startOne(i: number): Promise<RelayHandle> {
  const r = REGIONS[i];
  return startRelay({
    upstream: { rpcUrl: localnet.rpcUrl },
    // Accepted transactions are released, not sent: the test is about admission, and the box has 2 cores.
    routes: { discard: true },
    keys,
    telemetry: {
      region: r.name,
      regions: REGIONS.map(({ name, latitude, longitude }) => ({ name, latitude, longitude, marketLatencyMs: 1 })),
      // Cluster data through this region's delay path; slots straight from the localnet.
      rpcUrl: paths[i].rpcUrl,
      wsUrl: localnet.wsUrl,
      probe: { enabled: true, intervalMs: 1_000, timeoutMs: 2_000, perPeerIntervalMs: 7_500 },
      maxSnapshotAgeMs: 2_000,
      horizonSlots: 200,
    },
    cluster: { url: redis.url, ...CLUSTER },
  });
}

beforeAll(async () => {
  ensureDistFresh();
  redis = await RedisServer.start();
  localnet = await startLocalnet({ validators: 3, slotMs: 100 });
  for (const r of REGIONS) paths.push(await RegionPath.start(localnet.rpcUrl, localnet.validators, r.oneWayMs));
  keys = [...defaultKeys(), { key: SHARED_KEY, name: 'shared-bot', rateLimit: PLAN }];
  relays.push(...(await Promise.all(REGIONS.map((_, i) => startOne(i)))));
}, 90_000);

afterAll(async () => {
  await Promise.all(relays.map((r) => r.stop()));
  for (const p of paths) await p.stop();
  await localnet?.stop();
  await redis?.stop();
});

describe('several regions as one service', () => {
  it('getLeaderSlots on every relay shows measured pings and scores for all three regions, matching the injected delays', async () => {
    const minPing = REGIONS.map(() => Infinity);
    for (const relay of relays) {
      const { rows: data } = await rowsOnce(relay, measuredEverywhere, 25_000, 'all regions measured');
      for (const row of data) {
        for (const r of REGIONS) {
          const p = row.pingToLeaders.find((x) => x.region === r.name)!;
          // A handshake is one round trip through the path: 2 x oneWay, plus processing on a busy 2-core box (the
          // first probes run while three relays start; 86 ms extra was seen in CI). Not a timing target: the bound only
          // says the figure is this path's measurement, not another's (estimates would be exactly 200 here).
          expect(p.latencyMs).toBeGreaterThanOrEqual(2 * r.oneWayMs);
          expect(p.latencyMs).toBeLessThan(2 * r.oneWayMs + 150);
          const s = row.routeScores.find((x) => x.active_region === r.name)!;
          // No txPaths on these relays: every region's tx latency is its measured ping / 2 (the region's own figure).
          expect(Math.abs(s.tx_latency_ms - p.latencyMs / 2)).toBeLessThanOrEqual(0.01);
          expect(s.score_ms).toBeCloseTo(s.market_latency_ms + s.tx_latency_ms, 2);
        }
        REGIONS.forEach((r, i) => {
          minPing[i] = Math.min(minPing[i]!, row.pingToLeaders.find((x) => x.region === r.name)!.latencyMs);
        });
      }
    }
    // The paths' order shows through their best measurements: noise on a busy box only ever adds time (one probe
    // of fra once took 75 ms while ams's took 65), so a single row may swap two neighbours, the minima cannot.
    const [fra, ams, nyc] = minPing;
    expect(fra).toBeLessThan(ams!);
    expect(ams).toBeLessThan(nyc!);
  });

  it('one key with 100 submissions/s sent to all three relays as fast as possible gets 100/s +- 10% in total', async () => {
    const txs = Array.from({ length: 16 }, () => legacyTransfer().base64);
    const WARMUP_MS = 1_000;
    const WINDOW_MS = 10_000;
    const t0 = Date.now();
    // The window opens WARMUP_MS after every relay has answered once (its connections are open and its budget has
    // settled at least once), so a relay slow to take its first connection is seen as that, not as a relay that
    // refused nothing. Stop 40's CI failed here with one relay's 429 count at 0 and no other status: the figures below
    // go into the failure message so that another such run says which relay and how its answers were timed.
    const firstAt = relays.map(() => -1);
    let from = Infinity;
    let to = Infinity;
    const ok = relays.map(() => 0);
    const limited = relays.map(() => 0);
    const slowestMs = relays.map(() => 0);
    const late = relays.map(() => 0);
    const other: number[] = [];
    let n = 0;
    // 3 connections per relay, each sending its next request as soon as the last answered.
    await Promise.all(
      relays.flatMap((relay, i) =>
        [0, 1, 2].map(async () => {
          while (Date.now() < to) {
            if (from === Infinity && Date.now() - t0 > 15_000) throw new Error(`not every relay answered within 15 s: first answers at ${firstAt.join('/')} ms`);
            const sentAt = Date.now();
            const status = await submit(relay, SHARED_KEY, txs[n++ % txs.length]);
            const at = Date.now();
            slowestMs[i] = Math.max(slowestMs[i], at - sentAt);
            if (firstAt[i] < 0) {
              firstAt[i] = at - t0;
              if (firstAt.every((ms) => ms >= 0)) {
                from = at + WARMUP_MS;
                to = from + WINDOW_MS;
              }
            }
            if (at < from) continue;
            if (at >= to) {
              late[i]++;
              continue;
            }
            if (status === 200) ok[i]++;
            else if (status === 429) limited[i]++;
            else other.push(status);
          }
        }),
      ),
    );
    const total = ok.reduce((a, b) => a + b, 0);
    const figures =
      `accepted per relay ${ok.join('/')} = ${total} in ${WINDOW_MS / 1000} s (${total / (WINDOW_MS / 1000)}/s), 429 per relay ${limited.join('/')}, ` +
      `first answer at ${firstAt.join('/')} ms, slowest answer ${slowestMs.join('/')} ms, answered after the window ${late.join('/')}`;
    console.log(`shared budget: ${figures}`);
    expect(other).toEqual([]);
    // Saturated: every relay was refused many times, and every relay got a share.
    for (let i = 0; i < relays.length; i++) {
      expect(limited[i], `${REGIONS[i].name} refused: ${figures}\n${relays[i].logs.slice(-20).join('\n')}`).toBeGreaterThan(100);
      expect(ok[i], `${REGIONS[i].name} accepted: ${figures}`).toBeGreaterThan(50);
    }
    const expected = (PLAN.perSecond * WINDOW_MS) / 1000;
    expect(total, figures).toBeGreaterThanOrEqual(expected * 0.9);
    expect(total, figures).toBeLessThanOrEqual(expected * 1.1);
  }, 40_000);

  it('a key revoked through one relay\'s config is refused by every relay within the poll interval, and restored', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'slotrelay-cluster-cli-'));
    const file = join(dir, 'config.yaml');
    writeFileSync(file, stringify({ keys, cluster: { url: redis.url, ...CLUSTER } }));
    const tx = legacyTransfer().base64;
    // The shared bucket refills after the load test: how long depends on the overdraft the relays charged at their
    // last settles, so wait for it rather than sleep a fixed time.
    for (const relay of relays) {
      expect(await waitFor('the shared key admitted again', () => submit(relay, SHARED_KEY, tx), (s) => s === 200, 10_000)).toBe(200);
    }

    const cli = (action: string) => run(process.execPath, ['dist/src/cli.js', 'keys', action, '--config', file, '--name', 'shared-bot']);
    const out = await cli('revoke');
    expect(out.stdout).toMatch(/revoked "shared-bot"/);
    const t0 = Date.now();
    const refusedAt = await Promise.all(
      relays.map(async (relay) => {
        while ((await submit(relay, SHARED_KEY, tx)) !== 401) {
          if (Date.now() - t0 > 5_000) throw new Error('revocation not applied within 5 s');
          await sleep(20);
        }
        return Date.now() - t0;
      }),
    );
    console.log(`revocation applied after ${refusedAt.join('/')} ms (pollMs ${CLUSTER.keys.pollMs})`);
    // Documented delay: pollMs + one engine round trip (plus the CLI's own exit, already behind us).
    for (const ms of refusedAt) expect(ms).toBeLessThanOrEqual(CLUSTER.keys.pollMs + 250);
    // Other keys are untouched; the key value never appears in a log line.
    expect(await submit(relays[0], TEST_KEY, tx)).toBe(200);
    for (const relay of relays) expect(relay.logs.some((l) => l.includes(SHARED_KEY))).toBe(false);
    expect(relays[1].logs.some((l) => l.includes('"event":"key_revoked"') && l.includes('shared-bot'))).toBe(true);

    await cli('restore');
    await Promise.all(
      relays.map(async (relay) => {
        const t1 = Date.now();
        while ((await submit(relay, SHARED_KEY, tx)) === 401) {
          if (Date.now() - t1 > 5_000) throw new Error('restore not applied within 5 s');
          await sleep(20);
        }
      }),
    );
  });

  it('engine silent (paused: connections open, no answers): requests never wait on it; relays go local after commandTimeoutMs and back when it answers', async () => {
    const tx = legacyTransfer().base64;
    redis.pause();
    const t0 = Date.now();
    try {
      // Requests keep being answered at once while every engine command hangs (the front never awaits the engine).
      let slowest = 0;
      while (Date.now() - t0 < 2_500) {
        const s = Date.now();
        const status = await submit(relays[0], TEST_KEY, tx);
        slowest = Math.max(slowest, Date.now() - s);
        expect(status).toBe(200);
        await sleep(25);
      }
      expect(slowest).toBeLessThan(500);
      const h = await health(relays[0]);
      expect(h.body.cluster.limits).toMatchObject({ state: 'down', shared: false, error: 'timeout' });
    } finally {
      redis.resume();
    }
    await Promise.all(
      relays.map(async (relay) => {
        const t1 = Date.now();
        for (;;) {
          const h = await health(relay);
          if (h.body.cluster.limits.shared === true && h.body.cluster.telemetry.state === 'up') return;
          if (Date.now() - t1 > 5_000) throw new Error(`not shared again after the pause: ${JSON.stringify(h.body.cluster)}`);
          await sleep(50);
        }
      }),
    );
  });

  it('engine stopped: every relay keeps serving on local limits and local telemetry and says so; restarted: sharing is back', async () => {
    const downLines = () => relays.map((r) => r.logs.filter((l) => l.includes('"event":"cluster_engine_down"') && l.includes('"part":"limits"')).length);
    const before = downLines();
    await redis.stop();
    const t0 = Date.now();

    // /health says so (still 200: the relay delivers), metrics too.
    await Promise.all(
      relays.map(async (relay) => {
        for (;;) {
          const h = await health(relay);
          if (h.body.cluster?.limits?.state === 'down' && h.body.cluster?.telemetry?.state === 'down') {
            expect(h.status).toBe(200);
            expect(h.body.status).toBe('degraded');
            expect(h.body.reasons).toContain('cluster_engine_unreachable');
            expect(h.body.cluster.limits.shared).toBe(false);
            return;
          }
          if (Date.now() - t0 > 5_000) throw new Error(`health never showed the engine down: ${JSON.stringify(h.body.cluster)}`);
          await sleep(50);
        }
      }),
    );
    for (const relay of relays) {
      expect(await metric(relay, 'slotrelay_cluster_engine_up{part="limits"}')).toBe('slotrelay_cluster_engine_up{part="limits"} 0');
      expect(await metric(relay, 'slotrelay_cluster_budget_shared')).toBe('slotrelay_cluster_budget_shared 0');
    }

    // Local limits: each relay admits the tight key's own burst (3) and refuses the 4th, whatever the others did.
    const tx = legacyTransfer().base64;
    const statuses = await Promise.all(
      relays.map(async (relay) => {
        const s: number[] = [];
        for (let i = 0; i < 4; i++) s.push(await submit(relay, OTHER_KEY, tx));
        return s;
      }),
    );
    for (const s of statuses) expect(s).toEqual([200, 200, 200, 429]);

    // Local telemetry: own region measured, the others back to estimates once their figures are stale here.
    for (const [i, relay] of relays.entries()) {
      const { rows: data } = await rowsOnce(
        relay,
        (r) => REGIONS.every((x, j) => (j === i) === r.every((row) => !row.pingToLeaders.find((p) => p.region === x.name)!.estimated)),
        STALE_BOUND_MS + 3_000,
        'other regions estimated while the engine is down',
      );
      expect(data[0].pingToLeaders.find((p) => p.region === REGIONS[i].name)!.estimated).toBe(false);
    }
    // One log line per state change: one `down` per relay for this outage (not one per failed command).
    await sleep(1_000);
    expect(downLines().map((n, i) => n - before[i])).toEqual([1, 1, 1]);

    // Back: sharing restored (budgets shared, all regions measured again), health ok.
    await redis.start();
    for (const relay of relays) await rowsOnce(relay, measuredEverywhere, 10_000, 'sharing restored');
    await Promise.all(
      relays.map(async (relay) => {
        const t1 = Date.now();
        for (;;) {
          const h = await health(relay);
          if (h.body.cluster.limits.state === 'up' && h.body.cluster.limits.shared === true && !h.body.reasons.includes('cluster_engine_unreachable')) return;
          if (Date.now() - t1 > 10_000) throw new Error(`health never showed the engine back: ${JSON.stringify(h.body)}`);
          await sleep(50);
        }
      }),
    );
    for (const relay of relays) expect(relay.logs.some((l) => l.includes('"event":"cluster_engine_up"') && l.includes('"part":"limits"'))).toBe(true);
  }, 40_000);

  it('a relay stopped: its region falls back to estimates on the others within the staleness bound', async () => {
    const nyc = relays[2];
    const t0 = Date.now();
    await nyc.stop();
    const stoppedMs = Date.now() - t0;
    const times = await Promise.all([relays[0], relays[1]].map((r) => rowsOnce(r, regionEstimated('nyc'), STALE_BOUND_MS + 2_000, 'nyc estimated')));
    console.log(`nyc estimated on fra/ams after ${times.map((t) => t.ms + stoppedMs).join('/')} ms (bound ${STALE_BOUND_MS} ms)`);
    for (const t of times) {
      expect(t.ms + stoppedMs).toBeLessThanOrEqual(STALE_BOUND_MS + 500);
      // fra and ams still share with each other.
      expect(t.rows.every((row) => row.pingToLeaders.filter((p) => p.region !== 'nyc').every((p) => !p.estimated))).toBe(true);
    }
  });
});
