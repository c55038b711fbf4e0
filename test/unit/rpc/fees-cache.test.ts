// The getRecentPrioritizationFees cache (src/rpc/fees/fee-cache.ts, cache-epoch.ts, fee-result.ts): once per epoch,
// single-flight, stale-while-revalidate bounded by one epoch, failures never cached, bounded LRU; the upstream answer
// checked and sorted; the epoch from the telemetry snapshot or, without one, from 400 ms windows.
import { describe, expect, it } from 'vitest';
import { isPreviousEpoch, snapshotEpochs } from '../../../src/rpc/fees/cache-epoch.js';
import { FALLBACK_SLOT_MS } from '../../../src/telemetry/slot-duration.js';
import { FeeCache } from '../../../src/rpc/fees/fee-cache.js';
import { feeResultText } from '../../../src/rpc/fees/fee-result.js';
import { prioritizationFeesMethod } from '../../../src/rpc/fees/get-recent-prioritization-fees.js';
import { UpstreamError } from '../../../src/rpc/upstream-client.js';
import type { SnapshotReader, SnapshotView } from '../../../src/telemetry/snapshot.js';

/** A fetcher the test settles by hand, recording what it was asked. */
function manualFetcher() {
  const calls: { addresses: readonly string[]; resolve: (t: string) => void; reject: (e: unknown) => void }[] = [];
  const fetcher = (addresses: readonly string[]) =>
    new Promise<string>((resolve, reject) => {
      calls.push({ addresses, resolve, reject });
    });
  return { calls, fetcher };
}

function clock(start: number) {
  const c = { epoch: start, current: () => c.epoch };
  return c;
}

