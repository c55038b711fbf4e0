// A QUIC-thread restart under load loses nothing the local admission answered `accepted` (docs/quic-ingress.md "Local
// admission"). The relay's own parts, compiled (dist/): the egress pool with its QUIC thread, the QUIC ingress hosted in
// it with relayHost.quic.localAdmission, the front's key table, intake and policy; a static peer (the localnet's TPU
// listener) as the only route; our QUIC client sending bidi requests, several at once. The QUIC thread is made to die
// (process.exit in the thread, a test hook of the pool) while it dispatches its 41st locally admitted transaction: the
// pool starts a new one, the ingress is started again in it, and the slab the front made is replayed. Every transaction
// answered accepted, before and after the restart, reaches the peer; so does the one the thread died sending (never
// answered: the replay found it in the slab); the client connects again and is served by the new thread.
import { Keypair } from '@solana/web3.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { IngressClient } from '../../../src/client/quic/ingress-client.js';
import { createIdentityCertificate } from '../../../src/quic/identity-certificate.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { until } from '../../helpers/wait-for.js';
import { distUrl, ensureDist } from '../egress/dist-build.js';

type PoolModule = typeof import('../../../src/egress/consumer/pool.js');
type SchemaModule = typeof import('../../../src/config/schema.js');
type LogModule = typeof import('../../../src/log/logger.js');
type PlanModule = typeof import('../../../src/config/route-plan.js');
type RingModule = typeof import('../../../src/shm/ring.js');
type JoinModule = typeof import('../../../src/shm/join.js');
type IdentityModule = typeof import('../../../src/egress/quic/identity.js');
type ListenerModule = typeof import('../../../src/localnet/tpu-listener.js');
type KeyTableModule = typeof import('../../../src/admission/key-table.js');
type IntakeModule = typeof import('../../../src/admission/intake.js');
type BudgetModule = typeof import('../../../src/shm/budget-layout.js');
type ServiceModule = typeof import('../../../src/ingress/quic-ingress-service.js');

const KEY = '3b8d1f6a-2c4e-4a7b-9d0e-5f1a2b3c4d5e';
const CRASH_AFTER = 40;

let m: {
  pool: PoolModule;
  schema: SchemaModule;
  log: LogModule;
  plan: PlanModule;
  ring: RingModule;
  join: JoinModule;
  identity: IdentityModule;
  listener: ListenerModule;
  keys: KeyTableModule;
  intake: IntakeModule;
  budget: BudgetModule;
  service: ServiceModule;
};

beforeAll(async () => {
  ensureDist();
  const load = async <T>(p: string): Promise<T> => (await import(distUrl(p))) as T;
  m = {
    pool: await load('src/egress/consumer/pool.js'),
    schema: await load('src/config/schema.js'),
    log: await load('src/log/logger.js'),
    plan: await load('src/config/route-plan.js'),
    ring: await load('src/shm/ring.js'),
    join: await load('src/shm/join.js'),
    identity: await load('src/egress/quic/identity.js'),
    listener: await load('src/localnet/tpu-listener.js'),
    keys: await load('src/admission/key-table.js'),
    intake: await load('src/admission/intake.js'),
    budget: await load('src/shm/budget-layout.js'),
    service: await load('src/ingress/quic-ingress-service.js'),
  };
});

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => undefined);
});

