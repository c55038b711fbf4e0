// The client library's getLeaderSlots / bestRoute against real relays following a real localnet (in this process,
// as their upstream), through the package entry. Each spec 7.3 recovery path is triggered for real:
//   range not covered  ask far ahead (and before the snapshot) -> the client restarts at the snapshot's slot
//   snapshot missing   a relay with telemetry disabled -> retries, then "use the default path"
//   stale              the localnet's clock stopped -> retries, then "use the default path"
//   unsupported schema a relay publishing schema version 2 -> IncompatibleRelayError and one onAlert
// A custom fetch counts the calls the client makes, so a retry that did not happen cannot pass.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  IncompatibleRelayError,
  LeaderSlotsUnavailableError,
  RelayClient,
  RpcError,
  SlotrelayError,
  type FetchLike,
  type RelayAlert,
  type RelayClientOptions,
} from 'slotrelay/client';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { ensureClientBuilt } from '../../helpers/client-dist.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { waitFor } from '../../helpers/wait-for.js';

let localnet: Localnet;
let relay: RelayHandle; // telemetry on, two regions, the direct route offered
let noTelemetry: RelayHandle; // snapshot always missing
let schema2: RelayHandle; // publishes schema version 2
let noGetSlot: RelayHandle; // getSlot not passed through: the client takes the snapshot's own slot

const telemetry = {
  maxSnapshotAgeMs: 1_500,
  probe: { enabled: false },
  horizonSlots: 300,
  region: 'fra',
  regions: [
    { name: 'fra', latitude: 50.1, longitude: 8.7, marketLatencyMs: 5 },
    { name: 'ams', latitude: 52.4, longitude: 4.9, marketLatencyMs: 1 },
  ],
};

interface Counted {
  readonly fetch: FetchLike;
  readonly methods: string[];
  readonly at: number[];
}

/** globalThis.fetch, recording each JSON-RPC method and when it was sent. */
function counting(): Counted {
  const methods: string[] = [];
  const at: number[] = [];
  return {
    methods,
    at,
    fetch: (url, init) => {
      methods.push((JSON.parse(init.body) as { method: string }).method);
      at.push(Date.now());
      return fetch(url, init as RequestInit);
    },
  };
}

function clientOf(r: RelayHandle, extra: Partial<RelayClientOptions> = {}): RelayClient {
  return new RelayClient({ url: r.relayUrl, rpcUrl: r.rpcUrl, apiKey: TEST_KEY, ...extra });
}

async function caught(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected an error');
    },
    (e: unknown) => e,
  );
}

beforeAll(async () => {
  ensureClientBuilt();
  localnet = await startLocalnet({ validators: 3, slotMs: 100 });
  const upstream = { rpcUrl: localnet.rpcUrl };
  const quiet = { log: { level: 'warn' } };
  relay = await startRelay({ upstream, telemetry, routes: { direct: { enabled: true } }, ...quiet });
  noTelemetry = await startRelay({ upstream, telemetry: { enabled: false }, ...quiet });
  schema2 = await startRelay({ upstream, telemetry: { ...telemetry, publishSchemaVersion: 2 }, ...quiet });
  noGetSlot = await startRelay({ upstream, telemetry, jsonRpc: { passthroughMethods: ['getLatestBlockhash'] }, ...quiet });
  // The telemetry threads publish their first snapshot within a slot or two of following the localnet.
  for (const r of [relay, noGetSlot]) {
    await waitFor('a first leader-slot snapshot', () => clientOf(r, { leaderSlots: { retries: 0 } }).getLeaderSlots(localnet.clock.current, 1).catch(() => null));
  }
}, 90_000);

afterAll(async () => {
  for (const r of [relay, noTelemetry, schema2, noGetSlot]) await r?.stop();
  await localnet?.stop();
});

