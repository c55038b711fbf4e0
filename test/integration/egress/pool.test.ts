// Real Piscina pool (compiled workers from dist/) against a real loopback HTTP listener acting as the upstream.
import { createSocket } from 'node:dgram';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeRpcUpstream, type FakeRpcUpstream } from '../../helpers/fake-upstream.js';
import { distUrl, ensureDist } from './dist-build.js';
import { until } from '../../helpers/wait-for.js';

type PoolModule = typeof import('../../../src/egress/consumer/pool.js');
type RingModule = typeof import('../../../src/shm/ring.js');
type SchemaModule = typeof import('../../../src/config/schema.js');
type LogModule = typeof import('../../../src/log/logger.js');
type PlanModule = typeof import('../../../src/config/route-plan.js');
type JoinModule = typeof import('../../../src/shm/join.js');
type IdentityModule = typeof import('../../../src/egress/quic/identity.js');
type LayoutModule = typeof import('../../../src/shm/layout.js');
type EgressPool = import('../../../src/egress/consumer/pool.js').EgressPool;
type RingProducer = import('../../../src/shm/ring.js').RingProducer;

let poolMod: PoolModule;
let ringMod: RingModule;
let schema: SchemaModule;
let logMod: LogModule;
let planMod: PlanModule;
let joinMod: JoinModule;
let identityMod: IdentityModule;
let layout: LayoutModule;

beforeAll(async () => {
  ensureDist();
  poolMod = (await import(distUrl('src/egress/consumer/pool.js'))) as PoolModule;
  ringMod = (await import(distUrl('src/shm/ring.js'))) as RingModule;
  schema = (await import(distUrl('src/config/schema.js'))) as SchemaModule;
  logMod = (await import(distUrl('src/log/logger.js'))) as LogModule;
  planMod = (await import(distUrl('src/config/route-plan.js'))) as PlanModule;
  joinMod = (await import(distUrl('src/shm/join.js'))) as JoinModule;
  identityMod = (await import(distUrl('src/egress/quic/identity.js'))) as IdentityModule;
  layout = (await import(distUrl('src/shm/layout.js'))) as LayoutModule;
});

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function setup(opts: { workers?: number; slots?: number; delayMs?: number; retryIntervalMs?: number; hooks?: Record<number, { crashAfterRecords?: number; crashMode?: 'throw' | 'exit' }> } = {}) {
  const up: FakeRpcUpstream = await startFakeRpcUpstream({ delayMs: opts.delayMs ?? 0 });
  cleanup.push(() => up.close());
  const config = schema.configSchema.parse({
    rings: { workers: opts.workers ?? 2, slotsPerRing: opts.slots ?? 64 },
    routes: { rpc: { endpoints: [up.url], connections: 8, timeoutMs: 10_000 } },
    ...(opts.retryIntervalMs === undefined ? {} : { retries: { intervalMs: opts.retryIntervalMs } }),
    log: { level: 'silent' },
  });
  const pool: EgressPool = new poolMod.EgressPool({ config, log: logMod.createLogger('silent', 'test'), testHooks: opts.hooks, restartBackoffMs: 20 });
  let drained = false;
  cleanup.push(async () => {
    if (!drained) await pool.drain(100);
  });
  pool.start();
  const producers: RingProducer[] = pool.rings.map((r) => new ringMod.RingProducer(r));
  return {
    up,
    pool,
    producers,
    drain: (ms: number) => {
      drained = true;
      return pool.drain(ms);
    },
  };
}

/** Distinct, recognisable transaction n (length varies 64..1232). */
function tx(n: number): Buffer {
  const len = 64 + ((n * 977) % (1232 - 64));
  const b = Buffer.alloc(len);
  for (let i = 0; i < len; i++) b[i] = (n * 31 + i * 7) & 0xff;
  b[0] = 1;
  b.writeUInt32LE(n, 1);
  return b;
}

/** Publish records 0..count-1 round-robin, waiting (not dropping) when a ring is full. */
async function publishAll(producers: RingProducer[], count: number, routeMask = 1): Promise<Buffer[]> {
  const sent: Buffer[] = [];
  const deadline = Date.now() + 20_000;
  for (let n = 0; n < count; n++) {
    const p = producers[n % producers.length];
    let off: number;
    while ((off = p.reserve()) < 0) {
      if (Date.now() > deadline) throw new Error(`rings stayed full at record ${n}`);
      await new Promise((r) => setTimeout(r, 1));
    }
    const t = tx(n);
    t.copy(p.bytes, off);
    p.publish(t.length, 0, routeMask, n % 3 === 0 ? 2 : -1, performance.timeOrigin + performance.now(), `trace-${n}`);
    sent.push(t);
  }
  return sent;
}

