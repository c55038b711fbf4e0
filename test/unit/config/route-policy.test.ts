// Routes the relay adds by key (src/config/route-policy.ts): the front publishes them in the record's mask (the egress
// consumers add none), and a reload rewrites the masks in place, so the intake holding them sees the new policy.
import { describe, expect, it } from 'vitest';
import { addedRouteMasks, updateAddedRouteMasks } from '../../../src/config/route-policy.js';
import { configSchema } from '../../../src/config/schema.js';
import { Intake, type SubmissionMeta } from '../../../src/admission/intake.js';
import { ROUTE_IDS } from '../../../src/shm/layout.js';
import { createRing, RingConsumer, RingProducer } from '../../../src/shm/ring.js';
import { legacyTransfer } from '../../helpers/transactions.js';

const RPC = 1 << ROUTE_IDS.rpc;
const STATIC = 1 << ROUTE_IDS.static;
const keys = [
  { key: '11111111-1111-4111-8111-111111111111', name: 'all' },
  { key: '22222222-2222-4222-8222-222222222222', name: 'rpc-only', allowedRoutes: ['rpc'] },
];
const meta = (keyId: number): SubmissionMeta => ({ keyId, routeMask: RPC, maxRetries: 0, receivedAtMs: Date.now(), traceId: `t${keyId}`, verifySignatures: false });

describe('added route masks', () => {
  it('static everyTransaction: keys that allow static, and only with peers and the option on', () => {
    const cfg = configSchema.parse({ keys, routes: { static: { peers: ['127.0.0.1:9'] } } });
    expect([...addedRouteMasks(cfg)]).toEqual([STATIC, 0]);
    expect([...addedRouteMasks(configSchema.parse({ keys, routes: { static: { peers: ['127.0.0.1:9'], everyTransaction: false } } }))]).toEqual([0, 0]);
    expect([...addedRouteMasks(configSchema.parse({ keys }))]).toEqual([0, 0]); // no peers
  });

  it('the intake publishes the added routes in the record; a reload rewrites them in place (new ids, changed policy)', () => {
    const cfg = configSchema.parse({ keys, routes: { static: { peers: ['127.0.0.1:9'] } } });
    const masks = addedRouteMasks(cfg);
    const ring = createRing(16, 1232);
    const intake = new Intake([new RingProducer(ring)], 1232, masks);
    const consumer = new RingConsumer(ring);
    const published = (keyId: number): number => {
      expect(typeof intake.submitBytes(legacyTransfer().bytes, meta(keyId))).toBe('string');
      const slot = consumer.take();
      const m = consumer.routeMask(slot);
      consumer.complete(slot);
      return m;
    };
    expect(published(0)).toBe(RPC | STATIC);
    expect(published(1)).toBe(RPC);
    // Reload: key 0 now rpc-only, key 1 gone, a new key with id 5 allows static.
    updateAddedRouteMasks(masks, cfg, [{ id: 0, allowedRoutes: ['rpc'] }, { id: 5, allowedRoutes: ['rpc', 'static'] }]);
    expect(masks.length).toBe(6);
    expect(published(0)).toBe(RPC);
    expect(published(5)).toBe(RPC | STATIC);
    expect(published(1)).toBe(RPC);
  });
});
