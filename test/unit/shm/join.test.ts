// The record join table (src/shm/join.ts): a record published into a worker's ring and the QUIC thread's ring is
// accounted once, by the side that finishes last, and the egress pool's drain() counts the records still unfinished on
// both sides (joinedUnfinishedByBoth) to count each transaction left in the rings once. Single thread here: the two
// sides are two JoinSide views of one table, as the two threads hold them.
import { describe, expect, it } from 'vitest';
import { JOIN_FLAG, JoinAllocator, JoinSide, createJoinTable, joinedUnfinishedByBoth } from '../../../src/shm/join.js';
import { ROUTE_COUNT } from '../../../src/shm/layout.js';

describe('join table', () => {
  it('the side that finishes last gets both sides\' outcomes and flags, once; the entry is then free', () => {
    const sab = createJoinTable(8);
    const front = new JoinAllocator(sab);
    const workers = new JoinSide(sab);
    const quic = new JoinSide(sab);
    const j = front.allocate();
    expect(j).toBeGreaterThan(0);
    expect(workers.take(j)).toBe(true); // first taker counts `consumed`
    expect(quic.take(j)).toBe(false);
    const a = new Uint8Array(ROUTE_COUNT);
    a[0] = 1; // rpc: outcome index 0 (+1)
    expect(workers.finish(j, a, 0, JOIN_FLAG.delivered)).toBe(-1);
    const b = new Uint8Array(ROUTE_COUNT);
    b[3] = 5; // static
    const joined = quic.finish(j, b, 0, JOIN_FLAG.stopped);
    expect(joined & (JOIN_FLAG.delivered | JOIN_FLAG.stopped)).toBe(JOIN_FLAG.delivered | JOIN_FLAG.stopped);
    expect([...b]).toEqual([1, 0, 0, 5]);
    expect(front.armed()).toBe(0);
  });

  it('joinedUnfinishedByBoth counts the records neither side has finished (in both rings), not those one side did', () => {
    const sab = createJoinTable(16);
    const front = new JoinAllocator(sab);
    const workers = new JoinSide(sab);
    const quic = new JoinSide(sab);
    const none = new Uint8Array(ROUTE_COUNT);
    const js = Array.from({ length: 5 }, () => front.allocate());
    expect(joinedUnfinishedByBoth(sab)).toBe(5);
    workers.finish(js[0], none, 0, 0); // still in the QUIC ring only
    quic.finish(js[1], none, 0, 0); // still in a worker ring only
    expect(joinedUnfinishedByBoth(sab)).toBe(3);
    quic.finish(js[0], none, 0, 0); // done on both sides: freed
    expect(joinedUnfinishedByBoth(sab)).toBe(3);
    expect(front.armed()).toBe(4);
  });
});
