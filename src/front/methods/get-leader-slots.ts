// getLeaderSlots [startSlot, limit?] (front thread, HOT, synchronous: no I/O, no awaiting). Served entirely from the
// shared leader-slot snapshot (src/telemetry/snapshot.ts): the rows' JSON was built by the telemetry thread at publish
// time, so an answer is one Atomics.load, a few comparisons and a string slice + concatenation.
// Fails closed (docs/get-leader-slots.md): params -> missing -> unsupported schema -> stale -> range not covered
// (a valid u64 startSlot beyond 2^53 - 1 is simply not covered).
import { Errors, RelayError } from '../../errors/registry.js';
import type { MethodHandler } from '../../jsonrpc/dispatch.js';
import { paramsArray } from '../../jsonrpc/params.js';
import { serdeType } from '../../errors/serde-type.js';
import { SNAPSHOT_SCHEMA_VERSION } from '../../shm/snapshot-layout.js';
import { rowsSlice, type SnapshotReader, type SnapshotView } from '../../telemetry/snapshot.js';
import { slotMsMeasured, slotMsOf } from '../../telemetry/slot-ms.js';

/** The v1 cap on `limit` (spec section 8): larger values are served as 100. */
export const GET_LEADER_SLOTS_MAX_LIMIT = 100;

export interface GetLeaderSlotsOptions {
  /** null when the telemetry thread is disabled: every call answers "snapshot missing". */
  readonly reader: SnapshotReader | null;
  /** `limit` when the client gives none (telemetry.defaultLimit). */
  readonly defaultLimit: number;
  /** telemetry.maxSnapshotAgeMs. */
  readonly maxSnapshotAgeMs: number;
  readonly now?: () => number;
  /** The adaptive routing's verdicts (docs/adaptive-routing.md); absent = rows as the snapshot has them. */
  readonly adaptive?: AdaptiveRows;
}

/** What a row of a leader that parks the relay gains: an `adaptive` object (additive; absent for the others). */
export interface AdaptiveRows {
  /** Leaders parking the relay now (0: the rows are served as the snapshot has them, no per-row work). */
  readonly parkedCount: number;
  verdictFor(identity: string): object | null;
}

/**
 * Rows i..i+n-1 with `"adaptive":{...}` appended to those of a parking leader (cold-ish: only while some leader parks
 * the relay; the row text is JSON objects joined by ',', each ending with '}').
 */
function rowsWithAdaptive(view: SnapshotView, i: number, n: number, a: AdaptiveRows): string {
  let out = '';
  for (let k = i; k < i + n; k++) {
    const row = view.rowsText.slice(view.rowOffsets[k], view.rowOffsets[k + 1] - 1);
    const leader = view.leaders[view.leaderIndex[k]];
    const v = leader === undefined ? null : a.verdictFor(leader.identity);
    out += (k > i ? ',' : '') + (v === null ? row : row.slice(0, -1) + ',"adaptive":' + JSON.stringify(v) + '}');
  }
  return out;
}

/**
 * The double a JSON parser makes of u64::MAX (18446744073709551615 rounds up to 2^64): integers up to it are valid
 * u64 values. Beyond 2^53 - 1 they are no longer exact, which does not matter here: such a startSlot is past every
 * snapshot (range not covered, -32016) and such a limit is past the cap (served as 100).
 */
const U64_MAX_AS_DOUBLE = 2 ** 64;

/** A u64 parameter as JSON number: negative, fractional, non-number or beyond u64 -> -32602 (serde wording). */
function u64Param(v: unknown, name: string): number {
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= U64_MAX_AS_DOUBLE) return v;
  if (typeof v === 'number' && Number.isInteger(v) && v < 0) {
    throw new RelayError(Errors.INVALID_PARAMS, `Invalid params: invalid value: integer \`${v}\`, expected u64 for \`${name}\``);
  }
  if (typeof v === 'number' && Number.isFinite(v)) {
    // serde_json reads an integer literal beyond u64 as a float, as it does 1.5.
    throw new RelayError(Errors.INVALID_PARAMS, `Invalid params: invalid type: floating point \`${v}\`, expected u64 for \`${name}\``);
  }
  throw new RelayError(Errors.INVALID_PARAMS, `Invalid params: invalid type: ${serdeType(v)}, expected u64 for \`${name}\``);
}

const SUPPORTED_SCHEMAS = Object.freeze([SNAPSHOT_SCHEMA_VERSION]);

export function getLeaderSlotsMethod<C>(o: GetLeaderSlotsOptions): MethodHandler<C> {
  const reader = o.reader;
  const now = o.now ?? Date.now;
  const defaultLimit = Math.min(o.defaultLimit, GET_LEADER_SLOTS_MAX_LIMIT);
  const maxAge = o.maxSnapshotAgeMs;
  return (params) => {
    const p = paramsArray(params, 1, 2);
    const startSlot = u64Param(p[0], 'startSlot');
    let limit = p[1] === undefined || p[1] === null ? defaultLimit : u64Param(p[1], 'limit');
    if (limit === 0) throw new RelayError(Errors.INVALID_PARAMS, 'Invalid params: `limit` must be at least 1');
    if (limit > GET_LEADER_SLOTS_MAX_LIMIT) limit = GET_LEADER_SLOTS_MAX_LIMIT;

    const view = reader === null ? null : reader.current();
    if (view === null) throw new RelayError(Errors.LEADER_SNAPSHOT_MISSING);
    if (!view.supported) {
      throw new RelayError(Errors.LEADER_SNAPSHOT_UNSUPPORTED_SCHEMA, Errors.LEADER_SNAPSHOT_UNSUPPORTED_SCHEMA.message, {
        schemaVersion: view.schemaVersion,
        supportedSchemaVersions: SUPPORTED_SCHEMAS,
      });
    }
    const ageMs = Math.max(0, Math.round(now() - view.generatedAtUnixMs));
    if (ageMs > maxAge) {
      throw new RelayError(Errors.LEADER_SNAPSHOT_STALE, Errors.LEADER_SNAPSHOT_STALE.message, {
        snapshotSlot: view.snapshotSlot,
        snapshotAgeMs: ageMs,
        maxSnapshotAgeMs: maxAge,
        // The measured slot time (docs/slot-time.md): a client waits at least this long before asking again, since a
        // new snapshot comes at the earliest one slot later. Absent while nothing was measured.
        ...(slotMsMeasured(view) ? { slotMs: Math.round(slotMsOf(view)) } : {}),
      });
    }
    if (startSlot < view.firstSlot || startSlot > view.lastSlot) {
      throw new RelayError(Errors.LEADER_RANGE_NOT_COVERED, Errors.LEADER_RANGE_NOT_COVERED.message, {
        contextSlot: view.snapshotSlot,
        startSlot,
        firstSlot: view.firstSlot,
        lastSlot: view.lastSlot,
      });
    }
    const i = startSlot - view.firstSlot;
    const n = Math.min(limit, view.rowCount - i);
    return (
      '{"success":true,"total":' +
      n +
      ',"data":[' +
      (o.adaptive !== undefined && o.adaptive.parkedCount > 0 ? rowsWithAdaptive(view, i, n, o.adaptive) : rowsSlice(view, i, n)) +
      '],"snapshotSlot":' +
      view.snapshotSlot +
      ',"snapshotGeneratedAtUnixMs":' +
      view.generatedAtUnixMs +
      ',"snapshotAgeMs":' +
      ageMs +
      '}'
    );
  };
}
