// The landing bench's `adaptive` route set (docs/landing.md, docs/adaptive-routing.md): direct to a relay the bench
// starts with routing.adaptive on; refused with --relay (that relay's own config decides).
import { describe, expect, it } from 'vitest';
import { parseRouteSet } from '../../../src/landing-bench/options.js';
import { BENCH_ADAPTIVE } from '../../../src/landing-bench/relays.js';
import { routingSchema } from '../../../src/config/routing-schema.js';

describe('the adaptive route set', () => {
  it('is direct to an adaptive relay, window-aware unless named', () => {
    expect(parseRouteSet('adaptive', false)).toEqual({ name: 'adaptive', routes: ['direct'], fanout: 'window-aware', adaptive: true });
    expect(parseRouteSet('adaptive:next-leaders', false)).toEqual({ name: 'adaptive (next-leaders)', routes: ['direct'], fanout: 'next-leaders', adaptive: true });
    expect(parseRouteSet('direct', false).adaptive).toBeUndefined();
  });

  it('is refused with --relay and with an unknown fanout', () => {
    expect(() => parseRouteSet('adaptive', true)).toThrow(/adaptive/);
    expect(() => parseRouteSet('adaptive:sideways', false)).toThrow(/unknown fanout/);
  });

  it('runs a policy the relay config accepts', () => {
    expect(routingSchema.safeParse({ adaptive: BENCH_ADAPTIVE }).success).toBe(true);
  });
});
