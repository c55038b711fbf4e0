// The next leaders and their route scores for the status page (front thread, cold: once per tick while the page is
// open). Reads the telemetry snapshot the front already holds (src/telemetry/snapshot.ts) and parses only the few
// rows it shows: the same rows getLeaderSlots answers (docs/get-leader-slots.md).
import { rowsSlice, type SnapshotReader } from '../telemetry/snapshot.js';
import { slotMsOf } from '../telemetry/slot-ms.js';
import type { LeaderWindow } from './status-frame.js';

/** Slots ahead looked at: four leaders at four slots each. */
const SLOTS_AHEAD = 16;

interface Row {
  readonly slot: number;
  readonly identity?: string;
  readonly stake?: number;
  readonly txPaths?: readonly { provider: string; latencyMs: number; measured: boolean; selected: boolean }[];
  readonly routeScores?: readonly { active_region: string; score_ms: number; selected: boolean }[];
}

export function nextLeaders(reader: SnapshotReader | null, nowMs: number): { slot: number | null; windows: LeaderWindow[] } {
  const view = reader?.current() ?? null;
  if (view === null || !view.supported || view.rowCount === 0) return { slot: null, windows: [] };
  const slot = view.snapshotSlot + Math.floor(Math.max(0, nowMs - view.generatedAtUnixMs) / slotMsOf(view));
  const from = Math.max(0, slot - view.firstSlot);
  const n = Math.min(SLOTS_AHEAD, view.rowCount - from);
  if (n <= 0) return { slot, windows: [] };
  const rows = JSON.parse('[' + rowsSlice(view, from, n) + ']') as Row[];
  const windows: LeaderWindow[] = [];
  for (const r of rows) {
    const last = windows[windows.length - 1];
    const identity = r.identity ?? '';
    if (last !== undefined && last.identity === identity && last.lastSlot === r.slot - 1) {
      windows[windows.length - 1] = { ...last, lastSlot: r.slot };
      continue;
    }
    windows.push({
      firstSlot: r.slot,
      lastSlot: r.slot,
      identity,
      stake: r.stake ?? 0,
      txPaths: (r.txPaths ?? []).map((p) => ({ provider: p.provider, latencyMs: p.latencyMs, measured: p.measured, selected: p.selected })),
      routeScores: (r.routeScores ?? []).map((s) => ({ region: s.active_region, scoreMs: s.score_ms, selected: s.selected })),
    });
  }
  return { slot, windows };
}
