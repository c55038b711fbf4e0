// The flow-control QoS model (agave PR #10666) on a controlled clock: MAX_STREAMS by RTT and stake share with
// Agave's own test figures, the load-debt saturation with its 90% recovery, unstaked connections parked while a
// staked one keeps its share, and the connection tables (per-peer caps, the unstaked table pruned to 90%).
import { describe, expect, it } from 'vitest';
import { FlowControlQos, LoadDebt, PARK_RECHECK_MS } from '../../../src/localnet/tpu-qos-flow-control.js';

const LAMPORTS = 1_000_000_000n;
const STAKED = 'StakedPeer1111111111111111111111111111111111';
const SMALL = 'SmallStake111111111111111111111111111111111';

function model(stakes: [string, bigint][], opts: Record<string, unknown> = {}, rttMs = 100): FlowControlQos {
  return new FlowControlQos({ enabled: true, model: 'flow-control', ...opts }, new Map(stakes), rttMs, 0);
}

describe('FlowControlQos.maxStreams (compute_max_streams_for_rtt)', () => {
  // Agave's tests: 500/ms capacity, stake 1,000 of 100,000.
  const q = model([['a', 1_000n], ['b', 99_000n]], { maxStreamsPerMs: 500 });

  it('saturated: capacity x stake share x RTT, divided by the peer\'s connections, at least 1, at most the unsaturated figure', () => {
    expect(q.maxStreams(1_000n, 1, true, 50)).toBe(250);
    expect(q.maxStreams(1_000n, 4, true, 50)).toBe(62);
    expect(q.maxStreams(1_000n, 1, true, 100)).toBe(500); // double RTT, double credit: the same throughput
    expect(q.maxStreams(1n, 1, true, 50)).toBe(1);
    const all = model([['a', 1_000_000n]], { maxStreamsPerMs: 500 });
    expect(all.maxStreams(1_000_000n, 1, true, 50)).toBe(1024); // capped by 2048 x 50/100
  });

  it('saturated: an unstaked connection is parked at 0', () => {
    expect(q.maxStreams(null, 1, true, 50)).toBe(0);
  });

  it('not saturated: 2048 / 20 at 100 ms, linear in RTT, clamped to 1..200 ms, stake ignored', () => {
    expect(q.maxStreams(1_000n, 1, false, 100)).toBe(2048);
    expect(q.maxStreams(1_000n, 1, false, 5)).toBe(102);
    expect(q.maxStreams(1_000n, 1, false, 500)).toBe(4096);
    expect(q.maxStreams(99_000n, 1, false, 100)).toBe(q.maxStreams(1_000n, 1, false, 100));
    expect(q.maxStreams(null, 1, false, 100)).toBe(20);
    expect(q.maxStreams(null, 1, false, 0.1)).toBe(1); // clamped to 1 ms: 0.2 -> at least 1
  });

  it('demotes a stake under 1 / (max_streams_per_ms x 100) of the total to unstaked', () => {
    const m = model([[STAKED, 50_000n * LAMPORTS], [SMALL, LAMPORTS / 2n]]);
    expect(m.stakeOf(STAKED)).toBe(50_000n * LAMPORTS);
    expect(m.stakeOf(SMALL)).toBeNull();
    expect(m.stakeOf(null)).toBeNull();
  });
});

describe('LoadDebt (load_debt_tracker.rs)', () => {
  it('saturates at 0, may go into debt, recovers only at 90% of the burst', () => {
    const d = new LoadDebt(1_000, 10, 0);
    for (let i = 0; i < 9; i++) d.acquire(0);
    expect(d.isSaturated(0)).toBe(false);
    d.acquire(0);
    expect(d.isSaturated(0)).toBe(true);
    for (let i = 0; i < 4; i++) d.acquire(0);
    expect(d.level).toBe(-4);
    expect(d.isSaturated(12)).toBe(true); // 8 < 9
    expect(d.isSaturated(13)).toBe(false); // 9 = 90% of 10
    expect(d.entries).toBe(1);
  });
});

