// rings.waitPolicy (src/config/wait-policy.ts): what each consumer runs, by setting and by the host's core count. The
// config's defaults are the schema's own; `auto` must never spin on a host without a spare core (this 2-core box).
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { DEFAULT_SPIN_US, resolveWaitPolicy } from '../../../src/config/wait-policy.js';

const rings = (r: Record<string, unknown> = {}) => configSchema.parse({ rings: r }).rings;

describe('rings.waitPolicy', () => {
  it('defaults to auto, and auto parks every consumer on a 2-core host (front, QUIC thread, 2 workers)', () => {
    expect(rings().waitPolicy).toBe('auto');
    expect(resolveWaitPolicy(rings(), 'quic-thread', 2)).toMatchObject({ policy: 'park', spinUs: 0 });
    expect(resolveWaitPolicy(rings(), 'egress-worker', 2)).toMatchObject({ policy: 'park', spinUs: 0 });
  });

  it('auto: the QUIC thread spins-then-parks from 3 cores; the egress workers once every consumer has a core and one is spare', () => {
    const r = rings(); // workers 2, quicThreads 1: front + 1 + 2 + 1 spare = 5
    expect(resolveWaitPolicy(r, 'quic-thread', 3)).toMatchObject({ policy: 'spin-then-park', spinUs: DEFAULT_SPIN_US });
    expect(resolveWaitPolicy(r, 'egress-worker', 4).policy).toBe('park');
    expect(resolveWaitPolicy(r, 'egress-worker', 5)).toMatchObject({ policy: 'spin-then-park', spinUs: DEFAULT_SPIN_US });
    expect(resolveWaitPolicy(rings({ workers: 8, quicThreads: 4 }), 'egress-worker', 12).policy).toBe('park');
    expect(resolveWaitPolicy(rings({ workers: 8, quicThreads: 4 }), 'egress-worker', 14).policy).toBe('spin-then-park');
    expect(resolveWaitPolicy(r, 'quic-thread', 3).reason).toBe('auto: 3 cores >= 3');
  });

  it('auto keeps an explicit pollBeforeParkUs as before (spin-then-park with that bound, whatever the cores)', () => {
    expect(resolveWaitPolicy(rings({ pollBeforeParkUs: 500 }), 'egress-worker', 2)).toMatchObject({ policy: 'spin-then-park', spinUs: 500 });
  });

  it('explicit settings win over the core count; spin-then-park bounds by pollBeforeParkUs or 2,000 us', () => {
    expect(resolveWaitPolicy(rings({ waitPolicy: 'park' }), 'quic-thread', 64).policy).toBe('park');
    expect(resolveWaitPolicy(rings({ waitPolicy: 'spin' }), 'egress-worker', 1)).toMatchObject({ policy: 'spin', spinUs: 0 });
    expect(resolveWaitPolicy(rings({ waitPolicy: 'spin-then-park' }), 'quic-thread', 1)).toMatchObject({ policy: 'spin-then-park', spinUs: 2_000 });
    expect(resolveWaitPolicy(rings({ waitPolicy: 'spin-then-park', pollBeforeParkUs: 250 }), 'quic-thread', 1).spinUs).toBe(250);
  });

  it('refuses an unknown policy at load', () => {
    expect(() => configSchema.parse({ rings: { waitPolicy: 'busy' } })).toThrow(/waitPolicy/);
  });
});