describe('QUIC local admission across a QUIC-thread restart', () => {
  it('every transaction answered accepted reaches the peer, and so does the one the thread died sending', async () => {
    const got = new Set<string>();
    const peer = new m.listener.TpuListener({ host: '127.0.0.1', port: 0, validatorIdentity: 'peer', onTransaction: (t) => got.add(Buffer.from(t).toString('hex')) });
    await peer.start();
    cleanup.push(() => peer.stop());
    const config = m.schema.configSchema.parse({
      rings: { workers: 1, slotsPerRing: 1024 },
      routes: { static: { peers: [`127.0.0.1:${peer.address().port}`], everyTransaction: false }, direct: { staleAfterMs: 30_000 } },
      retries: { defaultMaxRetries: 0 },
      telemetry: { enabled: false },
      receipts: { enabled: false },
      relayHost: { host: '127.0.0.1', port: 0, quicPort: -1, quic: { localAdmission: true } },
      keys: [{ key: KEY, name: 'static-bot', rateLimit: { perSecond: 100_000, burst: 100_000 }, defaultRoutes: ['static'] }],
      log: { level: 'silent' },
    });
    const log = m.log.createLogger('silent', 'test');
    const plan = m.plan.buildRoutePlan(config);
    // Ring 1 = the QUIC ring (one worker ring before it): its consumer is the QUIC thread.
    const pool = new m.pool.EgressPool({
      config,
      log,
      plan,
      identitySecret: m.identity.generateKeypairSecret(),
      restartBackoffMs: 20,
      testHooks: { 1: { crashAfterLocal: CRASH_AFTER, crashMode: 'exit' } },
    });
    pool.start();
    cleanup.push(() => pool.drain(500));
    expect(await pool.whenReady(10_000)).toEqual([]);
    const budgets = new m.budget.BudgetTable(m.budget.createBudgetBuffer(64, 64));
    const keys = new m.keys.KeyTable(config.keys, config.routes.defaultRoutes, Date.now(), budgets);
    const producers = pool.rings.map((r) => new m.ring.RingProducer(r));
    const quicRing = { producer: new m.ring.RingProducer(pool.quicRing!), mask: plan.quicRing, join: new m.join.JoinAllocator(pool.join!) };
    const intake = new m.intake.Intake(producers, config.transactions.maxTransactionBytes, new Uint32Array(1), null, quicRing, null);
    const service = await m.service.QuicIngressService.start({
      config,
      configFile: '/nonexistent/config.yaml',
      keys,
      intake,
      availableRouteMask: plan.available,
      addedRouteMasks: new Uint32Array(1),
      log,
      host: (t, tl) => pool.hostInQuicThread('quic-ingress', t, tl),
      receipts: null,
      local: { budgets, quicMask: plan.quicRing },
    });
    expect(service).not.toBeNull();
    cleanup.push(() => service!.stop());
    const port = service!.address.port;
    const cert = await createIdentityCertificate(Keypair.generate().secretKey, KEY);

    const accepted: string[] = [];
    const unanswered: string[] = [];
    /** Sends `n` requests, `parallel` at a time, on one connection; notes what was answered accepted. */
    const load = async (c: IngressClient, n: number, parallel: number): Promise<void> => {
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < n) {
          next++;
          const hex = Buffer.from(legacyTransfer(1000 + next).bytes).toString('hex');
          const r = await c.request({ transaction: Buffer.from(hex, 'hex') }).catch(() => null);
          const a = r !== null && r.kind === 'answer' ? (r.answer as { accepted?: boolean }) : null;
          if (a?.accepted === true) accepted.push(hex);
          else unanswered.push(hex);
        }
      };
      await Promise.all(Array.from({ length: parallel }, worker));
    };

    const first = await IngressClient.connect({ host: '127.0.0.1', port, certificate: cert, idleTimeoutMs: 1_000 });
    await load(first, 120, 8);
    first.close();
    // The thread died at its 41st local dispatch: what followed on that connection was not answered. The 41st itself
    // was: its acknowledgement leaves before the send it acknowledges (it is in the slab, replayable), so the first 41
    // admitted are all among the accepted, the one the thread died sending included.
    await until(() => pool.restartCount === 1, 10_000);
    expect(accepted.length).toBeGreaterThanOrEqual(CRASH_AFTER + 1);
    expect(accepted.length).toBeLessThan(120);
    // The ingress is started again in the new thread (IngressTaskRunner, 500 ms later): connect and load again.
    let second: IngressClient | null = null;
    await until(async () => {
      second = await IngressClient.connect({ host: '127.0.0.1', port, certificate: cert, connectTimeoutMs: 500 }).catch(() => null);
      return second !== null;
    }, 10_000);
    const before = accepted.length;
    await load(second!, 100, 8);
    second!.close();
    expect(accepted.length).toBe(before + 100);
    // Nothing accepted is lost, across the restart; that includes the transaction the thread died dispatching, which
    // only the new thread's replay of the slab can have sent.
    await until(() => accepted.every((h) => got.has(h)), 10_000).catch(() => undefined);
    expect(accepted.filter((h) => !got.has(h))).toEqual([]);
    expect(unanswered.length).toBeGreaterThan(0);
    expect(pool.restartCount).toBe(1);
  }, 60_000);
});
