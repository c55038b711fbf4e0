// `slotrelay bench landing` flags of issue #44 / #46: --source pubsub,grpc makes a set per source with the source in
// its name, --assign and --repeat parse and refuse, interleaved is the default and --sequential the old method.
import { describe, expect, it } from 'vitest';
import { parseLandingArgs } from '../../../src/landing-bench/options.js';

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
