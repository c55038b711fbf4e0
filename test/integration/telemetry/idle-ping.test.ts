// Issue #47 item 9: an idle region's ping was stale but labelled fresh. One relay process (region fra, direct route
// on, probe off: only its pre-warmed egress connections measure) follows the localnet through region "fra"'s delay
// path (docs/localnet.md "Regions on one host"), 40 ms one way at first, so the connections' handshakes read >= 80 ms
// (as a handshake slowed by a busy start would). No transaction is ever sent. The path then drops to 3 ms one way:
// the row's ping must follow within seconds and keep being re-measured (measuredAtUnixMs moving on) while idle. Once
// the path stalls (2.5 s one way: no reply can come back within the test) measuredAtUnixMs must stop advancing,
// predate the stall, and the row must age. Before the fix the ping stayed at the handshake's 80+ ms while
// measuredAtUnixMs was re-stamped every second.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { ensureDistFresh } from '../../unit/telemetry/dist-fresh.js';

const SLOW_MS = 40;
const FAST_MS = 3;
const STALLED_MS = 2_500;
let localnet: Localnet;
let relay: RelayHandle;

type Ping = { region: string; latencyMs: number; estimated: boolean; measuredAtUnixMs: number | null };
type Result = { data: { identity: string; pingToLeaders: Ping[] }[]; snapshotGeneratedAtUnixMs: number };

/** The measured fra ping of each leader in the rows, and when the snapshot was built. */
async function measured(): Promise<{ pings: Map<string, Ping>; generatedAt: number }> {
  const res = await fetch(relay.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getLeaderSlots', params: [localnet.clock.current, 40] }),
  });
  const r = ((await res.json()) as { result?: Result }).result;
  const pings = new Map<string, Ping>();
  for (const row of r?.data ?? []) {
    const p = row.pingToLeaders.find((x) => x.region === 'fra');
    if (p !== undefined && !p.estimated) pings.set(row.identity, p);
  }
  return { pings, generatedAt: r?.snapshotGeneratedAtUnixMs ?? 0 };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const show = (m: Map<string, Ping>) => JSON.stringify([...m.values()].map((p) => [p.latencyMs, p.measuredAtUnixMs]));

beforeAll(async () => {
  ensureDistFresh();
  localnet = await startLocalnet({ validators: 2, slotMs: 100, regions: [{ name: 'fra', oneWayDelayMs: SLOW_MS }] });
  relay = await startRelay({
    upstream: { rpcUrl: localnet.regions[0].rpcUrl },
    log: { level: 'warn' },
    routes: { direct: { enabled: true, fanout: 'next-leaders', leaders: 2 } },
    telemetry: {
      region: 'fra',
      regions: [{ name: 'fra', latitude: 50.11, longitude: 8.68 }],
      wsUrl: localnet.wsUrl,
      probe: { enabled: false },
      maxSnapshotAgeMs: 2_000,
      horizonSlots: 200,
    },
  });
}, 60_000);

afterAll(async () => {
  await relay?.stop();
  await localnet?.stop();
});

describe('an idle connection\'s ping', () => {
  it('is re-measured without traffic, and measuredAtUnixMs advances only with a new measurement', async () => {
    // Both leaders measured by their pre-warmed connections' handshakes over the slow path.
    let m = await measured();
    for (const deadline = Date.now() + 20_000; m.pings.size < 2; m = await measured()) {
      if (Date.now() > deadline) throw new Error('leaders never measured');
      await sleep(200);
    }
    for (const p of m.pings.values()) expect(p.latencyMs).toBeGreaterThanOrEqual(2 * SLOW_MS);
    const connectsBefore = connects();

    // The path gets faster under the idle connections: the ping must follow (window minimum: one new sample is enough).
    localnet.setRegionDelay('fra', FAST_MS);
    const t0 = Date.now();
    for (const deadline = t0 + 8_000; ; ) {
      m = await measured();
      if (m.pings.size === 2 && [...m.pings.values()].every((p) => p.latencyMs < 4 * FAST_MS + 6)) break;
      if (Date.now() > deadline) throw new Error(`idle ping still ${show(m.pings)} 8 s after the path got faster (${2 * FAST_MS} ms round trip)`);
      await sleep(200);
    }
    console.log(`idle ping followed the faster path in ${Date.now() - t0} ms: ${show(m.pings)}`);
    for (const p of m.pings.values()) {
      expect(p.latencyMs).toBeGreaterThanOrEqual(2 * FAST_MS);
      expect(m.generatedAt - p.measuredAtUnixMs!).toBeLessThan(3_000);
    }
    // Still idle, the connections keep being measured: each row's measuredAtUnixMs moves on to a newer measurement
    // (a probe about every second), and the value stays on the path's.
    await sleep(2_500);
    const later = await measured();
    console.log(`2.5 s later: ${show(later.pings)}`);
    expect(later.pings.size).toBe(2);
    for (const [id, p] of later.pings) {
      expect(p.measuredAtUnixMs!).toBeGreaterThan(m.pings.get(id)!.measuredAtUnixMs!);
      expect(p.latencyMs).toBeGreaterThanOrEqual(2 * FAST_MS);
      expect(p.latencyMs).toBeLessThan(4 * FAST_MS + 6);
    }
    // Same connections, no transaction: the idle connections were measured, not reconnected.
    expect(connects()).toBe(connectsBefore);
    expect(localnet.listeners.reduce((s, l) => s + l.counters.transactions, 0)).toBe(0);

    // The path stalls: nothing sent from now on can come back within the test, so no measurement can be new. The
    // first read waits out a report interval and a publish (a measurement taken just before the stall may be
    // reported up to ~1 s later); replies already on their way at 3 ms arrive within a few ms of the stall.
    const stallAt = Date.now();
    localnet.setRegionDelay('fra', STALLED_MS);
    await sleep(1_500);
    const before = await measured();
    await sleep(2_000);
    const after = await measured();
    console.log(`stalled path at ${stallAt}: before ${show(before.pings)} after ${show(after.pings)} (snapshot ${after.generatedAt})`);
    expect(after.pings.size).toBe(2);
    for (const [id, p] of after.pings) {
      expect(p.measuredAtUnixMs).toBe(before.pings.get(id)?.measuredAtUnixMs);
      expect(p.measuredAtUnixMs!).toBeLessThanOrEqual(stallAt + 50);
      // The row ages honestly: still the last measurement (within measurementTtlMs), as old as it is.
      expect(after.generatedAt - p.measuredAtUnixMs!).toBeGreaterThan(3_000);
    }
  }, 60_000);
});

/** Connections the validators accepted so far. */
function connects(): number {
  return localnet.listeners.reduce((s, l) => s + l.counters.connections, 0);
}
