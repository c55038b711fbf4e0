// `slotrelay bench landing` flags of issue #44 / #46: --source pubsub,grpc makes a set per source with the source in
// its name, --assign and --repeat parse and refuse, interleaved is the default and --sequential the old method.
import { describe, expect, it } from 'vitest';
import { parseLandingArgs } from '../../../src/landing-bench/options.js';
import { dealer } from '../../../src/landing-bench/phase.js';

describe('bench landing: interleaving flags', () => {
  it('--source pubsub,grpc: each set once per source, named after it', () => {
    const o = parseLandingArgs(['--sets', 'direct,direct+rpc,adaptive', '--source', 'pubsub,grpc'], {});
    expect(o.sets.map((s) => s.name)).toEqual([
      'direct@pubsub (window-aware)',
      'direct@grpc (window-aware)',
      'direct+rpc@pubsub',
      'direct+rpc@grpc',
      'adaptive@pubsub',
      'adaptive@grpc',
    ]);
    expect(o.sets.map((s) => s.source)).toEqual(['pubsub', 'grpc', 'pubsub', 'grpc', 'pubsub', 'grpc']);
    expect(o.sources).toEqual(['pubsub', 'grpc']);
    // One source: names as before, no source on the sets.
    const one = parseLandingArgs(['--sets', 'direct', '--source', 'grpc'], {});
    expect(one.sets.map((s) => [s.name, s.source])).toEqual([['direct (window-aware)', undefined]]);
    expect(() => parseLandingArgs(['--source', 'grpc,grpc'], {})).toThrow(/named twice/);
  });

  it('interleaved by default, round robin; --assign random:7, --repeat 3, --sequential', () => {
    const d = parseLandingArgs([], {});
    expect([d.sequential, d.assign, d.repeat]).toEqual([false, { kind: 'round-robin' }, 1]);
    const o = parseLandingArgs(['--assign', 'random:7', '--repeat', '3', '--sequential'], {});
    expect([o.sequential, o.assign, o.repeat]).toEqual([true, { kind: 'random', seed: 7 }, 3]);
    expect(parseLandingArgs(['--assign', 'random'], {}).assign).toEqual({ kind: 'random', seed: 1 });
    expect(() => parseLandingArgs(['--assign', 'shuffle'], {})).toThrow(/--assign/);
    expect(() => parseLandingArgs(['--repeat', '0'], {})).toThrow(/--repeat/);
  });
});

describe('bench landing: dealing transactions to sets', () => {
  it('round robin: set i mod K; random: the same seed deals the same way, every set gets about its share', () => {
    const rr = dealer(3, { kind: 'round-robin' });
    expect(Array.from({ length: 7 }, (_, i) => rr(i))).toEqual([0, 1, 2, 0, 1, 2, 0]);
    const deal = (seed: number): number[] => {
      const d = dealer(4, { kind: 'random', seed });
      return Array.from({ length: 4_000 }, (_, i) => d(i));
    };
    const a = deal(7);
    expect(deal(7)).toEqual(a);
    expect(deal(8)).not.toEqual(a);
    const counts = [0, 1, 2, 3].map((k) => a.filter((x) => x === k).length);
    for (const c of counts) expect(c).toBeGreaterThan(900);
    expect(counts.reduce((x, y) => x + y, 0)).toBe(4_000);
  });
});
