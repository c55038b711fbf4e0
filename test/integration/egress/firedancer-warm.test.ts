// The connection cache keeps a Firedancer leader's connection warm longer (docs/tpu-quic.md "Leaders of both
// kinds"): a real Firedancer-model listener (a Retry on every new connection) and an Agave one on loopback, the
// relay's ConnectionCache in front. The Agave connection is idle-closed after idleCloseMs, the Firedancer one only
// after FIREDANCER_IDLE_FACTOR times that; the cache's gauges count connections by the kind each handshake showed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionCache, FIREDANCER_IDLE_FACTOR } from '../../../src/egress/quic/connection-cache.js';
import { TpuListener } from '../../../src/localnet/tpu-listener.js';
import { createLogger } from '../../../src/log/logger.js';
import { createRandomIdentityCertificate, type IdentityCertificate } from '../../../src/quic/index.js';
import { LEADER_KINDS, QUIC_COUNTER, WORKER_COUNTER_SLOTS } from '../../../src/shm/layout.js';
import { until } from '../../helpers/wait-for.js';

const IDLE_CLOSE_MS = 600;
let identity: IdentityCertificate;
let fd: TpuListener;
let agave: TpuListener;

beforeAll(async () => {
  identity = await createRandomIdentityCertificate();
  fd = new TpuListener({ host: '127.0.0.1', port: 0, validatorIdentity: '11111111111111111111111111111112', kind: 'firedancer', onTransaction: () => {} });
  agave = new TpuListener({ host: '127.0.0.1', port: 0, validatorIdentity: '11111111111111111111111111111113', onTransaction: () => {} });
  await fd.start();
  await agave.start();
});

afterAll(async () => {
  await fd?.stop();
  await agave?.stop();
});

describe('ConnectionCache and leader kinds', () => {
  it(`learns each kind from the handshake and keeps the Firedancer connection ${FIREDANCER_IDLE_FACTOR}x longer before idle close`, async () => {
    const cache = new ConnectionCache({
      identity, maxConnections: 8, evictionGraceMs: 50, idleCloseMs: IDLE_CLOSE_MS, maxIdleTimeoutMs: 60_000, keepAliveMs: 45_000,
      connectTimeoutMs: 2_000, retryMinMs: 40, retryMaxMs: 160, maxQueuedPerConnection: 64, staleAfterMs: 2_000, log: createLogger('silent', 'test'),
    });
    try {
      const f = cache.get(`127.0.0.1:${fd.address().port}`)!;
      const a = cache.get(`127.0.0.1:${agave.address().port}`)!;
      await until(() => f.state === 'active' && a.state === 'active', 3_000);
      expect(f.leaderKind).toBe('firedancer');
      expect(a.leaderKind).toBe('agave');
      expect(fd.counters.retriesSent).toBe(1);
      const region = new Float64Array(WORKER_COUNTER_SLOTS);
      cache.writeGauges(region);
      const byKind = Object.fromEntries(LEADER_KINDS.map((k, i) => [k, region[QUIC_COUNTER.kindBase + i]]));
      expect(byKind).toEqual({ agave: 1, firedancer: 1, unknown: 0 });
      // Idle close (maintenance every second): the Agave one first, while the Firedancer one stays active.
      await until(() => a.state === 'closing' || a.state === 'closed', 4_000);
      expect(f.state).toBe('active');
      await until(() => f.state === 'closing' || f.state === 'closed', 6_000);
      expect(Date.now() - f.lastUsedMs).toBeGreaterThanOrEqual(IDLE_CLOSE_MS * FIREDANCER_IDLE_FACTOR);
    } finally {
      await cache.close();
    }
  }, 20_000);
});