describe('FeeCache', () => {
  it('fetches once per epoch however many ask, and answers hits synchronously with the same string', async () => {
    const f = manualFetcher();
    const ep = clock(10);
    const cache = new FeeCache(f.fetcher, ep, 4);
    const first = [cache.networkWide(), cache.networkWide(), cache.networkWide()];
    expect(f.calls).toHaveLength(1); // single-flight
    expect(f.calls[0].addresses).toEqual([]);
    f.calls[0].resolve('[1]');
    expect(await Promise.all(first)).toEqual(['[1]', '[1]', '[1]']);
    const hit = cache.networkWide();
    expect(hit).toBe('[1]'); // a string, not a Promise
    expect(f.calls).toHaveLength(1);
  });

  it('serves the previous epoch while one refresh runs, never an older one', async () => {
    const f = manualFetcher();
    const ep = clock(10);
    const cache = new FeeCache(f.fetcher, ep, 4);
    const p = cache.networkWide();
    f.calls[0].resolve('[10]');
    await p;
    ep.epoch = 11;
    expect(cache.networkWide()).toBe('[10]'); // stale by one slot, answered at once
    expect(cache.networkWide()).toBe('[10]');
    expect(f.calls).toHaveLength(2); // one refresh for slot 11
    f.calls[1].resolve('[11]');
    await new Promise((r) => setImmediate(r));
    expect(cache.networkWide()).toBe('[11]');
    ep.epoch = 13; // two slots later: the slot-11 answer is too old to serve
    const waiting = cache.networkWide();
    expect(waiting).toBeInstanceOf(Promise);
    f.calls[2].resolve('[13]');
    expect(await waiting).toBe('[13]');
    expect(f.calls).toHaveLength(3);
  });

  it('a failure reaches its waiters, is not cached, and the next caller fetches again', async () => {
    const f = manualFetcher();
    const ep = clock(5);
    const cache = new FeeCache(f.fetcher, ep, 4);
    const a = cache.networkWide();
    const b = cache.networkWide();
    const err = new Error('down');
    f.calls[0].reject(err);
    await expect(a).rejects.toBe(err);
    await expect(b).rejects.toBe(err);
    const c = cache.networkWide();
    expect(f.calls).toHaveLength(2);
    f.calls[1].resolve('[5]');
    expect(await c).toBe('[5]');
  });

  it('a failed refresh behind a stale answer is no unhandled rejection, and the stale answer stays bounded', async () => {
    const f = manualFetcher();
    const ep = clock(1);
    const cache = new FeeCache(f.fetcher, ep, 4);
    const p = cache.networkWide();
    f.calls[0].resolve('[1]');
    await p;
    ep.epoch = 2;
    expect(cache.networkWide()).toBe('[1]');
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    f.calls[1].reject(new Error('down'));
    await new Promise((r) => setTimeout(r, 10));
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled).toEqual([]);
    expect(cache.networkWide()).toBe('[1]'); // still slot 2: the slot-1 answer may be served, with a new refresh
    expect(f.calls).toHaveLength(3);
    f.calls[2].reject(new Error('down'));
    ep.epoch = 3;
    await expect(cache.networkWide()).rejects.toThrow('down');
  });

  it('address sets: one entry per canonical key, bounded LRU, fetched with the set', async () => {
    const f = manualFetcher();
    const ep = clock(1);
    const cache = new FeeCache(f.fetcher, ep, 2);
    const a = cache.scoped('a', ['a']);
    const a2 = cache.scoped('a', ['a']);
    expect(f.calls.map((c) => c.addresses)).toEqual([['a']]);
    f.calls[0].resolve('[a]');
    expect(await a).toBe('[a]');
    expect(await a2).toBe('[a]');
    expect(cache.scoped('a', ['a'])).toBe('[a]');
    const b = cache.scoped('b', ['b']);
    f.calls[1].resolve('[b]');
    await b;
    cache.scoped('a', ['a']); // 'a' most recent: 'b' goes first
    const c = cache.scoped('c', ['c']);
    f.calls[2].resolve('[c]');
    await c;
    expect(cache.stats().scopedEntries).toBe(2);
    expect(cache.scoped('a', ['a'])).toBe('[a]'); // kept
    const b2 = cache.scoped('b', ['b']); // evicted: fetched again
    expect(b2).toBeInstanceOf(Promise);
    expect(f.calls).toHaveLength(4);
    f.calls[3].resolve('[b2]');
    expect(await b2).toBe('[b2]');
    expect(cache.scoped('b', ['b'])).toBe('[b2]');
    expect(cache.stats().fetches).toBe(4);
  });

  it('an entry evicted while its fetch runs still answers its waiters', async () => {
    const f = manualFetcher();
    const cache = new FeeCache(f.fetcher, clock(1), 1);
    const a = cache.scoped('a', ['a']);
    const b = cache.scoped('b', ['b']); // evicts 'a' while its fetch is in flight
    f.calls[0].resolve('[a]');
    f.calls[1].resolve('[b]');
    expect(await a).toBe('[a]');
    expect(await b).toBe('[b]');
  });
});

describe('cache epochs', () => {
  function reader(view: Partial<SnapshotView> | null): SnapshotReader {
    return { current: () => view as SnapshotView | null } as unknown as SnapshotReader;
  }

  it('the snapshot slot while the snapshot is fresh, else windows of one measured slot (negative, counting down)', () => {
    let now = 1_000_000;
    const fresh = snapshotEpochs({ reader: reader({ snapshotSlot: 77, generatedAtUnixMs: now - 100, slotMs: 200, slotMsSamples: 32 }), maxAgeMs: 2000, now: () => now });
    expect(fresh.current()).toBe(77);
    now += 2_500; // the snapshot is now 2.6 s old: its slot is unknown, its slot time (200 ms) is not
    const w0 = fresh.current();
    expect(w0).toBeLessThan(0);
    while (fresh.current() === w0) now += 1; // to the next window boundary
    const w1 = fresh.current();
    expect(w1).toBe(w0 - 1);
    now += 199;
    expect(fresh.current()).toBe(w1); // one window = one measured slot (200 ms)
    now += 1;
    expect(fresh.current()).toBe(w1 - 1);
    now += 3 * 200;
    expect(fresh.current()).toBe(w1 - 4);
    // No snapshot at all: windows of the documented fallback.
    const none = snapshotEpochs({ reader: null, maxAgeMs: 2000, now: () => now });
    const e1 = none.current();
    now += FALLBACK_SLOT_MS - 1;
    expect(none.current()).toBe(e1);
    now += 1;
    const e2 = none.current();
    expect(e2).toBe(e1 - 1);
    expect(isPreviousEpoch(e1, e2)).toBe(true);
    expect(isPreviousEpoch(76, 77)).toBe(true);
    expect(isPreviousEpoch(75, 77)).toBe(false);
    expect(isPreviousEpoch(e2, e1)).toBe(false);
    expect(snapshotEpochs({ reader: reader(null), maxAgeMs: 2000, now: () => now }).current()).toBeLessThan(0);
  });
});

