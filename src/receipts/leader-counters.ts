// Per-leader counters (issue #44 item 4; docs/leader-counters.md), front thread, COLD: for each leader of the last
// `slots` slots, what the direct route sent aimed at it (transactions, copies), what it dropped and why, how long the
// sends waited in the relay (acceptance -> first write: handshake, stream credit, congestion room), and what landed
// and in how many slots. Nothing new is counted on the hot path: every figure is read from the landing receipts the
// relay already keeps (src/shm/receipts-layout.ts: each route's outcome, targets, aimed slot and cause, written by the
// egress side in src/egress/contract/send-record.ts; the landing written by the landing tracker). A report scans the
// receipts from the newest back to the window's first slot, so memory is the receipts table's (bounded by
// receipts.capacity and ttlMs) plus one leader identity per slot of the window (this file's ring, filled by a 100 ms
// timer from the leader data, since the telemetry snapshot starts near the current slot and forgets past slots).
// Per key: a report for one key reads only that key's receipts; the operator's (the status page) reads all.
import { EGRESS_OUTCOMES, ROUTE_IDS } from '../shm/layout.js';
import { CAUSE, ROUTE_CAUSES } from '../shm/receipts-layout.js';
import type { LeaderSource } from '../telemetry/leader-source.js';
import { LANDING, type ReceiptTable } from './receipt-table.js';

const DIRECT = ROUTE_IDS.direct;
const OUTCOME_SENT = EGRESS_OUTCOMES.indexOf('sent') + 1;
/** How often the slot -> leader ring is brought up to date (ms): slots last 400 ms on mainnet, 100-400 on the localnet. */
const NOTE_EVERY_MS = 100;
/** Slots past the current one whose leader is noted too (the scheduler aims at the next leader's window). */
const AHEAD_SLOTS = 4;
/** Receipts accepted this many slots before the window may still aim into it (the scheduler looks ahead). */
const ACCEPT_SLACK_SLOTS = 8;
/**
 * Receipts one report reads at most: a median ~8 ms of front thread for every key's view on the 2-core dev box
 * (bench/receipts/leader-counters.bench.ts; the whole 131,072-receipt table 22-35 ms). At 10k tx/s that is the last
 * ~3 s; the report says `complete: false` when it stopped short.
 */
export const SCAN_MAX = 32_768;
/** A view's report is reused this long (ms): a key polling in a loop, or several status viewers, cost one scan a second. */
const REPORT_REUSE_MS = 1_000;
/** Views whose last report is kept for reuse (the operator's and the keys that asked last). */
const REPORTS_KEPT = 64;
/** slots-to-land bucket bounds (the last bucket is "more"). */
export const LAND_BUCKETS = [0, 1, 2, 3, 4, 8, 16, 32, 64, 150] as const;

export interface LeaderRow {
  readonly identity: string | null;
  /** The window's slots this leader held (ascending). */
  readonly slots: readonly number[];
  /** Transactions the direct route sent aimed at one of these slots, and the copies (leaders written to) they made. */
  readonly sent: number;
  readonly copies: number;
  /** Direct-route outcomes other than sent, by outcome label (failed, dropped:stale, ...). */
  readonly dropped: Readonly<Record<string, number>>;
  /** Of those, why (receipt causes: no_stream_credit, congestion, connecting, ...). */
  readonly dropCauses: Readonly<Record<string, number>>;
  /** Sends that waited in the relay before their first write (acceptance -> first direct write), ms. */
  readonly waited: { readonly n: number; readonly p50Ms: number | null; readonly maxMs: number | null; readonly sumMs: number };
  /** Of the transactions sent aimed here: how many landed, and slots from the aimed slot to the landed one. */
  readonly landed: number;
  readonly slotsToLand: { readonly p50: number | null; readonly max: number | null; readonly buckets: Readonly<Record<string, number>> };
  /** Receipts (any route) that landed in this leader's slots. */
  readonly landedInSlots: number;
}

export interface LeaderReport {
  readonly slot: number;
  readonly firstSlot: number;
  readonly lastSlot: number;
  readonly leaders: readonly LeaderRow[];
  /** Receipts of the window the direct route answered without an aimed slot (dropped:no_leader and the like). */
  readonly unattributed: Readonly<Record<string, number>>;
  /** Receipts of the window this report counted (for a key: its own). */
  readonly scanned: number;
  /**
   * false when the scan stopped before the window's first slot: SCAN_MAX receipts read, or the receipts table's
   * capacity or ttlMs reached (the older part of the window is not counted).
   */
  readonly complete: boolean;
  /** When the report was made (unix ms): reports are reused for a second. */
  readonly atMs: number;
}

