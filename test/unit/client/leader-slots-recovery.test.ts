// The recovery loop of getLeaderSlots with scripted answers, for the branches a real relay cannot be made to take
// on cue: a stale snapshot that recovers during the retries, a range still not covered after the refresh, the limit
// cut to what the snapshot covers, an onAlert hook that throws. Each family is triggered for real in
// test/integration/client/leader-slots.test.ts.
import { describe, expect, it } from 'vitest';
// An internal module (not in the entry's exports), so imported from src with its error classes.
import { IncompatibleRelayError, LeaderSlotsUnavailableError, RpcError } from '../../../src/client/errors.js';
import { leaderSlotsWithRecovery, type LeaderSlotsDeps } from '../../../src/client/leader-slots.js';

const OK = { success: true, total: 1, data: [], snapshotSlot: 500, snapshotGeneratedAtUnixMs: 0, snapshotAgeMs: 1 };

function rpcError(code: number, data?: unknown): RpcError {
  return new RpcError({ reason: 'rpc_error', message: `code ${code}`, code, status: 200, data });
}

function scripted(answers: unknown[]): { deps: LeaderSlotsDeps; params: unknown[][]; sleeps: number[] } {
  const params: unknown[][] = [];
  const sleeps: number[] = [];
  const deps: LeaderSlotsDeps = {
    call: async (p) => {
      params.push([...p]);
      const a = answers.shift();
      if (a instanceof Error) throw a;
      return a;
    },
    policy: { retries: 2, retryDelayMs: 40 },
    onAlert: undefined,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  };
  return { deps, params, sleeps };
}

describe('leaderSlotsWithRecovery', () => {
  it('stale, then fresh within the retries: the fresh answer, after one delay', async () => {
    const s = scripted([rpcError(-32004), OK]);
    expect(await leaderSlotsWithRecovery(s.deps, 480, 10)).toBe(OK);
    expect(s.params).toEqual([[480, 10], [480, 10]]);
    expect(s.sleeps).toEqual([40]);
  });

  it('missing every time: retries + 1 calls, then LeaderSlotsUnavailableError', async () => {
    const s = scripted([rpcError(-32014), rpcError(-32014), rpcError(-32014)]);
    const e = await leaderSlotsWithRecovery(s.deps, 1, undefined).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(LeaderSlotsUnavailableError);
    expect(e).toBeInstanceOf(RpcError);
    expect(e).toMatchObject({ reason: 'leader_snapshot_missing', code: -32014 });
    expect(s.params).toEqual([[1], [1], [1]]);
  });

  it('range: restarts at contextSlot with the limit cut to the covered slots; not covered twice -> unavailable', async () => {
    const s = scripted([rpcError(-32016, { contextSlot: 500, startSlot: 9_000, firstSlot: 492, lastSlot: 529 }), OK]);
    await leaderSlotsWithRecovery(s.deps, 9_000, 100);
    expect(s.params).toEqual([[9_000, 100], [500, 30]]);
    const twice = scripted([rpcError(-32016, { contextSlot: 500, lastSlot: 529 }), rpcError(-32016, { contextSlot: 501, lastSlot: 530 })]);
    const e = await leaderSlotsWithRecovery(twice.deps, 9_000, 5).catch((x: unknown) => x);
    expect(e).toMatchObject({ reason: 'leader_range_not_covered', useDefaultPath: true });
    expect(twice.params).toEqual([[9_000, 5], [500, 5]]);
  });

  it('schema: an onAlert that throws does not hide the IncompatibleRelayError', async () => {
    const s = scripted([rpcError(-32015, { schemaVersion: 2, supportedSchemaVersions: [1] })]);
    const e = await leaderSlotsWithRecovery({ ...s.deps, onAlert: () => { throw new Error('pager down'); } }, 1, 1).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(IncompatibleRelayError);
  });

  it('other errors pass through untouched (same object)', async () => {
    const limited = new RpcError({ reason: 'rate_limited', message: 'Rate limit exceeded', code: -32005, status: 429, retryAfterMs: 900 });
    const s = scripted([limited]);
    expect(await leaderSlotsWithRecovery(s.deps, 1, 1).catch((x: unknown) => x)).toBe(limited);
  });
});