describe('feeResultText', () => {
  it('writes the entries in ascending slot order as JSON numbers, in Agave member order', () => {
    const text = feeResultText([
      { prioritizationFee: 5, slot: 12 },
      { slot: 10, prioritizationFee: 0 },
      { slot: 11, prioritizationFee: 1000 },
    ]);
    expect(text).toBe('[{"slot":10,"prioritizationFee":0},{"slot":11,"prioritizationFee":1000},{"slot":12,"prioritizationFee":5}]');
    expect(feeResultText([])).toBe('[]');
  });

  it('anything else is a bad answer (upstream_unavailable for the client)', () => {
    for (const bad of [null, {}, '[]', [null], [{ slot: 1 }], [{ slot: '1', prioritizationFee: 0 }], [{ slot: 1, prioritizationFee: -1 }], [{ slot: 1.5, prioritizationFee: 0 }]]) {
      let caught: unknown;
      try {
        feeResultText(bad);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(UpstreamError);
      expect((caught as UpstreamError).kind).toBe('bad_answer');
    }
  });
});

describe('the getRecentPrioritizationFees handler', () => {
  const A = '11111111111111111111111111111111';
  const B = 'Vote111111111111111111111111111111111111111';

  it('refuses before fetching; serves variants of one set from one entry; network-wide spellings share one', async () => {
    const asked: (readonly string[])[] = [];
    const { handler, cache } = prioritizationFeesMethod<null>({
      upstream: null,
      timeoutMs: 100,
      maxScopedEntries: 8,
      snapshot: { reader: null, maxAgeMs: 2_000 },
      epochs: { current: () => 1 },
      fetcher: (addresses) => {
        asked.push(addresses);
        return Promise.resolve(`[${addresses.length}]`);
      },
    });
    const call = { id: 1, method: 'getRecentPrioritizationFees', params: [], notification: false };
    const bad = handler([[A, 'abc']], null, call);
    expect(bad).toMatchObject({ message: 'Invalid param: WrongSize' });
    expect(asked).toEqual([]);
    expect(await handler([[B, A, B]], null, call)).toBe('[2]');
    expect(handler([[A, B]], null, call)).toBe('[2]'); // a hit, synchronous
    expect(handler([[A, A, B, B]], null, call)).toBe('[2]');
    expect(asked).toEqual([[A, B]]);
    expect(await handler([], null, call)).toBe('[0]');
    // A network-wide hit comes as an EncodedResult (its answer's bytes, src/jsonrpc/encoded-result.ts) of that text.
    for (const p of [undefined, null, [null], [[]]]) expect(handler(p, null, call)).toMatchObject({ text: '[0]' });
    expect(asked).toHaveLength(2);
    expect(cache.stats()).toEqual({ fetches: 2, scopedEntries: 1 });
  });

  it('without an upstream every miss is -32005 upstream_unavailable, never a hang', async () => {
    const { handler } = prioritizationFeesMethod<null>({ upstream: null, timeoutMs: 100, maxScopedEntries: 8, snapshot: { reader: null, maxAgeMs: 2_000 } });
    await expect(handler([], null, { id: 1, method: 'getRecentPrioritizationFees', params: [], notification: false })).rejects.toMatchObject({
      spec: { rpcCode: -32005, reason: 'upstream_unavailable' },
    });
  });
});