interface Acc {
  identity: string | null;
  slots: number[];
  sent: number;
  copies: number;
  dropped: Record<string, number>;
  dropCauses: Record<string, number>;
  waits: number[];
  landed: number;
  lands: number[];
  landedInSlots: number;
}

function quantile(sorted: Float64Array, q: number): number | null {
  return sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function bucketName(d: number): string {
  for (const b of LAND_BUCKETS) if (d <= b) return String(b);
  return `>${LAND_BUCKETS[LAND_BUCKETS.length - 1]}`;
}

export interface LeaderCountersOptions {
  /** Slots covered (issue #44's N): the current slot and the ones before it. */
  readonly slots: number;
}

export class LeaderCounters {
  private readonly n: number;
  /** The ring's length: the window and the slots noted ahead of it (so noting ahead never evicts a slot of the window). */
  private readonly ring: number;
  /** Ring of the window's slots: slotAt[i] is the slot whose leader identityAt[i] holds (-1 none). */
  private readonly slotAt: Float64Array;
  private readonly identityAt: (string | null)[];
  private lastNoted = -1;
  /** The last report per view (key id, or -1 for every key's), for REPORT_REUSE_MS. */
  private readonly reports = new Map<number, LeaderReport>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly table: ReceiptTable,
    private readonly leaders: LeaderSource,
    o: LeaderCountersOptions,
  ) {
    this.n = o.slots;
    this.ring = o.slots + AHEAD_SLOTS + 1;
    this.slotAt = new Float64Array(this.ring).fill(-1);
    this.identityAt = new Array<string | null>(this.ring).fill(null);
  }

  start(): void {
    this.note();
    this.timer ??= setInterval(() => this.note(), NOTE_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Records the leaders of the slots up to the current one (and the next leader window, aimed at ahead of time). */
  note(): void {
    const cur = this.leaders.currentSlot();
    if (cur < 0) return;
    const from = Math.max(this.lastNoted + 1, cur - this.n + 1);
    const to = cur + AHEAD_SLOTS;
    for (let s = from; s <= to; s++) this.put(s, this.leaders.leaderAt(s)?.identity ?? null);
    // Slots ahead of the current one are noted again as they come (the schedule may have been unknown).
    this.lastNoted = Math.max(this.lastNoted, cur);
  }

  private put(slot: number, identity: string | null): void {
    const i = slot % this.ring;
    if (this.slotAt[i] === slot && identity === null) return;
    this.slotAt[i] = slot;
    this.identityAt[i] = identity;
  }

  /** The leader of `slot` as noted, undefined when the slot is outside the window or was never noted. */
  leaderOf(slot: number): string | null | undefined {
    if (slot < 0) return undefined;
    const i = slot % this.ring;
    return this.slotAt[i] === slot ? this.identityAt[i] : undefined;
  }

  /**
   * The report for `keyId`'s transactions, or every key's (null: the operator's view). Cold: scans the receipts from
   * the newest back to the window's first slot, at most `scanMax` of them; a view's report is reused for a second.
   */
  report(keyId: number | null, nowMs = Date.now(), scanMax = SCAN_MAX): LeaderReport {
    const view = keyId ?? -1;
    const kept = this.reports.get(view);
    if (kept !== undefined && nowMs - kept.atMs >= 0 && nowMs - kept.atMs < REPORT_REUSE_MS) return kept;
    const r = this.build(keyId, nowMs, scanMax);
    if (this.reports.size >= REPORTS_KEPT && !this.reports.has(view)) this.reports.clear();
    this.reports.set(view, r);
    return r;
  }

  private build(keyId: number | null, nowMs: number, scanMax: number): LeaderReport {
    this.note();
    const t = this.table;
    const cur = Math.max(this.leaders.currentSlot(), this.lastNoted);
    const firstSlot = Math.max(0, cur - this.n + 1);
    // Rows by slot - firstSlot (an array: a Map lookup per receipt was a third of a report).
    const bySlot: (Acc | undefined)[] = new Array<Acc | undefined>(cur + AHEAD_SLOTS - firstSlot + 1);
    const byLeader = new Map<string, Acc>();
    const unattributed: Record<string, number> = {};
    const accOf = (slot: number): Acc | null => {
      if (slot < firstSlot || slot > cur + AHEAD_SLOTS) return null;
      let a = bySlot[slot - firstSlot];
      if (a !== undefined) return a;
      const id = this.leaderOf(slot) ?? null;
      a = id === null ? undefined : byLeader.get(id);
      if (a === undefined) {
        a = { identity: id, slots: [], sent: 0, copies: 0, dropped: {}, dropCauses: {}, waits: [], landed: 0, lands: [], landedInSlots: 0 };
        if (id !== null) byLeader.set(id, a);
      }
      a.slots.push(slot);
      bySlot[slot - firstSlot] = a;
      return a;
    };
    // Every slot of the window gets its leader's row, sent to or not.
    for (let s = firstSlot; s <= cur; s++) if (this.leaderOf(s) !== undefined) accOf(s);
    const newest = t.newestSeq;
    const oldest = Math.max(1, newest - Math.min(t.capacity, scanMax) + 1);
    let scanned = 0;
    // Complete when the scan reaches a receipt older than the window, or the first receipt ever.
    let complete = oldest === 1;
    for (let seq = newest; seq >= oldest; seq--) {
      if (!t.current(seq) || !t.filed(seq)) continue;
      const accepted = t.acceptedSlotOf(seq);
      if (accepted >= 0 && accepted < firstSlot - ACCEPT_SLACK_SLOTS) {
        complete = true; // older than the window
        break;
      }
      if (!t.live(seq, nowMs)) {
        complete = false;
        break;
      }
      if (keyId !== null && t.keyIdOf(seq) !== keyId) continue;
      scanned++; // the key's own only: a key's report says nothing of other keys' volume
      const landing = t.landingState(seq) === LANDING.landed ? t.landingOf(seq) : null;
      if (landing !== null) {
        const here = accOf(landing.slot);
        if (here !== null) here.landedInSlots++;
      }
      if ((t.routeMaskOf(seq) & (1 << DIRECT)) === 0) continue;
      const o = t.outcomeByte(seq, DIRECT);
      if (o === 0) continue; // not answered yet
      const aimed = t.targetSlotOf(seq, DIRECT);
      const a = aimed >= 0 ? accOf(aimed) : null;
      if (a === null) {
        if (aimed < 0 && accepted >= firstSlot) unattributed[EGRESS_OUTCOMES[o - 1]] = (unattributed[EGRESS_OUTCOMES[o - 1]] ?? 0) + 1;
        continue;
      }
      if (o === OUTCOME_SENT) {
        a.sent++;
        a.copies += t.targetsOf(seq, DIRECT);
        const sentAt = t.sentAtOf(seq, DIRECT);
        if (sentAt > 0) a.waits.push(Math.max(0, sentAt - t.acceptedAt(seq)));
        if (landing !== null) {
          a.landed++;
          a.lands.push(Math.max(0, landing.slot - aimed));
        }
      } else {
        const label = EGRESS_OUTCOMES[o - 1];
        a.dropped[label] = (a.dropped[label] ?? 0) + 1;
        const cause = t.causeOf(seq, DIRECT);
        if (cause !== CAUSE.none) a.dropCauses[ROUTE_CAUSES[cause]] = (a.dropCauses[ROUTE_CAUSES[cause]] ?? 0) + 1;
      }
    }
    const rows = new Set<Acc>();
    for (const a of bySlot) if (a !== undefined) rows.add(a);
    const leaders: LeaderRow[] = [];
    for (const a of rows) {
      a.slots.sort((x, y) => x - y);
      // Typed arrays sort numerically without a comparator call per pair.
      const waits = Float64Array.from(a.waits).sort();
      const lands = Float64Array.from(a.lands).sort();
      const buckets: Record<string, number> = {};
      for (const d of lands) buckets[bucketName(d)] = (buckets[bucketName(d)] ?? 0) + 1;
      let sumMs = 0;
      for (const w of waits) sumMs += w;
      leaders.push({
        identity: a.identity,
        slots: a.slots,
        sent: a.sent,
        copies: a.copies,
        dropped: a.dropped,
        dropCauses: a.dropCauses,
        waited: { n: waits.length, p50Ms: quantile(waits, 0.5), maxMs: waits.length === 0 ? null : waits[waits.length - 1], sumMs: Math.round(sumMs * 1000) / 1000 },
        landed: a.landed,
        slotsToLand: { p50: quantile(lands, 0.5), max: lands.length === 0 ? null : lands[lands.length - 1], buckets },
        landedInSlots: a.landedInSlots,
      });
    }
    leaders.sort((x, y) => y.slots[y.slots.length - 1] - x.slots[x.slots.length - 1]);
    const lastSlot = leaders.length === 0 ? cur : Math.max(cur, leaders[0].slots[leaders[0].slots.length - 1]);
    return { slot: cur, firstSlot, lastSlot, leaders, unattributed, scanned, complete, atMs: nowMs };
  }
}