describe('getLeaderSlots', () => {
  it('rows from the current slot (getSlot through the JSON-RPC host) when no startSlot is given', async () => {
    const c = counting();
    const res = await clientOf(relay, { fetch: c.fetch }).getLeaderSlots();
    expect(c.methods).toEqual(['getSlot', 'getLeaderSlots']);
    expect(res).toMatchObject({ success: true, total: 20 });
    expect(Math.abs(res.data[0].slot - localnet.clock.current)).toBeLessThanOrEqual(3);
    for (const row of res.data) expect(row.identity).toBe(localnet.schedule.leaderAt(row.slot));
  });

  it('exact rows for a covered range', async () => {
    const start = localnet.clock.current + 2;
    const res = await clientOf(relay).getLeaderSlots(start, 5);
    expect(res.total).toBe(5);
    expect(res.data.map((r) => r.slot)).toEqual([0, 1, 2, 3, 4].map((i) => start + i));
    expect(res.data[0].txPaths.map((p) => p.provider)).toEqual(['direct']);
  });

  it('range not covered (far ahead, or before the snapshot): one refresh to the snapshot slot, a range it covers', async () => {
    for (const start of [localnet.clock.current + 100_000, 0]) {
      const c = counting();
      const res = await clientOf(relay, { fetch: c.fetch }).getLeaderSlots(start, 100);
      expect(c.methods).toEqual(['getLeaderSlots', 'getLeaderSlots']);
      // The restart slot is the first answer's contextSlot; the snapshot may have moved on a slot by the second.
      expect(res.snapshotSlot - res.data[0].slot).toBeGreaterThanOrEqual(0);
      expect(res.snapshotSlot - res.data[0].slot).toBeLessThanOrEqual(3);
      expect(Math.abs(res.snapshotSlot - localnet.clock.current)).toBeLessThanOrEqual(3);
      expect(res.total).toBe(100);
    }
  });

  it("without getSlot on the JSON-RPC host, the snapshot's own slot (from the range answer) is the current slot", async () => {
    const c = counting();
    const res = await clientOf(noGetSlot, { fetch: c.fetch }).getLeaderSlots(undefined, 10);
    expect(c.methods).toEqual(['getSlot', 'getLeaderSlots', 'getLeaderSlots']);
    expect(res.total).toBe(10);
    expect(res.snapshotSlot - res.data[0].slot).toBeGreaterThanOrEqual(0);
    expect(res.snapshotSlot - res.data[0].slot).toBeLessThanOrEqual(3);
    expect(Math.abs(res.snapshotSlot - localnet.clock.current)).toBeLessThanOrEqual(3);
  });

  it('snapshot missing (telemetry disabled): retries after the delay, then LeaderSlotsUnavailableError', async () => {
    const c = counting();
    const e = await caught(clientOf(noTelemetry, { fetch: c.fetch, leaderSlots: { retries: 2, retryDelayMs: 150 } }).getLeaderSlots(localnet.clock.current, 5));
    expect(e).toBeInstanceOf(LeaderSlotsUnavailableError);
    expect(e).toBeInstanceOf(RpcError);
    expect(e).toMatchObject({ reason: 'leader_snapshot_missing', code: -32014, status: 200, useDefaultPath: true, retryable: true });
    expect((e as Error).message).toMatch(/not available yet/);
    expect(c.methods).toEqual(['getLeaderSlots', 'getLeaderSlots', 'getLeaderSlots']);
    expect(c.at[1] - c.at[0]).toBeGreaterThanOrEqual(145);
    expect(c.at[2] - c.at[1]).toBeGreaterThanOrEqual(145);
    const once = counting();
    await caught(clientOf(noTelemetry, { fetch: once.fetch, leaderSlots: { retries: 0 } }).getLeaderSlots(1));
    expect(once.methods).toEqual(['getLeaderSlots']);
  });

  it('unsupported schema: IncompatibleRelayError with the versions, onAlert once, no retry', async () => {
    const alerts: RelayAlert[] = [];
    const c = counting();
    const e = await caught(clientOf(schema2, { fetch: c.fetch, onAlert: (a) => alerts.push(a) }).getLeaderSlots(localnet.clock.current));
    expect(e).toBeInstanceOf(IncompatibleRelayError);
    expect(e).toMatchObject({ reason: 'leader_snapshot_unsupported_schema', code: -32015, retryable: false, data: { schemaVersion: 2, supportedSchemaVersions: [1] } });
    expect(alerts).toEqual([{ reason: 'leader_snapshot_unsupported_schema', message: (e as Error).message, data: { schemaVersion: 2, supportedSchemaVersions: [1] } }]);
    expect(c.methods).toEqual(['getLeaderSlots']);
  });

  it('errors that are not a recovery family come as the relay answered them: bad key, invalid params', async () => {
    const bad = await caught(new RelayClient({ url: relay.relayUrl, rpcUrl: relay.rpcUrl, apiKey: 'deadbeef-dead-4bee-8eef-deadbeefdead' }).getLeaderSlots(1, 1));
    expect(bad).toBeInstanceOf(RpcError);
    expect(bad).toMatchObject({ status: 401, reason: 'unauthorized', code: -32600 });
    expect(bad).not.toBeInstanceOf(LeaderSlotsUnavailableError);
    const noRpc = await caught(new RelayClient({ url: relay.relayUrl, apiKey: TEST_KEY }).getLeaderSlots(1));
    expect(noRpc).toBeInstanceOf(SlotrelayError);
    expect(noRpc).toMatchObject({ reason: 'rpc_url_missing' });
  });
});

