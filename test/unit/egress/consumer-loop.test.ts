import { describe, expect, it } from 'vitest';
import { buildRoutes, runEgressConsumer, type EgressTask } from '../../../src/egress/consumer/consumer-loop.js';
import { DirectRoute } from '../../../src/egress/quic/direct-route.js';
import { createSnapshotBuffer } from '../../../src/telemetry/snapshot-layout.js';
import type { EgressOutcome, EgressRoute, TxView } from '../../../src/egress/contract/route.js';
import { configSchema } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/log/logger.js';
import { createWorkerCounters, workerCounterRegion } from '../../../src/metrics/worker-counters.js';
import { CTL_BYTES, CTL_WAITING, EGRESS_OUTCOMES, ROUTE_IDS, WORKER_COUNTER, egressCounterIndex } from '../../../src/shm/layout.js';
import { createRing, requestStop, ringDepth, RingProducer } from '../../../src/shm/ring.js';
import { until } from '../../helpers/wait-for.js';

const log = createLogger('silent', 'test');
const config = configSchema.parse({ rings: { workers: 1, slotsPerRing: 16 }, log: { level: 'silent' } });
const RPC = 1 << ROUTE_IDS.rpc;
const DIRECT = 1 << ROUTE_IDS.direct;
const JITO = 1 << ROUTE_IDS.jito;

/** A route that answers synchronously. */
class SyncRoute implements EgressRoute {
  readonly seen: number[] = [];
  constructor(
    readonly id: number,
    readonly name: 'direct',
  ) {}
  send(tx: TxView): EgressOutcome {
    this.seen.push(tx.bytes.readUInt32LE(0));
    return 'sent';
  }
  async close(): Promise<void> {}
}

/** A route that answers later; the delay depends on the record so completions come out of order. */
class AsyncRoute implements EgressRoute {
  readonly id = ROUTE_IDS.rpc;
  readonly name = 'rpc' as const;
  readonly seen: number[] = [];
  blocked = false;
  send(tx: TxView): Promise<EgressOutcome> {
    const n = tx.bytes.readUInt32LE(0);
    if (n === 13) throw new Error('route bug');
    return new Promise((resolve) => {
      const finish = () => {
        this.seen.push(n);
        resolve(n % 5 === 0 ? 'failed' : 'sent');
      };
      if (this.blocked) return; // never answers (until the consumer stops)
      setTimeout(finish, (7 - (n % 7)) * 3);
    });
  }
  async close(): Promise<void> {}
}

function publish(p: RingProducer, n: number, mask: number): void {
  const off = p.reserve();
  if (off < 0) throw new Error('ring full');
  p.bytes.writeUInt32LE(n, off);
  p.publish(4, 0, mask, -1, performance.timeOrigin + performance.now(), `t${n}`);
}

function task(ring: SharedArrayBuffer, counters: SharedArrayBuffer, extra: Partial<EgressTask> = {}): EgressTask {
  return { ringIndex: 0, ring, counters, config, attempt: 0, ...extra };
}