describe('FlowControlQos.admitStream', () => {
  const peer = (id: number, identity: string | null) => ({ id, remoteAddress: '127.0.0.1', identity });

  it('an unstaked connection gets 20 streams per 100 ms RTT when the leader is not saturated', () => {
    const m = model([[STAKED, 1_000n * LAMPORTS]]);
    const u = peer(1, null);
    expect(m.admitConnection(u, 0)).toBeNull();
    let read = 0;
    for (let i = 0; i < 50; i++) if (m.admitStream(u, 0) === 0) read++;
    expect(read).toBe(20);
    expect(m.admitStream(u, 0)).toBe(5); // one credit back in 100 ms / 20
    expect(m.admitStream(u, 50)).toBe(0); // half an RTT later: 10 credits back
    expect(m.counters.throttled).toBeGreaterThanOrEqual(30);
  });

  it('saturated: the unstaked connection is parked (nothing read) while the staked one keeps its share; both resume on recovery', () => {
    // Capacity 1,000 streams/s (burst 100); RTT 100 ms; the staked peer holds all the stake: quota 100 per RTT.
    const m = model([[STAKED, 1_000n * LAMPORTS]], { capacityTps: 1_000 });
    const u = peer(1, null);
    const s = peer(2, STAKED);
    expect(m.admitConnection(u, 0)).toBeNull();
    expect(m.admitConnection(s, 0)).toBeNull();
    let staked = 0;
    for (let i = 0; i < 200; i++) if (m.admitStream(s, 0) === 0) staked++;
    // 100 read on the unsaturated credit (2048) empty the burst; from then on the saturated credit, 1,000 x 100% x
    // 0.1 s = 100 per RTT, the credit capped to it: 100 more.
    expect(staked).toBe(200);
    expect(m.saturated(0)).toBe(true);
    expect(m.admitStream(u, 1)).toBe(PARK_RECHECK_MS);
    expect(m.counters.parked).toBe(1);
    expect(m.counters.saturatedStreams).toBe(100);
    // One RTT later the staked connection has its 100 again, no more.
    let more = 0;
    for (let i = 0; i < 300; i++) if (m.admitStream(s, 100) === 0) more++;
    expect(more).toBe(100);
    // Debt: 100 - 200 + 100 (refill by 100 ms) - 100 = -100; recovery needs 90 tokens: 190 ms more at 1,000/s.
    expect(m.saturated(250)).toBe(true);
    expect(m.admitStream(u, 250)).toBe(PARK_RECHECK_MS);
    expect(m.saturated(300)).toBe(false);
    expect(m.admitStream(u, 300)).toBe(0);
  });

  it('connection tables: 8 per unstaked peer, 16 per staked (code 4); a full unstaked table drops its oldest (code 1)', () => {
    const m = model([[STAKED, 1_000n * LAMPORTS]], { maxUnstakedConnections: 10, maxConnectionsPerIpPerMinute: 1_000 });
    for (let i = 0; i < 8; i++) expect(m.admitConnection(peer(i, null), 0)).toBeNull();
    expect(m.admitConnection(peer(8, null), 0)).toEqual({ code: 4, reason: 'too_many' });
    for (let i = 0; i < 16; i++) expect(m.admitConnection(peer(100 + i, STAKED), 0)).toBeNull();
    expect(m.admitConnection(peer(200, STAKED), 0)).toEqual({ code: 4, reason: 'too_many' });
    const evicted: number[] = [];
    m.evict = (id, code) => {
      expect(code).toBe(1);
      evicted.push(id);
    };
    // Other unstaked peers (another address each) fill the table to 10; the 11th prunes it to 9 first.
    expect(m.admitConnection({ id: 300, remoteAddress: '10.0.0.1', identity: null }, 0)).toBeNull();
    expect(m.admitConnection({ id: 301, remoteAddress: '10.0.0.2', identity: null }, 0)).toBeNull();
    expect(m.counters.unstakedConnections).toBe(10);
    expect(m.admitConnection({ id: 302, remoteAddress: '10.0.0.3', identity: null }, 0)).toBeNull();
    expect(evicted).toEqual([0]);
    expect(m.counters.unstakedConnections).toBe(10);
    expect(m.counters.evicted).toBe(1);
    const none = model([], { maxUnstakedConnections: 0 });
    expect(none.admitConnection(peer(1, null), 0)).toEqual({ code: 2, reason: 'disallowed' });
  });
});