function receivedSet(up: FakeRpcUpstream): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of up.received) m.set(r.tx.toString('hex'), (m.get(r.tx.toString('hex')) ?? 0) + 1);
  return m;
}

describe('egress pool (real Piscina workers, loopback upstream)', () => {
  it('delivers the exact transaction bytes to the upstream and exposes metrics', async () => {
    // No rebroadcast before the drain: at the default interval (2 s) a loaded box (two test files side by side, other
    // work beside them) took longer than that to publish and drain the 600, and the rebroadcasts came on top (620-1,024
    // received instead of 600 in 3 of 5 runs).
    const { up, pool, producers, drain } = await setup({ retryIntervalMs: 120_000 });
    const sent = await publishAll(producers, 600);
    const result = await drain(10_000);
    expect(result).toEqual({ drained: true, undelivered: 0, undeliveredByFamily: { workers: 0, quic: 0 } });
    expect(up.received).toHaveLength(600);
    const got = receivedSet(up);
    for (const t of sent) expect(got.get(t.toString('hex'))).toBe(1);
    const withRetries = up.received.find((r) => r.tx.readUInt32LE(1) === 3);
    expect(withRetries?.options).toEqual({ encoding: 'base64', skipPreflight: true, maxRetries: 2 });
    const { TextBuilder } = (await import(distUrl('src/metrics/prometheus.js'))) as typeof import('../../../src/metrics/prometheus.js');
    const tb = new TextBuilder();
    pool.renderMetrics(tb);
    const text = tb.text();
    expect(text).toContain('slotrelay_egress_outcomes_total{route="rpc",outcome="sent"} 600');
    expect(text).toContain('slotrelay_egress_records_total{stage="released"} 600');
    expect(text).toContain('slotrelay_ring_depth{ring="1"} 0');
    expect(text).toContain('slotrelay_egress_worker_restarts_total 0');
    expect(text).toMatch(/slotrelay_egress_latency_seconds_count\{route="rpc"\} 600/);
  });

  for (const crashMode of ['throw', 'exit'] as const) {
    it(`a consumer that dies mid-stream (${crashMode}) is replaced and every record still reaches the upstream`, async () => {
      const { up, pool, producers, drain } = await setup({ delayMs: 15, hooks: { 0: { crashAfterRecords: 25, crashMode } } });
      const sent = await publishAll(producers, 400);
      await until(() => pool.depths().every((d) => d === 0), 20_000);
      expect(pool.restartCount).toBe(1);
      const got = receivedSet(up);
      const missing = sent.filter((t) => !got.has(t.toString('hex')));
      expect(missing).toHaveLength(0);
      const counters = pool.summedCounters();
      expect(counters[1]).toBe(400); // WORKER_COUNTER.released: every record released exactly once
      expect((await drain(5_000)).drained).toBe(true);
    });
  }

  it('drain waits for slow upstream answers, then stops the workers', async () => {
    const { up, producers, drain } = await setup({ delayMs: 300 });
    await publishAll(producers, 40);
    const t0 = Date.now();
    const result = await drain(10_000);
    expect(result).toEqual({ drained: true, undelivered: 0, undeliveredByFamily: { workers: 0, quic: 0 } });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(up.received).toHaveLength(40);
  });

  it('drain gives up at its timeout and reports what was left', async () => {
    const { pool, producers, drain } = await setup({ delayMs: 5_000 });
    await publishAll(producers, 30);
    await until(() => pool.summedCounters()[0] === 30, 5_000); // all taken, none answered
    const t0 = Date.now();
    const result = await drain(200);
    expect(result.drained).toBe(false);
    expect(result.undelivered).toBe(30);
    expect(Date.now() - t0).toBeLessThan(4_000);
    // the stopped consumers aborted their sends: counted as dropped:shutdown
    await new Promise((r) => setTimeout(r, 50));
    expect(pool.summedCounters()[8 + 4]).toBe(30); // egressCounterIndex(rpc, 'dropped:shutdown')
  });

  it('drain counts a transaction left in both a worker ring and the QUIC thread ring once (and per family)', async () => {
    // rpc stalls (answers after 20 s) and the static peer is a UDP socket that never answers (no handshake): records
    // asking for both families stay in both rings, each with its join entry, as the front publishes them.
    const up: FakeRpcUpstream = await startFakeRpcUpstream({ delayMs: 20_000 });
    cleanup.push(() => up.close());
    const hole = createSocket('udp4');
    await new Promise<void>((r) => hole.bind(0, '127.0.0.1', r));
    cleanup.push(() => new Promise<void>((r) => hole.close(() => r())));
    const config = schema.configSchema.parse({
      rings: { workers: 1, slotsPerRing: 64 },
      routes: {
        rpc: { endpoints: [up.url], connections: 8, timeoutMs: 30_000 },
        static: { peers: [`127.0.0.1:${hole.address().port}`] },
        direct: { staleAfterMs: 30_000 },
      },
      retries: { defaultMaxRetries: 0 },
      telemetry: { enabled: false },
      relayHost: { quicPort: 0 },
      log: { level: 'silent' },
    });
    const plan = planMod.buildRoutePlan(config);
    const pool: EgressPool = new poolMod.EgressPool({ config, log: logMod.createLogger('silent', 'test'), plan, identitySecret: identityMod.generateKeypairSecret() });
    expect(pool.quicRing).not.toBeNull();
    expect(pool.join).not.toBeNull();
    let drained = false;
    cleanup.push(async () => {
      if (!drained) await pool.drain(100);
    });
    pool.start();
    const worker = new ringMod.RingProducer(pool.rings[0]);
    const quic = new ringMod.RingProducer(pool.quicRing!);
    const joins = new joinMod.JoinAllocator(pool.join!);
    const N = 20;
    const mask = (1 << layout.ROUTE_IDS.rpc) | (1 << layout.ROUTE_IDS.static);
    for (let n = 0; n < N; n++) {
      const t = tx(n);
      const j = joins.allocate();
      for (const p of [worker, quic]) {
        const off = p.reserve();
        expect(off).toBeGreaterThanOrEqual(0);
        t.copy(p.bytes, off);
        p.publish(t.length, 0, mask, 0, performance.timeOrigin + performance.now(), `both-${n}`, 0, j);
      }
    }
    await until(() => pool.summedCounters()[layout.WORKER_COUNTER.consumed] === N, 10_000); // taken (once per record)
    expect(pool.depths()).toEqual([N, N]);
    drained = true;
    const result = await pool.drain(200);
    expect(result).toEqual({ drained: false, undelivered: N, undeliveredByFamily: { workers: N, quic: N } });
    // The consumers' own record accounting agrees: N records not delivered, each counted once (by the join's last side),
    // and each route answered every record once.
    await new Promise((r) => setTimeout(r, 50));
    const summary = pool.deliverySummary(N);
    expect(summary.accepted).toBe(N);
    expect(summary.records).toMatchObject({ consumed: N, undelivered: N });
    expect(summary.outcomes).toEqual({ rpc: { 'dropped:shutdown': N }, static: { 'dropped:shutdown': N } });
  }, 30_000);
});

