// getLeaderSlots with the spec's recovery table built in (spec 7.3; codes from docs/get-leader-slots.md), and the
// bestRoute pick (caller's thread, cold). getLeaderSlots fails closed; per family the client:
//   -32014 snapshot missing, -32004 stale  retry `retries` times after `retryDelayMs`, then LeaderSlotsUnavailableError
//                                          ("use the default path")
//   -32016 range not covered               once: restart at data.contextSlot (the snapshot's slot, i.e. "now") with
//                                          the limit cut to what the snapshot covers from there; still not covered ->
//                                          LeaderSlotsUnavailableError
//   -32015 unsupported schema              onAlert, then IncompatibleRelayError (never retried)
// Anything else (bad key, rate limited, invalid params) is the RpcError as answered.
import { IncompatibleRelayError, LeaderSlotsUnavailableError, RpcError } from './errors.js';
import type { BestRoute, LeaderSlotRow, LeaderSlotsResult, RelayAlert, RouteName, RouteScore, TxPath } from './types.js';

export const LEADER_SNAPSHOT_MISSING = -32014;
export const LEADER_SNAPSHOT_STALE = -32004;
export const LEADER_RANGE_NOT_COVERED = -32016;
export const LEADER_SNAPSHOT_UNSUPPORTED_SCHEMA = -32015;

const REASON_BY_CODE: ReadonlyMap<number, string> = new Map([
  [LEADER_SNAPSHOT_MISSING, 'leader_snapshot_missing'],
  [LEADER_SNAPSHOT_STALE, 'leader_snapshot_stale'],
  [LEADER_RANGE_NOT_COVERED, 'leader_range_not_covered'],
  [LEADER_SNAPSHOT_UNSUPPORTED_SCHEMA, 'leader_snapshot_unsupported_schema'],
]);

export interface LeaderSlotsPolicy {
  /** Further attempts after a missing or stale snapshot (0: report "use the default path" at once). */
  readonly retries: number;
  /**
   * Wait before each of them, at least; at least one slot as the relay measured it when its stale answer says
   * (data.slotMs): the snapshot is rebuilt every slot, so an earlier retry cannot find a new one.
   */
  readonly retryDelayMs: number;
}

/**
 * Two retries 250 ms apart (one slot at mainnet's documented late-2026 slot time, docs/slot-time.md; longer when the
 * relay reports slower slots): a stale snapshot that does not recover within ~half a second is reported.
 */
export const DEFAULT_LEADER_SLOTS_POLICY: LeaderSlotsPolicy = Object.freeze({ retries: 2, retryDelayMs: 250 });

export interface LeaderSlotsDeps {
  /** One getLeaderSlots call with these params. */
  readonly call: (params: readonly unknown[]) => Promise<unknown>;
  readonly policy: LeaderSlotsPolicy;
  readonly onAlert: ((alert: RelayAlert) => void) | undefined;
  readonly sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The same RpcError re-typed for the caller: its family's reason, the relay's code, message, data and status. */
function unavailable(e: RpcError, reason: string): LeaderSlotsUnavailableError {
  return new LeaderSlotsUnavailableError({ reason, message: e.message, code: e.code, status: e.status, data: e.data, requestId: e.requestId, retryAfterMs: e.retryAfterMs });
}

function numberField(data: unknown, name: string): number | undefined {
  const v = (data as Record<string, unknown> | null | undefined)?.[name];
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}

/** getLeaderSlots(startSlot, limit?) with the recovery above. `startSlot` is the first slot to ask for. */
export async function leaderSlotsWithRecovery(deps: LeaderSlotsDeps, startSlot: number, limit: number | undefined): Promise<LeaderSlotsResult> {
  const sleep = deps.sleep ?? defaultSleep;
  let start = startSlot;
  let lim = limit;
  let waits = 0;
  let refreshed = false;
  for (;;) {
    try {
      return (await deps.call(lim === undefined ? [start] : [start, lim])) as LeaderSlotsResult;
    } catch (err) {
      if (!(err instanceof RpcError) || err.code === undefined || err.status !== 200) throw err;
      const reason = REASON_BY_CODE.get(err.code);
      if (reason === undefined) throw err;
      if (err.code === LEADER_SNAPSHOT_UNSUPPORTED_SCHEMA) {
        const alert: RelayAlert = { reason: 'leader_snapshot_unsupported_schema', message: err.message, data: err.data };
        try {
          deps.onAlert?.(alert);
        } catch {
          /* an alert hook that throws must not hide the incompatibility */
        }
        throw new IncompatibleRelayError({ reason, message: err.message, code: err.code, status: err.status, data: err.data, requestId: err.requestId });
      }
      if (err.code === LEADER_RANGE_NOT_COVERED) {
        const now = numberField(err.data, 'contextSlot');
        if (refreshed || now === undefined) throw unavailable(err, reason);
        refreshed = true;
        const last = numberField(err.data, 'lastSlot');
        start = now;
        if (lim !== undefined && last !== undefined && last >= now) lim = Math.max(1, Math.min(lim, last - now + 1));
        continue;
      }
      // Missing or stale: the telemetry thread is starting or not publishing; a new snapshot may come within a slot.
      if (waits >= deps.policy.retries) throw unavailable(err, reason);
      waits++;
      await sleep(Math.max(deps.policy.retryDelayMs, numberField(err.data, 'slotMs') ?? 0));
    }
  }
}

/** The submit route of a txPath provider: 'direct' and 'jito' by name, every other provider is a static peer. */
export function routeOfProvider(provider: string): RouteName {
  if (provider === 'direct') return 'direct';
  if (provider === 'jito') return 'jito';
  return 'static';
}

function lowest<T>(items: readonly T[], key: (t: T) => number): T | undefined {
  let best: T | undefined;
  for (const it of items) if (best === undefined || key(it) < key(best)) best = it; // ties: the earlier, as the relay
  return best;
}

/**
 * Where to send for `row`'s slot: the score of this client's region (the lowest score_ms among that region's entries;
 * the lowest of the row when the region is not listed or not given) and the route of the selected txPath (the
 * lowest latencyMs when none is marked). No path listed: routes 'default'.
 */
export function pickBestRoute(row: LeaderSlotRow, region: string | undefined): BestRoute {
  const mine = region === undefined ? [] : row.routeScores.filter((s) => s.active_region === region);
  const score: RouteScore | undefined = lowest(mine.length > 0 ? mine : row.routeScores, (s) => s.score_ms);
  const path: TxPath | undefined = row.txPaths.find((p) => p.selected) ?? lowest(row.txPaths, (p) => p.latencyMs);
  return {
    useDefaultPath: false,
    slot: row.slot,
    identity: row.identity,
    routes: path === undefined ? 'default' : [routeOfProvider(path.provider)],
    path,
    score,
  };
}