describe('egress consumer loop', () => {
  it('dispatches by route mask, counts outcomes, releases out-of-order completions in order', async () => {
    const ring = createRing(16, 1232);
    const counters = createWorkerCounters(1);
    const p = new RingProducer(ring);
    const rpc = new AsyncRoute();
    const direct = new SyncRoute(ROUTE_IDS.direct, 'direct');
    const routes = [rpc, direct, null, null];
    const loop = runEgressConsumer(task(ring, counters), { routes, log });
    let published = 0;
    for (let n = 0; n < 40; n++) {
      await until(() => p.reserve() >= 0);
      publish(p, n, n % 4 === 0 ? RPC | DIRECT | JITO : RPC);
      published++;
    }
    await until(() => ringDepth(ring) === 0);
    requestStop(ring);
    await loop;
    const c = workerCounterRegion(counters, 0);
    const count = (route: number, o: EgressOutcome) => c[egressCounterIndex(route, EGRESS_OUTCOMES.indexOf(o))];
    expect(c[WORKER_COUNTER.consumed]).toBe(published);
    expect(c[WORKER_COUNTER.released]).toBe(published);
    // n % 5 === 0 fail on rpc (8 of them), n = 13 throws (failed), the rest are sent.
    expect(count(ROUTE_IDS.rpc, 'failed')).toBe(9);
    expect(count(ROUTE_IDS.rpc, 'sent')).toBe(31);
    expect(count(ROUTE_IDS.direct, 'sent')).toBe(10);
    expect(count(ROUTE_IDS.jito, 'dropped:route_unavailable')).toBe(10);
    // undelivered: rpc failed and no direct copy: n%5==0 && n%4!=0 (5,10,15,25,30,35) plus 13
    expect(c[WORKER_COUNTER.undelivered]).toBe(7);
    expect(direct.seen).toEqual([0, 4, 8, 12, 16, 20, 24, 28, 32, 36]);
    expect(rpc.seen).not.toEqual([...rpc.seen].sort((a, b) => a - b)); // completions really came out of order
  });

  it('rings.pollBeforeParkUs: polls (never parks) while records keep coming, then parks once they stop', async () => {
    const polling = configSchema.parse({ rings: { workers: 1, slotsPerRing: 16, pollBeforeParkUs: 300_000 }, log: { level: 'silent' } });
    const ring = createRing(16, 1232);
    const ctl = new Int32Array(ring, 0, CTL_BYTES >> 2);
    const counters = createWorkerCounters(1);
    const p = new RingProducer(ring);
    const direct = new SyncRoute(ROUTE_IDS.direct, 'direct');
    const loop = runEgressConsumer({ ringIndex: 0, ring, counters, config: polling, attempt: 0 }, { routes: [null, direct, null, null], log, retry: null });
    await until(() => ctl[CTL_WAITING] === 1); // nothing taken yet: parked
    let parkedWhileBusy = 0;
    for (let n = 0; n < 20; n++) {
      publish(p, n, DIRECT);
      await new Promise((r) => setTimeout(r, 10));
      if (ctl[CTL_WAITING] === 1) parkedWhileBusy++;
    }
    await until(() => direct.seen.length === 20);
    expect(parkedWhileBusy).toBe(0); // records 10 ms apart, poll window 300 ms: it never went to sleep
    await until(() => ctl[CTL_WAITING] === 1, 3_000); // idle past the window: parked again
    publish(p, 99, DIRECT); // and a parked poller still wakes on publish
    await until(() => direct.seen.includes(99));
    requestStop(ring);
    await loop;
    expect(workerCounterRegion(counters, 0)[WORKER_COUNTER.released]).toBe(21);
  });

  it('rings.waitPolicy spin: never parks, idle or not, and still stops; park: sleeps at once between records', async () => {
    for (const waitPolicy of ['spin', 'park'] as const) {
      const cfg = configSchema.parse({ rings: { workers: 1, slotsPerRing: 16, waitPolicy }, log: { level: 'silent' } });
      const ring = createRing(16, 1232);
      const ctl = new Int32Array(ring, 0, CTL_BYTES >> 2);
      const counters = createWorkerCounters(1);
      const p = new RingProducer(ring);
      const direct = new SyncRoute(ROUTE_IDS.direct, 'direct');
      const loop = runEgressConsumer({ ringIndex: 0, ring, counters, config: cfg, attempt: 0 }, { routes: [null, direct, null, null], log, retry: null });
      let parked = 0;
      for (let n = 0; n < 5; n++) {
        publish(p, n, DIRECT);
        await until(() => direct.seen.includes(n));
        await new Promise((r) => setTimeout(r, 60)); // idle between records
        if (ctl[CTL_WAITING] === 1) parked++;
      }
      if (waitPolicy === 'spin') expect(parked, 'a spinning consumer went to sleep').toBe(0);
      else expect(parked, 'a parking consumer stayed awake while idle').toBe(5);
      requestStop(ring);
      await loop;
      expect(workerCounterRegion(counters, 0)[WORKER_COUNTER.released]).toBe(5);
    }
  });

  it('a crashed consumer leaves unfinished records in the ring, and the next one sends them', async () => {
    const ring = createRing(16, 1232);
    const counters = createWorkerCounters(1);
    const p = new RingProducer(ring);
    const stuck = new AsyncRoute();
    stuck.blocked = true;
    for (let n = 0; n < 6; n++) publish(p, n + 100, RPC);
    const crashing = runEgressConsumer(task(ring, counters, { testHooks: { crashAfterRecords: 4, crashMode: 'throw' } }), { routes: [stuck, null, null, null], log });
    await expect(crashing).rejects.toThrow(/crash after 4 records/);
    expect(ringDepth(ring)).toBe(6);
    const rpc = new AsyncRoute();
    const again = runEgressConsumer(task(ring, counters, { attempt: 1, testHooks: { crashAfterRecords: 4 } }), { routes: [rpc, null, null, null], log });
    await until(() => ringDepth(ring) === 0);
    requestStop(ring);
    await again;
    expect([...rpc.seen].sort()).toEqual([100, 101, 102, 103, 104, 105]);
  });

  it('buildRoutes offers direct with the telemetry snapshot alone (no upstream.rpcUrl), and not without either', async () => {
    const cfg = configSchema.parse({ log: { level: 'silent' }, routes: { direct: { enabled: true } } });
    const withSnapshot = buildRoutes(cfg, log, { snapshot: createSnapshotBuffer(64 * 1024) });
    expect(withSnapshot[ROUTE_IDS.direct]).toBeInstanceOf(DirectRoute);
    await Promise.all(withSnapshot.map((r) => r?.close()));
    const without = buildRoutes(cfg, log, {});
    expect(without[ROUTE_IDS.direct]).toBeNull();
    await Promise.all(without.map((r) => r?.close()));
  });
});