describe('QUIC threads (rings.quicThreads 2)', () => {
  type ListenerModule = typeof import('../../../src/localnet/tpu-listener.js');
  type OwnerModule = typeof import('../../../src/egress/quic/shard-owner.js');
  interface Peer {
    readonly l: InstanceType<ListenerModule['TpuListener']>;
    readonly addr: string;
    readonly got: Set<string>;
  }

  /** One static peer owned by each QUIC thread, a started pool, and a producer on its QUIC ring. */
  async function twoThreads(opts: { linkHooks?: Record<number, { crashAfterSends?: number }>; ringHooks?: Record<number, { crashAfterRecords?: number; crashMode?: 'throw' | 'exit' }> }) {
    const { TpuListener } = (await import(distUrl('src/localnet/tpu-listener.js'))) as ListenerModule;
    const { quicThreadOf } = (await import(distUrl('src/egress/quic/shard-owner.js'))) as OwnerModule;
    // Ephemeral ports: keep the first listener each thread owns.
    const byOwner: (Peer | undefined)[] = [undefined, undefined];
    for (let i = 0; i < 32 && (byOwner[0] === undefined || byOwner[1] === undefined); i++) {
      const got = new Set<string>();
      const l = new TpuListener({ host: '127.0.0.1', port: 0, validatorIdentity: `peer${i}`, onTransaction: (t) => got.add(Buffer.from(t).toString('hex')) });
      await l.start();
      cleanup.push(() => l.stop());
      const addr = `127.0.0.1:${l.address().port}`;
      const o = quicThreadOf(addr, 2);
      if (byOwner[o] === undefined) byOwner[o] = { l, addr, got };
    }
    const [p0, p1] = byOwner;
    if (p0 === undefined || p1 === undefined) throw new Error('no listener port for one of the threads');
    const config = schema.configSchema.parse({
      rings: { workers: 1, slotsPerRing: 64, quicThreads: 2 },
      routes: { static: { peers: [p0.addr, p1.addr], everyTransaction: false }, direct: { staleAfterMs: 30_000 } },
      retries: { defaultMaxRetries: 0 },
      telemetry: { enabled: false },
      relayHost: { quicPort: 0 },
      log: { level: 'silent' },
    });
    const plan = planMod.buildRoutePlan(config);
    expect(plan.quicThreads).toBe(2);
    const pool: EgressPool = new poolMod.EgressPool({
      config,
      log: logMod.createLogger('silent', 'test'),
      plan,
      identitySecret: identityMod.generateKeypairSecret(),
      restartBackoffMs: 20,
      quicLinkTestHooks: opts.linkHooks,
      testHooks: opts.ringHooks,
    });
    const state = { drained: false };
    cleanup.push(async () => {
      if (!state.drained) await pool.drain(100);
    });
    pool.start();
    expect(await pool.whenReady(10_000)).toEqual([]);
    const quic = new ringMod.RingProducer(pool.quicRing!);
    const mask = 1 << layout.ROUTE_IDS.static;
    const publish = (n: number): string => {
      const t = tx(n);
      const off = quic.reserve();
      expect(off).toBeGreaterThanOrEqual(0);
      t.copy(quic.bytes, off);
      quic.publish(t.length, 0, mask, 0, performance.timeOrigin + performance.now(), `q-${n}`, 0, 0);
      return t.toString('hex');
    };
    return { pool, p0, p1, publish, state };
  }

  it('a QUIC thread k >= 1 that dies is restarted on its link; its peer gets the sends after it, thread 0\'s peer every one', async () => {
    const { pool, p0, p1, publish, state } = await twoThreads({ linkHooks: { 1: { crashAfterSends: 5 } } });
    // Both peers were connected before ready, each by the thread that owns it (the listeners run on this event loop:
    // they count a connection once they read the relay's last handshake flight, sent before ready).
    await until(() => p0.l.counters.activeConnections === 1 && p1.l.counters.activeConnections === 1, 500);
    const first = Array.from({ length: 20 }, (_, n) => publish(n));
    await until(() => first.every((h) => p0.got.has(h)), 10_000);
    // Thread 1 died at its 6th send and was restarted on its link.
    await until(() => pool.restartCount === 1, 10_000);
    // The five before it left thread 1 before it died: they reach its peer (waited for: the restart can be counted
    // before this process's listener has read the last of their datagrams; a Node 24 rehearsal once found one missing
    // when this was checked at once).
    await until(() => first.slice(0, 5).every((h) => p1.got.has(h)), 5_000);
    const second = Array.from({ length: 20 }, (_, n) => publish(100 + n));
    await until(() => second.every((h) => p0.got.has(h) && p1.got.has(h)), 10_000);
    // The static route answered every record once: sent (thread 0's own peer wrote each at once).
    await until(() => pool.summedCounters()[layout.egressCounterIndex(layout.ROUTE_IDS.static, layout.EGRESS_OUTCOMES.indexOf('sent'))] === 40, 5_000);
    expect(pool.depths()).toEqual([0, 0, 0]);
    expect(pool.ringLabels()).toEqual(['0', 'quic', 'quic1']);
    state.drained = true;
    expect(await pool.drain(2_000)).toMatchObject({ drained: true, undelivered: 0 });
  }, 60_000);

  it('thread 0 (the QUIC ring\'s consumer) that throws is restarted on the same ring and links; both peers get what follows', async () => {
    // Ring index 1 = the QUIC ring (one egress worker ring before it).
    const { pool, p0, p1, publish, state } = await twoThreads({ ringHooks: { 1: { crashAfterRecords: 5, crashMode: 'throw' } } });
    const first = Array.from({ length: 20 }, (_, n) => publish(n));
    await until(() => pool.restartCount === 1, 10_000);
    // At least once: every record reaches thread 0's own peer (a replacement resends what was taken and not released).
    await until(() => first.every((h) => p0.got.has(h)), 10_000);
    const second = Array.from({ length: 20 }, (_, n) => publish(100 + n));
    await until(() => second.every((h) => p0.got.has(h) && p1.got.has(h)), 10_000);
    expect(pool.restartCount).toBe(1);
    state.drained = true;
    expect(await pool.drain(2_000)).toMatchObject({ drained: true, undelivered: 0 });
  }, 60_000);
});
