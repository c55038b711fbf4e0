// The congested localnet with real QUIC: the flow-control QoS model (agave PR #10666) on every listener with a
// small leader capacity, a per-slot block capacity, and two competing senders hot on the largest-stake leader (one
// staked with a high priority fee, one unstaked with none). What must show: the leader saturates, the unstaked
// competitor is parked (its streams left unread, credit withheld) while the staked one keeps landing, the block
// fills and what did not fit is dropped as block_full, and what lands is ordered by fee.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import type { FlowControlQos } from '../../../src/localnet/tpu-qos-flow-control.js';

let ln: Localnet;

beforeAll(async () => {
  ln = await startLocalnet({
    validators: 2,
    slotMs: 200,
    qos: { enabled: true, model: 'flow-control', capacityTps: 400 },
    blockCapacity: 20,
    competitors: [
      { name: 'staked', tps: 400, stake: 100_000n * 1_000_000_000n, validator: 0, microLamportsPerCu: 5_000 },
      { name: 'unstaked', tps: 400, validator: 0 },
    ],
  });
}, 30_000);

afterAll(async () => {
  await ln?.stop();
});

describe('congested localnet (flow-control QoS, block capacity, competitors)', () => {
  it('saturates the hot leader, parks the unstaked competitor, lands the staked one, fills blocks by fee', async () => {
    const leader = ln.validators[0].identity;
    // Long enough for validator 0 (2/3 of the stake) to lead several windows.
    await new Promise((r) => setTimeout(r, 4_000));
    const q = ln.qos[0] as FlowControlQos;
    const [staked, unstaked] = ln.competitors;
    expect(staked.staked).toBe(true);
    expect(unstaked.staked).toBe(false);
    expect(staked.hotSlots).toBeGreaterThan(3);
    expect(q.counters.saturations).toBeGreaterThanOrEqual(1);
    expect(q.counters.parked).toBeGreaterThan(0);
    expect(q.counters.saturatedStreams).toBeGreaterThan(0);
    const page = ln.landings.page(0, 100_000).records.filter((r) => r.validator === leader);
    const bySender = (id: string): number => page.filter((r) => r.sender === id).length;
    expect(bySender(staked.identity)).toBeGreaterThan(bySender(unstaked.identity));
    const c = ln.landings.countersOf(leader);
    // Full blocks: no slot of the leader holds more than the capacity, and some were dropped for want of room.
    const perSlot = new Map<number, number>();
    for (const r of page) perSlot.set(r.slot, (perSlot.get(r.slot) ?? 0) + 1);
    expect(Math.max(...perSlot.values())).toBeLessThanOrEqual(20);
    expect(c.dropped.block_full).toBeGreaterThan(0);
  }, 20_000);
});
