// The getLeaderSlots recovery waits at least one slot as the relay measured it (the stale answer's data.slotMs,
// docs/slot-time.md): a new snapshot cannot come sooner. Scripted answers, like leader-slots-recovery.test.ts.
import { describe, expect, it } from 'vitest';
import { RpcError } from '../../../src/client/errors.js';
import { leaderSlotsWithRecovery, type LeaderSlotsDeps } from '../../../src/client/leader-slots.js';

const OK = { success: true, total: 1, data: [], snapshotSlot: 500, snapshotGeneratedAtUnixMs: 0, snapshotAgeMs: 1 };

function stale(data?: unknown): RpcError {
  return new RpcError({ reason: 'rpc_error', message: 'stale', code: -32004, status: 200, data });
}

function scripted(answers: unknown[], retryDelayMs: number): { deps: LeaderSlotsDeps; sleeps: number[] } {
  const sleeps: number[] = [];
  const deps: LeaderSlotsDeps = {
    call: async () => {
      const a = answers.shift();
      if (a instanceof Error) throw a;
      return a;
    },
    policy: { retries: 2, retryDelayMs },
    onAlert: undefined,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  };
  return { deps, sleeps };
}

describe('getLeaderSlots recovery and the measured slot time', () => {
  it('waits one measured slot when that is longer than the policy delay, the policy delay otherwise', async () => {
    const slow = scripted([stale({ snapshotAgeMs: 2_100, maxSnapshotAgeMs: 2_000, slotMs: 400 }), OK], 250);
    expect(await leaderSlotsWithRecovery(slow.deps, 480, 10)).toBe(OK);
    expect(slow.sleeps).toEqual([400]);
    const fast = scripted([stale({ snapshotAgeMs: 2_100, maxSnapshotAgeMs: 2_000, slotMs: 200 }), OK], 250);
    await leaderSlotsWithRecovery(fast.deps, 480, 10);
    expect(fast.sleeps).toEqual([250]);
    const unmeasured = scripted([stale({ snapshotAgeMs: 2_100, maxSnapshotAgeMs: 2_000 }), OK], 250);
    await leaderSlotsWithRecovery(unmeasured.deps, 480, 10);
    expect(unmeasured.sleeps).toEqual([250]);
  });
});