describe('bestRoute', () => {
  it("the selected txPath's route and this client's region's score; without a region the lowest score", async () => {
    const slot = localnet.clock.current + 3;
    const row = (await clientOf(relay).getLeaderSlots(slot, 1)).data[0];
    const byRegion = new Map(row.routeScores.map((s) => [s.active_region, s]));
    expect([...byRegion.keys()].sort()).toEqual(['ams', 'fra']);
    const lowest = row.routeScores.reduce((a, b) => (b.score_ms < a.score_ms ? b : a));
    const other = row.routeScores.find((s) => s !== lowest)!;
    // A client in the region that does not score lowest still gets its own region's score.
    const mine = await clientOf(relay, { region: other.active_region }).bestRoute(slot);
    expect(mine).toMatchObject({ useDefaultPath: false, slot, identity: localnet.schedule.leaderAt(slot), routes: ['direct'], path: { provider: 'direct', selected: true } });
    if (mine.useDefaultPath) throw new Error('expected a route');
    expect(mine.score).toEqual(byRegion.get(other.active_region));
    const any = await clientOf(relay).bestRoute(slot);
    if (any.useDefaultPath) throw new Error('expected a route');
    expect(any.score).toEqual(lowest);
    expect(any.score?.selected).toBe(true);
    // An unknown region falls back to the lowest score of the row.
    const unknown = await clientOf(relay, { region: 'nowhere' }).bestRoute(slot);
    if (unknown.useDefaultPath) throw new Error('expected a route');
    expect(unknown.score).toEqual(lowest);
  });

  it('the default path when the relay cannot say: slot not covered, snapshot missing', async () => {
    expect(await clientOf(relay).bestRoute(localnet.clock.current + 100_000)).toEqual({ useDefaultPath: true, routes: 'default', reason: 'leader_range_not_covered' });
    expect(await clientOf(noTelemetry, { leaderSlots: { retries: 0 } }).bestRoute(5)).toEqual({ useDefaultPath: true, routes: 'default', reason: 'leader_snapshot_missing' });
  });

  it('schema incompatibility is not hidden behind the default path', async () => {
    await expect(clientOf(schema2).bestRoute()).rejects.toBeInstanceOf(IncompatibleRelayError);
  });
});

describe('stale (last: stops the localnet clock)', () => {
  it('the snapshot ages past maxSnapshotAgeMs: retries, then LeaderSlotsUnavailableError; bestRoute says default', async () => {
    localnet.clock.stop();
    const slot = localnet.clock.current;
    await new Promise((r) => setTimeout(r, 1_700));
    const c = counting();
    const e = await caught(clientOf(relay, { fetch: c.fetch, leaderSlots: { retries: 1, retryDelayMs: 100 } }).getLeaderSlots(slot, 5));
    expect(e).toBeInstanceOf(LeaderSlotsUnavailableError);
    expect(e).toMatchObject({ reason: 'leader_snapshot_stale', code: -32004, data: { maxSnapshotAgeMs: 1_500 } });
    expect(c.methods).toEqual(['getLeaderSlots', 'getLeaderSlots']);
    expect(await clientOf(relay, { leaderSlots: { retries: 0 } }).bestRoute(slot)).toEqual({ useDefaultPath: true, routes: 'default', reason: 'leader_snapshot_stale' });
  });
});
